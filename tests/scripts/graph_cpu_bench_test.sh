#!/usr/bin/env bash
# bam bench graph-cpu end to end on small generated graphs: its JSON has every field the
# results pages read, and its checksums agree with the GPU apps' own figures for the same
# graph (run here on the CPU): BFS vertices reached from the same source, CC components and
# the largest one, PageRank's last L1 change. A directed graph takes the top-down BFS and the
# transposed PageRank.
set -euo pipefail
bam=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build/cpu/bam}
bam=$(realpath "$bam")
python=${2:-python3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "graph_cpu_bench_test: $*" >&2; exit 1; }

"$bam" graph gen --kind kron --scale 12 --degree 8 --out g.bcsr >/dev/null 2>&1
"$bam" bench graph-cpu --graph g.bcsr --app all --threads 3 --sources 4 --trials 2 \
  --json bench.json > bench.txt 2>&1 || fail "bench failed: $(cat bench.txt)"
for app in bfs cc pagerank; do
  grep -q "^$app " bench.txt || grep -q " $app " bench.txt || fail "no $app row: $(cat bench.txt)"
done
source=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["bfs"]["sources"][0])' bench.json)
"$bam" bfs --graph g.bcsr --source "$source" --json bfs.json >/dev/null 2>&1
"$bam" cc --graph g.bcsr --json cc.json >/dev/null 2>&1
"$bam" pagerank --graph g.bcsr --json pagerank.json >/dev/null 2>&1

"$python" - bench.json bfs.json cc.json pagerank.json <<'PY' || fail "JSON check failed"
import json, sys
bench = json.load(open(sys.argv[1]))
# The apps keep their own figures under "result".
bfs, cc, pr = (json.load(open(p))["result"] for p in sys.argv[2:5])
def need(obj, keys, where):
    for k in keys:
        assert k in obj, f"{where}: no {k!r} in {sorted(obj)}"
need(bench, ["benchmark", "command", "machine", "graph", "vertices", "edges", "symmetric",
             "threads", "trials", "load_seconds", "bfs", "cc", "pagerank"], "top level")
assert bench["benchmark"] == "graph-cpu" and bench["threads"] == 3, bench["threads"]
assert bench["vertices"] == 4096 and bench["symmetric"] is True
times = ["seconds", "average_seconds", "min_seconds", "edges_per_second"]
need(bench["bfs"], times + ["sources", "reached", "runs", "direction_optimizing"], "bfs")
need(bench["cc"], times + ["components", "largest"], "cc")
need(bench["pagerank"], times + ["iterations", "rank_sum", "last_change", "transpose_seconds"],
     "pagerank")
assert len(bench["bfs"]["sources"]) == 4 and len(bench["bfs"]["seconds"]) == 8
assert len(bench["cc"]["seconds"]) == 2 and len(bench["pagerank"]["seconds"]) == 2
assert bench["bfs"]["direction_optimizing"] is True
assert any(r["bottom_up_steps"] > 0 for r in bench["bfs"]["runs"]), "BFS never went bottom-up"
assert bench["bfs"]["reached"][0] == bfs["reached"], (bench["bfs"]["reached"][0], bfs["reached"])
assert bench["cc"]["components"] == cc["components"], (bench["cc"]["components"], cc["components"])
assert bench["cc"]["largest"] == cc["largest_component"]
assert abs(bench["pagerank"]["rank_sum"] - 1) < 1e-9, bench["pagerank"]["rank_sum"]
assert abs(bench["pagerank"]["last_change"] - pr["last_change"]) <= 1e-9 * pr["last_change"] + 1e-15
PY

# --hubs on: the same vertices reached from the same sources, and the JSON says so.
"$bam" bench graph-cpu --graph g.bcsr --app bfs --threads 3 --sources 4 --trials 1 --hubs on \
  --json hubs.json > hubs.txt 2>&1 || fail "bench --hubs on failed: $(cat hubs.txt)"
"$python" - bench.json hubs.json <<'PY' || fail "--hubs on JSON check failed"
import json, sys
plain, hubs = (json.load(open(p))["bfs"] for p in sys.argv[1:])
assert plain["hubs"] is False and hubs["hubs"] is True
assert hubs["sources"] == plain["sources"] and hubs["reached"] == plain["reached"]
PY

# A directed graph: BFS top-down only, PageRank over the transpose, both said.
printf '0 1\n1 2\n2 0\n3 4\n5 5\n' > d.el
"$bam" graph convert --in d.el --out d.bcsr >/dev/null 2>&1
"$bam" bench graph-cpu --graph d.bcsr --sources 2 --trials 1 --json d.json > d.txt 2>&1 ||
  fail "bench on a directed graph failed: $(cat d.txt)"
grep -q "top-down only" d.txt || fail "no word that BFS runs top-down only: $(cat d.txt)"
grep -q "transpose" d.txt || fail "no word of the transpose: $(cat d.txt)"
"$python" - d.json <<'PY' || fail "directed JSON check failed"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["symmetric"] is False and d["bfs"]["direction_optimizing"] is False
assert all(r["bottom_up_steps"] == 0 for r in d["bfs"]["runs"])
assert d["cc"]["components"] == 3 and d["cc"]["largest"] == 3, d["cc"]
assert d["pagerank"]["in_edges"] == "transpose"
PY

# Refused before any work, with a reason.
if "$bam" bench graph-cpu --graph missing.bcsr > /dev/null 2> err.txt; then
  fail "a missing graph was accepted"
fi
if "$bam" bench graph-cpu --graph g.bcsr --app sssp > /dev/null 2> err.txt; then
  fail "an unknown app was accepted"
fi
echo "graph_cpu_bench_test: all checks passed"
