// SPDX-License-Identifier: Apache-2.0
// event.cpp - lantern_instr_bench's section A, event: the cost of one recorded event
// against one rdtsc, on the main thread (main.cpp's --help says what each row is).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "instr_bench.hpp"
#include "lantern/clock.hpp"  // LANTERN_HAS_RDTSC, and <x86intrin.h> where there is one

namespace bench::instr {
namespace {

// rdtsc_loop: n bare rdtsc, each added into a volatile so that none can be dropped.
double rdtsc_loop(long long n) {
  volatile std::uint64_t sink = 0;
  const auto start = Clock::now();
#if LANTERN_HAS_RDTSC
  for (long long i = 0; i < n; ++i) sink = sink + __rdtsc();
#else
  for (long long i = 0; i < n; ++i) sink = sink + lantern::ticks_now();  // no rdtsc: the clock instead
#endif
  return bench::seconds_between(start, Clock::now());
}

// event_loop: n calls of the hook, as a worker makes them, for worker 0 of `recorder`.
double event_loop(Recorder& recorder, lantern::EventId hook, long long n) {
  const auto start = Clock::now();
  for (long long i = 0; i < n; ++i) recorder.on_event(0, hook, static_cast<std::uint64_t>(i), 0);
  return bench::seconds_between(start, Clock::now());
}

// EventCase: one Recorder of 1 worker, and the collector that drains it (if any), which
// runs only during this case's own repetitions, so that its wake-ups do not disturb the
// others. The Recorder lives for the whole benchmark: its ring's pages are first touched
// in the warm-up.
struct EventCase {
  EventCase(Level level, bool collect, lantern::instrumentation::CollectorOptions options = {})
      : recorder(1, {.level = level}),
        sink(std::make_shared<CountingSink>()),
        collector(recorder, options),
        collect(collect) {
    collector.attach(sink);
  }
  // run: one repetition; records the fraction of the calls that were dropped.
  double run(lantern::EventId hook, long long n) {
    if (collect) collector.start();
    const Totals before = totals(recorder);
    const double t = event_loop(recorder, hook, n);
    const Totals after = totals(recorder);
    if (collect) collector.stop();  // its final drain empties the ring
    dropped.push_back(static_cast<double>(after.dropped - before.dropped) / static_cast<double>(n));
    return t;
  }
  // finish: stops the collector (its final drain) and checks the accounting.
  void finish(const std::string& what) {
    collector.stop();
    check_accounting(what, recorder, {sink.get()});
    dropped.erase(dropped.begin());  // the warm-up's
  }
  std::string drop_note() const {
    const Totals t = totals(recorder);
    return "dropped " + percent(bench::median(dropped)) + " of the calls (median of reps; max " +
           percent(*std::max_element(dropped.begin(), dropped.end())) + "), " + std::to_string(t.dropped) + " of " +
           std::to_string(t.produced) + " events in all (warm-up included)";
  }
  Recorder recorder;
  std::shared_ptr<CountingSink> sink;
  Collector collector;
  const bool collect;
  std::vector<double> dropped;
};

}  // namespace

void bench_event(Context& ctx) {
  const long long n = ctx.config.event_calls;
  using lantern::EventId;
  EventCase fast(Level::full, true, {.min_period = kFastPeriod, .max_period = kFastPeriod});
  EventCase default_options(Level::full, true);
  EventCase stalled(Level::full, false);     // no collector: the ring stays full
  EventCase filtered(Level::states, false);  // task_begin is counted, not recorded
  EventCase off(Level::off, false);          // help at off: one counter, nothing recorded
  enum { kRdtsc, kFast, kDefault, kStalled, kFiltered, kOff, kVariants };
  const auto samples = measure(ctx, kVariants, [&](std::size_t v) {
    switch (v) {
      case kRdtsc: return rdtsc_loop(n);
      case kFast: return fast.run(EventId::task_begin, n);
      case kDefault: return default_options.run(EventId::task_begin, n);
      case kStalled: return stalled.run(EventId::task_begin, n);
      case kFiltered: return filtered.run(EventId::task_begin, n);
      case kOff: return off.run(EventId::help, n);
    }
    return 0.0;
  });
  fast.finish("event, full, fast collector");
  default_options.finish("event, full, default collector");
  stalled.finish("event, full, no collector");
  filtered.finish("event, states");
  off.finish("event, off");
  bench::check_equal("event: a states recorder records no task_begin",
                     static_cast<long long>(totals(filtered.recorder).produced), 0);
  bench::check_equal("event: an off recorder records no help", static_cast<long long>(totals(off.recorder).produced),
                     0);
  bench::check_equal("event: the recorder counted every help", static_cast<long long>(off.recorder.snapshot(0).helps),
                     static_cast<long long>(n) * (ctx.config.reps + 1));

  const double ns = 1e9 / static_cast<double>(n);
  const double rdtsc_ns = bench::median(samples[kRdtsc]) * ns;
  auto row = [&](const char* label, int v, Target target, std::string note, const EventCase* dropping) {
    std::vector<std::pair<std::string, double>> values;
    if (dropping) values.emplace_back("dropped_fraction", bench::median(dropping->dropped));
    ctx.rows.push_back(
        {label, 1, "ns/call", bench::median(samples[v]) * ns, rdtsc_ns, target, std::move(note), std::move(values)});
  };
  row("event: task_begin, full, collector 100 us / rdtsc", kFast, Target::ratio(1.5),
      fast.drop_note() + "; collector period 100 us", &fast);
  row("event: task_begin, full, default collector / rdtsc", kDefault, Target::info(),
      default_options.drop_note() + "; default CollectorOptions (period adapts 100 us - 20 ms)", &default_options);
  row("event: task_begin, full, no collector / rdtsc", kStalled, Target::info(),
      stalled.drop_note() + "; the ring stays full: the drop path", &stalled);
  row("event: task_begin, states (not recorded) / rdtsc", kFiltered, Target::info(), "", nullptr);
  row("event: push, off (a counter only) / rdtsc", kOff, Target::info(), "", nullptr);
}

}  // namespace bench::instr
