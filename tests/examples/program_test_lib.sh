# SPDX-License-Identifier: Apache-2.0
# program_test_lib.sh - sourced by the scripts here that run real programs: a scratch
# directory ($work), the programs started ($pids, killed at exit), and fail (prints what
# the programs wrote, then exits 1). Set $label first to prefix the failures.
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
