#!/usr/bin/env bash
# bam bfs --algorithm and bam cc --algorithm end to end: both algorithms give the same depths
# and labels, the JSON names the algorithm that ran with edges_read beside graph_edges, the
# default reads fewer entries on a symmetric Kronecker graph, and a directed graph falls back;
# bam bfs --switch-rule and --early-claims: the same depths either way, the JSON names what
# ran and its per-level record adds up.
set -euo pipefail
bam=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build/cpu/bam}
bam=$(realpath "$bam")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "app_algorithms_test: $*" >&2; exit 1; }
# One field of a flat JSON object or of the object under "result".
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
r=d.get('result',{}); print(r[sys.argv[2]] if sys.argv[2] in r else d[sys.argv[2]])" "$1" "$2"; }

"$bam" graph gen --kind kron --scale 12 --degree 8 --out g.bcsr >/dev/null 2>&1
"$bam" bfs --graph g.bcsr --depths-out do.txt --json do.json > do.log 2>&1
"$bam" bfs --graph g.bcsr --algorithm top-down --depths-out td.txt --json td.json \
  >/dev/null 2>&1
cmp do.txt td.txt || fail "bfs depths differ between do and top-down"
[ "$(field do.json algorithm)" = do ] || fail "bfs JSON does not name do"
[ "$(field td.json algorithm)" = top-down ] || fail "bfs JSON does not name top-down"
[ "$(field td.json edges_read)" = "$(field td.json edges_traversed)" ] ||
  fail "top-down did not read each reached list once"
[ "$(field do.json edges_read)" -lt "$(field td.json edges_read)" ] ||
  fail "do read no fewer entries than top-down"
grep -q "edges read" do.log || fail "the bfs summary does not give the entries read"
grep -q "bottom-up" do.log || fail "the bfs summary does not say how many levels went bottom-up"

# --switch-rule: the same depths either way; through the cache the default counts lines and
# loads no more than the edge rule; over memory it counts edges; the JSON's levels add up.
"$bam" bfs --graph g.bcsr --switch-rule edges --depths-out ed.txt --json ed.json >/dev/null 2>&1
"$bam" bfs --graph g.bcsr --switch-rule lines --depths-out li.txt --json li.json >/dev/null 2>&1
cmp do.txt ed.txt || fail "bfs depths differ between the line and edge rules"
cmp do.txt li.txt || fail "bfs depths differ between --switch-rule lines and the default"
[ "$(field do.json switch_rule)" = lines ] || fail "bfs through a cache did not count lines"
[ "$(field ed.json switch_rule)" = edges ] || fail "bfs JSON does not name the edge rule"
python3 - do.json ed.json <<'PY' || fail "bfs JSON levels do not add up, or lines loaded more"
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:]]
for d in runs:
    r = d["result"]
    assert len(r["levels"]) == len(r["level_vertices"])
    assert sum(l["loads"] for l in r["levels"]) == d["cache"]["loads"]
    assert sum(l["edges_read"] for l in r["levels"]) == d["edges_read"]
    assert sum(l["direction"] == "bottom-up" for l in r["levels"]) == r["bottom_up_levels"]
PY
# Loads compared with a cache that holds the whole graph: each line touched is loaded once, so
# the count does not depend on how the threads' evictions interleave (with the default eighth,
# the two runs' counts differed by a few lines from run to run).
"$bam" bfs --graph g.bcsr --switch-rule edges --cache-bytes 64M --json edb.json >/dev/null 2>&1
"$bam" bfs --graph g.bcsr --switch-rule lines --cache-bytes 64M --json lib.json >/dev/null 2>&1
python3 - lib.json edb.json <<'PY' || fail "the line rule loaded more lines than the edge rule"
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:]]
assert runs[0]["cache"]["evictions"] == 0 and runs[1]["cache"]["evictions"] == 0
assert runs[0]["cache"]["loads"] <= runs[1]["cache"]["loads"], [r["cache"]["loads"] for r in runs]
PY
grep -q "lines per level" do.log || fail "the bfs summary does not give the lines per level"
"$bam" bfs --graph g.bcsr --backend host-memory --depths-out hm.txt --json hm.json >/dev/null 2>&1
cmp do.txt hm.txt || fail "bfs depths differ over host memory"
[ "$(field hm.json switch_rule)" = edges ] || fail "bfs over memory did not count edges"
if "$bam" bfs --graph g.bcsr --switch-rule bytes >/dev/null 2>&1; then
  fail "bfs took an unknown --switch-rule"
fi

# --early-claims: the same depths; on (the default) reads no more entries than off.
"$bam" bfs --graph g.bcsr --early-claims off --depths-out eo.txt --json eo.json >/dev/null 2>&1
cmp do.txt eo.txt || fail "bfs depths differ with early claims off"
[ "$(field do.json early_claims)" = True ] || fail "bfs JSON does not say early claims were on"
[ "$(field eo.json early_claims)" = False ] || fail "bfs JSON does not say early claims were off"
[ "$(field do.json edges_read)" -le "$(field eo.json edges_read)" ] ||
  fail "early claims read more entries"
if "$bam" bfs --graph g.bcsr --early-claims maybe >/dev/null 2>&1; then
  fail "bfs took an unknown --early-claims"
fi

# --hubs: gen wrote a hubs section, so the default (auto) uses it; off reads lists only. The
# same depths; with hubs some vertices are found without their lists and fewer lines load.
"$bam" bfs --graph g.bcsr --hubs off --depths-out nh.txt --json nh.json >/dev/null 2>&1
cmp do.txt nh.txt || fail "bfs depths differ with hubs off"
[ "$(field do.json hubs)" = True ] || fail "bfs JSON does not say hubs were used"
[ "$(field nh.json hubs)" = False ] || fail "bfs JSON does not say hubs were off"
[ "$(field do.json hub_found)" -gt 0 ] || fail "no vertex was found by its hub"
python3 - do.json nh.json <<'PY' || fail "hubs loaded no fewer lines"
import json, sys
on, off = (json.load(open(p))["cache"]["loads"] for p in sys.argv[1:])
sys.exit(0 if on < off else 1)
PY
# gen writes two hubs a vertex by default and K with --hubs K; bfs looks up all of them, or the
# first K with --hub-count K (the same depths); more than the file holds is refused.
[ "$(field do.json hubs_per_vertex)" = 2 ] || fail "bfs JSON does not say two hubs a vertex"
"$bam" graph gen --kind kron --scale 12 --degree 8 --hubs 1 --out g1.bcsr >/dev/null 2>&1
"$bam" bfs --graph g1.bcsr --depths-out h1f.txt --json h1f.json >/dev/null 2>&1
cmp do.txt h1f.txt || fail "bfs depths differ with one hub a vertex"
[ "$(field h1f.json hubs_per_vertex)" = 1 ] || fail "bfs JSON does not say one hub a vertex"
"$bam" bfs --graph g.bcsr --hub-count 1 --depths-out h1.txt --json h1.json >/dev/null 2>&1
cmp do.txt h1.txt || fail "bfs depths differ with the first of two hubs a vertex"
[ "$(field h1.json hubs_per_vertex)" = 1 ] || fail "bfs JSON does not say one hub a vertex"
if "$bam" bfs --graph g.bcsr --hub-count 3 >h3.log 2>&1; then
  fail "bfs took --hub-count 3 on a file of two hubs a vertex"
fi
grep -q "holds 2 hubs per vertex" h3.log || fail "bfs --hub-count 3 gave no clear error"
"$bam" graph gen --kind kron --scale 10 --degree 8 --no-hubs --out nohubs.bcsr >/dev/null 2>&1
"$bam" bfs --graph nohubs.bcsr --json auto.json >/dev/null 2>&1
[ "$(field auto.json hubs)" = False ] || fail "bfs used hubs a file does not have"
if "$bam" bfs --graph nohubs.bcsr --hubs on >hubs-on.log 2>&1; then
  fail "bfs --hubs on ran on a file without hubs"
fi
grep -q "no hubs section" hubs-on.log || fail "bfs --hubs on without hubs gave no clear error"

"$bam" cc --graph g.bcsr --labels-out af.txt --json af.json >/dev/null 2>&1
"$bam" cc --graph g.bcsr --algorithm union-find --labels-out uf.txt --json uf.json >/dev/null 2>&1
cmp af.txt uf.txt || fail "cc labels differ between afforest and union-find"
[ "$(field af.json algorithm)" = afforest ] || fail "cc JSON does not name afforest"
[ "$(field uf.json edges_read)" = "$(field uf.json graph_edges)" ] ||
  fail "union-find did not read every entry once"
[ "$(field af.json edges_read)" -lt "$(field uf.json edges_read)" ] ||
  fail "afforest read no fewer entries than union-find"

# A directed graph: both fall back, and say so.
printf '0 1\n1 2\n2 0\n3 1\n4 5\n' > d.el
"$bam" graph convert --in d.el --out d.bcsr >/dev/null 2>&1
"$bam" bfs --graph d.bcsr --source 3 --depths-out dd.txt --json dd.json > dd.log 2>&1
[ "$(field dd.json algorithm)" = top-down ] || fail "bfs on a directed graph did not run top-down"
[ "$(field dd.json algorithm_fell_back)" = True ] || fail "bfs on a directed graph hid its fallback"
[ "$(tr '\n' ' ' < dd.txt)" = "3 1 2 0 -1 -1 " ] || fail "bfs depths on the directed graph: $(cat dd.txt)"
grep -q "directed graph" dd.log || fail "the bfs summary does not say why it fell back"
"$bam" cc --graph d.bcsr --labels-out dl.txt --json dl.json >/dev/null 2>&1
[ "$(field dl.json algorithm)" = union-find ] || fail "cc on a directed graph did not run union-find"
[ "$(tr '\n' ' ' < dl.txt)" = "0 0 0 0 4 4 " ] || fail "cc labels on the directed graph: $(cat dl.txt)"
echo "app_algorithms_test: ok"
