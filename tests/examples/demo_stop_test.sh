#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# demo_stop_test.sh DEMO LIVE_DEMO LANTERN_TRACE: the demo programs' own output.
#   - lantern_demo stops early on SIGTERM as on SIGINT: it skips the workloads not begun,
#     writes its trace and prints its figures, and exits 0 (not 143 with no summary);
#   - its flood runs exactly the tasks it says (5,000 with --quick, every run), and the
#     trace agrees (label flood);
#   - lantern_live_demo prints its results on stdout; every line on its stderr says who
#     wrote it (the program, or lantern::observe's "lantern:").
# Waits are bounded loops on what the program prints; each fails loudly after its deadline.
set -uo pipefail
demo=$1 live_demo=$2 trace_tool=$3
label=demo_output
# shellcheck source=program_test_lib.sh
. "$(dirname "$0")/program_test_lib.sh"
unset LANTERN_TRACE LANTERN_METRICS LANTERN_STREAM LANTERN_FLIGHT LANTERN_LEVEL DISPLAY

for signal in TERM INT; do
  rm -f "$work"/demo.*
  "$demo" --quick --workers 2 --no-metrics --no-view --trace "$work/demo.trace" --linger 600 \
    > "$work/demo.out" 2> "$work/demo.err" &
  app=$!
  pids+=("$app")
  wait_for "$work/demo.out" "lingering   " 1 120
  kill -"$signal" "$app"
  deadline=$((SECONDS + 60))
  while kill -0 "$app" 2> /dev/null; do
    [ $SECONDS -ge $deadline ] && fail "SIG$signal: the demo is still running 60 s later"
    sleep 0.05
  done
  wait "$app"
  status=$?
  [ "$status" -eq 0 ] || fail "SIG$signal: exit status $status, expected 0"
  grep -q "stopped early by SIG$signal" "$work/demo.out" || fail "SIG$signal: no line saying it stopped early"
  grep -q "per-worker figures" "$work/demo.out" || fail "SIG$signal: no summary"
  grep -q "^trace: $work/demo.trace" "$work/demo.out" || fail "SIG$signal: the trace is not reported"
  "$trace_tool" validate "$work/demo.trace" > "$work/validate.out" 2>&1 || fail "SIG$signal: the trace is not valid"
  # The flood ran exactly the tasks it printed, and the trace counts as many.
  grep -Eq '^3\. flood +5000 self-spawning tasks' "$work/demo.out" || fail "the flood did not print 5000 tasks"
  "$trace_tool" stats "$work/demo.trace" > "$work/stats.out" 2>&1
  grep -Eq '^flood +5000 ' "$work/stats.out" || fail "the trace does not hold 5000 flood tasks"
done

# A whole run: the scalability table has a row for each of the six workloads, with work,
# span, parallelism (work / span) and the 8-, 64- and 1024-worker times, where max(T1/P,
# span) <= T_P; a workload may say "not computed" only because events were dropped, and
# then the demo reports the loss.
"$demo" --quick --workers 2 --no-metrics --no-view --trace "$work/whole.trace" > "$work/whole.out" 2>&1 \
  || fail "the demo's whole --quick run failed: $(tail -5 "$work/whole.out")"
python3 - "$work/whole.out" << 'PY' || fail "the demo's scalability table is wrong: $(sed -n '/^scalability per workload/,$p' "$work/whole.out")"
import re, sys
text = open(sys.argv[1]).read()
unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
def ns(v, u): return float(v) * unit[u]
table = text[text.index("scalability per workload"):]
lost = "events lost:" in text
for name in ["1. fork-join", "2. bursts", "3. flood", "4. pipelines", "5. echo", "6. ordered"]:
    row = next((l for l in table.splitlines() if l.startswith(name + " ")), None)
    assert row, f"no row for {name}"
    if "not computed" in row:
        assert lost and "dropped" in row, f"{name}: not computed without a reported loss: {row}"
        continue
    d = re.findall(r"([0-9.]+) (ns|us|ms|s)\b", row)
    p = re.search(r"(us|ms|s) +([0-9.]+) +[0-9.]+ (?:ns|us|ms|s)", row)
    assert len(d) == 6 and p, f"{name}: not measured, work, span, parallelism, T_8, T_64, T_1024: {row}"
    work, span, t8, t64, t1024 = ns(*d[1]), ns(*d[2]), ns(*d[3]), ns(*d[4]), ns(*d[5])
    par = float(p.group(2))
    assert span <= work * 1.001 and abs(par - work / span) <= 0.01 * par + 0.01, f"{name}: parallelism is not work / span: {row}"
    for P, t in ((8, t8), (64, t64), (1024, t1024)):
        assert t >= max(work / P, span) * 0.995, f"{name}: T_{P} below the greedy lower bound: {row}"
PY
# lantern_live_demo: results on stdout, stderr only with the program's name.
"$live_demo" --once --fib 20 --workers 2 > "$work/live.out" 2> "$work/live.err" || fail "lantern_live_demo --once failed"
grep -q '^fib(20) = 6765 in ' "$work/live.out" || fail "lantern_live_demo printed no result on stdout"
# (lantern::observe's own notes say "lantern: ...": observe names itself.)
if grep -q 'fib(' "$work/live.err"; then fail "lantern_live_demo printed its result on stderr"; fi
if grep -Eqv '^(lantern_live_demo|lantern): ' "$work/live.err"; then fail "a line on lantern_live_demo's stderr has no name"; fi
echo "ok"
