// SPDX-License-Identifier: Apache-2.0
// instr_bench.hpp - what lantern_instr_bench's sections share: the configuration and
// context, the sink that counts what a Collector hands it and the event accounting
// checked against it, the compiled-out subprocess, and the pools of the overhead and
// collector sections. Each section is in a file of its own here; main.cpp runs them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "harness.hpp"
#include "instr_workloads.hpp"
#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/sink.hpp"
#include "lantern/lantern.hpp"

#ifndef LANTERN_INSTR_BENCH_OFF_PATH
#define LANTERN_INSTR_BENCH_OFF_PATH ""
#endif

namespace bench::instr {

using lantern::instrumentation::Collector;
using lantern::instrumentation::Recorder;
using lantern::trace::Level;

struct Config {
  int reps = 7;                   // measured repetitions per variant (plus one warm-up)
  bool quick = false;             // CI smoke: 2 reps, smaller event loops
  bench::Output output;           // --markdown, --json
  bool raw = false;               // print every repetition's figure to stderr
  unsigned workers = 0;           // pool width for B and C (default: all hardware threads)
  std::vector<std::string> only;  // sections
  std::string off_path = LANTERN_INSTR_BENCH_OFF_PATH;
  long long event_calls = 2'000'000;  // A: calls per repetition
  int collector_fibs = 10;            // C: fib(32) runs back to back per repetition
  int trace_fibs = 3;                 // D: fib(32) runs recorded into one trace file per repetition
  int paired_rounds = 300;            // B2: rounds per workload and worker count
  bool paired_unpinned = false;       // B2: leave the pools' workers unpinned
};

using Context = bench::Context<Config>;

// measure: bench::rotate with this program's repetitions (config.reps unless `reps` says
// otherwise) and --raw.
inline std::vector<std::vector<double>> measure(const Context& ctx, std::size_t variants,
                                                const std::function<double(std::size_t)>& rep, int reps = 0,
                                                std::chrono::milliseconds pause = std::chrono::milliseconds(10)) {
  return bench::rotate(ctx, variants, rep, reps > 0 ? reps : ctx.config.reps, pause, ctx.config.raw);
}

// percent: a fraction as "12.3 %".
std::string percent(double fraction, int decimals = 1);

// A draining collector's period: short enough that a Recorder fed back to back by one
// thread (~50M events/s on a 2-vCPU VM) never fills its 32k-event ring between two passes.
constexpr auto kFastPeriod = std::chrono::microseconds(100);

// CountingSink counts what the collector hands it, and the drop markers among it.
class CountingSink final : public lantern::instrumentation::Sink {
 public:
  void on_batch(std::span<const lantern::trace::Event> events) override;
  std::uint64_t events() const { return events_.load(std::memory_order_relaxed); }  // not markers
  std::uint64_t markers() const { return markers_.load(std::memory_order_relaxed); }
  std::uint64_t marked_dropped() const { return marked_dropped_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> events_{0}, markers_{0}, marked_dropped_{0};
};

// Totals: the Recorder's event accounting summed over its workers.
struct Totals {
  std::uint64_t produced = 0, recorded = 0, dropped = 0, markers = 0;
};
Totals totals(const Recorder& recorder);

// check_accounting: after the producers stopped and the collectors stopped (their final
// drains done), every recorded event, `dropped` markers included, reached exactly one sink
// (a ring has one consumer at a time), and produced + markers = recorded + dropped
// (WorkerCountersSnapshot). The markers never count more than was dropped; they count all
// of it only when every worker ended with a stopping event (the event loop's direct calls
// have none, so drops at their very end stay unmarked). A failure is a wrong answer.
void check_accounting(const std::string& what, const Recorder& recorder, const std::vector<const CountingSink*>& sinks);

// OffProcess: lantern_instr_bench_off --serve, on a pipe each way (bench::Child).
class OffProcess {
 public:
  OffProcess(const std::string& path, unsigned workers);
  ~OffProcess();
  // run: one repetition of `w` in the child; checks its answer, returns its seconds.
  double run(const Workload& w, const std::string& side);

 private:
  bench::Child child_;
};

// ObserverPools: the pools of the overhead and collector sections, all of the same
// width, and the Recorder's side.
struct ObserverPools {
  ObserverPools(const Config& config, unsigned workers);
  // finish: stops every pool, then checks that every event the Recorder recorded (at
  // any level, in any repetition) reached the sink.
  void finish();

  Recorder recorder;
  std::shared_ptr<CountingSink> sink;
  Collector collector;  // default CollectorOptions
  std::shared_ptr<CountingSink> fast_sink;
  Collector fast_collector;                      // 100 us period (C only); never runs with `collector`
  std::unique_ptr<lantern::Scheduler> bare;      // no observer attached
  std::unique_ptr<lantern::Scheduler> observed;  // the Recorder attached; level set per repetition
  std::unique_ptr<OffProcess> off;               // the compiled-out pool, in its own process
};

// The sections, one file each (main.cpp's --help describes them).
void bench_event(Context& ctx);                            // event.cpp, A
void bench_ring(Context& ctx);                             // ring.cpp, A2
void bench_overhead(Context& ctx, ObserverPools& pools);   // overhead.cpp, B
void bench_paired(Context& ctx, unsigned workers);         // paired.cpp, B2
void bench_collector(Context& ctx, ObserverPools& pools);  // collector.cpp, C
void bench_trace(Context& ctx);                            // trace.cpp, D

}  // namespace bench::instr
