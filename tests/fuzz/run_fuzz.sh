#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run_fuzz.sh [SECONDS] [WORKDIR] - fuzz the trace reader with libFuzzer for SECONDS
# (default 60) and fail on any crash, sanitizer report, leak or violated property.
#
# The format library is a leaf (it needs only the header-only vocabulary), so the fuzzer is built straight from its sources with
# clang++ (-fsanitize=fuzzer,address,undefined); no CMake build is needed. The corpus
# starts from seeds written by make_seeds.cpp (valid traces of every event type and a
# few damaged ones) plus anything already in WORKDIR/corpus from earlier runs.
# Needs: apt-get install clang libclang-rt-14-dev
set -euo pipefail

seconds=${1:-60}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${2:-$(mktemp -d /tmp/lantern_trace_fuzz.XXXXXX)}
cxx=${FUZZ_CXX:-clang++}
format="$root/instrumentation/format"

if ! [[ "$seconds" =~ ^[0-9]+$ ]] || ((seconds < 1)); then
  echo "run_fuzz.sh: SECONDS must be a positive integer, not '$seconds'" >&2
  exit 2
fi
if ! command -v "$cxx" > /dev/null; then
  echo "run_fuzz.sh: $cxx not found; install it with: apt-get install clang libclang-rt-14-dev" >&2
  exit 1
fi
mkdir -p "$work/corpus" "$work/artifacts"

sources=("$format"/src/*.cpp)
common=(-std=c++20 -g -I"$format/include" -I"$format/src" -I"$root/core/vocabulary/include")
echo "run_fuzz.sh: building the fuzzer with $cxx in $work"
if ! "$cxx" "${common[@]}" -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    "${sources[@]}" "$here/trace_reader_fuzz.cpp" -o "$work/trace_reader_fuzz" 2> "$work/build.log"; then
  cat "$work/build.log" >&2
  if grep -q "libclang_rt.fuzzer\|-lclang_rt" "$work/build.log"; then
    echo "run_fuzz.sh: the libFuzzer runtime is missing; install it with: apt-get install clang libclang-rt-14-dev" >&2
  fi
  echo "run_fuzz.sh: building the fuzzer failed" >&2
  exit 1
fi
"$cxx" "${common[@]}" -O1 "${sources[@]}" "$here/make_seeds.cpp" -o "$work/make_seeds"
"$work/make_seeds" "$work/corpus"
echo "run_fuzz.sh: $(ls "$work/corpus" | wc -l) inputs in the corpus; fuzzing for $seconds s"

# -timeout: one input taking 10 s is a hang; -rss_limit_mb: a runaway allocation is a bug.
status=0
"$work/trace_reader_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -dict="$here/trace.dict" -artifact_prefix="$work/artifacts/" "$work/corpus" > "$work/fuzz.log" 2>&1 || status=$?
grep -E "^#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|cov:" "$work/fuzz.log" | tail -4 || true
if ((status != 0)); then
  tail -60 "$work/fuzz.log" >&2
  echo "run_fuzz.sh: FAILED (exit $status); crashing inputs are in $work/artifacts/" >&2
  exit 1
fi
echo "run_fuzz.sh: no crashes in $seconds s"
