#!/usr/bin/env bash
# screenshot_test.sh - lantern-view renders pictures under Xvfb; the pictures are checked.
#
#   screenshot_test.sh SCENARIO LANTERN_VIEW MAKE_TEST_TRACES SCREENSHOT_CHECK WORKDIR LIVE_DEMO
#
# Scenarios: lanes_scripted, lanes_synthetic, lanes_real, matrix_steals, matrix_one_worker,
# labels, bad_input, all_views, live. Never skips: without xvfb-run it fails and says what
# to install.
set -euo pipefail
scenario=$1 view=$2 make_traces=$3 check=$4 work=$5 live_demo=$6

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
    trace="$traces/${scenario#lanes_}.ltrace"
    [ "$scenario" = lanes_scripted ] && trace="$traces/states.ltrace"
    [ "$scenario" = lanes_synthetic ] && trace="$traces/steals.ltrace"
    shot "$scenario" "$trace" --view timeline --size 1400x700
    expect_ok "$scenario"
    "$check" lanes "$work/$scenario.png" "$work/$scenario.layout" "$trace"
    # The same lanes, deeply zoomed in (a different level of detail).
    shot "$scenario-zoom" "$trace" --view timeline --size 1400x700 --at 2ms --window 300us
    expect_ok "$scenario-zoom"
    "$check" lanes "$work/$scenario-zoom.png" "$work/$scenario-zoom.layout" "$trace"
    ;;
  matrix_steals)
    shot matrix_steals "$traces/steals.ltrace" --view steals --size 1000x600
    expect_ok matrix_steals
    "$check" matrix "$work/matrix_steals.png" "$work/matrix_steals.layout" "$traces/steals.ltrace" nonempty
    ;;
  matrix_one_worker)
    shot matrix_one_worker "$traces/one_worker.ltrace" --view steals --size 1000x600
    expect_ok matrix_one_worker
    "$check" matrix "$work/matrix_one_worker.png" "$work/matrix_one_worker.layout" "$traces/one_worker.ltrace" empty
    ;;
  labels)
    # Labelled tasks: legend swatches in each label's colour, task rows in those colours,
    # release arrows; whole trace and zoomed in (names drawn on the slices).
    shot labels "$traces/labels.ltrace" --view timeline --size 1400x600
    expect_ok labels
    "$check" labels "$work/labels.png" "$work/labels.layout" "$traces/labels.ltrace"
    shot labels-zoom "$traces/labels.ltrace" --view timeline --size 1400x600 --at 4ms --window 2ms
    expect_ok labels-zoom
    "$check" labels "$work/labels-zoom.png" "$work/labels-zoom.layout" "$traces/labels.ltrace"
    # Every view renders with labels, releases and IO (the plots gain "releases / s").
    shot labels-all "$traces/labels.ltrace" --size 1600x1000
    expect_ok labels-all
    ;;
  bad_input)
    # Every bad input: a picture with the message, exit status 3, never a crash.
    for bad in truncated corrupt newer not_a_trace missing; do
      shot "bad_$bad" "$traces/$bad.ltrace"
      if [ "$status" -ne 3 ]; then
        echo "FAIL: $bad.ltrace: exit status $status, expected 3 (trace problems)"
        exit 1
      fi
      [ -s "$work/bad_$bad.png" ] || { echo "FAIL: no picture for $bad.ltrace"; exit 1; }
    done
    grep -q "newer" "$work/bad_newer.log" || grep -qi "version" "$work/bad_newer.log" ||
      { echo "FAIL: the newer-version message does not mention the version"; exit 1; }
    grep -qi "truncat\|ends inside" "$work/bad_truncated.log" || { echo "FAIL: truncation not reported"; exit 1; }
    grep -q "No such file" "$work/bad_missing.log" || { echo "FAIL: a missing file is not named as such"; exit 1; }
    # What could be read is still shown: the truncated trace has events.
    grep -Eq ": [1-9][0-9,]* events" "$work/bad_truncated.log" || { echo "FAIL: the truncated trace shows no events"; exit 1; }
    ;;
  live)
    # An app streams; the viewer attaches, collects for 2 s, takes its picture and exits.
    # The app must neither wait for nor notice the viewer leaving.
    port=$((20000 + RANDOM % 20000))
    "$live_demo" --stream "127.0.0.1:$port" --workers 2 --fib 24 --seconds 4 --wait-for-viewer > "$work/live_app.log" 2>&1 &
    app=$!
    shot live "(live)" --attach "127.0.0.1:$port" --after 2s
    expect_ok live
    grep -Eq ": [1-9][0-9,]* events" "$work/live.log" || { echo "FAIL: the live viewer received no events"; exit 1; }
    [ "$(grep -c '^lane_band' "$work/live.layout")" -eq 2 ] || { echo "FAIL: expected 2 worker lanes"; exit 1; }
    if ! wait "$app"; then
      echo "FAIL: the app did not survive its viewer leaving:"
      cat "$work/live_app.log"
      exit 1
    fi
    cat "$work/live_app.log"
    ;;
  all_views)
    for v in all timeline steals plots latency health; do
      shot "view_$v" "$traces/real.ltrace" --view "$v"
      expect_ok "view_$v"
    done
    ;;
  *)
    echo "unknown scenario $scenario" >&2
    exit 2
    ;;
esac
echo "PASS: $scenario (pictures in $work)"
