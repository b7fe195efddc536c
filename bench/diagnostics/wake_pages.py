#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""wake_pages.py [--bin PATH] [--samples N] [--detail] [--keep DIR]
   wake_pages.py --trace FILE --markers BEGIN TASK [--maps FILE] [--detail]

Counts the 4 KiB pages and 64-byte lines one wake's path touches, in user space, from an
outside post into a sleeping 1-worker pool until the task starts: Lantern's and oneTBB's,
side by side. Where an idle spell empties the TLB (a host whose system calls do, without
PCID), each page on that path is a TLB miss (on a VM a two-dimensional page walk, ~60-150
ns); there the count is the part of a wake's cost that the code's layout decides. Where
system calls keep the TLB, one page less measures no faster.

The first form runs lantern_wake_pages (--bin, default build/release/bench/
diagnostics/lantern_wake_pages; its build needs -DLANTERN_BENCH_DIAGNOSTICS=ON) once a side under valgrind's lackey (the Debian package valgrind),
which records every instruction fetch, load and store of every thread. The accesses
between the program's first two markers (a store before the post, a store as the task
starts) are one sample; the first sample warms up and is shown apart. --keep DIR keeps
each side's trace and memory map there.

The second form reads a lackey trace already made (--trace) with the two markers'
addresses (hex, as lantern_wake_pages prints them).

--detail lists each page of the last sample: code or data, its address, the mapping it
belongs to (with --maps, or in the first form) and how many accesses and lines it had.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

PAGE = 12
LINE = 6


def fail(message):
    print(f"wake_pages.py: {message}", file=sys.stderr)
    sys.exit(2)


def parse_address(text):
    try:
        return int(text, 16)
    except ValueError:
        fail(f"not a hex address: {text}")


def read_maps(path):
    maps = []
    if not path:
        return maps
    try:
        with open(path) as f:
            for line in f:
                fields = line.split()
                if len(fields) < 5:
                    continue
                low, high = (int(x, 16) for x in fields[0].split("-"))
                maps.append((low, high, fields[5] if len(fields) > 5 else "[anon]"))
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    return maps


def mapping(maps, address):
    for low, high, name in maps:
        if low <= address < high:
            return os.path.basename(name)
    return "?"


def samples_of(trace_path, begin, task):
    """Each sample: {(kind, page): [accesses, set of lines]} between the two markers."""
    begin_page, task_page = begin >> PAGE, task >> PAGE
    samples, current = [], None
    try:
        f = open(trace_path)
    except OSError as e:
        fail(f"cannot read {trace_path}: {e.strerror}")
    with f:
        for line in f:
            # "I  04011d0,3" (instruction), " L addr,size", " S ...", " M ..." (data)
            if len(line) < 4 or line[0] not in " I" or line[1] not in " LSM":
                continue
            kind = "code" if line[0] == "I" else "data"
            try:
                address = int(line[3:].split(",", 1)[0], 16)
            except ValueError:
                continue
            page = address >> PAGE
            if kind == "data" and page == begin_page:
                current = {}
                continue
            if kind == "data" and page == task_page:
                if current is not None:
                    samples.append(current)
                current = None
                continue
            if current is not None:
                entry = current.setdefault((kind, page), [0, set()])
                entry[0] += 1
                entry[1].add(address >> LINE)
    return samples


def figures(sample):
    code = [v for (k, _), v in sample.items() if k == "code"]
    data = [v for (k, _), v in sample.items() if k == "data"]
    return {
        "code pages": len(code),
        "code lines": sum(len(v[1]) for v in code),
        "data pages": len(data),
        "data lines": sum(len(v[1]) for v in data),
        "instructions": sum(v[0] for v in code),
    }


COLUMNS = ("code pages", "code lines", "data pages", "data lines", "instructions")


def table(rows):
    out = ["| side | samples | " + " | ".join(COLUMNS) + " | first sample (warm-up): pages |",
           "| --- | --: | " + " | ".join("--:" for _ in COLUMNS) + " | --: |"]
    for name, samples in rows:
        if len(samples) < 2:
            fail(f"{name}: {len(samples)} complete samples in the trace (the markers were not both seen)")
        measured = [figures(s) for s in samples[1:]]
        first = figures(samples[0])
        medians = [statistics.median(m[c] for m in measured) for c in COLUMNS]
        out.append(f"| {name} | {len(measured)} | " + " | ".join(f"{v:.0f}" if v == int(v) else f"{v:.1f}" for v in medians) +
                   f" | {first['code pages']} code, {first['data pages']} data |")
    return "\n".join(out)


def detail(name, sample, maps):
    lines = [f"\n{name}, last sample:"]
    for (kind, page), (accesses, touched) in sorted(sample.items()):
        lines.append(f"  {kind} {page << PAGE:#x} {mapping(maps, page << PAGE)}: {accesses} accesses, {len(touched)} lines")
    return "\n".join(lines)


def run_side(binary, side, samples, workdir):
    trace = os.path.join(workdir, f"{side}.lackey")
    maps = os.path.join(workdir, f"{side}.maps")
    command = ["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={trace}", binary, "--side", side,
               "--samples", str(samples), "--maps", maps]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"{' '.join(command)} exited with {result.returncode}:\n{result.stderr.strip()}")
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[0] == "markers":
            return trace, maps, parse_address(fields[1]), parse_address(fields[2])
    fail(f"{binary} printed no markers line")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                                                      "release", "bench", "diagnostics", "lantern_wake_pages"))
    parser.add_argument("--samples", type=int, default=6)
    parser.add_argument("--keep")
    parser.add_argument("--trace")
    parser.add_argument("--markers", nargs=2, metavar=("BEGIN", "TASK"))
    parser.add_argument("--maps")
    parser.add_argument("--detail", action="store_true")
    args = parser.parse_args()

    if args.trace:
        if not args.markers:
            fail("--trace needs --markers BEGIN TASK")
        begin, task = (parse_address(m) for m in args.markers)
        samples = samples_of(args.trace, begin, task)
        print(table([("trace", samples)]))
        if args.detail and samples:
            print(detail("trace", samples[-1], read_maps(args.maps)))
        return 0

    if not 2 <= args.samples <= 100:
        fail("--samples: 2 to 100")
    if not shutil.which("valgrind"):
        fail("needs valgrind (apt-get install valgrind)")
    if not os.access(args.bin, os.X_OK):
        fail(f"no program at {args.bin} (configure with -DLANTERN_BENCH_DIAGNOSTICS=ON and ninja -C build/release lantern_wake_pages, or --bin)")
    workdir = args.keep or tempfile.mkdtemp(prefix="wake_pages.")
    os.makedirs(workdir, exist_ok=True)
    try:
        rows, details = [], []
        for side, name in (("lantern", "Lantern"), ("tbb", "oneTBB")):
            print(f"wake_pages.py: {name} under lackey ...", file=sys.stderr, flush=True)
            trace, maps, begin, task = run_side(args.bin, side, args.samples, workdir)
            samples = samples_of(trace, begin, task)
            rows.append((name, samples))
            if args.detail and samples:
                details.append(detail(name, samples[-1], read_maps(maps)))
        print(table(rows))
        for d in details:
            print(d)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
