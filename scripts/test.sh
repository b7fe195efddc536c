#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test.sh - the whole test suite: install what is missing, then build and run every test
# in three builds: optimised, ThreadSanitizer, and AddressSanitizer+UBSan.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scripts/setup.sh

run_suite() {  # run_suite NAME CMAKE_ARGS...
  local name=$1
  shift
  echo "=== $name: build"
  scripts/build.sh "$name" "$@"
  echo "=== $name: test"
  (cd "build/$name" && ctest --output-on-failure --timeout 900)
}

start=$SECONDS
# The Release build fails on any compiler warning (LANTERN_WERROR; CMakeLists.txt says
# why the ThreadSanitizer build does not).
run_suite release -DCMAKE_BUILD_TYPE=Release -DLANTERN_WERROR=ON
# Sanitizer builds: the tests, without benchmarks and examples. TSan needs ASLR off on
# kernels whose mmap randomisation is wider than its shadow layout expects.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  setarch "$(uname -m)" -R bash -c "$(declare -f run_suite); cd '$root'; run_suite tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLANTERN_SANITIZE=thread -DLANTERN_BUILD_BENCH=OFF -DLANTERN_BUILD_EXAMPLES=OFF"
ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1" \
  run_suite asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLANTERN_SANITIZE=address -DLANTERN_BUILD_BENCH=OFF -DLANTERN_BUILD_EXAMPLES=OFF
echo "=== all suites passed in $((SECONDS - start)) s (release, tsan, asan+ubsan)"
