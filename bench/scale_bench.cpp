// SPDX-License-Identifier: Apache-2.0
// scale_bench.cpp - lantern_scale_bench: does the scalability analysis predict?
//
// For each workload: a run recorded on --record-workers workers (1), analysed in memory by
// lantern::analysis::scalability (the same analysis lantern-trace scale prints), whose
// simulated T_P is the prediction; then unobserved runs of the same workload on 1 and P
// workers, the measurement. Recorded and measured runs alternate, pinned, --pairs times;
// the table holds the medians and, per pair, predicted / measured.
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "lantern/analysis/analysis.hpp"
#include "lantern/analysis/scalability.hpp"
#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/sink.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/lantern.hpp"
#include "lantern/tools/program_cli.hpp"
#include "workloads.hpp"

namespace {

using bench::Row;
using bench::Target;
using lantern::instrumentation::Collector;
using lantern::instrumentation::Recorder;
using lantern::trace::Level;
using namespace std::chrono_literals;

constexpr const char* kUsage = R"(usage: lantern_scale_bench [options]

Checks the scalability analysis' prediction (lantern::analysis::scalability, what
lantern-trace scale prints) against the machine. For each workload, --pairs times:
  - a recorded run: a fresh pool of --record-workers workers (default 1) with a Recorder
    at the workload's level (graph for fork-join by join, which records every join;
    tasks for the others) and a Collector running, as an application records; its
    events go into memory, into one lantern::analysis::Analysis, and scalability() on
    --predict-workers and 1 gives the predicted T_P (the work-stealing simulator's) and
    the simulated T_1;
  - measured runs of the same workload, unobserved (no observer attached), on 1 worker
    and on --measure-workers: wall time from the main thread's call to its return.
The recorded and the measured runs alternate (R M, M R, ...), each after a 10 ms pause;
one unobserved warm-up of each width runs first. Workers are pinned (worker i on the
i-th CPU of the topology) and the Collector's thread is started on a CPU no recording
worker is pinned to. The table has, per workload, T_1 simulated against T_1 measured
(a sanity row: the recording's durations replayed on one worker) and T_P predicted
against T_P measured: the medians of the pairs; each row's note gives the median and
range of the pairs' own ratios, the recorded run, work, span, parallelism, the greedy
bounds and the costs the simulator used. Target: 0.85 <= predicted / measured <= 1.15.
A third row per workload and measured count (info) predicts T_P from the recording's
speedup alone: each pair's measured T_1 times its simulated T_P / T_1. Where it is
right and the prediction is not, the recording's own cost is what the analysis did not
take off the tasks' durations.

options:
  -h, --help              this text
  --version               print the version
  --pairs N               recorded/measured pairs per workload, 1 to 1000 (default 5)
  --only LIST             workloads, of: fib,skynet_tg,nqueens_tg,pipeline,
                          demo_bursts,demo_flood,demo_pipelines (default: all)
  --record-workers N      workers of the recorded run, 1 to 1024 (default 1)
  --predict-workers LIST  worker counts to predict T_P at (default 2)
  --measure-workers LIST  worker counts to measure at (default: each predicted count
                          that fits the CPUs this process may run on, or with
                          --predictions each count in the file but 1; 0 alone: none)
  --topology SPEC         the machine the simulator places its workers on, e.g.
                          "2 sockets x 32 cores x 2 threads" (default: this machine's,
                          from the recording's trace header)
  --save-predictions FILE write each prediction and this machine's measured T_1 to FILE
                          (tab-separated lines), for --predictions on another machine
  --predictions FILE      record nothing: take the predictions from FILE (written by
                          --save-predictions) and measure them here; the table then
                          also scales each prediction by this machine's T_1 over the
                          recording machine's (a core here is faster or slower)
  --scale K               every workload K times as large (fib: n + log_1.618 K; the
                          others K times the repetitions or items), 1 to 1000
                          (default 1): for many workers, whose runs are otherwise
                          too short to time. A recording holds 3 to 5 events per
                          task (32 bytes each in memory, and the analysis' own):
                          fib(31) at level graph is 6.6M events, skynet x3 10.7M
  --save-traces DIR       also write each measured pair's recording to DIR (which must
                          exist) as WORKLOAD-PAIR.trace, for lantern-trace scale and
                          lantern-view
  --quick                 CI smoke test: 1 pair, small sizes (every answer and every
                          figure is still computed and checked)
  --markdown              print the table as Markdown (for bench/RESULTS.md)
  --json                  print the rows as JSON, one object a line, on stdout (every
                          other line goes to stderr); the figures are under
                          "predicted" and "measured"
  --raw                   also print every run's figure, in run order, to stderr

workloads (sizes for about 50-200 ms on one worker of a 2-vCPU VM; --quick: smaller):
  fib             fib(31) by lantern::join (bench/workloads.hpp); recorded at graph.
                  The demo's fork-join workload is this one (fib by join).
  skynet_tg       skynet 1M three times in a row, a TaskGroup per node of the 10-ary
                  tree (1.1M tasks each; bench/workloads.hpp); recorded at tasks.
  nqueens_tg      nqueens(12) twice in a row, a TaskGroup at every row (one task per
                  legal placement, 856,188 each); recorded at tasks.
  pipeline        an in-order pipeline of 600 items through 3 stages of 20, 80 and
                  20 us (spin), stage s of item i after stage s - 1 of item i
                  (spawn_after) and after stage s of item i - 1: the middle stage is
                  the bottleneck, so T_2 is bounded by the span (600 x 80 us), not by
                  T_1 / 2; built and waited for inside one task; recorded at tasks.
  demo_bursts     the demo's bursts: 100 bursts of 200 tasks of 5 us, each a TaskGroup
                  spawned from the main thread and waited for there, without the demo's
                  20 ms idle gaps (idle time outside the pool is not in the task graph);
                  recorded at tasks.
  demo_flood      the demo's flooded worker: two chains of 20,000 self-spawning tasks
                  of 2 us (lantern::spawn) while 50 tasks wait in worker 0's lane;
                  recorded at tasks.
  demo_pipelines  the demo's pipelines: 1000 items through parse (30 us) -> render
                  (60 us) -> compress (20 us), spawned from the main thread with
                  spawn_after; recorded at tasks.
The demo (examples/demo.cpp) runs its workloads inline in main(), so their shapes are
replicated here; its echo workload (IO against a load client on the main thread) has
no prediction to check and is left out.

Exit status: 0 when every answer was right and every prediction computed, even if
targets were missed; 2 on a wrong answer, a prediction the analysis could not compute,
events lost in a recording, or bad usage; 3 when nothing progressed for 120 s.
)";

constexpr const char* kWorkloads[] = {"fib",         "skynet_tg",  "nqueens_tg",    "pipeline",
                                      "demo_bursts", "demo_flood", "demo_pipelines"};

struct Config {
  int pairs = 5;
  bool quick = false;
  int scale = 1;  // --scale: every workload K times as large
  bench::Output output;
  bool raw = false;
  std::vector<std::string> only;
  unsigned record_workers = 1;
  std::vector<unsigned> predict_workers;
  std::vector<unsigned> measure_workers;
  std::string topology;
  std::optional<lantern::analysis::TopologySpec> topology_spec;
  std::string save_predictions;
  std::string predictions;
  std::string trace_dir;  // --save-traces
};

using Context = bench::Context<Config>;

// usage_error: bad input (a file that cannot be read or written): say so, exit 2.
[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "lantern_scale_bench: %s\n", what.c_str());
  std::exit(2);
}

// -------------------------------------------------------------------- workloads

void spin_for(std::chrono::nanoseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

long long fib_value(int n) {
  long long a = 0, b = 1;
  for (int i = 0; i < n; ++i) b = std::exchange(a, b) + b;
  return a;
}

// queens_tg: nqueens(n) with a TaskGroup at every row (bench/workloads.hpp's kernel, for
// any n: the quick size needs a smaller board).
long long queens_tg(unsigned all, unsigned cols, unsigned left, unsigned right) {
  if (cols == all) return 1;
  std::array<long long, 32> counts{};
  lantern::TaskGroup group;
  int slot = 0;
  for (unsigned free = all & ~(cols | left | right); free != 0; free &= free - 1) {
    const unsigned bit = free & (~free + 1);
    group.spawn(
        [&, slot, bit] { counts[slot] = queens_tg(all, cols | bit, (left | bit) << 1 & all, (right | bit) >> 1); });
    ++slot;
  }
  group.wait();
  long long sum = 0;
  for (int i = 0; i < slot; ++i) sum += counts[i];
  return sum;
}

constexpr long long kQueensSolutions[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712};

// Workload: one job, run from the main thread on a pool; returns its answer.
struct Workload {
  std::string name;
  std::string label;  // the table's
  Level level;        // the recorded run's
  long long expected;
  std::function<long long(lantern::Scheduler&)> run;
};

// pipeline: `items` items through stages of `work` each, stage s of item i after stage
// s - 1 of item i and stage s of item i - 1; every task checks that both ran before it.
long long run_pipeline(lantern::Scheduler& pool, int items, std::vector<std::chrono::microseconds> work) {
  return pool.run([&pool, items, work] {
    const std::size_t stages = work.size();
    std::vector<std::atomic<unsigned char>> done(static_cast<std::size_t>(items) * stages);
    std::atomic<long long> ran{0}, out_of_order{0};
    std::vector<lantern::TaskHandle> previous(stages), current(stages);
    for (int i = 0; i < items; ++i) {
      for (std::size_t s = 0; s < stages; ++s) {
        const std::size_t k = static_cast<std::size_t>(i) * stages + s;
        auto body = [&, k, s, i, w = work[s]] {
          if ((s > 0 && !done[k - 1].load(std::memory_order_acquire)) ||
              (i > 0 && !done[k - stages].load(std::memory_order_acquire))) {
            out_of_order.fetch_add(1);
          }
          spin_for(w);
          ran.fetch_add(1, std::memory_order_relaxed);
          done[k].store(1, std::memory_order_release);
        };
        std::vector<lantern::Dependency> deps;
        if (s > 0) deps.emplace_back(current[s - 1]);
        if (i > 0) deps.emplace_back(previous[s]);
        current[s] =
            deps.empty() ? pool.spawn_handle(body) : pool.spawn_after(std::span<const lantern::Dependency>(deps), body);
      }
      previous.swap(current);
    }
    previous[stages - 1].wait();
    for (auto& h : previous) h.wait();
    return ran.load() - out_of_order.load() * 1'000'000;
  });
}

long long run_demo_bursts(lantern::Scheduler& pool, int bursts, lantern::Label label) {
  std::atomic<long long> tasks{0};
  for (int b = 0; b < bursts; ++b) {
    lantern::TaskGroup group(pool);
    for (int i = 0; i < 200; ++i) {
      group.spawn([&tasks, label] {
        lantern::label_task(label);
        spin_for(5us);
        tasks.fetch_add(1, std::memory_order_relaxed);
      });
    }
    group.wait();
  }
  return tasks.load();
}

// demo_flood: the chains' state is shared by its tasks, so the task that ends the flood
// may still be notifying when the main thread wakes and returns.
long long run_demo_flood(lantern::Scheduler& pool, long total, lantern::Label flood_label, lantern::Label lane_label) {
  struct State {
    std::atomic<long> done{0}, claimed{2};
    std::atomic<bool> finished{false};
  };
  struct Flood {
    std::shared_ptr<State> state;
    long total;
    lantern::Label label;
    void operator()() const {
      lantern::label_task(label);
      spin_for(2us);
      if (state->claimed.fetch_add(1) < total) lantern::spawn(*this);
      if (state->done.fetch_add(1) + 1 == total) {
        state->finished.store(true);
        state->finished.notify_all();
      }
    }
  };
  const auto state = std::make_shared<State>();
  std::atomic<long long> lane_ran{0};
  std::vector<lantern::Future<void>> lane = pool.run([&] {
    for (int i = 0; i < 2; ++i) lantern::spawn(Flood{state, total, flood_label});
    std::vector<lantern::Future<void>> futures;
    for (int i = 0; i < 50; ++i) {
      futures.push_back(pool.submit_to_lane(0, [&lane_ran, lane_label] {
        lantern::label_task(lane_label);
        lane_ran.fetch_add(1);
      }));
    }
    return futures;
  });
  for (auto& f : lane) f.get();
  state->finished.wait(false);
  return state->done.load() + lane_ran.load();
}

long long run_demo_pipelines(lantern::Scheduler& pool, int items, const std::array<lantern::Label, 3>& labels) {
  std::atomic<long long> stages{0}, out_of_order{0};
  std::vector<std::array<std::atomic<unsigned char>, 3>> done(static_cast<std::size_t>(items));
  std::vector<lantern::TaskHandle> last;
  last.reserve(static_cast<std::size_t>(items));
  constexpr std::array<std::chrono::microseconds, 3> kWork{30us, 60us, 20us};
  for (int i = 0; i < items; ++i) {
    auto stage = [&, i](int s) {
      return [&, i, s, label = labels[s]] {
        lantern::label_task(label);
        if (s > 0 && !done[i][s - 1].load(std::memory_order_acquire)) out_of_order.fetch_add(1);
        spin_for(kWork[s]);
        stages.fetch_add(1, std::memory_order_relaxed);
        done[i][s].store(1, std::memory_order_release);
      };
    };
    lantern::TaskHandle parse = pool.spawn_handle(stage(0));
    lantern::TaskHandle render = pool.spawn_after({parse}, stage(1));
    last.push_back(pool.spawn_after({render}, stage(2)));
  }
  for (auto& h : last) h.wait();
  return stages.load() - out_of_order.load() * 1'000'000;
}

std::vector<Workload> make_workloads(const Config& config) {
  const bool q = config.quick;
  const int k = config.scale;
  // fib(n + 1) is about 1.618 times fib(n): --scale K adds log_1.618(K) to n.
  const int fib_n = (q ? 22 : 31) + static_cast<int>(std::lround(std::log(k) / std::log(1.618)));
  const long long skynet_leaves = q ? 10'000 : 1'000'000;
  const int skynets = (q ? 1 : 3) * k;
  const int queens = q ? 8 : 12;
  const int queens_runs = (q ? 1 : 2) * k;
  const int pipeline_items = (q ? 60 : 600) * k;
  const int bursts = (q ? 5 : 100) * k;
  const long flood = (q ? 2'000 : 40'000) * k;
  const int demo_items = (q ? 50 : 1000) * k;
  static const lantern::Label burst = lantern::label("burst"), flood_label = lantern::label("flood"),
                              lane_task = lantern::label("lane task"), parse = lantern::label("parse"),
                              render = lantern::label("render"), compress = lantern::label("compress");
  const std::vector<std::chrono::microseconds> pipeline_work{20us, 80us, 20us};
  std::vector<Workload> all = {
      {"fib", "fib(" + std::to_string(fib_n) + ") join", Level::graph, fib_value(fib_n),
       [fib_n](lantern::Scheduler& pool) {
         return pool.run([fib_n] { return bench::workloads::fib_lantern(fib_n); });
       }},
      {"skynet_tg", "skynet " + std::to_string(skynet_leaves) + " x" + std::to_string(skynets) + " TaskGroup",
       Level::tasks, skynets * (skynet_leaves * (skynet_leaves - 1) / 2),
       [=](lantern::Scheduler& pool) {
         return pool.run([=] {
           long long sum = 0;
           for (int i = 0; i < skynets; ++i) sum += bench::workloads::skynet_tg(0, skynet_leaves);
           return sum;
         });
       }},
      {"nqueens_tg", "nqueens(" + std::to_string(queens) + ") x" + std::to_string(queens_runs) + " TaskGroup every row",
       Level::tasks, queens_runs * kQueensSolutions[queens],
       [=](lantern::Scheduler& pool) {
         return pool.run([=] {
           long long sum = 0;
           for (int i = 0; i < queens_runs; ++i) sum += queens_tg((1u << queens) - 1, 0, 0, 0);
           return sum;
         });
       }},
      {"pipeline", "pipeline " + std::to_string(pipeline_items) + " x 3 stages (20/80/20 us), in order", Level::tasks,
       pipeline_items * 3LL,
       [=](lantern::Scheduler& pool) { return run_pipeline(pool, pipeline_items, pipeline_work); }},
      {"demo_bursts", "demo bursts " + std::to_string(bursts) + " x 200 x 5 us", Level::tasks, bursts * 200LL,
       [bursts](lantern::Scheduler& pool) { return run_demo_bursts(pool, bursts, burst); }},
      {"demo_flood", "demo flood 2 chains, " + std::to_string(flood) + " x 2 us", Level::tasks, flood + 50,
       [flood](lantern::Scheduler& pool) { return run_demo_flood(pool, flood, flood_label, lane_task); }},
      {"demo_pipelines", "demo pipelines " + std::to_string(demo_items) + " x 3 stages", Level::tasks, demo_items * 3LL,
       [demo_items](lantern::Scheduler& pool) {
         return run_demo_pipelines(pool, demo_items, {parse, render, compress});
       }},
  };
  std::vector<Workload> chosen;
  for (Workload& w : all) {
    if (std::find(config.only.begin(), config.only.end(), w.name) != config.only.end()) chosen.push_back(std::move(w));
  }
  return chosen;
}

// ------------------------------------------------------------------ a recording

// MemorySink keeps every event the Collector hands it (the Analysis reads them once the
// Collector has stopped).
class MemorySink final : public lantern::instrumentation::Sink {
 public:
  void on_batch(std::span<const lantern::trace::Event> events) override {
    events_.insert(events_.end(), events.begin(), events.end());
  }
  const std::vector<lantern::trace::Event>& events() const { return events_; }
  void clear() { events_.clear(); }  // keeps the memory for the next recording

 private:
  std::vector<lantern::trace::Event> events_;
};

// Prediction: what one recorded run says.
struct Prediction {
  double recorded_s = 0;                        // the recorded run's wall time
  double traced_s = 0;                          // the same run in its trace: first task begin to last task end
  std::map<unsigned, double> simulated_s;       // T_P by workers
  std::map<unsigned, double> lower_s, upper_s;  // the greedy bounds by workers
  double work_s = 0, span_s = 0, parallelism = 0;
  std::uint64_t events = 0, tasks = 0;
  int retried = 0;  // recordings made again because they lost events
  lantern::analysis::RunCosts costs;
  std::string topology;
  std::vector<std::string> not_computed, notes;
  std::array<double, lantern::analysis::kEdgeKindCount> span_by_edge_s{};  // the span by the kind of edge entering
  std::uint64_t stretches = 0, edges = 0;
};

// CollectorAway: while it lives, the calling thread (and so a thread it starts) may run
// only on the CPUs none of the pool's workers is pinned to, where there are such CPUs.
class CollectorAway {
 public:
  explicit CollectorAway(const lantern::Scheduler& pool) {
    std::set<int> taken;
    for (std::uint32_t i = 0; i < pool.worker_count(); ++i) taken.insert(pool.worker_cpu(i));
    cpu_set_t away;
    CPU_ZERO(&away);
    int count = 0;
    for (const int cpu : bench::allowed_cpus()) {
      if (taken.count(cpu) == 0) {
        CPU_SET(cpu, &away);
        ++count;
      }
    }
    moved_ = count > 0 && sched_setaffinity(0, sizeof away, &away) == 0;
  }
  ~CollectorAway() {
    if (moved_) sched_setaffinity(0, sizeof(cpu_set_t), &bench::process_cpu_mask());
  }
  CollectorAway(const CollectorAway&) = delete;
  CollectorAway& operator=(const CollectorAway&) = delete;

 private:
  bool moved_ = false;
};

std::vector<unsigned> simulated_workers(const Config& config) {
  std::set<unsigned> w(config.predict_workers.begin(), config.predict_workers.end());
  w.insert(1);
  return {w.begin(), w.end()};
}

// Rig: the recording side of one workload, kept across its recordings: one Recorder,
// its Collector and the sink, so that the ring's and the sink's memory is touched once
// (in the warm-up recording), not as page faults inside every recorded run.
struct Rig {
  explicit Rig(const Config& config, Level level)
      : recorder(config.record_workers, {.level = level, .ring_capacity = std::size_t{1} << 22}),
        collector(recorder, {.batch_per_worker = 1 << 16}),
        sink(std::make_shared<MemorySink>()) {}
  Recorder recorder;
  Collector collector;
  std::shared_ptr<MemorySink> sink;
};

std::uint64_t dropped_so_far(const Recorder& recorder) {
  std::uint64_t dropped = 0;
  for (std::uint32_t i = 0; i < recorder.worker_count(); ++i) dropped += recorder.snapshot(i).events_dropped;
  return dropped;
}

// kRecordAttempts: a recording that lost events (on a loaded host the Collector's thread
// can wait long enough for a ring to fill) is made again, at most this many times.
constexpr int kRecordAttempts = 3;

// record_and_predict: one recorded run and what the analysis predicts from it; with
// `trace_path`, the recording is also written there as a trace file.
Prediction record_and_predict(const Config& config, const Workload& w, Rig& rig, const std::string& trace_path = {}) {
  Prediction p;
  std::optional<lantern::trace::TraceHeader> header;
  for (int attempt = 1;; ++attempt) {
    rig.sink->clear();
    const std::uint64_t dropped_before = dropped_so_far(rig.recorder);
    lantern::Scheduler pool({.workers = config.record_workers, .pin_workers = true, .observer = &rig.recorder});
    header = lantern::instrumentation::make_trace_header(pool, rig.recorder, "lantern_scale_bench");
    rig.collector.attach(rig.sink);
    std::shared_ptr<lantern::instrumentation::TraceFileSink> file;
    if (!trace_path.empty()) {
      file = std::make_shared<lantern::instrumentation::TraceFileSink>(trace_path, *header);
      if (!file->ok()) usage_error("cannot write trace '" + trace_path + "': " + file->failure());
      rig.collector.attach(file);
    }
    {
      CollectorAway away(pool);
      rig.collector.start();
    }
    bench::settle();
    const auto start = bench::Clock::now();
    const long long got = w.run(pool);
    p.recorded_s = bench::seconds_between(start, bench::Clock::now());
    bench::check_equal(w.label + ", recorded", got, w.expected);
    pool.shutdown();
    rig.collector.stop();
    rig.collector.detach(rig.sink.get());
    if (file) {
      rig.collector.detach(file.get());
      if (!file->failure().empty()) usage_error(file->failure());
    }
    const std::uint64_t dropped = dropped_so_far(rig.recorder) - dropped_before;
    if (dropped == 0) break;
    if (attempt == kRecordAttempts) {
      bench::wrong_answer(w.label + ": " + std::to_string(kRecordAttempts) + " recordings in a row lost events (" +
                          std::to_string(dropped) +
                          " in the last: the rings filled faster than the Collector drained them)");
    }
    ++p.retried;
  }
  const auto& sink = rig.sink;
  p.events = sink->events().size();

  lantern::analysis::Analysis analysis;
  analysis.set_header(*header, true);
  analysis.add(std::span(sink->events()));
  for (std::uint32_t id = 1; id < lantern::label_count(); ++id) {
    analysis.define_label(id, std::string(lantern::label_name(id)));
  }
  analysis.finish();
  lantern::analysis::ScaleOptions options;
  options.workers = simulated_workers(config);
  options.topology = config.topology_spec;
  options.top_labels = 0;
  const lantern::analysis::Scalability s = lantern::analysis::scalability(analysis, options);
  p.not_computed = s.not_computed;
  p.notes = s.notes;
  p.tasks = s.tasks;
  p.costs = s.costs;
  p.topology = s.topology.describe();
  p.work_s = s.work_ns.value_or(std::nan("")) / 1e9;
  p.span_s = s.span_ns.value_or(std::nan("")) / 1e9;
  p.parallelism = s.parallelism.value_or(std::nan(""));
  p.traced_s = s.measured_ns.value_or(std::nan("")) / 1e9;
  for (int k = 0; k < lantern::analysis::kEdgeKindCount; ++k) p.span_by_edge_s[k] = s.span_by_edge[k] / 1e9;
  p.stretches = s.stretches;
  p.edges = s.edges;
  for (const lantern::analysis::CurvePoint& point : s.curve) {
    if (point.simulated_ns) p.simulated_s[point.workers] = *point.simulated_ns / 1e9;
    p.lower_s[point.workers] = point.lower_ns / 1e9;
    p.upper_s[point.workers] = point.upper_ns / 1e9;
  }
  for (const unsigned workers : options.workers) {
    if (p.simulated_s.count(workers) == 0) {
      std::string why;
      for (const std::string& line : s.not_computed) why += " " + line;
      bench::wrong_answer(w.label + ": the analysis computed no T_" + std::to_string(workers) +
                          (why.empty() ? " (and said nothing)" : ":" + why));
    }
  }
  return p;
}

// ---------------------------------------------------------------- measured runs

// Measured: one unobserved run's wall time and the share of its workers' CPUs it had.
struct Measured {
  double seconds = 0;
  double cpu_share = 0;  // process CPU time / (wall x workers): below 1, other work took CPU
};

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

Measured measure(lantern::Scheduler& pool, const Workload& w) {
  const double cpu = process_cpu_seconds();
  const auto start = bench::Clock::now();
  const long long got = w.run(pool);
  Measured m;
  m.seconds = bench::seconds_between(start, bench::Clock::now());
  m.cpu_share = (process_cpu_seconds() - cpu) / (m.seconds * pool.worker_count());
  bench::check_equal(w.label + ", " + std::to_string(pool.worker_count()) + " workers unobserved", got, w.expected);
  return m;
}

// --------------------------------------------------------------- predictions file

// A predictions file: one line per workload and worker count,
//   lantern_scale_bench<TAB>WORKLOAD<TAB>WORKERS<TAB>PREDICTED_S<TAB>T1_MEASURED_S<TAB>TOPOLOGY
struct SavedPrediction {
  double predicted_s = 0;
  double t1_measured_s = 0;
  std::string topology;
};
using SavedPredictions = std::map<std::pair<std::string, unsigned>, SavedPrediction>;

SavedPredictions read_predictions(const std::string& path) {
  std::ifstream in(path);
  if (!in) usage_error("cannot read predictions file '" + path + "'");
  SavedPredictions saved;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::vector<std::string> fields;
    std::stringstream split(line);
    for (std::string f; std::getline(split, f, '\t');) fields.push_back(f);
    const auto workers =
        fields.size() == 6 ? lantern::tools::parse_number<unsigned>(fields[2], 1, lantern::kMaxWorkers) : std::nullopt;
    const auto predicted = fields.size() == 6 ? lantern::tools::parse_number<double>(fields[3], 0, 1e9) : std::nullopt;
    const auto t1 = fields.size() == 6 ? lantern::tools::parse_number<double>(fields[4], 0, 1e9) : std::nullopt;
    if (fields.size() != 6 || fields[0] != "lantern_scale_bench" || !workers || !predicted || !t1) {
      usage_error(path + ":" + std::to_string(number) + ": not a line of --save-predictions");
    }
    saved[{fields[1], *workers}] = {*predicted, *t1, fields[5]};
  }
  if (saved.empty()) usage_error(path + ": no predictions in it");
  return saved;
}

// ------------------------------------------------------------------------ rows

std::string ms_text(double s) { return bench::format_number(s * 1e3) + " ms"; }

std::string ratio_range(const std::vector<double>& ratios) {
  if (ratios.empty()) return "n/a";
  return bench::format_ratio(bench::median(ratios)) + " (range " +
         bench::format_ratio(*std::min_element(ratios.begin(), ratios.end())) + " .. " +
         bench::format_ratio(*std::max_element(ratios.begin(), ratios.end())) + ")";
}

std::vector<double> ratios_of(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> r;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) r.push_back(a[i] / b[i]);
  return r;
}

std::vector<double> field(const std::vector<Prediction>& ps, const std::function<double(const Prediction&)>& f) {
  std::vector<double> v;
  for (const Prediction& p : ps) v.push_back(f(p));
  return v;
}

Row make_row(const std::string& benchmark, unsigned workers, double predicted, double measured, Target target,
             std::string note, std::vector<std::pair<std::string, double>> values) {
  Row row{benchmark, workers, "ms", predicted * 1e3, measured * 1e3, target, std::move(note), std::move(values)};
  row.subject = "predicted";
  row.peer = "measured";
  return row;
}

// bench_workload: the pairs of one workload, and its rows.
void bench_workload(Context& ctx, const Workload& w, const SavedPredictions* saved, SavedPredictions* to_save) {
  const Config& config = ctx.config;
  const bool recording = saved == nullptr;
  // The measured pools, unobserved, pinned: 1 worker (the T_1 sanity row, and the speed
  // reference of a predictions file) and each --measure-workers.
  std::set<unsigned> widths(config.measure_workers.begin(), config.measure_workers.end());
  widths.insert(1);
  std::map<unsigned, std::unique_ptr<lantern::Scheduler>> pools;
  for (const unsigned n : widths) {
    pools[n] = std::make_unique<lantern::Scheduler>(lantern::SchedulerOptions{.workers = n, .pin_workers = true});
    measure(*pools[n], w);  // warm-up
  }
  std::vector<Prediction> predictions;
  std::map<unsigned, std::vector<Measured>> measured;
  std::unique_ptr<Rig> rig;
  if (recording) {
    rig = std::make_unique<Rig>(config, w.level);
    record_and_predict(config, w, *rig);  // warm-up
  }
  const int total = config.pairs;
  for (int r = 0; r < total; ++r) {
    ctx.step(r, total);
    auto record = [&] {
      if (!recording) return;
      bench::settle();
      const std::string trace_path =
          config.trace_dir.empty() ? "" : config.trace_dir + "/" + w.name + "-" + std::to_string(r + 1) + ".trace";
      predictions.push_back(record_and_predict(config, w, *rig, trace_path));
      if (config.raw) {
        std::fprintf(stderr, "raw %s pair %d recorded %.9f", w.name.c_str(), r, predictions.back().recorded_s);
        for (const auto& [n, t] : predictions.back().simulated_s) std::fprintf(stderr, " T_%u %.9f", n, t);
        std::fprintf(stderr, "\n");
      }
    };
    auto run_measured = [&] {
      for (auto& [n, pool] : pools) {
        bench::settle();
        measured[n].push_back(measure(*pool, w));
        if (config.raw)
          std::fprintf(stderr, "raw %s pair %d measured %u %.9f\n", w.name.c_str(), r, n, measured[n].back().seconds);
      }
    };
    if (r % 2 == 0) {
      record();
      run_measured();
    } else {
      run_measured();
      record();
    }
  }
  ctx.step(total, total);
  auto seconds = [](const std::vector<Measured>& ms) {
    std::vector<double> v;
    for (const Measured& m : ms) v.push_back(m.seconds);
    return v;
  };
  auto shares = [](const std::vector<Measured>& ms) {
    std::vector<double> v;
    for (const Measured& m : ms) v.push_back(m.cpu_share);
    return v;
  };
  const std::vector<double> t1_measured = seconds(measured[1]);
  const double t1_measured_median = bench::median(t1_measured);
  const std::string pairs_text = std::to_string(total) + (total == 1 ? " pair" : " pairs");

  if (!recording) {
    // Predictions from another machine: scaled by this machine's T_1 over that one's.
    for (const unsigned n : config.measure_workers) {
      const auto it = saved->find({w.name, n});
      if (it == saved->end()) continue;
      const SavedPrediction& sp = it->second;
      const double speed = t1_measured_median / sp.t1_measured_s;
      const std::vector<double> tn = seconds(measured[n]);
      std::vector<double> ratios;
      for (const double t : tn) ratios.push_back(sp.predicted_s * speed / t);
      ctx.rows.push_back(
          make_row(w.label + ": T_" + std::to_string(n) + " predicted elsewhere (x T_1 here / there) / measured here",
                   n, sp.predicted_s * speed, bench::median(tn), Target::between(0.85, 1.15),
                   pairs_text + "; the prediction as saved " + ms_text(sp.predicted_s) + " (topology " + sp.topology +
                       "), T_1 there " + ms_text(sp.t1_measured_s) + ", here " + ms_text(t1_measured_median) +
                       "; predicted / measured per pair " + ratio_range(ratios) + "; CPU share of the measured runs " +
                       bench::format_ratio(bench::median(shares(measured[n]))),
                   {{"pairs", static_cast<double>(total)},
                    {"predicted_as_saved_ms", sp.predicted_s * 1e3},
                    {"t1_there_ms", sp.t1_measured_s * 1e3},
                    {"t1_here_ms", t1_measured_median * 1e3},
                    {"ratio_median", bench::median(ratios)},
                    {"cpu_share", bench::median(shares(measured[n]))}}));
    }
    return;
  }

  const Prediction& first = predictions.front();
  const std::vector<double> recorded = field(predictions, [](const Prediction& p) { return p.recorded_s; });
  int retried = 0;
  for (const Prediction& p : predictions) retried += p.retried;
  std::string facts =
      "recorded run (" + std::to_string(config.record_workers) + " worker" + (config.record_workers == 1 ? "" : "s") +
      ", level " + std::string(lantern::kRecordLevelNames[static_cast<int>(w.level)]) + ") " +
      ms_text(bench::median(recorded)) + " (in its trace, first task begin to last end: " +
      ms_text(bench::median(field(predictions, [](const Prediction& p) { return p.traced_s; }))) + "), " +
      std::to_string(first.events) + " events, " + std::to_string(first.tasks) + " tasks; work " +
      ms_text(bench::median(field(predictions, [](const Prediction& p) { return p.work_s; }))) + ", span " +
      ms_text(bench::median(field(predictions, [](const Prediction& p) { return p.span_s; }))) + ", parallelism " +
      bench::format_number(bench::median(field(predictions, [](const Prediction& p) { return p.parallelism; }))) +
      "; costs: spawn " + (first.costs.spawn_ns ? bench::format_number(*first.costs.spawn_ns) + " ns" : "none") +
      ", steal " + (first.costs.steal_ns ? bench::format_number(*first.costs.steal_ns) + " ns" : "none") + ", wake " +
      (first.costs.wake_ns ? bench::format_number(*first.costs.wake_ns) + " ns" : "none") + ", event " +
      bench::format_number(first.costs.event_ns) +
      " ns (taken off: " + bench::format_number(100 * first.costs.recording_share) +
      " % of the tasks' recorded time); topology " + first.topology;
  facts += "; the first recording's graph: " + std::to_string(first.stretches) + " stretches, " +
           std::to_string(first.edges) + " edges, its span by the edge entering each stretch:";
  for (int k = 0; k < lantern::analysis::kEdgeKindCount; ++k) {
    if (first.span_by_edge_s[k] > 0) {
      facts += " " + std::string(lantern::analysis::kEdgeKindNames[k]) + " " + ms_text(first.span_by_edge_s[k]);
    }
  }
  if (retried > 0) facts += "; " + std::to_string(retried) + " recordings made again (they lost events)";
  for (const std::string& note : first.notes) facts += "; analysis note: " + note;

  for (const unsigned n : simulated_workers(config)) {
    const std::vector<double> predicted = field(predictions, [n](const Prediction& p) { return p.simulated_s.at(n); });
    const double lower = bench::median(field(predictions, [n](const Prediction& p) { return p.lower_s.at(n); }));
    const double upper = bench::median(field(predictions, [n](const Prediction& p) { return p.upper_s.at(n); }));
    const bool is_measured = measured.count(n) > 0;
    const std::vector<double> tn = is_measured ? seconds(measured[n]) : std::vector<double>{};
    const std::vector<double> ratios = ratios_of(predicted, tn);
    if (to_save) (*to_save)[{w.name, n}] = {bench::median(predicted), t1_measured_median, first.topology};
    std::string note = pairs_text + "; predicted / measured per pair " + ratio_range(ratios) + "; greedy bounds " +
                       ms_text(lower) + " .. " + ms_text(upper);
    if (is_measured)
      note += "; CPU share of the measured runs " + bench::format_ratio(bench::median(shares(measured[n])));
    if (!is_measured) note += "; not measured here (--measure-workers)";
    if (n == 1) note += "; " + facts;
    ctx.rows.push_back(make_row(
        w.label +
            (n == 1 ? ": T_1 simulated / measured (sanity)" : ": T_" + std::to_string(n) + " predicted / measured"),
        n, bench::median(predicted), is_measured ? bench::median(tn) : std::nan(""),
        n == 1 || !is_measured ? Target::info() : Target::between(0.85, 1.15), note,
        {{"pairs", static_cast<double>(total)},
         {"ratio_median", ratios.empty() ? std::nan("") : bench::median(ratios)},
         {"ratio_min", ratios.empty() ? std::nan("") : *std::min_element(ratios.begin(), ratios.end())},
         {"ratio_max", ratios.empty() ? std::nan("") : *std::max_element(ratios.begin(), ratios.end())},
         {"lower_ms", lower * 1e3},
         {"upper_ms", upper * 1e3},
         {"recorded_ms", bench::median(recorded) * 1e3},
         {"traced_ms", bench::median(field(predictions, [](const Prediction& p) { return p.traced_s; })) * 1e3},
         {"work_ms", first.work_s * 1e3},
         {"span_ms", first.span_s * 1e3},
         {"events", static_cast<double>(first.events)},
         {"recordings_retried", static_cast<double>(retried)},
         {"cpu_share", is_measured ? bench::median(shares(measured[n])) : std::nan("")}}));
    if (n == 1 || !is_measured) continue;
    // The same prediction with the recording's speedup only: each pair's unobserved T_1
    // times its recording's simulated T_n / T_1. Where the recording's own cost is not
    // all taken off the tasks' durations, this row shows what the simulator's schedule
    // is worth without it.
    std::vector<double> by_speedup;
    for (std::size_t i = 0; i < predictions.size() && i < t1_measured.size(); ++i) {
      by_speedup.push_back(t1_measured[i] * predictions[i].simulated_s.at(n) / predictions[i].simulated_s.at(1));
    }
    const std::vector<double> speedup_ratios = ratios_of(by_speedup, tn);
    ctx.rows.push_back(make_row(
        w.label + ": T_" + std::to_string(n) + " by the predicted speedup (T_1 measured x simulated T_" +
            std::to_string(n) + " / T_1) / measured",
        n, bench::median(by_speedup), bench::median(tn), Target::info(),
        pairs_text + "; per pair " + ratio_range(speedup_ratios) + "; the simulated speedup T_1 / T_" +
            std::to_string(n) + " " +
            bench::format_ratio(bench::median(
                field(predictions, [n](const Prediction& p) { return p.simulated_s.at(1) / p.simulated_s.at(n); }))) +
            ", the measured one " + bench::format_ratio(bench::median(ratios_of(t1_measured, tn))),
        {{"pairs", static_cast<double>(total)},
         {"ratio_median", bench::median(speedup_ratios)},
         {"ratio_min", *std::min_element(speedup_ratios.begin(), speedup_ratios.end())},
         {"ratio_max", *std::max_element(speedup_ratios.begin(), speedup_ratios.end())},
         {"events", static_cast<double>(first.events)}}));
  }
}

// parse_command_line fills *config; it returns the exit status to end with at once
// after --help, --version or bad usage (program_cli.hpp), nullopt to run.
std::optional<int> parse_command_line(int argc, char** argv, Config* config) {
  lantern::tools::Program program("lantern_scale_bench", kUsage);
  auto& app = program.app();
  CLI::Option* pairs = lantern::tools::number_option(app, "--pairs", &config->pairs, 1, 1000);
  lantern::tools::choice_list_option(app, "--only", &config->only, {std::begin(kWorkloads), std::end(kWorkloads)});
  lantern::tools::number_option(app, "--scale", &config->scale, 1, 1000);
  lantern::tools::number_option(app, "--record-workers", &config->record_workers, 1u, lantern::kMaxWorkers);
  lantern::tools::number_list_option(app, "--predict-workers", &config->predict_workers, 1u, lantern::kMaxWorkers);
  CLI::Option* measure_workers =
      lantern::tools::number_list_option(app, "--measure-workers", &config->measure_workers, 0u, lantern::kMaxWorkers);
  app.add_option("--topology", config->topology);
  app.add_option("--save-predictions", config->save_predictions);
  app.add_option("--predictions", config->predictions);
  app.add_option("--save-traces", config->trace_dir);
  app.add_flag("--quick", config->quick);
  app.add_flag("--markdown", config->output.markdown);
  app.add_flag("--json", config->output.json);
  app.add_flag("--raw", config->raw);
  if (const auto exit = program.parse(argc, argv)) return exit;
  if (config->quick && pairs->count() == 0) config->pairs = 1;
  if (config->predict_workers.empty()) config->predict_workers = {2};
  if (!config->topology.empty()) {
    std::string error;
    config->topology_spec = lantern::analysis::parse_topology(config->topology, &error);
    if (!config->topology_spec) {
      std::fprintf(stderr, "lantern_scale_bench: --topology '%s': %s (see lantern_scale_bench --help)\n",
                   config->topology.c_str(), error.c_str());
      return 2;
    }
  }
  const unsigned cpus = static_cast<unsigned>(bench::allowed_cpus().size());
  if (measure_workers->count() == 0 && !config->predictions.empty()) {
    // The file's worker counts (main reads it).
  } else if (measure_workers->count() == 0) {
    for (const unsigned n : config->predict_workers) {
      if (n <= std::max(1u, cpus)) config->measure_workers.push_back(n);
    }
  }
  std::erase(config->measure_workers, 0u);
  if (config->only.empty()) config->only.assign(std::begin(kWorkloads), std::end(kWorkloads));
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (const auto exit = parse_command_line(argc, argv, &config)) return *exit;
  std::FILE* text = config.output.text();
#if !LANTERN_OBSERVER
  std::fprintf(text, "lantern_scale_bench: built with LANTERN_OBSERVER=OFF: nothing can be recorded\n");
  return 0;
#endif
  std::optional<SavedPredictions> saved;
  if (!config.predictions.empty()) {
    saved = read_predictions(config.predictions);
    if (config.measure_workers.empty()) {
      std::set<unsigned> counts;
      for (const auto& [key, p] : *saved) {
        if (key.second > 1) counts.insert(key.second);
      }
      config.measure_workers.assign(counts.begin(), counts.end());
    }
  }
  std::string measure_list;
  for (const unsigned n : config.measure_workers) measure_list += (measure_list.empty() ? "" : ",") + std::to_string(n);
  std::string predict_list;
  for (const unsigned n : config.predict_workers) predict_list += (predict_list.empty() ? "" : ",") + std::to_string(n);
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) < 0) load[0] = std::nan("");
  std::fprintf(text,
               "lantern_scale_bench: %d pairs per workload%s; %s; measured unobserved on 1%s%s workers; %u CPUs "
               "allowed; load average %.2f (other processes run beside this one)\n",
               config.pairs, config.quick ? ", --quick" : "",
               saved ? ("predictions from " + config.predictions).c_str()
                     : ("recorded on " + std::to_string(config.record_workers) + " worker(s), predicted for " +
                        predict_list + (config.topology.empty() ? "" : " on " + config.topology))
                           .c_str(),
               measure_list.empty() ? "" : ",", measure_list.c_str(),
               static_cast<unsigned>(bench::allowed_cpus().size()), load[0]);
  bench::print_cpu_speeds("at the start", text);

  const bench::Progress progress;
  bench::Watchdog watchdog(120s);
  std::vector<Row> rows;
  SavedPredictions to_save;
  for (const Workload& w : make_workloads(config)) {
    Context ctx{config, progress, watchdog, rows, "workload", 1};
    bench_workload(ctx, w, saved ? &*saved : nullptr, config.save_predictions.empty() ? nullptr : &to_save);
    progress.clear();
  }
  if (saved && rows.empty()) {
    usage_error(config.predictions + " has no prediction for the workloads and worker counts asked (--only, " +
                "--measure-workers)");
  }
  if (!config.save_predictions.empty()) {
    std::ofstream out(config.save_predictions);
    for (const auto& [key, p] : to_save) {
      char line[512];
      std::snprintf(line, sizeof line, "lantern_scale_bench\t%s\t%u\t%.9g\t%.9g\t%s\n", key.first.c_str(), key.second,
                    p.predicted_s, p.t1_measured_s, p.topology.c_str());
      out << line;
    }
    if (!out.flush()) usage_error("cannot write predictions file '" + config.save_predictions + "'");
    std::fprintf(text, "predictions written to %s\n", config.save_predictions.c_str());
  }
  bench::report(config.output, rows, /*cpu_speeds=*/true);
  return 0;
}
