#!/usr/bin/env python3
"""How often a vertex's highest-degree neighbour ("hub") is a BFS parent of it, per depth.

A lead for BFS that reads less from storage: in a bottom-up step a vertex whose hub is in the
frontier needs no read of its list, only of a per-vertex array of hubs. This measures, on a
symmetric power-law graph, the share of the vertices at each depth whose hub sits one depth
above them, from the highest-degree vertex and from random sources (as GAP picks them).

    scripts/hub_parents.py --scale 20 --json out.json        # R-MAT in memory (NumPy)
    scripts/hub_parents.py --bcsr G.bcsr --sources 4          # a symmetric .bcsr file
    scripts/hub_parents.py --bcsr G.bcsr --lines 1024         # and what bottom-up steps read
"""
import argparse
import json
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import gnn_features  # noqa: E402 (rmat_graph, read_bcsr)


def hubs(offsets, ids, rank=0):
    """hub[v]: v's neighbour of highest degree, the smallest id among equals, as the .bcsr hubs
    section holds (rank 1: the next one; -1 for a vertex with no more neighbours)."""
    n = len(offsets) - 1
    deg = np.diff(offsets)
    source = np.repeat(np.arange(n), deg)
    # Each list's neighbours, highest degree first, then smallest id.
    by_degree = np.lexsort((ids, -deg[ids], source))
    hub = np.full(n, -1, dtype=np.int64)
    has = deg > rank
    hub[has] = ids[by_degree][offsets[:-1][has] + rank]
    return hub


def bottom_up_lists(offsets, depth, hub, second, d, line_bytes, id_bytes=8):
    """What a bottom-up step at depth d would still read, with the hub test alone, with hub
    claims (each vertex at d - 1 claims its hub), with a second hub, and with both: per scheme,
    the lists (vertices waiting at d with more than one entry that none of the scheme's tests
    finds) and the distinct lines of line_bytes holding their first entries."""
    waiting = (depth >= d) | (depth < 0)
    up = depth == d - 1
    by_hub = (hub >= 0) & up[np.maximum(hub, 0)]
    by_second = (second >= 0) & up[np.maximum(second, 0)]
    claimed = np.zeros(len(depth), dtype=bool)
    claimed[hub[up & (hub >= 0)]] = True
    left = waiting & (np.diff(offsets) > 1) & ~by_hub
    out = {}
    for name, rest in (("hub", left), ("hub+claims", left & ~claimed),
                       ("hub+second", left & ~by_second),
                       ("hub+second+claims", left & ~by_second & ~claimed)):
        lines = np.unique(offsets[:-1][rest] * id_bytes // line_bytes)
        out[name] = {"lists": int(rest.sum()), "lines": int(len(lines))}
    return out


def depths(offsets, ids, source):
    """BFS depths from `source` (-1: not reached), a level at a time."""
    depth = np.full(len(offsets) - 1, -1, dtype=np.int64)
    depth[source] = 0
    frontier = np.array([source])
    d = 0
    while len(frontier):
        starts, ends = offsets[frontier], offsets[frontier + 1]
        lengths = ends - starts
        at = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        seen = np.unique(ids[at + np.arange(lengths.sum())])
        frontier = seen[depth[seen] < 0]
        d += 1
        depth[frontier] = d
    return depth


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=int, default=18, help="R-MAT scale, degree 16 [%(default)s]")
    p.add_argument("--bcsr", help="a symmetric .bcsr graph instead of R-MAT")
    p.add_argument("--sources", type=int, default=3, help="random sources [%(default)s]")
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--lines", type=int, metavar="BYTES",
                   help="also count, per depth, the lists and lines of BYTES (8-byte ids) a "
                        "bottom-up step would read with one hub, hub claims, a second hub")
    p.add_argument("--json", help="write the shares here")
    a = p.parse_args()
    if a.bcsr:
        offsets, ids = gnn_features.read_bcsr(a.bcsr)
        graph = a.bcsr
    else:
        offsets, ids = gnn_features.rmat_graph(a.scale)
        graph = f"R-MAT scale {a.scale}, degree 16, symmetric (examples/gnn_features.py)"
    offsets = np.asarray(offsets, dtype=np.int64)
    ids = np.asarray(ids, dtype=np.int64)
    deg = np.diff(offsets)
    hub = hubs(offsets, ids)
    second = hubs(offsets, ids, 1) if a.lines else None
    rng = np.random.default_rng(a.seed)
    sources = [int(np.argmax(deg))] + [int(s) for s in rng.choice(np.nonzero(deg)[0], a.sources)]
    runs = []
    for s in sources:
        depth = depths(offsets, ids, s)
        found = (depth > 0) & (hub >= 0) & (depth[np.maximum(hub, 0)] == depth - 1)
        levels = []
        for d in range(1, int(depth.max()) + 1):
            at = depth == d
            levels.append({"depth": d, "vertices": int(at.sum()),
                           "hub_is_parent": float((found & at).sum() / max(1, at.sum()))})
            if a.lines:
                levels[-1]["bottom_up"] = bottom_up_lists(offsets, depth, hub, second, d, a.lines)
        reached = int((depth > 0).sum())
        runs.append({"source": s, "source_degree": int(deg[s]), "reached": reached,
                     "hub_is_parent": float(found.sum() / max(1, reached)), "levels": levels})
        shares = " ".join(f"{x['depth']}:{x['vertices']}/{x['hub_is_parent']:.3f}" for x in levels)
        print(f"source {s:>9} (degree {deg[s]:>7}): hub a parent of {runs[-1]['hub_is_parent']:.3f}"
              f" of {reached} reached; depth:vertices/share {shares}")
        for x in levels if a.lines else []:
            print(f"  depth {x['depth']}: a bottom-up step would read lists/lines " +
                  ", ".join(f"{k} {v['lists']}/{v['lines']}" for k, v in x["bottom_up"].items()))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"benchmark": "hub_parents", "machine": platform.node(), "graph": graph,
                       "vertices": int(len(deg)), "edges": int(len(ids)), "runs": runs}, f,
                      indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
