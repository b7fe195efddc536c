# SPDX-License-Identifier: Apache-2.0
# program_test_lib.sh - sourced by the tests that run the real programs
# (flight_signal_test.sh, trace_path_test.sh): a work directory removed at exit, the
# programs started (pids) killed at exit, a failure that prints every output, and bounded
# waits on what a program prints (never a fixed sleep standing in for an event).
# The caller sets `label` (the test's name in messages) before sourcing.
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2> /dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL${label:+ ($label)}: $*" >&2
  for f in "$work"/*.out "$work"/*.err; do [ -f "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done
  exit 1
}
# wait_for FILE PATTERN COUNT SECONDS: until FILE has COUNT lines matching PATTERN.
wait_for() {
  local deadline=$((SECONDS + $4))
  local n
  while n=$(grep -c -- "$2" "$1" 2> /dev/null); [ "${n:-0}" -lt "$3" ]; do
    [ $SECONDS -ge $deadline ] && fail "waited $4 s for $3 line(s) matching '$2' in $1"
    sleep 0.02
  done
}
