#!/usr/bin/env bash
# bam copy on the CPU path: the cells of scripts/fault-campaign that end in bounded time today
# (no faults, failed reads, failed writes, late completions; base and dense arrays; both line
# sizes and modes),
# each required to copy exactly or report, never to copy wrong bytes, hang or leak.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bam=${1:-$root/build/cpu/bam}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
OUT=$out BAM=$bam FAULT_CAMPAIGN_BYTES=1048699 FAULT_CAMPAIGN_LIMIT_S=60 \
  FAULT_CAMPAIGN_ONLY="none read-errors write-errors late" "$root/scripts/fault-campaign"
