#!/usr/bin/env python3
"""How often a vertex's highest-degree neighbour ("hub") is a BFS parent of it, per depth.

A lead for BFS that reads less from storage: in a bottom-up step a vertex whose hub is in the
frontier needs no read of its list, only of a per-vertex array of hubs. This measures, on a
symmetric power-law graph, the share of the vertices at each depth whose hub sits one depth
above them, from the highest-degree vertex and from random sources (as GAP picks them).

    scripts/hub_parents.py --scale 20 --json out.json        # R-MAT in memory (NumPy)
    scripts/hub_parents.py --bcsr G.bcsr --sources 4          # a symmetric .bcsr file
"""
import argparse
import json
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import gnn_features  # noqa: E402 (rmat_graph, read_bcsr)


def hubs(offsets, ids):
    """hub[v]: v's neighbour of highest degree (-1 for a vertex without neighbours)."""
    n = len(offsets) - 1
    deg = np.diff(offsets)
    source = np.repeat(np.arange(n), deg)
    by_degree = np.lexsort((-deg[ids], source))  # each list's neighbours, highest degree first
    hub = np.full(n, -1, dtype=np.int64)
    has = deg > 0
    hub[has] = ids[by_degree][offsets[:-1][has]]
    return hub


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
        reached = int((depth > 0).sum())
        runs.append({"source": s, "source_degree": int(deg[s]), "reached": reached,
                     "hub_is_parent": float(found.sum() / max(1, reached)), "levels": levels})
        shares = " ".join(f"{x['depth']}:{x['vertices']}/{x['hub_is_parent']:.3f}" for x in levels)
        print(f"source {s:>9} (degree {deg[s]:>7}): hub a parent of {runs[-1]['hub_is_parent']:.3f}"
              f" of {reached} reached; depth:vertices/share {shares}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"benchmark": "hub_parents", "machine": platform.node(), "graph": graph,
                       "vertices": int(len(deg)), "edges": int(len(ids)), "runs": runs}, f,
                      indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
