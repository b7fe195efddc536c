#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# wake_trace.sh [OUTDIR] [lantern_wake_diag options]: runs the wake benchmark
# (lantern_wake_diag) under the kernel's scheduler trace and splits every wake into
# phases (submit path, kernel wake, waiting for the CPU, the woken thread's way to the
# task), for Lantern, oneTBB and the floor side by side (wake_phases.py). Needs root (it
# mounts tracefs if needed and turns the sched events on, then off again).
#
#   bench/diagnostics/wake_trace.sh /tmp/wt --workers 1 --wake-samples 1000
#
# OUTDIR (default ./wake_trace) gets samples.txt (lantern_wake_diag --wake-trace),
# trace.txt (the kernel's trace) and the phases' Markdown table. LANTERN_WAKE_DIAG names
# the program (default build/release/bench/diagnostics/lantern_wake_diag).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
  -h | --help)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac
out=wake_trace
if [[ $# -gt 0 && $1 != -* ]]; then
  out=$1
  shift
fi
program=${LANTERN_WAKE_DIAG:-$here/../../build/release/bench/diagnostics/lantern_wake_diag}
if [[ ! -x $program ]]; then
  echo "wake_trace.sh: no program at $program (build it: scripts/build.sh release -DLANTERN_BENCH_DIAGNOSTICS=ON, or set LANTERN_WAKE_DIAG)" >&2
  exit 2
fi
if [[ $(id -u) != 0 ]]; then
  echo "wake_trace.sh: needs root (the kernel's trace)" >&2
  exit 2
fi
tracing=/sys/kernel/tracing
if [[ ! -e $tracing/trace_marker ]]; then
  mount -t tracefs nodev "$tracing" || {
    echo "wake_trace.sh: cannot mount tracefs on $tracing" >&2
    exit 2
  }
fi
mkdir -p "$out"
events=(sched/sched_waking sched/sched_wakeup sched/sched_switch)
stop() {
  echo 0 >"$tracing/tracing_on"
  for e in "${events[@]}"; do echo 0 >"$tracing/events/$e/enable"; done
}
trap stop EXIT
echo 0 >"$tracing/tracing_on"
echo nop >"$tracing/current_tracer"
echo 65536 >"$tracing/buffer_size_kb" # per CPU; a 2000-sample run needs a few MB
for e in "${events[@]}"; do echo 1 >"$tracing/events/$e/enable"; done
echo >"$tracing/trace"
echo 1 >"$tracing/tracing_on"
"$program" --markdown --wake-trace "$out/samples.txt" "$@"
stop
trap - EXIT
cat "$tracing/trace" >"$out/trace.txt"
echo >"$tracing/trace"
python3 "$here/wake_phases.py" "$out/trace.txt" "$out/samples.txt" | tee "$out/phases.md"
