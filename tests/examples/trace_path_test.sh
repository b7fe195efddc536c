#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# trace_path_test.sh ECHO_SERVER DEMO LANTERN_TRACE: trace paths that are not a regular
# file, and disks that are full, with the real programs (README: "Failures never stop the
# app and are never silent").
#  1. A FIFO as LANTERN_TRACE (nobody reads it): the server starts, says the trace is
#     refused and why, serves, and exits 1; the FIFO is left as it was. Before, open()
#     blocked forever with SIGINT and SIGTERM blocked.
#  2. A device (/dev/full) as --trace: refused the same way.
#  3. A disk already full (a file size limit of 0, SIGXFSZ ignored: every write fails
#     with EFBIG, a real kernel refusal): said at once, exit 1, and no file left behind.
#  4. A disk that fills mid-run (a 150 KiB limit, level full): the file keeps every chunk
#     written whole; `lantern-trace validate` exits 1, says "truncated" and that the file
#     holds everything up to that point.
# Every wait is a bounded loop on what the program prints and fails loudly after its
# deadline (a program that hangs on its trace path is the failure under test).
set -uo pipefail
server=$1 demo=$2 trace_tool=$3
label=trace_path
# shellcheck source=program_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/program_test_lib.sh"
# stop PID WANT: SIGTERM, then the exit status must be WANT.
stop() {
  kill -TERM "$1"
  wait "$1"
  local rc=$?
  [ "$rc" -eq "$2" ] || fail "exited $rc after SIGTERM (want $2)"
}
unset LANTERN_TRACE LANTERN_METRICS LANTERN_STREAM LANTERN_FLIGHT LANTERN_LEVEL LANTERN_FLIGHT_SIGNAL
export LANTERN_FLIGHT=  # no flight recorder: only the trace is under test

# 1. A FIFO nobody reads.
mkfifo "$work/fifo"
LANTERN_TRACE="$work/fifo" "$server" --port 0 --workers 2 > "$work/a.out" 2> "$work/a.err" &
app=$!
pids+=("$app")
wait_for "$work/a.out" "listening on" 1 30
grep -q "LANTERN_TRACE=$work/fifo: not recording a trace: .*it is a FIFO, not a regular file" "$work/a.err" \
  || fail "the FIFO's refusal is not said"
stop "$app" 1
[ -p "$work/fifo" ] || fail "the FIFO was replaced"

# 2. A device.
"$server" --port 0 --workers 2 --trace /dev/full > "$work/b.out" 2> "$work/b.err" &
app=$!
pids+=("$app")
wait_for "$work/b.out" "listening on" 1 30
grep -q "it is a character device, not a regular file" "$work/b.err" || fail "the device's refusal is not said"
stop "$app" 1

# 3. A disk already full. The limit is the program's alone (stdout and stderr are pipes).
(
  trap '' XFSZ
  ulimit -f 0
  exec "$server" --port 0 --workers 2 --trace "$work/full.trace"
) > >(cat > "$work/c.out") 2> >(cat > "$work/c.err") &
app=$!
pids+=("$app")
wait_for "$work/c.out" "listening on" 1 30
wait_for "$work/c.err" "full.trace" 1 30
grep -q "File too large" "$work/c.err" || fail "the full disk's error does not say why"
[ ! -e "$work/full.trace" ] || fail "a disk already full left a $(stat -c %s "$work/full.trace")-byte file"
stop "$app" 1

# 4. A disk that fills mid-run: 150 KiB (ulimit counts 1 KiB blocks; chunks are about
#    64 KiB, the quick demo at level full writes about 210 KiB), level full.
(
  trap '' XFSZ
  ulimit -f 150
  exec "$demo" --quick --workers 2 --no-view --no-metrics --level full --trace "$work/mid.trace"
) > >(cat > "$work/d.out") 2> >(cat > "$work/d.err") &
app=$!
pids+=("$app")
wait "$app"
rc=$?
[ $rc -eq 1 ] || fail "the demo whose trace failed mid-run exited $rc (want 1)"
grep -q "stopped being written after" "$work/d.err" || fail "the mid-run failure is not said"
[ -s "$work/mid.trace" ] || fail "the trace written before the failure is gone"
"$trace_tool" validate --no-progress "$work/mid.trace" > "$work/v.out" 2> "$work/v.err"
rc=$?
[ $rc -eq 1 ] || fail "validate of a trace cut by a full disk exited $rc (want 1)"
grep -q "truncated at offset" "$work/v.err" || fail "validate does not say truncated"
grep -q "the file holds everything up to that point" "$work/v.err" || fail "validate does not say what the file holds"
"$trace_tool" info "$work/mid.trace" > "$work/i.out" 2>&1
grep -qi "events" "$work/i.out" || fail "the complete chunks do not read"
echo "trace_path: ok"
