#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""wake_phases.py TRACE SAMPLES [--slow US] [--show K]

Splits each sample of the wake benchmark (lantern_wake_diag) into phases, from an
ftrace of the run (wake_trace.sh makes both files):

  TRACE    the kernel's trace as text (/sys/kernel/tracing/trace), with the sched
           events sched_waking, sched_wakeup and sched_switch, and the markers
           lantern_wake_diag --wake-trace writes ("lantern_wake SIDE WORKERS INDEX").
  SAMPLES  the list lantern_wake_diag --wake-trace wrote: side (L = Lantern, T = oneTBB,
           F = the floor, a bare FUTEX_WAKE of a thread blocked on a futex word),
           workers, index, latency in us, the thread that ran the task.

A sample's phases, from its marker (written just before the submit) to the task's
start (the marker's time plus the sample's latency):

  to wake   until the kernel is asked to wake the task's thread (sched_waking): the
            submit path in user space and the system call's entry
  wake      until that thread is runnable (sched_wakeup); an IPI when it is woken on
            another CPU
  queued    until it is switched in (sched_switch): the CPU is busy (on the
            submitter's own CPU, until the submitter blocks or is preempted)
  to task   until the task starts: the woken thread's way from the kernel to the task

A sample slower than --slow (default 50 us) is a stall; it is put down to its longest
phase. The figures are the trace's, which has microsecond resolution.
"""
import argparse
import collections
import re
import sys

PHASES = ("to wake", "wake", "queued", "to task")
EVENT = re.compile(r"^\s*(.*?)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+): (\w+): (.*)$")
MARK = re.compile(r"lantern_wake (\w) (\d+) (\d+)")
PID = re.compile(r"\bpid=(\d+)\b")
NEXT_PID = re.compile(r"\bnext_pid=(\d+)\b")


def fail(message):
    print(f"wake_phases.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_samples(path):
    samples = {}
    try:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                fields = line.split()
                if len(fields) != 5 or fields[0] not in ("L", "T", "F"):
                    fail(f"{path}:{number}: not a sample line (side workers index us tid): {line.strip()!r}")
                side, workers, index, us, tid = fields
                samples[(side, int(workers), int(index))] = (float(us), int(tid))
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    if not samples:
        fail(f"{path} holds no samples")
    return samples


def read_trace(path):
    events, lost = [], None
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("#"):
                    m = re.search(r"entries-in-buffer/entries-written: (\d+)/(\d+)", line)
                    if m and int(m.group(1)) < int(m.group(2)):
                        lost = int(m.group(2)) - int(m.group(1))
                    continue
                m = EVENT.match(line)
                if m:
                    # (time in us, pid, cpu, event, details)
                    events.append((float(m.group(4)) * 1e6, int(m.group(2)), int(m.group(3)), m.group(5), m.group(6)))
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    if lost:
        print(f"wake_phases.py: warning: the trace buffer overflowed ({lost} events lost): "
              "early samples may have no events", file=sys.stderr)
    return events


def split(events, samples):
    """Yields (side, workers, index, us, phases or None, other_cpu) per sample found."""
    marks = []
    for i, (_, _, _, name, details) in enumerate(events):
        if name == "tracing_mark_write":
            m = MARK.search(details)
            if m:
                marks.append((i, m.group(1), int(m.group(2)), int(m.group(3))))
    for k, (i, side, workers, index) in enumerate(marks):
        key = (side, workers, index)
        if key not in samples:
            continue
        us, tid = samples[key]
        end = marks[k + 1][0] if k + 1 < len(marks) else len(events)
        t0, cpu0 = events[i][0], events[i][2]
        waking = wakeup = switch = None
        switch_cpu = None
        for t, _, cpu, name, details in events[i:end]:
            if name == "sched_waking" and waking is None and _pid(PID, details) == tid:
                waking = t
            elif name == "sched_wakeup" and wakeup is None and _pid(PID, details) == tid:
                wakeup = t
            elif name == "sched_switch" and switch is None and _pid(NEXT_PID, details) == tid:
                switch, switch_cpu = t, cpu
        if waking is None or wakeup is None or switch is None or not (t0 <= waking <= wakeup <= switch):
            yield side, workers, index, us, None, None
            continue
        start = t0 + us
        phases = dict(zip(PHASES, (waking - t0, wakeup - waking, switch - wakeup, max(0.0, start - switch))))
        yield side, workers, index, us, phases, switch_cpu != cpu0


def _pid(pattern, details):
    m = pattern.search(details)
    return int(m.group(1)) if m else None


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    rank = max(0, min(len(values) - 1, -(-len(values) * p // 100) - 1))
    return values[int(rank)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("samples")
    parser.add_argument("--slow", type=float, default=50.0, help="a stall: a sample slower than this (us)")
    parser.add_argument("--show", type=int, default=0, help="print the K slowest samples of each side")
    args = parser.parse_args()
    if args.slow <= 0:
        fail("--slow takes a positive number of microseconds")
    samples = read_samples(args.samples)
    events = read_trace(args.trace)
    groups = collections.defaultdict(list)
    for side, workers, index, us, phases, other_cpu in split(events, samples):
        groups[(workers, side)].append((us, phases, other_cpu, index))
    if not groups:
        fail("no sample's marker is in the trace (was it taken with lantern_wake_diag --wake-trace?)")
    names = {"L": "Lantern", "T": "oneTBB", "F": "floor (bare futex)"}
    print(f"Wake phases (us; the trace's resolution is 1 us). Stall: a sample slower than {args.slow:g} us,")
    print("put down to its longest phase. 'no events': the task's thread was not woken in the trace.")
    print()
    print("| workers | side | samples | p50 | p90 | p99 | " + " | ".join(f"{p} p50 / p90" for p in PHASES) +
          " | task on another CPU | stalls | stalls by phase |")
    print("| --: | --- | --: | --: | --: | --: | " + " | ".join("--:" for _ in PHASES) + " | --: | --: | --- |")
    for (workers, side), rows in sorted(groups.items()):
        traced = [r for r in rows if r[1] is not None]
        total = [r[0] for r in rows]
        cells = []
        for p in PHASES:
            values = [r[1][p] for r in traced]
            cells.append(f"{percentile(values, 50):.0f} / {percentile(values, 90):.0f}")
        stalls = [r for r in rows if r[0] > args.slow]
        by_phase = collections.Counter(max(r[1], key=r[1].get) if r[1] else "no events" for r in stalls)
        other = sum(1 for r in traced if r[2])
        print(f"| {workers} | {names[side]} | {len(rows)} | {percentile(total, 50):.1f} | {percentile(total, 90):.1f} | "
              f"{percentile(total, 99):.1f} | " + " | ".join(cells) + f" | {other} | {len(stalls)} | " +
              ", ".join(f"{k} {v}" for k, v in by_phase.most_common()) + " |")
    if args.show > 0:
        for (workers, side), rows in sorted(groups.items()):
            print(f"\n{names[side]}, {workers} workers, the {args.show} slowest:")
            for us, phases, other_cpu, index in sorted(rows, key=lambda r: r[0])[-args.show:]:
                detail = "no events" if phases is None else ", ".join(f"{p} {phases[p]:.0f}" for p in PHASES)
                print(f"  sample {index}: {us:.1f} us ({detail}{', on another CPU' if other_cpu else ''})")


if __name__ == "__main__":
    main()
