#!/usr/bin/env bash
# scripts/ab end to end on the CPU: one bam as both builds, alternated on `bam cc` over a small
# generated graph; the table has each run's value of each field, B / A is 1 for a field both
# builds must agree on (components), a missing field or a failing run makes it exit non-zero.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bam=${1:-$root/build/cpu/bam}
bam=$(realpath "$bam")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "ab_test: $*" >&2; exit 1; }

"$bam" graph gen --kind kron --scale 10 --degree 8 --out "$dir/g.bcsr" > /dev/null 2>&1
AB_RUNS=2 AB_FIELDS="seconds result.components" \
  "$root/scripts/ab" "$bam" "$bam" "$dir/out" -- cc --graph "$dir/g.bcsr" > "$dir/table.txt" 2>&1 ||
  fail "ab failed: $(cat "$dir/table.txt")"
for f in a-1 b-1 a-2 b-2; do
  [[ -s $dir/out/$f.json ]] || fail "no $f.json"
done
python3 - "$dir/out/ab.json" << 'PY' || fail "ab.json: $(cat "$dir/out/ab.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["runs"] == 2, d["runs"]
rows = {r["field"]: r for r in d["fields"]}
c = rows["result.components"]
assert len(c["a"]) == 2 and len(c["b"]) == 2 and c["a"] == c["b"] and c["a"][0] > 0, c
assert c["b_over_a"] == 1.0, c
assert all(v > 0 for v in rows["seconds"]["a"] + rows["seconds"]["b"]), rows["seconds"]
PY
grep -q "^result.components" "$dir/table.txt" || fail "no components row: $(cat "$dir/table.txt")"

# A field no run has, and a run that fails: both make it exit non-zero.
if AB_RUNS=1 AB_FIELDS="no.such.field" "$root/scripts/ab" "$bam" "$bam" "$dir/out2" -- \
  cc --graph "$dir/g.bcsr" > /dev/null 2>&1; then
  fail "a field no run has was not reported"
fi
if AB_RUNS=1 "$root/scripts/ab" "$bam" "$bam" "$dir/out3" -- cc --graph "$dir/missing.bcsr" \
  > "$dir/bad.txt" 2>&1; then
  fail "a failing run was not reported"
fi
grep -q "exit [1-9]" "$dir/bad.txt" ||
  fail "the failing run's exit status is not shown: $(cat "$dir/bad.txt")"
echo "ab_test: passed"
