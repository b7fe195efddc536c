#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ab.py - an older commit's core against a newer one, on the same kernels, alternating.

usage: bench/ab/ab.py [options] OLD [NEW]

Builds the core of OLD and of NEW (default: the working tree, tracked and untracked
files as they are) in Release (or --build-type), each with the kernels of bench/ab/ab_kernels.cpp (taken
from this tree, so both sides run the same kernel source), then runs both sides'
kernels alternately: pair i runs OLD then NEW (NEW then OLD in even pairs), each run a
fresh process with pinned workers that times one warm-up and --reps repetitions and
reports their median. Prints a Markdown table: each side's median of the pairs with the
range, and NEW/OLD as the median of the pairs' ratios with their range. A kernel that
does not build against a side's core gets a row that says so.

Trees and builds are kept under --work (default build/ab in this repository): a commit's
build is reused by later runs; the working tree's is rebuilt (incrementally) each run.

options:
  --pairs N        alternating pairs (default 5)
  --reps N         timed repetitions a run, after one warm-up (default 5)
  --workers LIST   worker counts, e.g. 1,2 (default 1)
  --clock CLOCK    wall: each repetition end to end from the main thread (default);
                   thread: the CPU time of the worker thread running the kernel, from
                   inside its task (1 worker only), which other processes on a loaded
                   machine do not inflate by preempting it
  --kernels LIST   some of: KERNELS (default all)
  --build-type T   CMAKE_BUILD_TYPE of both sides: Release (default, -O3) or
                   RelWithDebInfo (-O2, as most packages and applications build)
  --work DIR       where trees and builds go (default build/ab)
  --dry-run        print what would be built and run, build and run nothing
  --self-check     test this script's argument parsing and statistics, run nothing
  -h, --help       this text

Exit status: 0 when every run gave the right answer; 2 on bad usage, a failed build of
the core, or a wrong answer.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys

PROGRAM = "ab.py"
HERE = os.path.dirname(os.path.abspath(__file__))


def read_kernels():
    """The kernels, in the order of kernels.cmake's LANTERN_AB_KERNELS (one list for both)."""
    with open(os.path.join(HERE, "kernels.cmake")) as f:
        for line in f:
            if line.startswith("set(LANTERN_AB_KERNELS "):
                return line.strip()[len("set(LANTERN_AB_KERNELS "):-1].split()
    raise SystemExit(f"{PROGRAM}: no LANTERN_AB_KERNELS in kernels.cmake")


KERNELS = read_kernels()
REPO = os.path.dirname(os.path.dirname(HERE))
WORKTREE = "worktree"  # NEW's name when it is the working tree


class UsageError(Exception):
    pass


def parse_args(argv):
    doc = __doc__.replace("KERNELS", ",".join(KERNELS))
    parser = argparse.ArgumentParser(prog=PROGRAM, add_help=False, usage=argparse.SUPPRESS)
    parser.add_argument("-h", "--help", action="store_true")
    parser.add_argument("--pairs", default="5")
    parser.add_argument("--reps", default="5")
    parser.add_argument("--workers", default="1")
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--clock", default="wall")
    parser.add_argument("--build-type", default="Release")
    parser.add_argument("--work", default=os.path.join(REPO, "build", "ab"))
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--self-check", action="store_true")
    parser.add_argument("commits", nargs="*")

    def fail(message):
        raise UsageError(message)

    parser.error = fail
    args = parser.parse_args(argv)
    if args.help:
        return args, doc
    if args.self_check:
        return args, None
    if not 1 <= len(args.commits) <= 2:
        raise UsageError("give OLD and optionally NEW (see --help)")
    args.old = args.commits[0]
    args.new = args.commits[1] if len(args.commits) == 2 else WORKTREE
    args.pairs = positive(args.pairs, "--pairs", 100)
    args.reps = positive(args.reps, "--reps", 1000)
    args.workers = [positive(w, "--workers", 1024) for w in args.workers.split(",")]
    if args.build_type not in ("Release", "RelWithDebInfo"):
        raise UsageError(f"--build-type is Release or RelWithDebInfo, not '{args.build_type}'")
    if args.clock not in ("wall", "thread"):
        raise UsageError(f"--clock is wall or thread, not '{args.clock}'")
    if args.clock == "thread" and args.workers != [1]:
        raise UsageError("--clock thread needs --workers 1")
    args.kernels = args.kernels.split(",")
    for k in args.kernels:
        if k not in KERNELS:
            raise UsageError(f"unknown kernel '{k}' (known: {','.join(KERNELS)})")
    return args, None


def positive(text, option, most):
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"{option} takes a number, not '{text}'") from None
    if not 1 <= value <= most:
        raise UsageError(f"{option} must be 1 to {most}, not {value}")
    return value


def spread(values):
    """'median (min-max)' of the values."""
    return f"{statistics.median(values):.3g} ({min(values):.3g}-{max(values):.3g})"


def row(kernel, workers, unit, old, new, missing):
    """One table row. old and new: each pair's figure (the run's median); missing: why a
    side has none, or None."""
    if missing:
        return f"| {kernel} | {workers} | {unit or ''} | {missing} | | |"
    ratios = [n / o for o, n in zip(old, new)]
    return f"| {kernel} | {workers} | {unit} | {spread(old)} | {spread(new)} | {spread(ratios)} |"


def self_check():
    def expect_usage(argv, words):
        try:
            parse_args(argv)
        except UsageError as e:
            assert words in str(e), (argv, str(e))
            return
        raise AssertionError(f"{argv} was accepted")

    args, _ = parse_args(["abc123"])
    assert (args.old, args.new, args.pairs, args.reps, args.workers, args.kernels) == (
        "abc123", WORKTREE, 5, 5, [1], KERNELS)
    args, _ = parse_args(["--pairs", "3", "--workers", "1,2", "--kernels", "fib_join", "a", "b"])
    assert (args.old, args.new, args.pairs, args.workers, args.kernels) == ("a", "b", 3, [1, 2], ["fib_join"])
    _, text = parse_args(["--help"])
    assert "usage: bench/ab/ab.py" in text and "fib_join" in text
    expect_usage([], "give OLD")
    expect_usage(["a", "b", "c"], "give OLD")
    expect_usage(["--pairs", "0", "a"], "--pairs must be 1 to 100")
    expect_usage(["--reps", "x", "a"], "--reps takes a number")
    expect_usage(["--kernels", "fib", "a"], "unknown kernel 'fib'")
    expect_usage(["--bogus", "a"], "unrecognized arguments")
    expect_usage(["--clock", "cpu", "a"], "--clock is wall or thread")
    expect_usage(["--build-type", "Debug", "a"], "--build-type is Release or RelWithDebInfo")
    expect_usage(["--clock", "thread", "--workers", "2", "a"], "needs --workers 1")
    assert spread([3.0, 1.0, 2.0]) == "2 (1-3)"
    assert row("k", 1, "ms", [10.0, 10.0, 10.0], [11.0, 9.0, 10.0], None) == (
        "| k | 1 | ms | 10 (10-10) | 10 (9-11) | 1 (0.9-1.1) |")
    assert row("k", 2, None, [], [], "not built at OLD x") == "| k | 2 |  | not built at OLD x | | |"
    print(f"{PROGRAM}: self-check passed")


def run(command, dry_run, **kwargs):
    if dry_run:
        print("  " + " ".join(command))
        return subprocess.CompletedProcess(command, 0, "", "")
    return subprocess.run(command, **kwargs)


def resolve(commit, dry_run):
    if commit == WORKTREE:
        return WORKTREE, REPO
    done = subprocess.run(["git", "-C", REPO, "rev-parse", "--verify", "--quiet", commit + "^{commit}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise UsageError(f"'{commit}' is not a commit of {REPO}")
    return done.stdout.strip()[:12], None


def prepare(name, source, work, build_type, dry_run):
    """Builds side `name` (a short hash, or the working tree at `source`); returns its build
    folder and the kernels that built."""
    build = os.path.join(work, "build-" + name + ("" if build_type == "Release" else "-" + build_type))
    if source is None:  # a commit: its tree, exported once
        source = os.path.join(work, "src-" + name)
        if not os.path.isdir(source):
            print(f"{PROGRAM}: exporting {name} into {source}", file=sys.stderr)
            if not dry_run:
                os.makedirs(source + ".tmp", exist_ok=True)
                archive = subprocess.Popen(["git", "-C", REPO, "archive", name], stdout=subprocess.PIPE)
                subprocess.run(["tar", "-x", "-C", source + ".tmp"], stdin=archive.stdout, check=True)
                if archive.wait() != 0:
                    raise UsageError(f"git archive {name} failed")
                os.rename(source + ".tmp", source)
            else:
                print(f"  git archive {name} | tar -x -C {source}")
    configure = ["cmake", "-S", HERE, "-B", build, "-G", "Ninja", f"-DCMAKE_BUILD_TYPE={build_type}",
                 f"-DLANTERN_SOURCE_DIR={source}"]
    if shutil.which("ccache"):
        configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    print(f"{PROGRAM}: building {name}'s core and kernels in {build}", file=sys.stderr)
    log = build + ".log"
    if not dry_run:
        os.makedirs(work, exist_ok=True)
    env = dict(os.environ, CCACHE_BASEDIR=source)
    with open(log if not dry_run else os.devnull, "w") as out:
        done = run(configure, dry_run, stdout=out, stderr=subprocess.STDOUT, env=env)
        if done.returncode != 0:
            raise UsageError(f"configuring {name} failed: see {log}")
        done = run(["cmake", "--build", build, "--", "-k", "0"], dry_run, stdout=out, stderr=subprocess.STDOUT, env=env)
    built = {k for k in KERNELS if dry_run or os.path.exists(os.path.join(build, "lantern_ab_" + k))}
    if not dry_run and not os.path.exists(os.path.join(build, "lantern", "core", "liblantern_core.a")):
        raise UsageError(f"building {name}'s core failed: see {log}")
    if len(built) < len(KERNELS):
        print(f"{PROGRAM}: {name}: {len(KERNELS) - len(built)} kernel(s) did not build: see {log}", file=sys.stderr)
    return build, built


def run_kernel(build, kernel, workers, reps, clock, dry_run):
    """One run: the median of its repetitions, and the unit."""
    done = run([os.path.join(build, "lantern_ab_" + kernel), str(workers), str(reps), clock], dry_run,
               capture_output=True, text=True)
    if dry_run:
        return 1.0, "?"
    if done.returncode != 0:
        raise UsageError(f"{kernel} failed in {build}: {done.stderr.strip()}")
    fields = done.stdout.split()
    return statistics.median(float(v) for v in fields[2:]), fields[1]


def main(argv):
    try:
        args, text = parse_args(argv)
        if text:
            print(text.strip())
            return 0
        if args.self_check:
            self_check()
            return 0
        old_name, old_source = resolve(args.old, args.dry_run)
        new_name, new_source = resolve(args.new, args.dry_run)
        old_build, old_built = prepare(old_name, old_source, args.work, args.build_type, args.dry_run)
        new_build, new_built = prepare(new_name, new_source, args.work, args.build_type, args.dry_run)
        figures = {}  # (kernel, workers) -> (unit, old figures, new figures)
        for pair in range(args.pairs):
            for kernel in args.kernels:
                if kernel not in old_built or kernel not in new_built:
                    continue
                for workers in args.workers:
                    sides = [(old_build, 1), (new_build, 2)]
                    if pair % 2:
                        sides.reverse()
                    unit, got = None, {}
                    for build, side in sides:
                        got[side], unit = run_kernel(build, kernel, workers, args.reps, args.clock, args.dry_run)
                    entry = figures.setdefault((kernel, workers), (unit, [], []))
                    entry[1].append(got[1])
                    entry[2].append(got[2])
            print(f"{PROGRAM}: pair {pair + 1} of {args.pairs} done", file=sys.stderr)
        if args.dry_run:
            return 0
        print(f"OLD {old_name}, NEW {new_name}: {args.pairs} alternating pairs, each run the median of "
              f"{args.reps} repetitions after a warm-up, workers pinned, {args.clock} clock, {args.build_type} builds; figures: median of the pairs "
              f"(min-max); NEW/OLD: median of the pairs' ratios (min-max). Lower is better.\n")
        print("| kernel | workers | unit | OLD " + old_name + " | NEW " + new_name + " | NEW/OLD |")
        print("| --- | --: | --- | --: | --: | --: |")
        for kernel in args.kernels:
            for workers in args.workers:
                missing = None
                if kernel not in old_built:
                    missing = f"not built at OLD {old_name} (its core lacks what the kernel uses)"
                elif kernel not in new_built:
                    missing = f"not built at NEW {new_name}"
                unit, old, new = figures.get((kernel, workers), (None, [], []))
                print(row(kernel, workers, unit, old, new, missing))
        return 0
    except UsageError as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
