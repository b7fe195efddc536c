#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# screenshot_test.sh - lantern-view renders pictures under Xvfb; the pictures are checked.
#
#   screenshot_test.sh SCENARIO LANTERN_VIEW MAKE_TEST_TRACES SCREENSHOT_CHECK WORKDIR LIVE_DEMO [LANTERN_TRACE]
#
# Scenarios (one ctest each, viewer_screenshot_SCENARIO; tests/viewer/CMakeLists.txt lists
# them): lanes_scripted, lanes_synthetic, lanes_real, matrix_steals, matrix_one_worker,
# labels, bad_input, all_views, live, wide_slices, loading, state_mix, damaged, numbers,
# compare, layout, health_lists, default_level, not_recorded, scalability. Never skips: without
# xvfb-run it fails and says what to install.
set -euo pipefail
scenario=$1 view=$2 make_traces=$3 check=$4 work=$5 live_demo=$6 lantern_trace=${7:-}

if ! command -v xvfb-run > /dev/null; then
  echo "FAIL: xvfb-run is not installed, so lantern-view cannot render its pictures headless." >&2
  echo "      Install it (Debian: apt-get install xvfb xauth libgl1-mesa-dri), or run scripts/setup.sh." >&2
  exit 1
fi

mkdir -p "$work"
# Each scenario writes its own copy of the traces: ctest may run scenarios in parallel.
traces="$work/traces-$scenario"
mkdir -p "$traces"
"$make_traces" "$traces"

shot() {  # shot NAME TRACE [lantern-view options...]: picture + layout, exit status in $status
  local name=$1 trace=$2
  shift 2
  local file=("$trace")
  [ "$trace" = "(live)" ] && file=()
  rm -f "$work/$name.status"
  set +e
  # Debian's xvfb-run removes its temporary directory before killing Xvfb, and when that
  # removal fails it exits 5 and leaves Xvfb running. An auth file of our own (-f) means
  # no temporary directory; lantern-view's exit status also goes to a file, in case.
  xvfb-run -a -f "$work/$name.xauth" -s "-screen 0 1920x1080x24" bash -c '"$@"; echo $? > "$0"' "$work/$name.status" \
    "$view" --screenshot "$work/$name.png" --layout "$work/$name.layout" "$@" "${file[@]}" > "$work/$name.log" 2>&1
  status=$?
  set -e
  [ -s "$work/$name.status" ] && status=$(cat "$work/$name.status")
  echo "--- lantern-view $* $(basename "$trace") -> $name.png (exit $status)"
  cat "$work/$name.log"
}

expect_ok() {
  if [ "$status" -ne 0 ]; then
    echo "FAIL: lantern-view exited with $status (expected 0)"
    exit 1
  fi
  [ -s "$work/$1.png" ] || { echo "FAIL: no picture $work/$1.png"; exit 1; }
}

case "$scenario" in
  lanes_scripted | lanes_synthetic | lanes_real)
    trace="$traces/${scenario#lanes_}.trace"
    [ "$scenario" = lanes_scripted ] && trace="$traces/states.trace"
    [ "$scenario" = lanes_synthetic ] && trace="$traces/steals.trace"
    shot "$scenario" "$trace" --view timeline --size 1400x700
    expect_ok "$scenario"
    "$check" lanes "$work/$scenario.png" "$work/$scenario.layout" "$trace"
    # The same lanes, deeply zoomed in (a different level of detail).
    shot "$scenario-zoom" "$trace" --view timeline --size 1400x700 --at 2ms --window 300us
    expect_ok "$scenario-zoom"
    "$check" lanes "$work/$scenario-zoom.png" "$work/$scenario-zoom.layout" "$trace"
    ;;
  matrix_steals)
    shot matrix_steals "$traces/steals.trace" --view steals --size 1000x600
    expect_ok matrix_steals
    "$check" matrix "$work/matrix_steals.png" "$work/matrix_steals.layout" "$traces/steals.trace" nonempty
    ;;
  matrix_one_worker)
    shot matrix_one_worker "$traces/one_worker.trace" --view steals --size 1000x600
    expect_ok matrix_one_worker
    "$check" matrix "$work/matrix_one_worker.png" "$work/matrix_one_worker.layout" "$traces/one_worker.trace" empty
    ;;
  labels)
    # Labelled tasks: legend swatches in each label's colour, task rows in those colours,
    # release arrows; whole trace and zoomed in (names drawn on the slices).
    shot labels "$traces/labels.trace" --view timeline --size 1400x600
    expect_ok labels
    "$check" labels "$work/labels.png" "$work/labels.layout" "$traces/labels.trace"
    shot labels-zoom "$traces/labels.trace" --view timeline --size 1400x600 --at 4ms --window 2ms
    expect_ok labels-zoom
    "$check" labels "$work/labels-zoom.png" "$work/labels-zoom.layout" "$traces/labels.trace"
    # Every view renders with labels, releases and IO (the plots gain "releases / s").
    shot labels-all "$traces/labels.trace" --size 1600x1000
    expect_ok labels-all
    ;;
  bad_input)
    # Every bad input: a picture with the message, exit status 3, never a crash.
    # A file that cannot be opened: the error on stderr, exit 3, no window.
    for missing in "$traces/missing.trace" "$traces"; do
      set +e
      "$view" "$missing" > "$work/unreadable.out" 2> "$work/unreadable.err" < /dev/null
      status=$?
      set -e
      cat "$work/unreadable.err"
      [ "$status" -eq 3 ] || { echo "FAIL: lantern-view $missing exited $status, expected 3"; exit 1; }
      grep -q "lantern-view: .*$(basename "$missing")" "$work/unreadable.err" || { echo "FAIL: the error is not on stderr"; exit 1; }
    done
    grep -q "No such file" "$work/unreadable.err" && { echo "FAIL: a directory reported as missing"; exit 1; }
    # --window 0 and --at past the end are refused with a message (exit 2).
    for args in "--window 0" "--window 0ms" "--at 5s"; do
      shot refused "$traces/states.trace" $args
      [ "$status" -eq 2 ] || { echo "FAIL: $args: exit status $status, expected 2"; exit 1; }
      grep -q "lantern-view: --" "$work/refused.log" || { echo "FAIL: $args refused without a message"; exit 1; }
    done
    for bad in truncated corrupt newer not_a_trace; do
      shot "bad_$bad" "$traces/$bad.trace"
      if [ "$status" -ne 3 ]; then
        echo "FAIL: $bad.trace: exit status $status, expected 3 (trace problems)"
        exit 1
      fi
      [ -s "$work/bad_$bad.png" ] || { echo "FAIL: no picture for $bad.trace"; exit 1; }
    done
    grep -q "newer" "$work/bad_newer.log" || grep -qi "version" "$work/bad_newer.log" ||
      { echo "FAIL: the newer-version message does not mention the version"; exit 1; }
    grep -qi "truncat\|ends inside" "$work/bad_truncated.log" || { echo "FAIL: truncation not reported"; exit 1; }
    shot bad_missing "$traces/missing.trace"
    [ "$status" -eq 3 ] || { echo "FAIL: missing.trace: exit status $status, expected 3"; exit 1; }
    grep -q "No such file" "$work/bad_missing.log" || { echo "FAIL: a missing file is not named as such"; exit 1; }
    # What could be read is still shown: the truncated trace has events.
    grep -Eq ": [1-9][0-9,]* events" "$work/bad_truncated.log" || { echo "FAIL: the truncated trace shows no events"; exit 1; }
    ;;
  live)
    # An app streams; the viewer attaches, collects for 2 s, takes its picture and exits.
    # The app must neither wait for nor notice the viewer leaving.
    # Port 0: the app binds a free port and names it ("streaming on HOST:PORT"). A port
    # picked at random here could be taken (another test's, or an ephemeral port of some
    # connection): the app then exits with "Address already in use" and the viewer,
    # finding nobody, received no events (seen once under ctest -j2).
    "$live_demo" --stream "127.0.0.1:0" --workers 2 --fib 24 --seconds 4 --wait-for-viewer > "$work/live_app.log" 2>&1 &
    app=$!
    port=
    for _ in $(seq 1 300); do  # up to 30 s for the app to start streaming
      port=$(sed -n 's/.*streaming on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/live_app.log" | head -n 1)
      [ -n "$port" ] && break
      kill -0 "$app" 2> /dev/null || break
      sleep 0.1
    done
    if [ -z "$port" ]; then
      echo "FAIL: the app did not say where it streams:"
      cat "$work/live_app.log"
      kill "$app" 2> /dev/null
      exit 1
    fi
    shot live "(live)" --attach "127.0.0.1:$port" --after 2s
    expect_ok live
    grep -Eq ": [1-9][0-9,]* events" "$work/live.log" || { echo "FAIL: the live viewer received no events; the app said:"; cat "$work/live_app.log"; exit 1; }
    [ "$(grep -c '^lane_band' "$work/live.layout")" -eq 2 ] || { echo "FAIL: expected 2 worker lanes"; exit 1; }
    # The rolling window's parallelism: a plot with at least one sample, a value or the
    # analysis' reason for none.
    grep '^live_parallelism' "$work/live.layout" | tail -1
    grep -Eq '^live_parallelism [1-9][0-9]* ([0-9.]+ [0-9.]+ $|none [0-9.]+ .+)' "$work/live.layout" || { echo "FAIL: no live parallelism"; exit 1; }
    if ! wait "$app"; then
      echo "FAIL: the app did not survive its viewer leaving:"
      cat "$work/live_app.log"
      exit 1
    fi
    cat "$work/live_app.log"
    # Nothing listening: said at once, exit 6, no window needed.
    set +e
    "$view" --attach 127.0.0.1:1 > "$work/nothing.log" 2>&1
    status=$?
    set -e
    cat "$work/nothing.log"
    [ "$status" -eq 6 ] || { echo "FAIL: --attach to nothing exited $status, expected 6"; exit 1; }
    grep -q "lantern-view: --attach 127.0.0.1:1: nothing answered" "$work/nothing.log" || { echo "FAIL: not said"; exit 1; }
    # A viewer that waits (--wait) before the app starts gets every event from the first,
    # and with --exit-when-done its picture and summary line are of the whole run: the
    # line's events equal the app's own trace file's.
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    (shot live_wait "(live)" --attach "127.0.0.1:$port" --wait --exit-when-done) > "$work/live_wait.out" 2>&1 &
    viewer=$!
    "$live_demo" --stream "127.0.0.1:$port" --workers 2 --fib 22 --seconds 1 --trace "$work/live_wait.trace" > "$work/live_wait_app.log" 2>&1
    wait "$viewer"
    cat "$work/live_wait.out"
    [ "$(cat "$work/live_wait.status")" = 0 ] || { echo "FAIL: the waiting viewer exited $(cat "$work/live_wait.status")"; cat "$work/live_wait_app.log"; exit 1; }
    [ -s "$work/live_wait.png" ] || { echo "FAIL: no picture"; exit 1; }
    viewed=$(sed -n 's/.*: \([0-9]*\) events, .*/\1/p' "$work/live_wait.log" | head -n 1)
    traced=$("$lantern_trace" info "$work/live_wait.trace" | sed -n 's/^events *\([0-9]*\) .*/\1/p')
    echo "the waiting viewer received $viewed events; the app's trace holds $traced"
    [ -n "$viewed" ] && [ "$viewed" = "$traced" ] || { echo "FAIL: the viewer missed part of the run"; cat "$work/live_wait_app.log"; exit 1; }
    # Drops: the viewer reports exactly the app's own (its rings' ring_full markers, which
    # a host too busy for the collector can cause), none of its own (slow_viewer,
    # before_attach).
    viewed_drops=$(sed -n 's/.* \([0-9]*\) events dropped.*/\1/p' "$work/live_wait.log" | head -n 1)
    traced_drops=$("$lantern_trace" info "$work/live_wait.trace" | sed -n 's/^dropped *\([0-9]*\) events lost.*/\1/p')
    echo "the waiting viewer reports $viewed_drops events dropped; the app's trace marks $traced_drops"
    [ -n "$viewed_drops" ] && [ "$viewed_drops" = "$traced_drops" ] || { echo "FAIL: drops reported that the app did not have"; exit 1; }
    ;;
  wide_slices)
    # A 4.07 ms task right after a cluster of 1 us tasks is drawn by itself, in its
    # own colour, with its name; zoomed out (whole trace) and at --at/--window.
    shot wide "$traces/flood.trace" --view timeline --size 1400x500
    expect_ok wide
    "$check" wide "$work/wide.png" "$work/wide.layout" "$traces/flood.trace"
    shot wide-zoom "$traces/flood.trace" --view timeline --size 1400x500 --at 6.5ms --window 6ms
    expect_ok wide-zoom
    "$check" wide "$work/wide-zoom.png" "$work/wide-zoom.layout" "$traces/flood.trace"
    ;;
  state_mix)
    # 2 s zoomed out: a worker active 0.7% of the time in short bursts shows them.
    for size in 1400x500 1024x640; do
      shot "mix-$size" "$traces/bursts.trace" --view timeline --size "$size"
      expect_ok "mix-$size"
      "$check" mix "$work/mix-$size.png" "$work/mix-$size.layout" "$traces/bursts.trace"
      "$check" lanes "$work/mix-$size.png" "$work/mix-$size.layout" "$traces/bursts.trace"
    done
    ;;
  damaged)
    # A damaged trace is not called fine in green; a task whose end was in the
    # damaged chunk stops where the record does, drawn open-ended.
    shot damaged_health "$traces/lost_end.trace" --view health --size 1024x640
    [ "$status" -eq 3 ] || { echo "FAIL: exit status $status, expected 3"; exit 1; }
    "$check" damaged "$work/damaged_health.png" "$work/damaged_health.layout" "$traces/lost_end.trace"
    shot damaged_all "$traces/corrupt.trace" --size 1600x900
    [ "$status" -eq 3 ] || { echo "FAIL: exit status $status, expected 3"; exit 1; }
    shot lost_end "$traces/lost_end.trace" --view timeline --size 1400x500
    [ "$status" -eq 3 ] || { echo "FAIL: exit status $status, expected 3"; exit 1; }
    "$check" lost_end "$work/lost_end.png" "$work/lost_end.layout" "$traces/lost_end.trace"
    ;;
  loading)
    # The trace arrives through a pipe in two parts; the viewer draws frames while
    # it loads (a picture of the first one with data: progress shown), and when loading
    # ends it shows the whole trace, not what had arrived by the first frame.
    trace="$traces/steals.trace"
    fifo="$work/loading.fifo"
    rm -f "$fifo" "$work/loading-first.png" "$work/loading.status"
    mkfifo "$fifo"
    xvfb-run -a -f "$work/loading.xauth" -s "-screen 0 1920x1080x24" bash -c '"$@"; echo $? > "$0"' "$work/loading.status" \
      "$view" --screenshot "$work/loading.png" --loading-screenshot "$work/loading-first.png" \
      --layout "$work/loading.layout" --view timeline --size 1400x600 "$fifo" > "$work/loading.log" 2>&1 &
    viewer=$!
    size=$(stat -c %s "$trace")
    # The writer: the first third, then (once the viewer has drawn a frame with it, at
    # most 60 s) the rest. Bounded by timeout, should the viewer never open the pipe.
    timeout 90 bash -c '
      exec 3> "$1"
      head -c $(($3 / 3)) "$2" >&3
      for _ in $(seq 600); do
        [ -s "$4" ] && break
        sleep 0.1
      done
      tail -c +$(($3 / 3 + 1)) "$2" >&3' _ "$fifo" "$trace" "$size" "$work/loading-first.png" &
    writer=$!
    wait "$viewer" || true
    # A viewer that never opened the pipe leaves the writer blocked in open: unblock it.
    kill -0 "$writer" 2> /dev/null && { exec 4< "$fifo"; exec 4<&-; } || true
    wait "$writer" || true
    cat "$work/loading.log"
    [ "$(cat "$work/loading.status" 2> /dev/null)" = 0 ] || { echo "FAIL: lantern-view exited with $(cat "$work/loading.status" 2> /dev/null)"; exit 1; }
    [ -s "$work/loading-first.png" ] || { echo "FAIL: no picture while loading"; exit 1; }
    "$check" progress "$work/loading-first.png" "$work/loading.layout.loading" "$trace"
    "$check" whole "$work/loading.png" "$work/loading.layout" "$trace"
    ;;
  layout)
    # At 1600x900 and 1024x640: labels unclipped and apart, steal-matrix text in
    # its panel, distinct legend colours; toggling the task colouring moves no lane.
    for size in 1600x900 1024x640; do
      for v in latency steals plots; do
        shot "layout-$v-$size" "$traces/real.trace" --view "$v" --size "$size"
        expect_ok "layout-$v-$size"
        "$check" layout "$work/layout-$v-$size.png" "$work/layout-$v-$size.layout" "$traces/real.trace"
      done
      for how in label source; do
        shot "layout-$how-$size" "$traces/labels.trace" --size "$size" --task-colours "$how"
        expect_ok "layout-$how-$size"
        "$check" layout "$work/layout-$how-$size.png" "$work/layout-$how-$size.layout" "$traces/labels.trace"
        grep '^lane_band' "$work/layout-$how-$size.layout" > "$work/layout-$how-$size.lanes"
      done
      cmp -s "$work/layout-label-$size.lanes" "$work/layout-source-$size.lanes" ||
        { echo "FAIL: at $size the lanes move when the task colouring changes:"; diff "$work/layout-label-$size.lanes" "$work/layout-source-$size.lanes"; exit 1; }
      [ -s "$work/layout-label-$size.lanes" ] || { echo "FAIL: no lanes recorded"; exit 1; }
    done
    ;;
  health_lists)
    # Findings grouped per worker with a count, sorted by time (default) or by
    # duration; long tasks named by label and id.
    shot health_time "$traces/health.trace" --view health --size 1024x640
    expect_ok health_time
    shot health_duration "$traces/health.trace" --view health --size 1024x640 --health-sort duration
    expect_ok health_duration
    rows() { awk '$1 == "health_row" && $2 == 0 {printf "w%s@%.0fms/%.0fms ", $3, $4 / 1000, $5 / 1000}' "$work/$1.layout"; }
    groups() { awk '$1 == "health_group" && $2 == 0 {printf "w%s(%s) ", $3, $4}' "$work/$1.layout"; }
    echo "by time:     groups $(groups health_time)  rows $(rows health_time)"
    echo "by duration: groups $(groups health_duration)  rows $(rows health_duration)"
    [ "$(groups health_time)" = "w0(3) " ] || { echo "FAIL: worker 0's three long tasks are not one group of 3"; exit 1; }
    [ "$(rows health_time)" = "w0@0ms/12ms w0@20ms/25ms w0@60ms/15ms w1@10ms/30ms " ] ||
      { echo "FAIL: not grouped by worker and sorted by time"; exit 1; }
    [ "$(rows health_duration)" = "w1@10ms/30ms w0@20ms/25ms w0@60ms/15ms w0@0ms/12ms " ] ||
      { echo "FAIL: not sorted by duration"; exit 1; }
    # The playhead hides what comes after it here too: at 30 ms only worker 0's first long
    # task had ended; worker 1's is going on (20 ms so far). The whole trace has 4.
    shot health_at "$traces/health.trace" --view health --size 1024x640 --at 30ms
    expect_ok health_at
    total() { awk '$1 == "health_total" {print $2 "/" $3}' "$work/$1.layout" | tail -1; }
    echo "at 30 ms: rows $(rows health_at) total $(total health_at); whole trace: total $(total health_time)"
    [ "$(rows health_at)" = "w0@0ms/12ms " ] || { echo "FAIL: the Health list shows findings after the playhead"; exit 1; }
    [ "$(total health_at)" = "2/4" ] || { echo "FAIL: the warnings by the playhead are not 1 ended + 1 ongoing (of 4)"; exit 1; }
    [ "$(total health_time)" = "4/4" ] || { echo "FAIL: the whole trace's warnings are not 4"; exit 1; }
    # What a reader reads: worker 1's long task was preempted (its thread waited 25 of its
    # 30 ms for a CPU), so the row says so; counts are worded in the singular for 1; no
    # group header, time or sort control is cut.
    grep -h '^health_preempted\|^health_header\|^health_clipped' "$work/health_time.layout" | sort -u || true
    grep -q '^health_preempted 1 preempted for 25.00 ms of its 30.00 ms$' "$work/health_time.layout" ||
      { echo "FAIL: the preempted long task does not say so"; exit 1; }
    if grep -q '^health_preempted 0 ' "$work/health_time.layout"; then echo "FAIL: worker 0's tasks were not preempted"; exit 1; fi
    grep -q '^health_header long task: 4 warnings, 4 occurrences' "$work/health_time.layout" ||
      { echo "FAIL: the long-task header does not count 4 warnings, 4 occurrences"; exit 1; }
    for f in health_time health_duration health_at; do
      if grep -Eq '^health_header .*[^0-9,]1 (warnings|occurrences)' "$work/$f.layout"; then echo "FAIL: '1 warnings' in $f"; exit 1; fi
      if grep -q '^health_clipped' "$work/$f.layout"; then echo "FAIL: text cut in $f: $(grep '^health_clipped' "$work/$f.layout")"; exit 1; fi
    done
    grep -q '^health_header long task: 1 warning, 1 occurrence###' "$work/health_at.layout" ||
      { echo "FAIL: at 30 ms the header does not read '1 warning, 1 occurrence'"; exit 1; }
    # The timeline shows the wait inside worker 1's slice, and no wait in worker 0's.
    shot health_timeline "$traces/health.trace" --view timeline --size 1600x900
    expect_ok health_timeline
    grep -q '^off_cpu 1 0 ' "$work/health_timeline.layout" || { echo "FAIL: no off-CPU bar in worker 1's slice"; exit 1; }
    if grep -q '^off_cpu 0 ' "$work/health_timeline.layout"; then echo "FAIL: an off-CPU bar on worker 0"; exit 1; fi
    ;;
  default_level)
    # At the Recorder's default level every panel has data, or says which level
    # it needs and how to ask for it (queue depth and ready wait: lane pops, 'full').
    trace="$traces/real_default.trace"
    shot default_all "$trace" --size 1600x900
    expect_ok default_all
    shot default_latency "$trace" --view latency --size 1024x640
    expect_ok default_latency
    grep -q '^needs_level 0 ' "$work/default_all.layout" || { echo "FAIL: the queue-depth plot is empty without saying why"; exit 1; }
    grep -q '^needs_level 1 ' "$work/default_latency.layout" || { echo "FAIL: the ready-wait histogram is empty without saying why"; exit 1; }
    if grep -q '^needs_level 2 ' "$work/default_latency.layout"; then echo "FAIL: a histogram is empty at the default level"; exit 1; fi
    ;;
  not_recorded)
    # A count the trace's level does not record is not drawn as 0: at level states (no
    # task, steal or help events) the steal panel, the rate plots and the Compare view say
    # "not recorded" and why (Analysis::counted, no_samples_reason); an empty latency
    # figure in the Compare view says why too. B (level full) has every count.
    states="$traces/real_states.trace" full="$traces/real.trace"
    shot nr_steals "$states" --view steals --size 1000x600
    expect_ok nr_steals
    grep -q '^not_recorded 1 1 ' "$work/nr_steals.layout" || { echo "FAIL: the steal panel shows steals and helps as counts"; exit 1; }
    shot nr_plots "$states" --view plots --size 1200x700
    expect_ok nr_plots
    for source in 1 4 6; do  # task_begin, steal, help
      grep -q "^not_recorded_plot $source " "$work/nr_plots.layout" || { echo "FAIL: plot of event $source drawn as zero"; exit 1; }
    done
    shot nr_compare "$states" --compare "$full" --size 1600x900
    expect_ok nr_compare
    # Steals by distance (kind 3): A's cells (even index) not recorded, B's (odd) counted.
    [ "$(grep -c '^compare_not_recorded 3 [0-9]*[02468] ' "$work/nr_compare.layout" || true)" = 5 ] ||
      { echo "FAIL: A's steals by distance are not all shown as not recorded"; exit 1; }
    if grep -q '^compare_not_recorded [0-9]* [0-9]*[13579] ' "$work/nr_compare.layout"; then
      echo "FAIL: a count of B (level full) is shown as not recorded"; exit 1
    fi
    # Latency rows: ready wait (0) and task duration (1) of A have no samples, and say why.
    for row in "0 0" "1 0"; do
      grep -q "^compare_no_samples $row " "$work/nr_compare.layout" || { echo "FAIL: empty latency $row without its reason"; exit 1; }
    done
    ;;
  numbers)
    # The badge, the stdout summary and the Health panel count the same warnings.
    shot numbers "$traces/steals.trace" --size 1600x900
    expect_ok numbers
    badge=$(awk '$1 == "badge_warnings" {print $2}' "$work/numbers.layout" | tail -1)
    health=$(awk '$1 == "health_warnings" {print $3}' "$work/numbers.layout" | tail -1)
    printed=$(sed -n 's/.* \([0-9][0-9]*\) warnings;.*/\1/p' "$work/numbers.log")
    echo "warnings: badge ${badge:-?}, Health ${health:-?}, stdout ${printed:-?}"
    [ -n "$badge" ] && [ -n "$health" ] && [ -n "$printed" ] || { echo "FAIL: a warning count is missing"; exit 1; }
    [ "$badge" = "$health" ] && [ "$badge" = "$printed" ] || { echo "FAIL: the warning counts differ"; exit 1; }
    [ "$badge" -gt 0 ] || { echo "FAIL: the trace was expected to have warnings"; exit 1; }
    ;;
  compare)
    check_scale() {  # check_scale NAME: A and B at one scale, the window holding the longer run
      python3 -c '
import sys
line = next(l for l in open(sys.argv[1]) if l.startswith("compare_scale "))
wa, wb, la, lb = map(float, line.split()[1:])
print(f"compare windows: A {wa / 1e6:.3f} ms, B {wb / 1e6:.3f} ms; runs: A {la / 1e6:.3f} ms, B {lb / 1e6:.3f} ms")
assert abs(wa - wb) <= 1e-6 * wb, "A and B are drawn at different scales"
assert wb >= max(la, lb), "the shared window does not hold the longer run"
' "$work/$1.layout" || { echo "FAIL: $1: the two timelines do not share one scale"; exit 1; }
    }
    # lantern-trace diff (table and JSON) and lantern-view --compare show the one
    # comparison: the same notable differences, the ones the trace pair was built with.
    a="$traces/labels.trace" b="$traces/labels_b.trace"
    "$lantern_trace" diff "$a" "$b" > "$work/diff.txt"
    cat "$work/diff.txt"
    "$lantern_trace" diff --json "$a" "$b" > "$work/diff.json"
    grep -Eq '^\* 2 +active +100\.0% +76\.9%' "$work/diff.txt" || { echo "FAIL: worker 2's active share is not a notable row"; exit 1; }
    grep -Eq '^\* parse ' "$work/diff.txt" || { echo "FAIL: parse durations are not a notable row"; exit 1; }
    grep -Eq '^  render ' "$work/diff.txt" || { echo "FAIL: render (unchanged) is marked or missing"; exit 1; }
    expected=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
n = sum(r["notable"] for k in ("state_shares", "task_durations", "steals_by_distance", "steal_matrix", "counts") for r in d[k])
lat = sum(r["notable"] for r in d["latency"])
assert d["notable"] == n + lat, "notable total"
assert any(r["label"] == "parse" and r["notable"] and abs(r["b"]["mean_ns"] / r["a"]["mean_ns"] - 0.68) < 0.05 for r in d["task_durations"])
print(n + 2 * lat)  # the viewer shows a latency row per run
' "$work/diff.json")
    shot compare "$a" --compare "$b" --size 1600x900
    expect_ok compare
    shown=$(grep -c '^compare_notable' "$work/compare.layout" || true)
    echo "notable rows: diff --json $expected (latency rows counted per run), viewer $shown"
    [ "$shown" = "$expected" ] || { echo "FAIL: the viewer highlights $shown rows, the diff has $expected"; exit 1; }
    "$check" highlight "$work/compare.png" "$work/compare.layout" "$a"
    # One time scale: both timelines' windows span the same time, fitted to the longer
    # run, and each run is drawn to its last event: B loaded whole before the picture.
    check_scale compare
    shot compare-small "$a" --compare "$b" --size 1024x640
    expect_ok compare-small
    # B gets A's checks: a file that is not a trace, or a cut-off one, is said on stderr
    # with B's name, and the exit status is 3, as for A.
    head -c 5000 /dev/zero | tr '\0' 'G' > "$work/garbage_b.trace"
    shot compare-garbage "$a" --compare "$work/garbage_b.trace" --size 1024x640
    [ "$status" -eq 3 ] || { echo "FAIL: --compare garbage exited $status, expected 3"; exit 1; }
    grep -q "lantern-view: $work/garbage_b.trace: .*not a Lantern trace" "$work/compare-garbage.log" || { echo "FAIL: B's problem is not said"; exit 1; }
    size=$(stat -c %s "$b")
    head -c $((size / 2)) "$b" > "$work/truncated_b.trace"
    shot compare-truncated "$a" --compare "$work/truncated_b.trace" --size 1024x640
    [ "$status" -eq 3 ] || { echo "FAIL: --compare of a truncated B exited $status, expected 3"; exit 1; }
    check_scale compare-truncated  # B is shorter than A here: still A's scale
    grep -q "lantern-view: $work/truncated_b.trace: .*truncated" "$work/compare-truncated.log" || { echo "FAIL: B's truncation is not said"; exit 1; }
    # Bad input to diff: a missing file is an error on stderr, exit 2.
    set +e
    "$lantern_trace" diff "$a" "$traces/missing.trace" > /dev/null 2> "$work/diff.err"
    status=$?
    set -e
    [ "$status" -eq 2 ] && grep -q "missing.trace" "$work/diff.err" || { echo "FAIL: diff of a missing file: exit $status"; exit 1; }
    ;;
  scalability)
    # The Scalability view of a trace whose task graph is known (graph_trace.hpp): the
    # figures it shows are lantern::analysis::scalability's (graph.scale, computed by
    # make_test_traces with the analysis itself) and the graph's known work and span; the
    # critical path is outlined on the timeline (every stretch, arrows where it changes
    # worker); the plot's texts are apart and inside the window; its legend names the
    # band, the simulated line and the measured point (scale_check.py). With --compare
    # both runs' points.
    check_scale_view() {  # check_scale_view NAME WIDTH HEIGHT
      python3 "$(dirname "$0")/scale_check.py" "$work/$1.layout" "$traces/graph.scale" "$2" "$3"
    }
    for size in 1600x900 1024x640; do
      shot "scale-$size" "$traces/graph.trace" --view scalability --size "$size"
      expect_ok "scale-$size"
      check_scale_view "scale-$size" "${size%x*}" "${size#*x}" || { echo "FAIL: scale-$size"; exit 1; }
    done
    # The walk on the path's 2nd stretch (the chain's head, on worker 1, 101 us to 1.101 ms):
    # it says so, and the timeline's window is centred on it.
    shot scale-walk "$traces/graph.trace" --view scalability --size 1600x900 --path-stretch 2
    expect_ok scale-walk
    python3 - "$work/scale-walk.layout" << 'CHECK' || { echo "FAIL: scale-walk"; exit 1; }
import sys
layout = [l.split() for l in open(sys.argv[1])]
walk = [l for l in layout if l[0] == "walk_step"][-1]
path = next(l for l in layout if l[0] == "scale_counts")[5]
assert walk[1:3] == ["1", path], f"the walk stands on {walk[1:3]}, not stretch 1 of {path}"
window = [float(x) for x in [l for l in layout if l[0] == "timeline_window"][-1][1:3]]
middle, stretch = (window[0] + window[1]) / 2, (101_000 + 1_101_000) / 2
print(f"walk on stretch 2 of {path}; window {window[0] / 1e3:.0f}..{window[1] / 1e3:.0f} us, its middle {middle / 1e3:.0f} us")
assert abs(middle - stretch) < 2_000, "the timeline is not centred on the stretch"
assert any(l[0] == "critical_stretch" and l[1] == "1" and l[2] == "1" for l in layout), "the stretch is not drawn on worker 1"
CHECK
    # The usual layout: the critical path is outlined on its timeline too.
    shot scale-all "$traces/graph.trace" --size 1600x900
    expect_ok scale-all
    grep -q '^critical_stretch ' "$work/scale-all.layout" || { echo "FAIL: no critical path on the usual timeline"; exit 1; }
    # Two runs: each run's measured point (A on 2 workers, B on 1).
    shot scale-compare "$traces/graph.trace" --compare "$traces/graph_serial.trace" --view scalability --size 1600x900
    expect_ok scale-compare
    grep '^scale_measured' "$work/scale-compare.layout"
    grep -q '^scale_measured A 2 ' "$work/scale-compare.layout" || { echo "FAIL: no point for A"; exit 1; }
    grep -q '^scale_measured B 1 ' "$work/scale-compare.layout" || { echo "FAIL: no point for B"; exit 1; }
    check_scale_view scale-compare 1600 900 || { echo "FAIL: scale-compare"; exit 1; }
    # A trace without a task graph: no figure is shown as a number.
    shot scale-nograph "$traces/states.trace" --view scalability --size 1024x640
    expect_ok scale-nograph
    grep '^scale_' "$work/scale-nograph.layout" | sort -u | head -20
    if grep -q '^scale_figure A \(work_ns\|span_ns\|parallelism\) ' "$work/scale-nograph.layout"; then
      echo "FAIL: a figure shown for a trace without tasks"; exit 1
    fi
    ;;
  all_views)
    for v in all timeline steals plots latency health scalability; do
      shot "view_$v" "$traces/real.trace" --view "$v"
      expect_ok "view_$v"
    done
    ;;
  *)
    echo "unknown scenario $scenario" >&2
    exit 2
    ;;
esac
echo "PASS: $scenario (pictures in $work)"
