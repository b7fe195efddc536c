// SPDX-License-Identifier: Apache-2.0
// skynet.cpp - lantern_bench's skynet rows: a 10-ary tree of 1,000,000 leaves, leaf i
// returns i, sum 499999500000. oneTBB's side is a tbb::task_group per node (10 run, then
// wait); Lantern's splits each node's children with nested lantern::join (the skynet
// row) or, the same decomposition as oneTBB's, a lantern::TaskGroup per node
// (skynet_taskgroup, 1,111,110 tasks). Figure: ms.
#include <array>
#include <numeric>

#include <tbb/task_group.h>

#include "lantern_bench.hpp"
#include "workloads.hpp"

namespace bench::scheduler {
namespace {

using namespace bench::workloads;  // skynet_join and the skynet constants

long long skynet_taskgroup(lantern::Scheduler& pool, long long first, long long size) {
  if (size == 1) return first;
  const long long child = size / kSkynetFanout;
  std::array<long long, kSkynetFanout> sums{};
  lantern::TaskGroup group(pool);
  for (int i = 0; i < kSkynetFanout; ++i) {
    group.spawn([&, i] { sums[i] = skynet_taskgroup(pool, first + i * child, child); });
  }
  group.wait();
  return std::accumulate(sums.begin(), sums.end(), 0LL);
}

long long skynet_tbb(long long first, long long size) {
  if (size == 1) return first;
  const long long child = size / kSkynetFanout;
  std::array<long long, kSkynetFanout> sums{};
  tbb::task_group group;
  for (int i = 0; i < kSkynetFanout; ++i) {
    group.run([&, i] { sums[i] = skynet_tbb(first + i * child, child); });
  }
  group.wait();
  return std::accumulate(sums.begin(), sums.end(), 0LL);
}

void run_skynet(Context& ctx, Pools& pools, const char* label, double target,
                const std::function<long long()>& lantern_skynet) {
  const Samples s = race(
      ctx, label, kSkynetSum, [&] { return pools.lantern.run(lantern_skynet); },
      [&] { return pools.tbb.execute([] { return skynet_tbb(0, kSkynetLeaves); }); });
  ctx.rows.push_back(
      {label, ctx.workers, "ms", bench::median(s.lantern) * 1e3, bench::median(s.tbb) * 1e3, Target::ratio(target)});
}

}  // namespace

void bench_skynet(Context& ctx, Pools& pools) {
  run_skynet(ctx, pools, "skynet 1M (join)", 1.0, [] { return skynet_join(0, kSkynetLeaves); });
}

void bench_skynet_taskgroup(Context& ctx, Pools& pools) {
  run_skynet(ctx, pools, "skynet 1M (TaskGroup)", 0.5,
             [&pools] { return skynet_taskgroup(pools.lantern, 0, kSkynetLeaves); });
}

long long lantern_skynet_taskgroup(Pools& pools) {
  return pools.lantern.run([&pools] { return skynet_taskgroup(pools.lantern, 0, kSkynetLeaves); });
}

}  // namespace bench::scheduler
