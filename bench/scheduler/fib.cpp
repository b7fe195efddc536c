// SPDX-License-Identifier: Apache-2.0
// fib.cpp - lantern_bench's fib row: fib(32) by binary fork-join, lantern::join against
// tbb::parallel_invoke. Figure: ns per join (total time / 3,524,577 joins).
#include "lantern_bench.hpp"
#include "tbb_workloads.hpp"
#include "workloads.hpp"

namespace bench::scheduler {

void bench_fib(Context& ctx, Pools& pools) {
  using namespace bench::workloads;
  const Samples s = race(
      ctx, "fib(32)", kFibValue, [&] { return pools.lantern.run([] { return fib_lantern(kFibN); }); },
      [&] { return pools.tbb.execute([] { return fib_tbb(kFibN); }); });
  constexpr double kNsPerJoin = 1e9 / kFibJoins;
  ctx.rows.push_back({"fib(32) join", ctx.workers, "ns/join", bench::median(s.lantern) * kNsPerJoin,
                      bench::median(s.tbb) * kNsPerJoin, Target::ratio(0.5)});
}

}  // namespace bench::scheduler
