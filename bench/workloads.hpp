// workloads.hpp - the fork-join workloads that more than one benchmark runs on Lantern:
// fib(32) and skynet 1M by lantern::join. lantern_bench (core_bench.cpp) races them
// against oneTBB; lantern_instr_bench (instrumentation_bench.cpp) times them with and
// without an observer. Every function checks nothing itself: compare with the constants.
#pragma once

#include "lantern/join.hpp"

namespace bench::workloads {
// The unnamed namespace gives each benchmark its own internal copy, compiled exactly as
// when these lived in core_bench.cpp: with external (inline) linkage g++ -O3 stops
// inlining lantern::join into fib_lantern, and the figures would move.
namespace {

// ---------------------------------------------------------------- fib(32) by join

constexpr int kFibN = 32;
constexpr long long kFibValue = 2178309;
constexpr long long kFibJoins = 3524577;  // one per call with n >= 2: fib(33) - 1

long long fib_lantern(int n) {
  if (n < 2) return n;
  long long a = 0, b = 0;
  lantern::join([&] { a = fib_lantern(n - 1); }, [&] { b = fib_lantern(n - 2); });
  return a + b;
}

// ------------------------------------------------------ skynet, 10-ary tree by join

constexpr long long kSkynetLeaves = 1'000'000;
constexpr long long kSkynetSum = 499'999'500'000;  // 0 + 1 + ... + 999999
constexpr int kSkynetFanout = 10;

long long skynet_join(long long first, long long size);

// skynet_join_children sums children [lo, hi) of a node, halving the range with join.
long long skynet_join_children(long long first, long long child_size, int lo, int hi) {
  if (hi - lo == 1) return skynet_join(first + lo * child_size, child_size);
  const int mid = lo + (hi - lo) / 2;
  long long a = 0, b = 0;
  lantern::join([&] { a = skynet_join_children(first, child_size, lo, mid); },
                [&] { b = skynet_join_children(first, child_size, mid, hi); });
  return a + b;
}

// skynet_join: the sum of the subtree of `size` leaves numbered from `first`.
long long skynet_join(long long first, long long size) {
  if (size == 1) return first;
  return skynet_join_children(first, size / kSkynetFanout, 0, kSkynetFanout);
}

}  // namespace
}  // namespace bench::workloads
