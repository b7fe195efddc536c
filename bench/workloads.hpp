// SPDX-License-Identifier: Apache-2.0
// workloads.hpp - the fork-join workloads that more than one benchmark runs on Lantern:
// fib by lantern::join (lantern_bench races it against oneTBB, lantern_helping_bench
// times it with and without the join path's help check, prometheus_bench while scraped)
// and skynet 1M by join; lantern_instr_bench (instr/) times them with and without an
// observer, and also the spawn-heavy ones below (skynet by TaskGroup, nqueens(12) with a
// TaskGroup at every row, spawn chains; lantern_bench's taskgroup_chain row runs the
// chains too), and parallel_for's chunk sum (lantern_bench and bench/ab). oneTBB's sides
// are in tbb_workloads.hpp. Every function checks nothing itself: compare with the
// constants.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "lantern/join.hpp"
#include "lantern/task_group.hpp"

namespace bench::workloads {
// The unnamed namespace gives each translation unit its own internal copy: with external
// (inline) linkage g++ -O3 stops inlining lantern::join into fib_lantern, and the
// figures move.
// Each includer uses some of them: [[maybe_unused]] keeps -Wall quiet about the rest.
namespace {

// ---------------------------------------------------------------- fib(32) by join

constexpr int kFibN = 32;
constexpr long long kFibValue = 2178309;
constexpr long long kFibJoins = 3524577;  // one per call with n >= 2: fib(33) - 1

[[maybe_unused]] long long fib_lantern(int n) {
  if (n < 2) return n;
  long long a = 0, b = 0;
  lantern::join([&] { a = fib_lantern(n - 1); }, [&] { b = fib_lantern(n - 2); });
  return a + b;
}

// ------------------------------------------------------ skynet, 10-ary tree by join

constexpr long long kSkynetLeaves = 1'000'000;
constexpr long long kSkynetSum = 499'999'500'000;  // 0 + 1 + ... + 999999
constexpr int kSkynetFanout = 10;

[[maybe_unused]] long long skynet_join(long long first, long long size);

// skynet_join_children sums children [lo, hi) of a node, halving the range with join.
[[maybe_unused]] long long skynet_join_children(long long first, long long child_size, int lo, int hi) {
  if (hi - lo == 1) return skynet_join(first + lo * child_size, child_size);
  const int mid = lo + (hi - lo) / 2;
  long long a = 0, b = 0;
  lantern::join([&] { a = skynet_join_children(first, child_size, lo, mid); },
                [&] { b = skynet_join_children(first, child_size, mid, hi); });
  return a + b;
}

// skynet_join: the sum of the subtree of `size` leaves numbered from `first`.
[[maybe_unused]] long long skynet_join(long long first, long long size) {
  if (size == 1) return first;
  return skynet_join_children(first, size / kSkynetFanout, 0, kSkynetFanout);
}

// --------------------------------------- skynet, 10-ary tree by a TaskGroup per node

// skynet_tg: inside a task; a TaskGroup per node, 10 spawns, then wait.
[[maybe_unused]] long long skynet_tg(long long first, long long size) {
  if (size == 1) return first;
  const long long child = size / kSkynetFanout;
  std::array<long long, kSkynetFanout> sums{};
  lantern::TaskGroup group;
  for (int i = 0; i < kSkynetFanout; ++i) {
    group.spawn([&, i] { sums[i] = skynet_tg(first + i * child, child); });
  }
  group.wait();
  return std::accumulate(sums.begin(), sums.end(), 0LL);
}

// ------------------------------ nqueens(12), a TaskGroup at every row (856,188 tasks)

constexpr int kQueensN = 12;
constexpr long long kQueensSolutions = 14200;
constexpr unsigned kQueensAll = (1u << kQueensN) - 1;

// queens_tg: inside a task; one task per legal placement, down to the leaves.
[[maybe_unused]] long long queens_tg(unsigned cols, unsigned left, unsigned right) {
  if (cols == kQueensAll) return 1;
  std::array<long long, kQueensN> counts{};
  lantern::TaskGroup group;
  int slot = 0;
  for (unsigned free = kQueensAll & ~(cols | left | right); free != 0; free &= free - 1) {
    const unsigned bit = free & (~free + 1);
    group.spawn([&, slot, bit] { counts[slot] = queens_tg(cols | bit, (left | bit) << 1, (right | bit) >> 1); });
    ++slot;
  }
  group.wait();
  return std::accumulate(counts.begin(), counts.end(), 0LL);
}

// ------------------- parallel_for: the sum of 10,000,000 int64 with grain 1024

constexpr std::size_t kSumN = 10'000'000;
constexpr std::size_t kSumGrain = 1024;
constexpr long long kSumValue = static_cast<long long>(kSumN) * (kSumN - 1) / 2;

// Out of line, so both sides of lantern_bench's row run the very same machine code:
// inlined, each side gets its own copy of this loop, and where the copies land moves the
// row by 0.75-1.1 between two builds with the same instruction count.
[[maybe_unused, gnu::noinline]] std::int64_t sum_chunk(const std::vector<std::int64_t>& data, std::size_t begin,
                                                       std::size_t end) {
  std::int64_t sum = 0;
  for (std::size_t i = begin; i < end; ++i) sum += data[i];
  return sum;
}

// ----------------------------------------------- spawn chains through a TaskGroup

constexpr int kChainDepth = 1000;

// chain_step: task i spawns task i + 1 into the same group (a chain kChainDepth long).
[[maybe_unused]] void chain_step(lantern::TaskGroup& group, long long& steps, int i) {
  ++steps;  // the chain is sequential: step i happens-before step i + 1
  if (i + 1 < kChainDepth) group.spawn([&group, &steps, i] { chain_step(group, steps, i + 1); });
}

// spawn_chains: inside a task; `chains` chains one after the other; returns the steps.
[[maybe_unused]] long long spawn_chains(int chains) {
  long long total = 0;
  for (int c = 0; c < chains; ++c) {
    long long steps = 0;
    lantern::TaskGroup group;
    group.spawn([&] { chain_step(group, steps, 0); });
    group.wait();
    total += steps;
  }
  return total;
}

}  // namespace
}  // namespace bench::workloads
