#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make_pictures.sh - regenerate the pictures in viewer/docs (used by viewer/README.md and
# the top-level README) from a real run, with lantern-view --screenshot under Xvfb.
#
#   viewer/docs/make_pictures.sh [BUILD_DIR]      (default: build/release)
#
# The run is real, so every regeneration differs a little: look at the pictures before
# committing them (the fib phase should show steals between all four workers).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$root/build/release}" && pwd)  # absolute: the demo runs below cd into a scratch directory
view=$build/viewer/lantern-view
demo=$build/viewer/lantern_live_demo
traces=$build/tests/viewer/viewer_make_test_traces
out=$root/viewer/docs
command -v xvfb-run > /dev/null || { echo "make_pictures: needs xvfb-run (apt-get install xvfb xauth libgl1-mesa-dri)" >&2; exit 1; }
[ -x "$view" ] && [ -x "$demo" ] && [ -x "$traces" ] ||
  { echo "make_pictures: build lantern-view, lantern_live_demo and viewer_make_test_traces in $build first" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trace=$work/run.trace
# Four workers on a synthetic two-socket layout (so steals have distances), every event
# recorded (full level, rings large enough that nothing is dropped): fib(27), bursts of
# submitted tasks with idle gaps, and a flooded worker.
"$demo" --trace "$trace" --workers 4 --topology "2 sockets x 2 cores" --fib 27 --seconds 0 --level full --ring 1000000

# The zoomed-in picture needs a moment with steals, helps and wakes at a known time: the
# (deterministic) synthetic trace of the screenshot tests has them at 22 ms.
"$traces" "$work"

shot() {  # shot NAME TRACE [lantern-view options...]
  local name=$1 file=$2
  shift 2
  xvfb-run -a -f "$work/xauth" "$view" --screenshot "$out/$name.png" "$@" "$file"
}
shot overview "$trace" --at 20ms --window 20ms
shot timeline_steals "$work/steals.trace" --view timeline --size 1400x560 --at 22.1ms --window 150us
shot steal_matrix "$trace" --view steals --size 1000x480
shot latency "$trace" --view latency --size 1000x560
# The Scalability view of the tests' known task graph, the walk on the path's 2nd stretch.
shot scalability "$work/graph.trace" --view scalability --size 1400x800 --path-stretch 2
# Task labels and releases: the lantern_demo's pipelines (parse -> render -> compress,
# each stage released by the one before), coloured by label. The phase's time differs
# from run to run: it is read from the trace (the first 'render' task) with lantern-trace.
demo_full=$build/examples/lantern_demo
trace_tool=$build/instrumentation/tools/lantern_trace/lantern-trace
if [ -x "$demo_full" ] && [ -x "$trace_tool" ]; then
  (cd "$work" && "$demo_full" --quick --no-view --no-metrics --trace "$work/demo.trace" --level full > /dev/null)
  "$trace_tool" export --chrome "$work/demo.trace" -o "$work/demo.json" > /dev/null
  at=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d["traceEvents"] if isinstance(d,dict) else d; t=[x["ts"] for x in e if x.get("name")=="compress"]; print("%.1fus" % max(t))' "$work/demo.json")
  shot labels "$work/demo.trace" --view timeline --size 1400x300 --at "$at" --window 3.4ms
  # Two runs compared: the same demo under the two sleep strategies (lantern-view A
  # --compare B; lantern-trace diff A B prints the same comparison).
  (cd "$work" && "$demo_full" --quick --no-view --no-metrics --workers 4 --topology "2 sockets x 2 cores" \
     --trace "$work/io_uring.trace" --sleep io_uring > /dev/null)
  (cd "$work" && "$demo_full" --quick --no-view --no-metrics --workers 4 --topology "2 sockets x 2 cores" \
     --trace "$work/condvar.trace" --sleep condvar > /dev/null)
  shot compare "$work/io_uring.trace" --compare "$work/condvar.trace" --size 1600x900
  "$trace_tool" diff --notable "$work/io_uring.trace" "$work/condvar.trace" > "$out/compare.txt" || true
fi
echo "make_pictures: wrote $out/{overview,timeline_steals,steal_matrix,latency,labels,compare}.png"
