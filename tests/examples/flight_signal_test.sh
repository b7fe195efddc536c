#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# flight_signal_test.sh KIND PROGRAM LANTERN_TRACE: send SIGUSR2 to a real shipped program
# and check its flight recorder (README: "dump with kill -USR2").
#   KIND: echo_server | demo | live_demo
# Every program: a signal dumps a new, valid trace and does not kill it; it exits 0.
# The echo server (it runs until told to stop) also: five signals, each awaited, give
# five distinct files; a burst of five signals is served and every dump line names its
# own file; a dump that cannot be written is reported at once, leaves no file, and makes
# the exit status 1.
# Waits are bounded loops on what the program prints (never a fixed sleep standing in for
# an event); every wait fails loudly with the program's output after its deadline.
set -uo pipefail
kind=$1 program=$2 trace_tool=$3
label=$kind
# shellcheck source=program_test_lib.sh
. "$(dirname "$0")/program_test_lib.sh"
# wait_for FILE PATTERN COUNT SECONDS: until FILE has COUNT lines matching PATTERN.
wait_for() {
  local deadline=$((SECONDS + $4))
  local n
  while n=$(grep -c -- "$2" "$1" 2> /dev/null); [ "${n:-0}" -lt "$3" ]; do
    [ $SECONDS -ge $deadline ] && fail "waited $4 s for $3 line(s) matching '$2' in $1"
    sleep 0.02
  done
}
# check_dumps DIR COUNT: COUNT files in DIR, each a valid trace; no partial file left.
check_dumps() {
  local n
  n=$(find "$1" -name '*.trace' | wc -l)
  [ "$n" -eq "$2" ] || fail "expected $2 dump files in $1, found $n: $(ls "$1")"
  if find "$1" -name '*.partial' | grep -q .; then fail "a partial dump file was left behind: $(ls "$1")"; fi
  for f in "$1"/*.trace; do
    "$trace_tool" validate "$f" > "$work/validate.log" 2>&1 || { cat "$work/validate.log" >&2; fail "$f is not a valid trace"; }
  done
}

mkdir -p "$work/dumps"
export LANTERN_FLIGHT_DIR="$work/dumps"
unset LANTERN_TRACE LANTERN_METRICS LANTERN_STREAM LANTERN_FLIGHT LANTERN_LEVEL
case "$kind" in
  echo_server)
    "$program" --port 0 --workers 2 > "$work/a.out" 2> "$work/a.err" &
    app=$!
    pids+=("$app")
    wait_for "$work/a.err" "flight recorder keeps" 1 30
    wait_for "$work/a.out" "listening on" 1 30
    # 1. Five signals, each awaited: five files, no two the same.
    for i in 1 2 3 4 5; do
      kill -USR2 "$app" || fail "the server is gone before signal $i"
      wait_for "$work/a.err" "flight recorder dumped to" "$i" 30
    done
    check_dumps "$work/dumps" 5
    [ "$(grep -o 'dumped to [^ ]*' "$work/a.err" | sort -u | wc -l)" -eq 5 ] || fail "two dumps named the same file"
    # 2. A burst: the kernel may merge signals still pending (those were never delivered);
    # the rest are each dumped or merged into a dump that says so, and every dump has its
    # own file. On exit the recorder serves what is still pending before it stops, so the
    # files are counted after the server is gone.
    for i in 1 2 3 4 5; do kill -USR2 "$app" || fail "the server died from a burst of SIGUSR2"; done
    wait_for "$work/a.err" "flight recorder dumped to" 6 30
    kill -TERM "$app"
    wait "$app"
    rc=$?
    [ $rc -eq 0 ] || fail "the server exited $rc after SIGTERM (want 0)"
    grep -q "stopped (SIGTERM)" "$work/a.out" || fail "the server did not stop cleanly"
    dumps=$(grep -c "flight recorder dumped to" "$work/a.err")
    merged=$(grep "flight recorder dumped to" "$work/a.err" | sed -n 's/.*(\([0-9]*\) signals.*/\1/p' | awk '{s += $1 - 1} END {print s + 0}')
    [ $((dumps - 5 + merged)) -le 5 ] || fail "more dumps than signals: $dumps dumps, $merged merged"
    check_dumps "$work/dumps" "$dumps"
    [ "$(grep -o 'dumped to [^ ]*' "$work/a.err" | sort -u | wc -l)" -eq "$dumps" ] || fail "two dumps named the same file"
    echo "burst of 5 signals: $((dumps - 5)) dump(s), $merged request(s) merged into them"

    # 3. A dump that cannot be written: its directory is gone.
    mkdir -p "$work/gone"
    LANTERN_FLIGHT_DIR="$work/gone" "$program" --port 0 --workers 2 > "$work/b.out" 2> "$work/b.err" &
    app=$!
    pids+=("$app")
    wait_for "$work/b.out" "listening on" 1 30
    rm -rf "$work/gone"
    kill -USR2 "$app"
    wait_for "$work/b.err" "flight recorder dump to .* failed" 1 30
    grep -q "No such file or directory" "$work/b.err" || fail "the failed dump does not say why"
    [ ! -e "$work/gone" ] || fail "the failed dump left something behind: $(ls -R "$work/gone")"
    kill -TERM "$app"
    wait "$app"
    rc=$?
    [ $rc -eq 1 ] || fail "a server whose flight dump failed exited $rc (want 1)"
    grep -q "observing it failed" "$work/b.err" || fail "the exit does not say what failed"
    ;;
  demo | live_demo)
    if [ "$kind" = demo ]; then
      "$program" --quick --workers 2 --no-view --no-trace --no-metrics --linger 3 > "$work/a.out" 2> "$work/a.err" &
    else
      "$program" --workers 2 --fib 22 --seconds 2 > "$work/a.out" 2> "$work/a.err" &
    fi
    app=$!
    pids+=("$app")
    wait_for "$work/a.err" "flight recorder keeps" 1 30
    kill -USR2 "$app" || fail "the program is gone before the signal"
    wait_for "$work/a.err" "flight recorder dumped to" 1 30
    kill -USR2 "$app" || fail "the program is gone before the second signal"
    wait_for "$work/a.err" "flight recorder dumped to" 2 30
    wait "$app"
    rc=$?
    [ $rc -eq 0 ] || fail "exited $rc (want 0; 140 is death by SIGUSR2)"
    check_dumps "$work/dumps" 2
    ;;
  *)
    echo "unknown kind $kind" >&2
    exit 2
    ;;
esac
echo "flight_signal ($kind): ok"
