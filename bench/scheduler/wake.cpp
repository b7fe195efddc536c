// SPDX-License-Identifier: Apache-2.0
// wake.cpp - lantern_bench's wake rows: wake latency. Both pools idle for 20 ms
// (Lantern's verified: every worker counted as sleeping and in state sleeping), then the
// main thread submits one task (Scheduler::spawn / task_arena::enqueue) that stamps its
// start (wake.hpp). --wake-samples samples per side, interleaved. Figures: p50 and p99
// in us. bench/diagnostics/ has the same samples with the floor beside them (a bare
// futex wake) and a per-sample trace.
#include <string>
#include <vector>

#include "lantern_bench.hpp"
#include "wake.hpp"

namespace bench::scheduler {

void bench_wake(Context& ctx, Pools& pools) {
  wake::Probe lantern_probe, tbb_probe;
  std::vector<double> lantern_us, tbb_us;
  int not_asleep = 0;
  auto nothing = [] {};
  auto lantern_sample = [&] {
    bool asleep = true;
    lantern_us.push_back(wake::sample_lantern(pools.lantern, lantern_probe, &asleep, nothing));
    not_asleep += asleep ? 0 : 1;
  };
  auto tbb_sample = [&] { tbb_us.push_back(wake::sample_tbb(pools.tbb_outside, tbb_probe, nothing)); };
  const int n = ctx.config.wake_samples;
  for (int i = 0; i < n; ++i) {
    if (i % 10 == 0) ctx.step(i, n);
    if (i % 2 == 0) {
      lantern_sample();
      tbb_sample();
    } else {
      tbb_sample();
      lantern_sample();
    }
  }
  std::string note;
  if (not_asleep > 0) {
    note = std::to_string(not_asleep) + " of " + std::to_string(n) +
           " Lantern samples started with some worker awake after 1 s of idleness";
  }
  ctx.rows.push_back({"wake latency p50", ctx.workers, "us", bench::percentile(lantern_us, 50),
                      bench::percentile(tbb_us, 50), Target::ratio(0.8)});
  ctx.rows.push_back({"wake latency p99",
                      ctx.workers,
                      "us",
                      bench::percentile(lantern_us, 99),
                      bench::percentile(tbb_us, 99),
                      Target::ratio(1.0),
                      note,
                      {{"lantern_samples_not_asleep", static_cast<double>(not_asleep)}}});
}

}  // namespace bench::scheduler
