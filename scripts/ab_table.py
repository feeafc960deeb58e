#!/usr/bin/env python3
"""The table of scripts/ab: for each field, each run's value of A and B, their means and B / A."""

import json
import sys
from pathlib import Path

from bench_compare import lookup  # the same JSON paths as bench-check's figures


def pick(doc, path):
    """The number at `path` (bench_compare.lookup's paths), or None where there is none."""
    if doc is None:
        return None
    try:
        value = lookup(doc, path)
    except LookupError:
        return None
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return value if number else None


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def show(v):
    return "-" if v is None else f"{v:.6g}"


def main():
    out, runs = Path(sys.argv[1]), int(sys.argv[2])
    a, b, fields = sys.argv[3], sys.argv[4], sys.argv[5:]
    docs = {}
    for side in ("a", "b"):
        for k in range(1, runs + 1):
            f = out / f"{side}-{k}.json"
            try:
                docs[(side, k)] = json.loads(f.read_text())
            except (OSError, ValueError):
                docs[(side, k)] = None
    rows, table = [], []
    for field in fields:
        values = {
            side: [pick(docs[(side, k)], field) for k in range(1, runs + 1)]
            for side in ("a", "b")
        }
        ma, mb = mean(values["a"]), mean(values["b"])
        ratio = mb / ma if ma not in (None, 0) and mb is not None else None
        rows.append({"field": field, "a": values["a"], "b": values["b"], "mean_a": ma,
                     "mean_b": mb, "b_over_a": ratio})
        runs_a = " ".join(show(v) for v in values["a"])
        runs_b = " ".join(show(v) for v in values["b"])
        table.append([field, runs_a, runs_b, show(ma), show(mb), show(ratio)])
    header = ["field", "A runs", "B runs", "A mean", "B mean", "B / A"]
    widths = [max(len(r[i]) for r in [header] + table) for i in range(len(header))]
    print(f"A: {a}\nB: {b}\n{runs} run(s) each, alternated A, B")
    for r in [header] + table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    summary = {"a": a, "b": b, "runs": runs, "fields": rows}
    (out / "ab.json").write_text(json.dumps(summary, indent=1) + "\n")
    missing = [r["field"] for r in rows if None in r["a"] + r["b"]]
    if missing:
        print(f"no value in some runs for: {' '.join(missing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
