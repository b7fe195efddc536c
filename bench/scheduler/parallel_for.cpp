// SPDX-License-Identifier: Apache-2.0
// parallel_for.cpp - lantern_bench's parallel_for row: the sum of 10,000,000 int64 with
// grain 1024, lantern::parallel_for with a (begin, end) body against tbb::parallel_for
// over a blocked_range with the simple_partitioner; each chunk adds its partial sum to
// one atomic. Figure: ms.
#include <atomic>
#include <cstdint>
#include <numeric>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include "lantern_bench.hpp"
#include "workloads.hpp"

namespace bench::scheduler {

using bench::workloads::sum_chunk;

std::int64_t lantern_parallel_sum(Pools& pools, const std::vector<std::int64_t>& data) {
  std::atomic<std::int64_t> total{0};
  pools.lantern.run([&] {
    lantern::parallel_for(0, data.size(), kSumGrain, [&](std::size_t begin, std::size_t end) {
      total.fetch_add(sum_chunk(data, begin, end), std::memory_order_relaxed);
    });
  });
  return total.load();
}

void bench_parallel_for(Context& ctx, Pools& pools) {
  std::vector<std::int64_t> data(kSumN);
  std::iota(data.begin(), data.end(), std::int64_t{0});
  std::atomic<std::int64_t> total{0};
  auto add_chunk = [&](std::size_t begin, std::size_t end) {
    total.fetch_add(sum_chunk(data, begin, end), std::memory_order_relaxed);
  };
  const Samples s = race(
      ctx, "parallel_for sum", kSumValue, [&] { return lantern_parallel_sum(pools, data); },
      [&] {
        total.store(0);
        pools.tbb.execute([&] {
          tbb::parallel_for(
              tbb::blocked_range<std::size_t>(0, kSumN, kSumGrain),
              [&](const tbb::blocked_range<std::size_t>& r) { add_chunk(r.begin(), r.end()); },
              tbb::simple_partitioner());
        });
        return total.load();
      });
  ctx.rows.push_back({"parallel_for sum 10M", ctx.workers, "ms", bench::median(s.lantern) * 1e3,
                      bench::median(s.tbb) * 1e3, Target::ratio(1.0)});
}

}  // namespace bench::scheduler
