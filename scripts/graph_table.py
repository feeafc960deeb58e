#!/usr/bin/env python3
"""The table of scripts/graph-table from its folder: for each graph and app, the CPU reference's
average, BaM's from the devices (BFS: the average over the reference's sources) and in GPU memory,
their ratios, and the bytes moved from the devices over the edge array's. Prints it as Markdown
and writes OUT/table.json. A missing run leaves its cells as "-"."""

import argparse
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def cpu_average(doc, app):
    if doc is None or app not in doc:
        return None
    return doc[app].get("average_seconds")


def bam_runs(folder, prefix):
    """The JSON of the runs named prefix (or prefix-src-K), in order."""
    single = load(os.path.join(folder, prefix + ".json"))
    if single is not None:
        return [single]
    runs = []
    for k in range(64):
        doc = load(os.path.join(folder, f"{prefix}-src-{k}.json"))
        if doc is None:
            break
        runs.append(doc)
    return runs


def edge_array_bytes(runs):
    for d in runs:
        g = d.get("graph")
        if isinstance(g, dict) and g.get("neighbour_bytes"):
            return g["neighbour_bytes"]
    return None


def row(folder, graph, app):
    cpu = cpu_average(load(os.path.join(folder, f"cpu-{app}.json")), app)
    ssd = bam_runs(folder, f"{app}-ssd")
    mem = bam_runs(folder, f"{app}-mem")
    r = {"graph": graph, "app": app, "cpu_seconds": cpu, "ssd_runs": len(ssd)}
    if ssd:
        r["ssd_seconds"] = sum(d["seconds"] for d in ssd) / len(ssd)
        r["ssd_min"] = min(d["seconds"] for d in ssd)
        r["ssd_max"] = max(d["seconds"] for d in ssd)
        moved = [d.get("bytes_moved") for d in ssd]
        array = edge_array_bytes(ssd)
        if array and all(m is not None for m in moved):
            r["bytes_over_edge_array"] = sum(moved) / len(moved) / array
        r["algorithm"] = ssd[0].get("result", {}).get("algorithm")
    if mem:
        r["mem_seconds"] = mem[0]["seconds"]
    if cpu and r.get("ssd_seconds"):
        r["ssd_speed_over_cpu"] = cpu / r["ssd_seconds"]
    if cpu and r.get("mem_seconds"):
        r["mem_speed_over_cpu"] = cpu / r["mem_seconds"]
    return r


def cell(value, fmt):
    return "-" if value is None else format(value, fmt)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out", help="scripts/graph-table's output folder")
    p.add_argument("kinds", nargs="+", help="graph kinds (urand, kron)")
    p.add_argument("--scale", type=int, default=25)
    a = p.parse_args()
    rows = []
    for kind in a.kinds:
        graph = f"{kind}{a.scale}"
        folder = os.path.join(a.out, graph)
        for app in ("bfs", "cc"):
            rows.append(row(folder, graph, app))
    print("| graph | app | algorithm | CPU reference (s) | BaM 4 devices (s) | BaM / CPU speed |"
          " bytes / edge array | GPU memory (s) | GPU memory / CPU speed |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['graph']} | {r['app']} | {r.get('algorithm') or '-'} |"
              f" {cell(r['cpu_seconds'], '.4f')} | {cell(r.get('ssd_seconds'), '.4f')} |"
              f" {cell(r.get('ssd_speed_over_cpu'), '.2f')}x |"
              f" {cell(r.get('bytes_over_edge_array'), '.3f')} | {cell(r.get('mem_seconds'), '.4f')} |"
              f" {cell(r.get('mem_speed_over_cpu'), '.1f')}x |")
    with open(os.path.join(a.out, "table.json"), "w") as f:
        json.dump({"rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
