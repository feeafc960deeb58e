#!/usr/bin/env bash
# bam vector-gen and vector-add on the CPU path: for every dtype and every backend the CPU
# runs (emulated-ssd, file, host-memory, tiled), with a cache or tile buffer far smaller than
# the vectors and both line sizes, C equals A + B computed here (python3, standard library
# only) byte for byte; late completions under eviction pressure give the sums or an error
# with no output file, never wrong bytes with exit 0; bad inputs are refused with a reason.
set -euo pipefail
bam=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build/cpu/bam}
bam=$(realpath "$bam")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "vector_add_test: $*" >&2; exit 1; }

# C as the sum of A and B for a dtype: integers wrap, floats are the IEEE sum of that type
# (a float32 sum computed in double and rounded once is the float32 sum).
cat > sum.py <<'PY'
import struct, sys
kind, a, b, c = sys.argv[1:]
fmt = {"u32": "I", "u64": "Q", "f32": "f", "f64": "d"}[kind]
size = struct.calcsize(fmt)
xa, xb = open(a, "rb").read(), open(b, "rb").read()
n = len(xa) // size
va = struct.unpack("<%d%s" % (n, fmt), xa)
vb = struct.unpack("<%d%s" % (n, fmt), xb)
if kind in ("u32", "u64"):
    mask = (1 << (8 * size)) - 1
    vc = [(x + y) & mask for x, y in zip(va, vb)]
else:
    vc = [x + y for x, y in zip(va, vb)]
open(c, "wb").write(struct.pack("<%d%s" % (n, fmt), *vc))
PY

# 50,001 values: not a whole line nor a whole tile.
count=50001
for dtype in u32 u64 f32 f64; do
  "$bam" vector-gen --out "a.$dtype" --count $count --dtype $dtype --seed 1 2>/dev/null
  "$bam" vector-gen --out "b.$dtype" --count $count --dtype $dtype --seed 2 2>/dev/null
  python3 sum.py $dtype "a.$dtype" "b.$dtype" "want.$dtype"
  size=$(( ${dtype:1} / 8 ))
  [ "$(wc -c < "a.$dtype")" -eq $((count * size)) ] || fail "vector-gen $dtype wrote a wrong size"
  for backend in emulated-ssd file host-memory tiled; do
    for line in 4096 512; do
      [[ $backend == host-memory || $backend == tiled ]] && [[ $line == 512 ]] && continue
      rm -f c.bin
      "$bam" vector-add --a "a.$dtype" --b "b.$dtype" --out c.bin --dtype $dtype \
        --backend $backend --target cpu --cache-bytes 64K --line-bytes $line \
        --json "r.json" 2> log.txt || fail "$dtype $backend $line failed: $(cat log.txt)"
      cmp -s c.bin "want.$dtype" || fail "$dtype $backend $line: C is not A + B"
      python3 - "$backend" $count <<'PY' || fail "$dtype $backend $line: bad JSON: $(cat r.json)"
import json, sys
r = json.load(open("r.json"))
backend, count = sys.argv[1], int(sys.argv[2])
assert r["command"] == "vector-add" and r["backend"] == backend and r["count"] == count
for k in ("dtype", "where", "seconds", "seconds_all", "bytes_needed", "bytes_moved",
          "io_commands", "cache_bytes", "tiles"):
    assert k in r, k
assert (r["tiles"] > 1) == (backend == "tiled"), r["tiles"]
assert r["bytes_moved"] >= r["bytes_needed"] or backend not in ("emulated-ssd", "file")
PY
    done
  done
done
# Asynchronous write-back: on (the default) some write-backs run beside the loads that evicted
# their lines; off none do; both give the sums.
for wb in on off; do
  rm -f c.bin
  "$bam" vector-add --a a.u32 --b b.u32 --out c.bin --dtype u32 --target cpu --cache-bytes 64K \
    --line-bytes 512 --write-behind $wb --json r.json 2> log.txt ||
    fail "--write-behind $wb failed: $(cat log.txt)"
  cmp -s c.bin want.u32 || fail "--write-behind $wb: C is not A + B"
  python3 - $wb <<'PY' || fail "--write-behind $wb: $(cat r.json)"
import json, sys
r = json.load(open("r.json"))
beside = r["write_backs_beside_loads"]
assert r["write_backs"] > 0, r
assert (beside > 0) if sys.argv[1] == "on" else (beside == 0), r
PY
done

# Seeds make the vectors: the same seed, the same bytes; another seed, others.
"$bam" vector-gen --out again.u32 --count $count --dtype u32 --seed 1 2>/dev/null
cmp -s a.u32 again.u32 || fail "vector-gen is not deterministic"
cmp -s a.u32 b.u32 && fail "two seeds gave the same vector"

# Late completions (past the command timeout) under eviction pressure: the sums, or an error
# and no output; never wrong bytes with exit 0. The failed lines' passes again make most runs
# succeed: at least one of three must.
succeeded=0
for seed in 1 2 3; do
  rm -f c.bin
  if "$bam" vector-add --a a.u64 --b b.u64 --out c.bin --dtype u64 --target cpu \
    --cache-bytes 64K --line-bytes 512 --io-timeout-ms 100 \
    --faults "late-rate=0.002,late-us=300000,seed=$seed" 2> log.txt; then
    cmp -s c.bin want.u64 || fail "late completions (seed $seed): exit 0 with wrong bytes"
    succeeded=$((succeeded + 1))
  else
    [ ! -e c.bin ] || fail "late completions (seed $seed): failed but left an output"
    grep -q "error" log.txt || fail "late completions (seed $seed): no error message"
  fi
  ls -a | grep -q '^\.c\.bin' && fail "a temporary output was left behind"
done
[ $succeeded -gt 0 ] || fail "late completions: no run of three succeeded"

# Refused before any work, with a reason, and no output.
refuse() {  # refuse WORD args...: the command fails, says WORD, writes no c.bin
  local word=$1
  shift
  rm -f c.bin
  if "$bam" "$@" > /dev/null 2> err.txt; then fail "accepted: $*"; fi
  grep -q -- "$word" err.txt || fail "no reason ($word) for: $* : $(cat err.txt)"
  [ ! -e c.bin ] || fail "an output was left by: $*"
}
head -c 1000 a.u32 > short.u32
head -c 1002 a.u32 > odd.u32
head -c 1002 b.u32 > odd2.u32
refuse "as long" vector-add --a a.u32 --b short.u32 --out c.bin --target cpu
refuse "whole number" vector-add --a odd.u32 --b odd2.u32 --out c.bin --target cpu
refuse "--dtype" vector-add --a a.u32 --b b.u32 --out c.bin --dtype i32 --target cpu
refuse "whole number" vector-add --a a.u32 --b b.u32 --out c.bin --dtype u64 --target cpu
refuse "missing.bin" vector-add --a missing.bin --b b.u32 --out c.bin --target cpu
refuse "cannot write" vector-add --a a.u32 --b b.u32 --out no/such/folder/c.bin --target cpu
refuse "same file" vector-add --a a.u32 --b b.u32 --out a.u32 --target cpu
refuse "needs a GPU" vector-add --a a.u32 --b b.u32 --out c.bin --backend device-memory \
  --target cpu
refuse "cannot write" vector-gen --out no/such/folder/a.bin --count 10
cmp -s a.u32 again.u32 || fail "a refused run changed an input"
echo "vector_add_test: all checks passed"
