# Sourced by the GPU-machine scripts (gpu-check, mosaic-gpu): one timed, bounded step.
#
# step NAME LIMIT_S COMMAND...: runs COMMAND under timeout (cut to the budget left), output in
# $step_logs/NAME.log with its last $step_tail lines echoed, and records status and seconds in
# the caller's `summary` array ($step_width wide names). Needs `left` (seconds of budget left).
# Returns COMMAND's status.
step() {
  local name=$1 limit=$2
  shift 2
  local remaining
  remaining=$(($(left) - 5))
  if ((remaining < 10)); then
    summary+=("$(printf "%-${step_width}s %-8s %7s" "$name" "no-time" "-")")
    echo "=== $name: skipped, budget spent"
    return 1
  fi
  ((limit > remaining)) && limit=$remaining
  echo "=== $name (limit ${limit}s): $*"
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout --kill-after=10 "$limit" "$@" > "$step_logs/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  tail -n "$step_tail" "$step_logs/$name.log"
  local status=pass
  ((rc == 124 || rc == 137)) && status=TIMEOUT
  ((rc != 0 && rc != 124 && rc != 137)) && status="FAIL($rc)"
  summary+=("$(printf "%-${step_width}s %-8s %7.1f" "$name" "$status" "$(awk "BEGIN { print $t1 - $t0 }")")")
  echo "=== $name: $status"
  return $rc
}
