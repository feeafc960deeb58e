#!/usr/bin/env bash
# build_profile_test: checks scripts/build-profile on a synthetic .ninja_log written into a
# temporary folder: the slowest unit first, a repeated output counted once with its newest time,
# one command's several outputs as one unit, the wall time of the last ninja run only, the
# object-to-source mapping, --json, and the --over exit status. Needs bash and python3.
#
#   tests/scripts/build_profile_test.sh        # prints "build_profile_test: pass" or the failure

set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
profile=$root/scripts/build-profile
work=$(mktemp -d /tmp/build_profile_test.XXXXXX)
trap 'rm -rf "$work"' EXIT

fail() { echo "build_profile_test: FAIL: $*"; echo "--- output:"; cat "$work/out" 2> /dev/null; exit 1; }

# Two ninja runs, each in the order ninja writes (by end time): the second (its clock restarts
# at 0) rebuilds two outputs of the first.
{
  printf '# ninja log v5\n'
  printf '%s\t%s\t%s\t%s\t%s\n' \
    1000 3000 1 tools/CMakeFiles/tool.dir/__/apps/shared.cpp.o h6 \
    0 30000 1 src/CMakeFiles/lib.dir/runtime/slow_then_fast.cpp.o h1 \
    100 50000 1 bench/CMakeFiles/bench.dir/fast_then_slow.cu.o h3 \
    0 90000 1 apps/CMakeFiles/apps.dir/slowest.cu.o h2 \
    90000 91000 1 src/liblib.a h4 \
    91000 96000 1 gen/first.h h5 \
    91000 96000 1 gen/second.h h5
  printf '%s\t%s\t%s\t%s\t%s\n' \
    5 5005 2 src/CMakeFiles/lib.dir/runtime/slow_then_fast.cpp.o h7 \
    10 60010 2 bench/CMakeFiles/bench.dir/fast_then_slow.cu.o h8 \
    60010 62010 2 bam h9
} > "$work/.ninja_log"

# The folder form: ten slowest by default.
"$profile" "$work" > "$work/out" || fail "exit status $? without --over"

# Order: slowest first, and the rebuilt object with its newest time (60 s, not 49.9 s).
order=$(awk '$1 ~ /^[0-9.]+$/ { print $2 }' "$work/out" | head -n 3 | tr '\n' ' ')
[[ $order == "apps/CMakeFiles/apps.dir/slowest.cu.o bench/CMakeFiles/bench.dir/fast_then_slow.cu.o gen/first.h " ]] ||
  fail "order: $order"
grep -q '^ *60\.0  bench/CMakeFiles/bench.dir/fast_then_slow.cu.o ' "$work/out" || fail "newest time of a rebuilt output"

# Dedup: each output once; the object rebuilt faster keeps its newest 5 s, not the old 30 s.
[[ $(grep -c 'slow_then_fast.cpp.o' "$work/out") == 1 ]] || fail "a repeated output listed twice"
grep -q '^ *5\.0  src/CMakeFiles/lib.dir/runtime/slow_then_fast.cpp.o ' "$work/out" || fail "superseded time kept"
# One command with two outputs is one unit.
grep -q 'gen/second.h' "$work/out" && fail "the second output of one command counted as a unit"
grep -q '7 units, 10 lines, 2 run(s) of ninja' "$work/out" || fail "unit, line or run count"

# Sources: DIR/CMakeFiles/TARGET.dir/PATH.o -> DIR/PATH, with __ as ..; none for a library.
grep -q 'apps/CMakeFiles/apps.dir/slowest.cu.o  *apps/slowest.cu$' "$work/out" || fail "source of an object"
grep -q 'tools/CMakeFiles/tool.dir/__/apps/shared.cpp.o  *apps/shared.cpp$' "$work/out" || fail "source through __"
grep -q 'src/liblib.a  *-$' "$work/out" || fail "a library has no source"

# Wall time: the last run only (0.005 s .. 62.01 s); unit seconds: 90 + 60 + 5 + 5 + 2 + 2 + 1.
grep -q 'wall time of the last run: 62.0 s' "$work/out" || fail "wall time"
grep -q 'sum of unit seconds: 165.0 s over 7 units' "$work/out" || fail "sum of unit seconds"

# -n, a log given as a file, and --json.
"$profile" "$work/.ninja_log" -n 2 --json "$work/profile.json" > "$work/out" || fail "-n 2 --json"
[[ $(awk '$1 ~ /^[0-9.]+$/' "$work/out" | wc -l) == 2 ]] || fail "-n 2 printed another count"
python3 - "$work/profile.json" << 'EOF' || fail "--json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert [u["unit"] for u in d["units"]] == ["apps/CMakeFiles/apps.dir/slowest.cu.o",
                                            "bench/CMakeFiles/bench.dir/fast_then_slow.cu.o"], d
assert d["units"][0]["source"] == "apps/slowest.cu" and d["units"][0]["seconds"] == 90.0, d
assert abs(d["wall_seconds"] - 62.005) < 1e-9 and d["total_unit_seconds"] == 165.0, d
EOF

# --over: 1 and the slow units named when one is over, 0 when none is.
status=0
"$profile" "$work" --over 70 > "$work/out" || status=$?
[[ $status == 1 ]] || fail "--over 70 exit status $status, wanted 1"
grep -q 'units over 70 s: 1' "$work/out" || fail "--over 70 count"
grep -q '^  apps/CMakeFiles/apps.dir/slowest.cu.o (apps/slowest.cu): 90.0 s' "$work/out" || fail "--over names the unit"
"$profile" "$work" --over 90 > "$work/out" || fail "--over 90 (nothing above 90 s) exit status $?"
grep -q 'no unit over 90 s' "$work/out" || fail "--over 90 message"

# Bad arguments and a missing log: 2.
status=0
"$profile" "$work/missing" > "$work/out" 2>&1 || status=$?
[[ $status == 2 ]] || fail "missing log exit status $status, wanted 2"
status=0
"$profile" "$work" --over soon > "$work/out" 2>&1 || status=$?
[[ $status == 2 ]] || fail "bad --over exit status $status, wanted 2"

echo "build_profile_test: pass"
