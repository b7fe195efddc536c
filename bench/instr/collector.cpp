// SPDX-License-Identifier: Apache-2.0
// collector.cpp - lantern_instr_bench's section C, collector: how many events a Collector
// drains per second against how many fib(32) at level full produces.
#include <array>
#include <string>
#include <vector>

#include "instr_bench.hpp"

namespace bench::instr {

void bench_collector(Context& ctx, ObserverPools& pools) {
  const Workload& fib = workloads()[0];
  const std::string side = "collector, Recorder full, " + std::to_string(ctx.workers) + " workers";
  struct Figures {
    std::vector<double> collected_per_s, produced_per_s, dropped, wall;
  };
  std::array<Figures, 2> figures;  // [0]: default CollectorOptions, [1]: 100 us period
  measure(ctx, 2, [&](std::size_t v) {
    Collector& collector = v == 0 ? pools.collector : pools.fast_collector;
    pools.recorder.set_level(Level::full);
    collector.start();
    const Totals before = totals(pools.recorder);
    const std::uint64_t collected_before = collector.events_collected();
    const auto start = Clock::now();
    for (int i = 0; i < ctx.config.collector_fibs; ++i) run_once(*pools.observed, fib, side);
    const double wall = bench::seconds_between(start, Clock::now());
    const std::uint64_t collected = collector.events_collected() - collected_before;
    const Totals after = totals(pools.recorder);
    collector.stop();
    pools.recorder.set_level(Level::off);
    const double produced = static_cast<double>(after.produced - before.produced);
    Figures& f = figures[v];
    f.collected_per_s.push_back(static_cast<double>(collected) / wall);
    f.produced_per_s.push_back(produced / wall);
    f.dropped.push_back(static_cast<double>(after.dropped - before.dropped) / std::max(1.0, produced));
    f.wall.push_back(wall);
    return wall;
  });
  auto measured = [](std::vector<double> v) {  // without the warm-up
    v.erase(v.begin());
    return bench::median(v);
  };
  const char* labels[2] = {"collector: drained / produced, fib at full",
                           "collector 100 us: drained / produced, fib at full"};
  const char* options[2] = {"default CollectorOptions (adaptive 100 us - 20 ms)", "collector period 100 us"};
  for (int v = 0; v < 2; ++v) {
    const Figures& f = figures[v];
    ctx.rows.push_back({labels[v],
                        ctx.workers,
                        "M events/s",
                        measured(f.collected_per_s) / 1e6,
                        measured(f.produced_per_s) / 1e6,
                        Target::info(),
                        "dropped " + percent(measured(f.dropped)) + " of the events produced (median); " + options[v] +
                            "; " + std::to_string(ctx.config.collector_fibs) +
                            " fib(32) back to back per repetition, " + bench::format_number(measured(f.wall) * 1e3) +
                            " ms; drained events include drop markers",
                        {{"dropped_fraction", measured(f.dropped)}}});
  }
}

}  // namespace bench::instr
