#!/usr/bin/env bash
# bam copy on the CPU path: every cell of scripts/fault-campaign (no faults, failed reads, failed
# writes, late and dropped completions, bad blocks; base and dense arrays; both line sizes and
# modes), each required to copy exactly or report, never to copy wrong bytes, hang or leak.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bam=${1:-$root/build/cpu/bam}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
OUT=$out BAM=$bam FAULT_CAMPAIGN_BYTES=1048699 FAULT_CAMPAIGN_LIMIT_S=60 \
  "$root/scripts/fault-campaign"
