#!/usr/bin/env bash
# --backend file end to end, as the README's "your own data" uses it: bam copy makes an exact
# copy and a striped set and back, gather over a file and over the set equals gather from the
# emulated SSD, BFS and CC from the .bcsr file give the same depths and labels as the emulated
# SSD, and options that make no sense for files are refused before any work.
set -euo pipefail
bam=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build/cpu/bam}
bam=$(realpath "$bam")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "file_backend_test: $*" >&2; exit 1; }

# An input whose size is not a whole block, and its copies.
head -c 3000001 /dev/urandom > in.bin
"$bam" copy --in in.bin --out out.bin --backend file 2>/dev/null
cmp in.bin out.bin || fail "copy differs"
"$bam" copy --in in.bin --out s0,s1,s2 --backend file --line-bytes 512 2>/dev/null
[ "$(cat s0 s1 s2 | wc -c)" -eq 3000001 ] || fail "the striped set does not hold every byte"
"$bam" copy --in s0,s1,s2 --out back.bin --backend file 2>/dev/null
cmp in.bin back.bin || fail "the striped set read back differs"

# Gather: every backend answers alike.
seq 0 7 375000 > idx.txt
"$bam" gather --file in.bin --dtype u64 --indices idx.txt > want.txt 2>/dev/null
"$bam" gather --file in.bin --dtype u64 --indices idx.txt --backend file > got.txt 2>/dev/null
cmp want.txt got.txt || fail "gather --backend file differs"
"$bam" gather --file s0,s1,s2 --dtype u64 --indices idx.txt --backend file --io-engine psync \
  > got2.txt 2>/dev/null
cmp want.txt got2.txt || fail "gather over the striped set differs"

# Graph apps from the file itself.
"$bam" graph gen --kind kron --scale 12 --degree 8 --out g.bcsr >/dev/null 2>&1
"$bam" bfs --graph g.bcsr --depths-out d1 >/dev/null 2>&1
"$bam" bfs --graph g.bcsr --backend file --line-bytes 512 --depths-out d2 > bfs.txt 2>&1
cmp d1 d2 || fail "BFS depths differ"
grep -q "file I/O" bfs.txt || fail "bfs --backend file does not report its file I/O"
"$bam" cc --graph g.bcsr --labels-out l1 >/dev/null 2>&1
"$bam" cc --graph g.bcsr --backend file --labels-out l2 > cc.txt 2>&1
cmp l1 l2 || fail "CC labels differ"
# The default cache serves every kernel thread (on the CPU path two lines per worker thread):
# no access reads through it.
grep -q "every access read through" cc.txt && fail "cc --backend file read through its default cache"

# Refused before any work, with a reason.
if "$bam" gather --file in.bin --indices idx.txt --backend file --faults error-rate=0.1 \
  > /dev/null 2> err.txt; then fail "--faults with --backend file was accepted"; fi
grep -q "emulated-ssd" err.txt || fail "no reason given for --faults: $(cat err.txt)"
if echo 5 | "$bam" gather --file s1,s0 --backend file > /dev/null 2> err.txt; then
  fail "an incomplete striped set was accepted"
fi
grep -q "striped set" err.txt || fail "no reason given for the bad set: $(cat err.txt)"
echo "file_backend_test: all checks passed"
