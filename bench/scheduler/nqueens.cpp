// SPDX-License-Identifier: Apache-2.0
// nqueens.cpp - lantern_bench's nqueens rows: nqueens(12) = 14200, a lantern::TaskGroup
// against a tbb::task_group, one task per legal placement in each row down to a depth:
// the first 3 rows (nqueens; a serial bit-mask solver below, the same code on both
// sides) or every row down to the leaves (nqueens_tg, 856,188 tasks). Figure: ms.
#include <array>
#include <numeric>

#include <tbb/task_group.h>

#include "lantern_bench.hpp"

namespace bench::scheduler {
namespace {

constexpr int kQueensN = 12;
constexpr long long kQueensSolutions = 14200;
constexpr int kQueensSpawnRows = 3;  // nqueens: one task per placement in rows 0..2, serial below
constexpr unsigned kQueensAll = (1u << kQueensN) - 1;

// Board state as bit masks: occupied columns, and the diagonals attacking the next row.
long long queens_serial(unsigned cols, unsigned left, unsigned right) {
  if (cols == kQueensAll) return 1;
  long long count = 0;
  for (unsigned free = kQueensAll & ~(cols | left | right); free != 0; free &= free - 1) {
    const unsigned bit = free & (~free + 1);
    count += queens_serial(cols | bit, (left | bit) << 1, (right | bit) >> 1);
  }
  return count;
}

// queens_parallel spawns one task per free square of `row` into a group made by
// make_group (a lantern::TaskGroup or a tbb::task_group), down to spawn_rows.
template <class MakeGroup>
long long queens_parallel(const MakeGroup& make_group, int row, unsigned cols, unsigned left, unsigned right,
                          int spawn_rows) {
  if (row == spawn_rows) return queens_serial(cols, left, right);
  std::array<long long, kQueensN> counts{};
  auto group = make_group();  // neither group type is movable: guaranteed elision
  int slot = 0;
  for (unsigned free = kQueensAll & ~(cols | left | right); free != 0; free &= free - 1) {
    const unsigned bit = free & (~free + 1);
    auto task = [&, slot, bit] {
      counts[slot] =
          queens_parallel(make_group, row + 1, cols | bit, (left | bit) << 1, (right | bit) >> 1, spawn_rows);
    };
    if constexpr (requires { group.spawn(task); }) {
      group.spawn(task);  // lantern::TaskGroup
    } else {
      group.run(task);  // tbb::task_group
    }
    ++slot;
  }
  group.wait();
  return std::accumulate(counts.begin(), counts.end(), 0LL);
}

// run_nqueens: spawn_rows = kQueensSpawnRows is the nqueens row; kQueensN (a task for
// every legal placement, down to the leaves, where row == N returns 1) is nqueens_tg.
void run_nqueens(Context& ctx, Pools& pools, const char* label, int spawn_rows, double target) {
  auto lantern_group = [&pools] { return lantern::TaskGroup(pools.lantern); };
  auto tbb_group = [] { return tbb::task_group(); };
  const Samples s = race(
      ctx, label, kQueensSolutions,
      [&] { return pools.lantern.run([&] { return queens_parallel(lantern_group, 0, 0, 0, 0, spawn_rows); }); },
      [&] { return pools.tbb.execute([&] { return queens_parallel(tbb_group, 0, 0, 0, 0, spawn_rows); }); });
  ctx.rows.push_back(
      {label, ctx.workers, "ms", bench::median(s.lantern) * 1e3, bench::median(s.tbb) * 1e3, Target::ratio(target)});
}

}  // namespace

long long lantern_nqueens_tg(Pools& pools) {
  auto lantern_group = [&pools] { return lantern::TaskGroup(pools.lantern); };
  return pools.lantern.run([&] { return queens_parallel(lantern_group, 0, 0, 0, 0, kQueensN); });
}

void bench_nqueens(Context& ctx, Pools& pools) { run_nqueens(ctx, pools, "nqueens(12)", kQueensSpawnRows, 1.0); }

void bench_nqueens_tg(Context& ctx, Pools& pools) {
  run_nqueens(ctx, pools, "nqueens(12) TaskGroup every row", kQueensN, 0.7);
}

}  // namespace bench::scheduler
