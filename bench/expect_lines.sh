#!/bin/sh
# expect_lines.sh WANTED UNWANTED PROGRAM [ARGS...] - runs PROGRAM, prints what it printed,
# and passes when it exited 0, printed at least one line matching the basic regular
# expression WANTED and none matching UNWANTED (grep's syntax). For the bench tests whose
# verdict is in the output, not only in the exit status.
wanted=$1
unwanted=$2
shift 2
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out"
if [ "$status" -ne 0 ]; then
  echo "expect_lines: $1 exited with status $status" >&2
  exit 1
fi
if ! printf '%s\n' "$out" | grep -q -- "$wanted"; then
  echo "expect_lines: no line matches: $wanted" >&2
  exit 1
fi
if printf '%s\n' "$out" | grep -q -- "$unwanted"; then
  echo "expect_lines: a line matches what must not appear: $unwanted" >&2
  printf '%s\n' "$out" | grep -- "$unwanted" >&2
  exit 1
fi
echo "expect_lines: passed"
