// SPDX-License-Identifier: Apache-2.0
// paired.cpp - lantern_instr_bench's section B2, paired: the bounds on recording (a
// Recorder with its Collector running at most 2 % slower than the same pool with no
// observer at level states, 5 % at level tasks; level graph's cost reported), timed so
// that a few per cent can be resolved on a host whose speed wanders by far more.
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "instr_bench.hpp"

namespace bench::instr {
namespace {

// Rounds run on one set of three pools before they are replaced by fresh ones.
constexpr int kPairedBlockRounds = 50;

// signed_percent: a ratio as a signed change, "+1.2 %" or "-0.4 %".
std::string signed_percent(double ratio) {
  const std::string text = percent(ratio - 1.0);
  return text.front() == '-' ? text : "+" + text;
}

// interval_text: "+0.4 % (95 % CI -0.8 .. +1.6 %)" of a MedianInterval of log ratios.
std::string interval_text(const bench::MedianInterval& m) {
  return signed_percent(std::exp(m.median)) + " (95 % CI " + signed_percent(std::exp(m.low)) + " .. " +
         signed_percent(std::exp(m.high)) + ")";
}

}  // namespace

// bench_paired: a shared host's speed can wander by tens of per cent over tens of
// milliseconds (the same serial loop: a median of 1.6 ms in one run, 2.9 ms in the next
// on a 2-vCPU VM), far more than the bounds judged here, so the medians of B cannot
// resolve them. Here pools of `workers` run each workload once per round, in rotating
// order with a 2 ms pause before each run: no observer, a second pool with no observer
// (the control), and pools observed by a Recorder at level states - and, on fib by
// join, skynet by TaskGroup and nqueens, at levels tasks and graph - each Recorder's
// Collector running throughout, as in real use. Each round gives the ratio level / no
// observer of runs a few tens of milliseconds apart; the figure is the median of those
// ratios with its distribution-free 95 % confidence interval, and the target is on the
// interval's upper end. The control's ratio (second pool / first) shows what two
// identical pools differ by. The pools are made anew every kPairedBlockRounds rounds.
void bench_paired(Context& ctx, unsigned workers) {
  // The observed sides: a Recorder at each level, with its Collector and a counting sink.
  struct Observed {
    Level level;
    const char* side;
    Target target;
    std::uint32_t left_out = 0;  // hooks taken out of the Recorder's interest
    std::unique_ptr<Recorder> recorder;
    std::shared_ptr<CountingSink> sink = std::make_shared<CountingSink>();
    std::unique_ptr<Collector> collector;
  };
  // "tasks, no graph events": level tasks without the task graph's events (spawn,
  // wait_begin, wait_end, signal_set, satisfy), i.e. what level tasks records of these workloads
  // without them: what the task graph adds to level tasks is the difference.
  constexpr std::uint32_t kGraphEvents =
      lantern::Observer::bit(lantern::EventId::spawn) | lantern::Observer::bit(lantern::EventId::wait_begin) |
      lantern::Observer::bit(lantern::EventId::wait_end) | lantern::Observer::bit(lantern::EventId::signal_set) |
      lantern::Observer::bit(lantern::EventId::satisfy);
  std::array<Observed, 4> observed{{{Level::states, "Recorder states", Target::ratio(1.02)},
                                    {Level::tasks, "Recorder tasks", Target::ratio(1.05)},
                                    {Level::tasks, "Recorder tasks, no graph events", Target::info(), kGraphEvents},
                                    {Level::graph, "Recorder graph", Target::info()}}};
  for (Observed& o : observed) {
    o.recorder = std::make_unique<Recorder>(workers, lantern::instrumentation::RecorderOptions{.level = o.level});
    if (o.left_out != 0) o.recorder->interest.fetch_and(~o.left_out);
    o.collector = std::make_unique<Collector>(*o.recorder);
    o.collector->attach(o.sink);
    o.collector->start();
  }
  const std::string suffix = ", " + std::to_string(workers) + " workers, paired";
  const int rounds = ctx.config.paired_rounds;
  const int blocks = std::max(1, rounds / kPairedBlockRounds);
  const bool pin = !ctx.config.paired_unpinned;
  for (const Workload& w : paired_workloads()) {
    // Variants: 0 no observer, 1 the control (no observer), then the observed levels:
    // states on every workload; tasks and graph on the three the task graph's cost
    // is judged on (fib by join, skynet by TaskGroup, nqueens with a TaskGroup per row).
    const std::string name = w.name;
    const bool graph_rows = name == "fib" || name == "skynet_tg" || name == "nqueens_tg";
    const std::size_t levels = graph_rows ? observed.size() : 1;
    const std::size_t variants = 2 + levels;
    auto side_name = [&](std::size_t v) -> std::string {
      return v == 0 ? "no observer" : v == 1 ? "no observer (control)" : observed[v - 2].side;
    };
    Context wctx = ctx;
    wctx.benchmark = w.name;
    wctx.workers = workers;
    std::vector<std::vector<double>> ratio(variants);  // log(variant / no observer) per round
    std::vector<std::vector<double>> times(variants);
    std::vector<int> apart(variants, 0);  // rounds whose variant and no-observer runs began on different CPUs
    // What each Recorder recorded and dropped (ring full) over this workload's rounds: a
    // time for a recording that dropped most of its events is not the cost of recording.
    auto events = [&](const Observed& o) {
      std::pair<double, double> recorded_dropped{0, 0};
      for (std::uint32_t i = 0; i < workers; ++i) {
        const auto snap = o.recorder->snapshot(i);
        recorded_dropped.first += static_cast<double>(snap.events_recorded);
        recorded_dropped.second += static_cast<double>(snap.events_dropped);
      }
      return recorded_dropped;
    };
    std::vector<std::pair<double, double>> before(levels);
    for (std::size_t l = 0; l < levels; ++l) before[l] = events(observed[l]);
    std::uint32_t unpinned_workers = 0;  // with pin: workers Lantern could not pin, over all pools
    for (int b = 0; b < blocks; ++b) {
      // Fresh pools for every block, made in a rotating order: one pool instance can be
      // faster or slower than an identical one for as long as it lives (the control has
      // shown up to 16 % over a whole workload's rounds), so each variant's figure
      // spreads over several instances and that difference enters the interval.
      std::vector<std::unique_ptr<lantern::Scheduler>> pools(variants);
      for (std::size_t k = 0; k < variants; ++k) {
        const std::size_t v = (static_cast<std::size_t>(b) + k) % variants;
        lantern::SchedulerOptions options{.workers = workers, .pin_workers = pin};
        if (v >= 2) options.observer = observed[v - 2].recorder.get();
        pools[v] = std::make_unique<lantern::Scheduler>(options);
        for (std::uint32_t i = 0; i < workers; ++i) unpinned_workers += pools[v]->worker_cpu(i) < 0;
      }
      const int n = rounds / blocks + (b < rounds % blocks ? 1 : 0);
      // cpus[v][r]: the CPU variant v's run of repetition r began on (r = 0: the warm-up).
      std::vector<std::vector<int>> cpus(variants);
      const auto samples = measure(
          wctx, variants,
          [&](std::size_t v) {
            int cpu = -1;
            const double t = run_once(*pools[v], w, side_name(v) + suffix, &cpu);
            cpus[v].push_back(cpu);
            return t;
          },
          n, std::chrono::milliseconds(2));
      for (std::size_t v = 1; v < variants; ++v) {
        for (std::size_t r = 1; r < cpus[0].size() && r < cpus[v].size(); ++r) apart[v] += cpus[0][r] != cpus[v][r];
        for (std::size_t r = 0; r < samples[0].size(); ++r) ratio[v].push_back(std::log(samples[v][r] / samples[0][r]));
      }
      for (std::size_t v = 0; v < variants; ++v) times[v].insert(times[v].end(), samples[v].begin(), samples[v].end());
    }
    const auto c = bench::median_interval(ratio[1]);
    for (std::size_t v = 2; v < variants; ++v) {
      const Observed& o = observed[v - 2];
      const auto after = events(o);
      const double recorded = after.first - before[v - 2].first, dropped = after.second - before[v - 2].second;
      const double dropped_share = recorded + dropped > 0 ? dropped / (recorded + dropped) : 0;
      const std::string level = std::string(lantern::trace::kLevelNames[static_cast<int>(o.level)]) +
                                (o.left_out != 0 ? "_no_graph_events" : "");
      const auto s = bench::median_interval(ratio[v]);
      std::string note = std::to_string(ratio[v].size()) + " rounds in " + std::to_string(blocks) +
                         (blocks == 1 ? " block" : " blocks") + " of fresh pools" +
                         (!pin                    ? ", workers not pinned"
                          : unpinned_workers == 0 ? ", workers pinned"
                                                  : ", workers pinned but " + std::to_string(unpinned_workers) +
                                                        " of the pools' workers were not (Scheduler::worker_cpu)") +
                         " (sides began on different CPUs in " + std::to_string(apart[v]) + " rounds); " + level +
                         " / no observer: median " + interval_text(s) +
                         "; control (a second unobserved pool / the first): median " + interval_text(c) + "; medians " +
                         bench::format_number(bench::median(times[0]) * 1e3) + " ms (no observer), " +
                         bench::format_number(bench::median(times[v]) * 1e3) + " ms (" + level + "); dropped " +
                         bench::format_number(100 * dropped_share) + " % of its events (ring full)";
      if (c.low > 0 || c.high < 0) {
        note += "; the control's interval excludes 0: identical pools differed, read the verdict with care";
      }
      // The figure is the upper end of the interval: PASS means the data rule out an
      // overhead above the target (at 95 %), not only that the median is below it.
      ctx.rows.push_back({std::string(w.label) + ", " + o.side + " / no observer, paired: 95 % upper bound",
                          workers,
                          "x",
                          std::exp(s.high),
                          1.0,
                          o.target,
                          note,
                          {{"rounds", static_cast<double>(ratio[v].size())},
                           {"blocks", static_cast<double>(blocks)},
                           {"pinned", pin ? 1.0 : 0.0},
                           {"unpinned_workers", static_cast<double>(unpinned_workers)},
                           {"rounds_apart", static_cast<double>(apart[v])},
                           {level + "_median", std::exp(s.median)},
                           {level + "_low", std::exp(s.low)},
                           {level + "_high", std::exp(s.high)},
                           {"control_median", std::exp(c.median)},
                           {"dropped_share", dropped_share},
                           {"control_low", std::exp(c.low)},
                           {"control_high", std::exp(c.high)},
                           {"no_observer_ms", bench::median(times[0]) * 1e3},
                           {level + "_ms", bench::median(times[v]) * 1e3}}});
    }
  }
  for (Observed& o : observed) {
    o.collector->stop();  // every observed pool is gone: this is the final drain
    check_accounting(std::string("paired, ") + o.side, *o.recorder, {o.sink.get()});
  }
}

}  // namespace bench::instr
