// instrumentation_bench.cpp - lantern_instr_bench: what Lantern's instrumentation costs.
//
// One source, two executables:
//   lantern_instr_bench      links lantern::core (LANTERN_OBSERVER=1) and
//                            lantern::instrumentation; measures everything.
//   lantern_instr_bench_off  built with LANTERN_INSTR_BENCH_COMPILED_OUT=1 against
//                            lantern_core_no_observer (LANTERN_OBSERVER=0: every hook
//                            compiled out, in the library and in join.hpp's inline code).
//                            It runs only the compiled-out workloads and prints
//                            machine-readable lines; lantern_instr_bench drives it as a
//                            subprocess over a pipe, one repetition per request, so its
//                            repetitions interleave with the in-process variants.
// Layout:
//   1. shared: the workloads and the compiled-out side's protocol
//   2. lantern_instr_bench_off's main
//   3. lantern_instr_bench: configuration and command line
//   4. the compiled-out subprocess, seen from the parent
//   5. benchmark A: the cost of one recorded event against one rdtsc
//   6. benchmark B: fib and skynet under each observer variant
//   7. benchmark C: collector throughput
//   8. benchmark D: a real trace file - collector and writer throughput, bytes per event, reader
//   9. main
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "lantern/lantern.hpp"
#include "lantern/tools/program_cli.hpp"
#include "workloads.hpp"

#ifndef LANTERN_INSTR_BENCH_COMPILED_OUT
#define LANTERN_INSTR_BENCH_COMPILED_OUT 0
#endif

#if LANTERN_INSTR_BENCH_COMPILED_OUT
#if LANTERN_OBSERVER
#error "lantern_instr_bench_off must be built against lantern_core_no_observer (LANTERN_OBSERVER=0)"
#endif
#else
#include <fcntl.h>
#include <sched.h>  // sched_getcpu
#include <spawn.h>
#include <sys/wait.h>

#include <array>
#include <atomic>
#include <csignal>
#include <functional>
#include <memory>
#include <span>

#include "lantern/clock.hpp"  // LANTERN_HAS_RDTSC, and <x86intrin.h> where there is one

#include <boost/lockfree/spsc_queue.hpp>
#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>  // _mm_clflush
#endif

#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/event_ring.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/sink.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/trace/trace_reader.hpp"

#include <cmath>
#include <filesystem>
#include <set>
#include <unistd.h>

extern char** environ;
#endif

namespace {

using bench::Clock;
using namespace bench::workloads;

// ============================================== 1. shared: workloads and the protocol

// Workload: one of the two fork-join jobs, run on a pool from the main thread.
struct Workload {
  const char* name;      // protocol word and --only-style name
  const char* label;     // table label
  long long expected;    // the answer
  long long (*body)();   // runs inside Scheduler::run
};

long long run_fib() { return fib_lantern(kFibN); }
// One skynet takes ~7 ms on 2 workers: shorter than the scheduling noise of a shared
// 2-core machine (one late wake-up of the second worker is 5 %). Ten back to back inside
// one Scheduler::run make a repetition long enough to measure a few per cent.
constexpr int kSkynetRounds = 10;
long long run_skynet() {
  long long sum = 0;
  for (int i = 0; i < kSkynetRounds; ++i) sum += skynet_join(0, kSkynetLeaves);
  return sum;
}

// The spawn-heavy workloads of lantern_bench (skynet by TaskGroup, nqueens(12) with a
// TaskGroup at every row, spawn chains), where the task hooks fire once per task.
constexpr int kSkynetTgRounds = 3;
long long run_skynet_tg() {
  long long sum = 0;
  for (int i = 0; i < kSkynetTgRounds; ++i) sum += skynet_tg(0, kSkynetLeaves);
  return sum;
}
long long run_nqueens_tg() { return queens_tg(0, 0, 0); }
constexpr int kChains = 200;
long long run_chains() { return spawn_chains(kChains); }

constexpr Workload kWorkloads[] = {
    {"fib", "fib(32) join", kFibValue, run_fib},
    {"skynet", "skynet 1M x10 (join)", kSkynetSum * kSkynetRounds, run_skynet},
    {"skynet_tg", "skynet 1M x3 (TaskGroup)", kSkynetSum * kSkynetTgRounds, run_skynet_tg},
    {"nqueens_tg", "nqueens(12) TaskGroup every row", kQueensSolutions, run_nqueens_tg},
    {"chain", "spawn chain 1000 x200 (TaskGroup)", static_cast<long long>(kChainDepth) * kChains, run_chains},
};

// run_once runs `w` once on `pool`, checks the answer and returns the seconds it took.
// cpu: if given, set to the CPU the run's first task began on.
double run_once(lantern::Scheduler& pool, const Workload& w, const std::string& side, int* cpu = nullptr) {
  long long result = 0;
  const auto start = Clock::now();
  result = pool.run([&w, cpu] {
    if (cpu) *cpu = sched_getcpu();
    return w.body();
  });
  const double seconds = bench::seconds_between(start, Clock::now());
  bench::check_equal(std::string(w.label) + ", " + side, result, w.expected);
  return seconds;
}

// The compiled-out side's protocol, one line each way:
//   child, once started:  "lantern_instr_bench_off ready observer=0 workers=W"
//   parent:               "fib" | "skynet"      child: "fib seconds=S result=R"
//   parent:               "quit" (or EOF)       child exits 0
constexpr const char* kReadyWord = "lantern_instr_bench_off ready";

}  // namespace

#if LANTERN_INSTR_BENCH_COMPILED_OUT
// ======================================================= 2. lantern_instr_bench_off

namespace {

constexpr const char* kOffUsage = R"(usage: lantern_instr_bench_off [--workers N] [--reps N] [--serve]

The compiled-out side of lantern_instr_bench: the same fib(32) and skynet 1M (ten times per repetition) by
lantern::join, built against lantern_core_no_observer (LANTERN_OBSERVER=0, every
observer hook compiled out). lantern_instr_bench runs it for you (--serve); run alone
it does 1 warm-up and --reps (default 7) measured runs of each workload on one pool and
prints one machine-readable line per workload:
  compiled_out workload=fib workers=2 seconds=0.0123,0.0124,...

options:
  -h, --help    this text
  --version     print the version
  --workers N   pool width, 1 to 1024 (default: all hardware threads)
  --reps N      measured runs of each workload, 1 to 1000 (default 7)
  --serve       answer requests on stdin, one line each ("fib", "skynet", "quit"), with
                one "NAME seconds=S result=R" line per request (the parent checks R)

Exit status 0; 2 on a wrong answer or bad usage; 1 on an unknown request.
)";

const Workload* find_workload(const std::string& name) {
  for (const Workload& w : kWorkloads) {
    if (name == w.name) return &w;
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  int reps = 7;
  bool serve = false;
  lantern::tools::Program program("lantern_instr_bench_off", kOffUsage);
  auto& app = program.app();
  lantern::tools::number_option(app, "--workers", &workers, 1u, lantern::kMaxWorkers);
  lantern::tools::number_option(app, "--reps", &reps, 1, 1000);
  app.add_flag("--serve", serve);
  if (const auto exit = program.parse(argc, argv)) return *exit;
  lantern::Scheduler pool({.workers = workers});
  const std::string side = "compiled out, " + std::to_string(workers) + " workers";
  if (!serve) {
    for (const Workload& w : kWorkloads) {
      std::string times;
      for (int r = 0; r <= reps; ++r) {
        bench::settle();
        const double s = run_once(pool, w, side);
        if (r > 0) times += (times.empty() ? "" : ",") + std::to_string(s);
      }
      std::printf("compiled_out workload=%s workers=%u seconds=%s\n", w.name, workers, times.c_str());
    }
    return 0;
  }
  std::printf("%s observer=%d workers=%u\n", kReadyWord, LANTERN_OBSERVER, pool.worker_count());
  std::fflush(stdout);
  char line[256];
  while (std::fgets(line, sizeof line, stdin)) {
    std::string request(line);
    request.erase(request.find_last_not_of("\r\n") + 1);
    if (request == "quit") break;
    const Workload* w = find_workload(request);
    if (!w) {
      std::fprintf(stderr, "lantern_instr_bench_off: unknown request '%s'\n", request.c_str());
      return 1;
    }
    long long result = 0;
    const auto start = Clock::now();
    result = pool.run([w] { return w->body(); });
    const double seconds = bench::seconds_between(start, Clock::now());
    std::printf("%s seconds=%.9f result=%lld\n", w->name, seconds, result);
    std::fflush(stdout);
  }
  return 0;
}

#else  // ======================================================= lantern_instr_bench

namespace {

using bench::Row;
using bench::Target;
using lantern::instrumentation::Collector;
using lantern::instrumentation::Recorder;
using lantern::trace::Level;
using namespace std::chrono_literals;

#ifndef LANTERN_INSTR_BENCH_OFF_PATH
#define LANTERN_INSTR_BENCH_OFF_PATH ""
#endif

// ================================================ 3. configuration and command line

struct Config {
  int reps = 7;                     // measured repetitions per variant (plus one warm-up)
  bool quick = false;               // CI smoke: 2 reps, smaller event loops
  bool markdown = false;
  bool raw = false;                 // print every repetition's figure to stderr
  unsigned workers = 0;             // pool width for B and C (default: all hardware threads)
  std::vector<std::string> only;    // sections: event, overhead, collector
  std::string off_path = LANTERN_INSTR_BENCH_OFF_PATH;
  long long event_calls = 2'000'000;  // A: calls per repetition
  int collector_fibs = 10;            // C: fib(32) runs back to back per repetition
  int trace_fibs = 3;                 // D: fib(32) runs recorded into one trace file per repetition
  std::string count;                  // --count WORKLOAD:none|states (the instruction-count mode)
  int paired_rounds = 300;            // B2: rounds per workload and worker count
  bool paired_unpinned = false;       // B2: leave the pools' workers unpinned (the confound)
};

constexpr const char* kUsage = R"(usage: lantern_instr_bench [options]

What Lantern's instrumentation (lantern::instrumentation::Recorder, an Observer, and a
Collector draining its rings on its own thread into a sink that only counts) costs, in
one process, checking every answer. Each benchmark does one warm-up and --reps measured
repetitions of each of its variants, rotating the variants' order every repetition with
a 10 ms pause before each, and reports medians in one table.

The table is bench/harness.hpp's, whose columns are named for lantern_bench: here
"Lantern" is the variant measured, "TBB" is its baseline and "L/TBB" is variant/baseline.

options:
  -h, --help          this text
  --version           print the version
  --reps N            measured repetitions per variant, median reported, 1 to 1000
                      (default 7)
  --workers N         pool width for overhead and collector, 1 to 1024 (default: all
                      hardware threads)
  --only LIST         sections to run, of: event,ring,overhead,paired,collector,trace
                      (default: all)
  --paired-rounds N   rounds per workload and worker count in section paired, 6 to
                      100000 (default 300)
  --paired-unpinned   section paired without pinning the pools' workers: on a host
                      whose CPUs run at different speeds, a pool then runs at the
                      speed of whichever CPU its workers settled on (bench/RESULTS.md,
                      "Session 19")
  --quick             CI smoke test: 2 reps (unless --reps is given), 200,000 event
                      calls, 2 fibs per collector repetition, 1 per trace repetition,
                      6 paired rounds (unless --paired-rounds is given); every answer is
                      still checked
  --markdown          print the table as Markdown (for bench/RESULTS.md)
  --off-path PATH     lantern_instr_bench_off to run (default: the one built beside this)
  --raw               also print every repetition's figure (seconds), in run order, to stderr
  --count W:O         instruction-count mode, for valgrind --tool=callgrind: run overhead
                      workload W (fib, skynet, skynet_tg, nqueens_tg, chain) once, with no
                      warm-up, on one pool of --workers, observed by O: `none` (no observer)
                      or `states` (a Recorder at level states, its Collector started); check
                      the answer and exit. The Recorder and Collector are constructed in both
                      cases, so the two counts differ by what observing costs. Timed runs on
                      a shared machine scatter by more than the 3 % target; instruction
                      counts repeat: see bench/RESULTS.md, Session 6 (issue-16i2).

sections:
  event      A. One recorded event against one rdtsc, on the main thread, 2,000,000
             calls per repetition: recorder.on_event(0, Hook::task_begin, i, 0) on a
             1-worker Recorder at level full while a Collector with a 100 us period
             drains it (so the ring does not stay full), vs __rdtsc() added into a
             volatile. Figures: ns per call; dropped fraction noted. Target: ratio <=
             1.5. Info rows, same call: a Collector with default options (adaptive period),
             no collector (ring full: the drop path), level states (counted, not
             recorded); and on_event(push) at level off (one counter, nothing recorded).
  ring       A2. The worker's ring alone: push of one 32-byte event into Lantern's
             EventRing against Boost.Lockfree's spsc_queue (the ring it replaced), same
             capacity (32768), while a consumer thread drains each. Figures: producer
             time per delivered event (failed pushes are counted and noted, with the
             time per attempt). Target: ratio < 1.0.
  overhead   B. fib(32) and skynet 1M (ten back to back per repetition) by lantern::join, skynet 1M by a
             TaskGroup per node (three per repetition), nqueens(12) with a TaskGroup at every row and
             200 spawn chains of 1000 through a TaskGroup, on a pool of all workers, for:
             compiled out (lantern_instr_bench_off, LANTERN_OBSERVER=0, a subprocess,
             one repetition per request), no observer attached, and a Recorder at off,
             states, tasks and full (one Recorder, set_level; its Collector with a
             counting sink is started before and stopped after each repetition).
             Figures: ms; baseline: no observer (same run) for Recorder off and
             states (rows "... / no observer"), compiled out for the others (each
             note gives both). Target: full <= 1.15 x compiled out on the join
             workloads; the others are info (states is judged by B2, below).
  paired     B2. Issue 16's bound, timed so that 3 % can be resolved on a host whose
             speed wanders by far more: on 1 worker and on --workers, three pools run
             each workload once per round (fib(32), one skynet 1M by join, one by a
             TaskGroup per node, nqueens(12), 200 spawn chains), rotating their order,
             with a 2 ms pause before each run: no observer; a Recorder at level
             states with its Collector running throughout; and a second pool with no
             observer, the control. The three pools are made anew every 50 rounds
             (one pool instance can run faster or slower than an identical one for as
             long as it lives). Every pool's workers are pinned, worker i to the i-th
             CPU (SchedulerOptions::pin_workers), so the pools of a round run on the
             same CPUs: unpinned, a pool's worker stays on the CPU it settled on, and
             where the host runs one vCPU slower than the other a whole pool instance
             is that much slower (--paired-unpinned shows it). The note counts the
             rounds whose observed and unobserved runs began on different CPUs: 0 on
             1 worker when pinned; on more, the first task starts on whichever worker
             takes it, so there it says nothing. Each round gives one
             ratio states / no observer;
             the figure is the upper end of the 95 % confidence interval of their
             median (distribution-free, by order statistics; --paired-rounds rounds,
             default 300), so PASS means an overhead above 3 % is ruled out, not only
             that the median is below it. Target: <= 1.03. The note gives the median,
             the interval, the control's median and interval (two identical pools:
             it should hold 0) and the medians in ms.
  collector  C. fib(32) 10 times back to back at level full, Collector running: events
             drained (collector.events_collected()) per second of wall time against
             events produced per second (Recorder counters); "L/TBB" is then the fraction
             collected, and the dropped fraction is noted. With default CollectorOptions
             and, alternating, a Collector with a 100 us period. Info.
  trace      D. A real trace file of the heaviest stream fib can make: fib(32) 3 times
             per repetition on a pool of all workers, Recorder at full recording every
             own-deque push (deque_push_sample 1), a Collector with a 100 us period
             writing through a TraceFileSink into a file in the temporary directory;
             then the file is read back with TraceReader. Figures: events drained and
             written per second against events produced per second; bytes per event of
             the file (target <= 8); events read per second. Checks: the file reads back
             with no problem and holds exactly the events written, which are exactly the
             events drained.

Exit status: 0 when every answer was right, even if targets were missed; 2 on a wrong
answer (or broken event accounting) or bad usage; 3 when nothing progressed for 120 s;
4 when the compiled-out subprocess could not be run.
)";

constexpr const char* kSections[] = {"event", "ring", "overhead", "paired", "collector", "trace"};

// count_is_valid: --count's value, WORKLOAD:OBSERVER.
bool count_is_valid(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return false;
  const std::string w = text.substr(0, colon), o = text.substr(colon + 1);
  return std::any_of(std::begin(kWorkloads), std::end(kWorkloads), [&](const Workload& k) { return w == k.name; }) &&
         (o == "none" || o == "states");
}

// parse_command_line fills *config; it returns the exit status to end with at once
// after --help, --version or bad usage (program_cli.hpp), nullopt to run.
std::optional<int> parse_command_line(int argc, char** argv, Config* config) {
  lantern::tools::Program program("lantern_instr_bench", kUsage);
  auto& app = program.app();
  CLI::Option* reps = lantern::tools::number_option(app, "--reps", &config->reps, 1, 1000);
  CLI::Option* rounds = lantern::tools::number_option(app, "--paired-rounds", &config->paired_rounds, 6, 100000);
  lantern::tools::number_option(app, "--workers", &config->workers, 1u, lantern::kMaxWorkers);
  lantern::tools::choice_list_option(app, "--only", &config->only, {std::begin(kSections), std::end(kSections)});
  app.add_option("--off-path", config->off_path);
  app.add_option("--count", config->count)
      ->check(lantern::tools::takes_check(
          "WORKLOAD:OBSERVER (workload fib, skynet, skynet_tg, nqueens_tg or chain; observer none or states)",
          count_is_valid));
  app.add_flag("--quick", config->quick);
  app.add_flag("--markdown", config->markdown);
  app.add_flag("--raw", config->raw);
  app.add_flag("--paired-unpinned", config->paired_unpinned);
  if (const auto exit = program.parse(argc, argv)) return exit;
  if (config->quick) {
    if (reps->count() == 0) config->reps = 2;
    config->event_calls = 200'000;
    config->collector_fibs = 2;
    config->trace_fibs = 1;
    if (rounds->count() == 0) config->paired_rounds = 6;
  }
  if (config->workers == 0) config->workers = std::max(1u, std::thread::hardware_concurrency());
  if (config->only.empty()) config->only.assign(std::begin(kSections), std::end(kSections));
  return std::nullopt;
}

// Context: what every benchmark needs besides its own state.
struct Context {
  const Config& config;
  const bench::Progress& progress;
  bench::Watchdog& watchdog;
  std::vector<Row>& rows;
  const char* benchmark = "";  // a string literal (the watchdog keeps the pointer)
  unsigned workers = 0;

  void step(int done, int total) const {
    progress.show(benchmark, workers, std::to_string(done) + "/" + std::to_string(total));
    watchdog.beat(benchmark);
  }
};

// rotate runs one warm-up and `reps` (default config.reps) measured repetitions of every
// variant, with `pause` before each; in repetition r the order starts at variant r % n,
// so each variant takes each place in the order equally often. rep(v) runs variant v
// once and returns its figure; samples[v][r] is variant v's figure in repetition r + 1.
std::vector<std::vector<double>> rotate(const Context& ctx, std::size_t variants,
                                        const std::function<double(std::size_t)>& rep, int reps = 0,
                                        std::chrono::milliseconds pause = 10ms) {
  std::vector<std::vector<double>> samples(variants);
  const int total = (reps > 0 ? reps : ctx.config.reps) + 1;
  for (int r = 0; r < total; ++r) {
    if (r % 10 == 0 || total < 100) ctx.step(r, total);
    for (std::size_t k = 0; k < variants; ++k) {
      const std::size_t v = (static_cast<std::size_t>(r) + k) % variants;
      bench::settle(pause);
      const double figure = rep(v);
      if (r > 0) samples[v].push_back(figure);
      if (ctx.config.raw) {
        std::fprintf(stderr, "raw %s rep %d%s variant %zu: %.9f\n", ctx.benchmark, r, r == 0 ? " (warm-up)" : "", v,
                     figure);
      }
    }
  }
  return samples;
}

std::string percent(double fraction, int decimals = 1) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f %%", decimals, fraction * 100.0);
  return buf;
}

// CountingSink counts what the collector hands it, and the drop markers among it.
class CountingSink final : public lantern::instrumentation::Sink {
 public:
  void on_batch(std::span<const lantern::trace::Event> events) override {
    std::uint64_t markers = 0, marked = 0;
    for (const auto& e : events) {
      if (e.type == lantern::trace::EventType::dropped) {
        ++markers;
        marked += lantern::trace::payload<lantern::DroppedPayload>(e).count;
      }
    }
    events_.fetch_add(events.size() - markers, std::memory_order_relaxed);
    markers_.fetch_add(markers, std::memory_order_relaxed);
    marked_dropped_.fetch_add(marked, std::memory_order_relaxed);
  }
  std::uint64_t events() const { return events_.load(std::memory_order_relaxed); }          // not markers
  std::uint64_t markers() const { return markers_.load(std::memory_order_relaxed); }
  std::uint64_t marked_dropped() const { return marked_dropped_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> events_{0}, markers_{0}, marked_dropped_{0};
};

// Totals: the Recorder's event accounting summed over its workers.
struct Totals {
  std::uint64_t produced = 0, recorded = 0, dropped = 0, markers = 0;
};

Totals totals(const Recorder& recorder) {
  Totals t;
  for (std::uint32_t w = 0; w < recorder.worker_count(); ++w) {
    const auto s = recorder.snapshot(w);
    t.produced += s.events_produced;
    t.recorded += s.events_recorded;
    t.dropped += s.events_dropped;
    t.markers += s.drop_markers;
  }
  return t;
}

// check_accounting: after the producers stopped and the collectors stopped (their final
// drains done), every recorded event, `dropped` markers included, reached exactly one sink
// (a ring has one consumer at a time), and produced + markers = recorded + dropped
// (WorkerCountersSnapshot). The markers never count more than was dropped; they count all
// of it only when every worker ended with a stopping event (the event loop's direct calls
// have none, so drops at their very end stay unmarked).
void check_accounting(const std::string& what, const Recorder& recorder,
                      const std::vector<const CountingSink*>& sinks) {
  const Totals t = totals(recorder);
  std::uint64_t received = 0, markers = 0, marked = 0;
  for (const CountingSink* s : sinks) {
    received += s->events();
    markers += s->markers();
    marked += s->marked_dropped();
  }
  bench::check_equal(what + ": events produced + drop markers = recorded + dropped", static_cast<long long>(t.produced + t.markers),
                     static_cast<long long>(t.recorded + t.dropped));
  bench::check_equal(what + ": events and markers the sinks received = events recorded", static_cast<long long>(received + markers),
                     static_cast<long long>(t.recorded));
  bench::check_equal(what + ": drop markers the sinks received = the Recorder's", static_cast<long long>(markers),
                     static_cast<long long>(t.markers));
  if (marked > t.dropped) {
    bench::wrong_answer(what + ": drop markers account for " + std::to_string(marked) + " events, more than the " +
                        std::to_string(t.dropped) + " dropped");
  }
}

// ================================================ 4. the compiled-out subprocess

// OffProcess: lantern_instr_bench_off --serve, on a pipe each way (bench::Child).
class OffProcess {
 public:
  OffProcess(const std::string& path, unsigned workers)
      : child_("lantern_instr_bench (compiled-out subprocess)", path, {"--serve", "--workers", std::to_string(workers)}) {
    const std::string ready = child_.read_line();
    int observer = -1;
    unsigned got_workers = 0;
    const std::string format = std::string(kReadyWord) + " observer=%d workers=%u";
    if (std::sscanf(ready.c_str(), format.c_str(), &observer, &got_workers) != 2) child_.fail("unexpected greeting '" + ready + "'");
    if (observer != 0) child_.fail("'" + path + "' has the observer hook compiled in");
    if (got_workers != workers) child_.fail("'" + path + "' started " + std::to_string(got_workers) + " workers");
  }
  ~OffProcess() { child_.ask_no_reply("quit"); }

  // run: one repetition of `w` in the child; checks its answer, returns its seconds.
  double run(const Workload& w, const std::string& side) {
    const std::string reply = child_.ask(w.name);
    const std::string format = std::string(w.name) + " seconds=%lf result=%lld";
    double seconds = 0;
    long long result = 0;
    if (std::sscanf(reply.c_str(), format.c_str(), &seconds, &result) != 2) child_.fail("unexpected reply '" + reply + "'");
    bench::check_equal(std::string(w.label) + ", " + side, result, w.expected);
    return seconds;
  }

 private:
  bench::Child child_;
};

// ========================================== 5. A: one recorded event against one rdtsc

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
double event_loop(Recorder& recorder, lantern::Hook hook, long long n) {
  const auto start = Clock::now();
  for (long long i = 0; i < n; ++i) recorder.on_event(0, hook, static_cast<std::uint64_t>(i), 0);
  return bench::seconds_between(start, Clock::now());
}

// A draining collector's period: short enough that a Recorder fed back to back by one
// thread (~50M events/s here) never fills its 32k-event ring between two passes.
constexpr auto kFastPeriod = std::chrono::microseconds(100);

// EventCase: one Recorder of 1 worker, and the collector that drains it (if any), which
// runs only during this case's own repetitions, so that its wake-ups do not disturb the
// others. The Recorder lives for the whole benchmark: its ring's pages are first touched
// in the warm-up.
struct EventCase {
  EventCase(Level level, bool collect, lantern::instrumentation::CollectorOptions options = {})
      : recorder(1, {.level = level}), sink(std::make_shared<CountingSink>()), collector(recorder, options),
        collect(collect) {
    collector.attach(sink);
  }
  // run: one repetition; records the fraction of the calls that were dropped.
  double run(lantern::Hook hook, long long n) {
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

void bench_event(Context& ctx) {
  const long long n = ctx.config.event_calls;
  using lantern::Hook;
  EventCase fast(Level::full, true, {.min_period = kFastPeriod, .max_period = kFastPeriod});
  EventCase default_options(Level::full, true);
  EventCase stalled(Level::full, false);  // no collector: the ring stays full
  EventCase filtered(Level::states, false);  // task_begin is counted, not recorded
  EventCase off(Level::off, false);          // help at off: one counter, nothing recorded
  enum { kRdtsc, kFast, kDefault, kStalled, kFiltered, kOff, kVariants };
  const auto samples = rotate(ctx, kVariants, [&](std::size_t v) {
    switch (v) {
      case kRdtsc: return rdtsc_loop(n);
      case kFast: return fast.run(Hook::task_begin, n);
      case kDefault: return default_options.run(Hook::task_begin, n);
      case kStalled: return stalled.run(Hook::task_begin, n);
      case kFiltered: return filtered.run(Hook::task_begin, n);
      case kOff: return off.run(Hook::help, n);
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
  bench::check_equal("event: an off recorder records no help", static_cast<long long>(totals(off.recorder).produced), 0);
  bench::check_equal("event: the recorder counted every help",
                     static_cast<long long>(off.recorder.snapshot(0).helps),
                     static_cast<long long>(n) * (ctx.config.reps + 1));

  const double ns = 1e9 / static_cast<double>(n);
  const double rdtsc_ns = bench::median(samples[kRdtsc]) * ns;
  auto row = [&](const char* label, int v, Target target, std::string note) {
    ctx.rows.push_back({label, 1, "ns/call", bench::median(samples[v]) * ns, rdtsc_ns, target, std::move(note)});
  };
  row("event: task_begin, full, collector 100 us / rdtsc", kFast, Target::ratio(1.5),
      fast.drop_note() + "; collector period 100 us");
  row("event: task_begin, full, default collector / rdtsc", kDefault, Target::info(),
      default_options.drop_note() + "; default CollectorOptions (period adapts 100 us - 20 ms)");
  row("event: task_begin, full, no collector / rdtsc", kStalled, Target::info(),
      stalled.drop_note() + "; the ring stays full: the drop path");
  row("event: task_begin, states (not recorded) / rdtsc", kFiltered, Target::info(), "");
  row("event: push, off (a counter only) / rdtsc", kOff, Target::info(), "");
}

// ======================================== 6. B: fib and skynet under each observer variant

enum Variant { kCompiledOut, kNoObserver, kOff, kStates, kTasks, kFull, kVariantCount };

// ===================================================================== A2. the ring
using lantern::trace::Event;
using lantern::trace::EventType;

// Aligned64: a 64-byte aligned allocator, so an spsc_queue<Event>'s slots sit two to a
// cache line exactly as EventRing's do.
template <class T>
struct Aligned64 {
  using value_type = T;
  Aligned64() = default;
  template <class U>
  Aligned64(const Aligned64<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const Aligned64<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const Aligned64<U>&) const noexcept { return false; }
};

// BoostEvictingRing: Boost.Lockfree's spsc_queue as a worker's event ring, consumed
// through its in-place functor interface (consume_all calls the functor on each slot
// where it lies), so the consumer evicts each cache line once it has read both of its
// events, as EventRing::pop does. Capacity 32767: the queue allocates one slot more, so
// 32768 slots, a power of two, and every line holds two slots of the same lap.
class BoostEvictingRing {
 public:
  explicit BoostEvictingRing(std::size_t capacity) : queue_(capacity - 1) {}
  bool push(const Event& e) noexcept { return queue_.push(e); }
  // pop: everything available (consume_all cannot stop early), copied to `out` (which
  // must hold the ring's capacity), evicting every line whose second slot was read.
  std::size_t pop(Event* out, std::size_t) noexcept {
    std::size_t n = 0;
    queue_.consume_all([&](const Event& e) {
      out[n++] = e;
#if defined(__x86_64__) || defined(__i386__)
      if (((reinterpret_cast<std::uintptr_t>(&e) + sizeof(Event)) & 63) == 0) _mm_clflush(&e);
#endif
    });
    return n;
  }

 private:
  boost::lockfree::spsc_queue<Event, boost::lockfree::allocator<Aligned64<Event>>> queue_;
};

// time_ring_pushes: the producer's time for n pushes while a consumer drains the ring.
// read_clock: each event's tick is read with rdtsc, as the Recorder's are (the load a
// real worker puts between two pushes); without it the pushes run back to back.
template <class Ring>
double time_ring_pushes(Ring& ring, long n, long* failed, bool read_clock, std::size_t out_size = 4096) {
  std::atomic<bool> done{false};
  std::thread consumer([&] {
    std::vector<Event> out(out_size);
    while (!done.load(std::memory_order_acquire)) {
      ring.pop(out.data(), out.size());
    }
  });
  long misses = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    const std::uint64_t tick = read_clock ? lantern::ticks_now() : static_cast<std::uint64_t>(i);
    if (!ring.push(Event{tick, 0, EventType::task_begin, {0, 0, 0}, static_cast<std::uint64_t>(i), 0})) ++misses;
  }
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  done.store(true, std::memory_order_release);
  consumer.join();
  *failed += misses;
  return t;
}

void bench_ring(Context& ctx) {
  const long n = ctx.config.quick ? 200000 : 4000000;
  std::vector<double> ours, boost_ring, ours_attempt, boost_attempt;  // seconds per delivered event, per attempt
  std::vector<double> ours_clock, evicting_clock, evicting;           // the in-place, evicting Boost ring
  long failed_ours = 0, failed_boost = 0, failed_evicting = 0;
  for (int rep = 0; rep <= ctx.config.reps; ++rep) {
    lantern::instrumentation::EventRing a(32768);
    boost::lockfree::spsc_queue<Event> b(32768);
    lantern::instrumentation::EventRing c(32768);
    BoostEvictingRing d(32768);
    BoostEvictingRing e(32768);
    long fa = 0, fb = 0, fc = 0, fd = 0, fe = 0;
    // Alternate the order each repetition so neither ring always runs first.
    double ta, tb, tc, td, te;
    if (rep % 2 == 0) {
      ta = time_ring_pushes(a, n, &fa, false);
      tb = time_ring_pushes(b, n, &fb, false);
      te = time_ring_pushes(e, n, &fe, false, 32768);
      tc = time_ring_pushes(c, n, &fc, true);
      td = time_ring_pushes(d, n, &fd, true, 32768);
    } else {
      td = time_ring_pushes(d, n, &fd, true, 32768);
      tc = time_ring_pushes(c, n, &fc, true);
      te = time_ring_pushes(e, n, &fe, false, 32768);
      tb = time_ring_pushes(b, n, &fb, false);
      ta = time_ring_pushes(a, n, &fa, false);
    }
    if (rep > 0) {  // rep 0 warms up
      // Per delivered event: the producer's time over the pushes that went in. Per
      // attempt would reward a ring whose consumer falls behind (a failed push is cheap):
      // EventRing's consumer evicts the lines it read, which makes it slower than
      // Boost's here, where the producer pushes back to back with no clock read.
      ours.push_back(ta / static_cast<double>(std::max(1L, n - fa)));
      boost_ring.push_back(tb / static_cast<double>(std::max(1L, n - fb)));
      ours_attempt.push_back(ta / static_cast<double>(n));
      boost_attempt.push_back(tb / static_cast<double>(n));
      ours_clock.push_back(tc / static_cast<double>(std::max(1L, n - fc)));
      evicting_clock.push_back(td / static_cast<double>(std::max(1L, n - fd)));
      evicting.push_back(te / static_cast<double>(std::max(1L, n - fe)));
      failed_ours += fa;
      failed_boost += fb;
      failed_evicting += fd;
    }
    ctx.watchdog.beat("ring");
  }
  const long long attempts = static_cast<long long>(n) * ctx.config.reps;
  ctx.rows.push_back({"ring push: EventRing / Boost spsc_queue", 1, "ns/delivered", bench::median(ours) * 1e9,
                      bench::median(boost_ring) * 1e9, Target::ratio(1.0),
                      "failed pushes (ring full) over all measured reps: EventRing " + std::to_string(failed_ours) +
                          ", Boost " + std::to_string(failed_boost) + " of " + std::to_string(attempts) +
                          " each; per attempt (failures included): " +
                          bench::format_number(bench::median(ours_attempt) * 1e9) + " vs " +
                          bench::format_number(bench::median(boost_attempt) * 1e9) + " ns"});
  // Issue 12 item 5: Boost's queue consumed in place with the same eviction, as a worker
  // uses the ring (a clock read per event). It replaces EventRing if within 15 %.
  ctx.rows.push_back({"ring push + rdtsc: Boost spsc_queue (in place, evicting) / EventRing", 1, "ns/delivered",
                      bench::median(evicting_clock) * 1e9, bench::median(ours_clock) * 1e9, Target::ratio(1.15),
                      "the replacement rule of issue 12 item 5: within 15 % replaces EventRing; failed pushes: Boost " +
                          std::to_string(failed_evicting) + " of " + std::to_string(attempts)});
  ctx.rows.push_back({"ring push: Boost spsc_queue (in place, evicting) / EventRing", 1, "ns/delivered",
                      bench::median(evicting) * 1e9, bench::median(ours) * 1e9, Target::info(),
                      "back to back, no clock read"});
}

struct VariantInfo {
  const char* label;
  Level level;      // for the recorded variants
  Target target;
  bool vs_bare;     // baseline: no observer (same run) instead of compiled out
};

// Issue 16's target, a Recorder at level states with its Collector running at most 3 %
// slower than the same pool with no observer attached, is judged by B2 (bench_paired):
// the medians of a few repetitions here cannot resolve 3 % on a shared host. The states
// row's baseline is still the no-observer variant. The full level's target (issue 12)
// stays against compiled out; every variant's figure against compiled out is in its note.
const VariantInfo kVariantInfo[kVariantCount] = {
    {"compiled out", Level::off, Target::info(), false},
    {"no observer", Level::off, Target::info(), false},
    {"Recorder off", Level::off, Target::info(), true},
    {"Recorder states", Level::states, Target::info(), true},  // the target: B2 (paired)
    {"Recorder tasks", Level::tasks, Target::info(), false},
    {"Recorder full", Level::full, Target::ratio(1.15), false},
};

// ObserverPools: the pools of B and C, all of the same width, and the Recorder's side.
struct ObserverPools {
  ObserverPools(const Config& config, unsigned workers)
      : recorder(workers, {.level = Level::off}),
        sink(std::make_shared<CountingSink>()),
        collector(recorder),
        fast_sink(std::make_shared<CountingSink>()),
        fast_collector(recorder, {.min_period = kFastPeriod, .max_period = kFastPeriod}),
        bare(std::make_unique<lantern::Scheduler>(lantern::SchedulerOptions{.workers = workers})),
        observed(std::make_unique<lantern::Scheduler>(
            lantern::SchedulerOptions{.workers = workers, .observer = &recorder})) {
    collector.attach(sink);
    fast_collector.attach(fast_sink);
    if (std::find(config.only.begin(), config.only.end(), "overhead") != config.only.end()) {
      off = std::make_unique<OffProcess>(config.off_path, workers);
    }
  }
  // finish: stops every pool, then checks that every event the Recorder recorded (at
  // any level, in any repetition) reached the sink.
  void finish() {
    off.reset();
    bare.reset();
    observed.reset();  // its workers record until they exit
    collector.stop();  // the final drain
    fast_collector.stop();
    check_accounting("overhead and collector", recorder, {sink.get(), fast_sink.get()});
  }
  Recorder recorder;
  std::shared_ptr<CountingSink> sink;
  Collector collector;                       // default CollectorOptions
  std::shared_ptr<CountingSink> fast_sink;
  Collector fast_collector;                  // 100 us period (C only); never runs with `collector`
  std::unique_ptr<lantern::Scheduler> bare;      // no observer attached
  std::unique_ptr<lantern::Scheduler> observed;  // the Recorder attached; level set per repetition
  std::unique_ptr<OffProcess> off;               // the compiled-out pool, in its own process
};

void bench_overhead(Context& ctx, ObserverPools& pools) {
  const std::string side_suffix = ", " + std::to_string(ctx.workers) + " workers";
  for (const Workload& w : kWorkloads) {
    std::vector<double> dropped_full;
    Context wctx = ctx;
    wctx.benchmark = w.name;  // "fib" or "skynet" on the progress line and watchdog
    const auto samples = rotate(wctx, kVariantCount, [&](std::size_t v) {
      const std::string side = std::string(kVariantInfo[v].label) + side_suffix;
      switch (v) {
        case kCompiledOut: return pools.off->run(w, side);
        case kNoObserver: return run_once(*pools.bare, w, side);
        default: {
          pools.recorder.set_level(kVariantInfo[v].level);
          pools.collector.start();
          // In real use the collector runs all along; its thread's start-up (and first
          // pass) must not land inside a 7 ms skynet run, where it would be most of the
          // "overhead" measured. Not a synchronisation: a settling pause, like the 10 ms
          // before every repetition.
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          const Totals before = totals(pools.recorder);
          const double t = run_once(*pools.observed, w, side);
          const Totals after = totals(pools.recorder);
          pools.collector.stop();
          pools.recorder.set_level(Level::off);
          if (v == kFull) {
            dropped_full.push_back(static_cast<double>(after.dropped - before.dropped) /
                                   static_cast<double>(std::max<std::uint64_t>(1, after.produced - before.produced)));
          }
          return t;
        }
      }
    });
    dropped_full.erase(dropped_full.begin());  // the warm-up's
    const double base = bench::median(samples[kCompiledOut]);
    const double bare = bench::median(samples[kNoObserver]);
    for (int v = 0; v < kVariantCount; ++v) {
      const double t = bench::median(samples[v]);
      std::string note;
      if (v != kCompiledOut) note = "overhead " + percent(t / base - 1.0) + " vs compiled out";
      if (v > kNoObserver) note += ", " + percent(t / bare - 1.0) + " vs no observer";
      if (kVariantInfo[v].vs_bare) {
        // Load on a shared machine drifts between rounds: the ratio to no observer within
        // each round of the rotation (the two ran within a few hundred ms) is steadier
        // than the ratio of the two medians.
        std::vector<double> ratios;
        for (std::size_t r = 0; r < samples[v].size() && r < samples[kNoObserver].size(); ++r) {
          ratios.push_back(samples[v][r] / samples[kNoObserver][r]);
        }
        const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
        note += "; per round vs no observer: median " + percent(bench::median(ratios) - 1.0) + ", range " +
                percent(*lo - 1.0) + " .. " + percent(*hi - 1.0);
      }
      if (v == kFull) note += "; dropped " + percent(bench::median(dropped_full)) + " of the events produced (median)";
      // The full level's target is for the join workloads (pushes sampled); on the
      // spawn-heavy ones it records two timed events per task of a few ns: info only.
      const bool join_workload = std::string(w.name) == "fib" || std::string(w.name) == "skynet";
      const Target target = (v == kFull && !join_workload) ? Target::info() : kVariantInfo[v].target;
      const char* against = kVariantInfo[v].vs_bare ? " / no observer" : "";
      ctx.rows.push_back({std::string(w.label) + ", " + kVariantInfo[v].label + against, ctx.workers, "ms", t * 1e3,
                          (kVariantInfo[v].vs_bare ? bare : base) * 1e3, target, note});
    }
  }
}

// ================================================= 6b. B2: level states, paired rounds

// The workloads of B, one instance per run: the shorter a run, the closer in time the
// runs of one round, and the less the host's speed changes between them.
long long run_skynet_once() { return skynet_join(0, kSkynetLeaves); }
long long run_skynet_tg_once() { return skynet_tg(0, kSkynetLeaves); }
const Workload kPairedWorkloads[] = {
    kWorkloads[0],  // fib(32)
    {"skynet", "skynet 1M (join)", kSkynetSum, run_skynet_once},
    {"skynet_tg", "skynet 1M (TaskGroup)", kSkynetSum, run_skynet_tg_once},
    kWorkloads[3],  // nqueens(12)
    kWorkloads[4],  // 200 spawn chains
};

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

// bench_paired: issue 16's bound, timed. This host's speed wanders by tens of per cent
// over tens of milliseconds (the same serial loop: a median of 1.6 ms in one run, 2.9 ms
// in the next), far more than 3 %, so the medians of B cannot resolve it. Here three
// pools of `workers` run each workload once per round, in rotating order with a 2 ms
// pause before each run: no observer, a second pool with no observer (the control), and
// a pool observed by a Recorder at level states whose Collector runs throughout, as in
// real use. Each round gives the ratio states / no observer of two runs a few tens of
// milliseconds apart; the figure is the median of those ratios with its distribution-free
// 95 % confidence interval, and the target is on the interval's upper end. The control's
// ratio (second pool / first) shows what two identical pools differ by. The pools are
// made anew every kPairedBlockRounds rounds.
void bench_paired(Context& ctx, unsigned workers) {
  Recorder recorder(workers, {.level = Level::states});
  auto sink = std::make_shared<CountingSink>();
  Collector collector(recorder);
  collector.attach(sink);
  collector.start();
  constexpr const char* kSides[] = {"no observer", "Recorder states", "no observer (control)"};
  const std::string suffix = ", " + std::to_string(workers) + " workers, paired";
  const int rounds = ctx.config.paired_rounds;
  const int blocks = std::max(1, rounds / kPairedBlockRounds);
  const bool pin = !ctx.config.paired_unpinned;
  for (const Workload& w : kPairedWorkloads) {
    Context wctx = ctx;
    wctx.benchmark = w.name;
    wctx.workers = workers;
    std::vector<double> states, control_ratio;
    std::array<std::vector<double>, 3> times;
    int apart = 0;  // rounds whose observed and unobserved runs began on different CPUs
    std::uint32_t unpinned_workers = 0;  // with pin: workers Lantern could not pin, over all pools
    for (int b = 0; b < blocks; ++b) {
      // Fresh pools for every block, made in a rotating order: one pool instance can be
      // faster or slower than an identical one for as long as it lives (the control
      // showed up to 16 % over a whole workload's rounds), so each variant's figure
      // spreads over several instances and that difference enters the interval.
      std::array<std::unique_ptr<lantern::Scheduler>, 3> pools;
      for (int k = 0; k < 3; ++k) {
        const int v = (b + k) % 3;
        lantern::SchedulerOptions options{.workers = workers, .pin_workers = pin};
        if (v == 1) options.observer = &recorder;
        pools[v] = std::make_unique<lantern::Scheduler>(options);
        for (std::uint32_t i = 0; i < workers; ++i) unpinned_workers += pools[v]->worker_cpu(i) < 0;
      }
      const int n = rounds / blocks + (b < rounds % blocks ? 1 : 0);
      // cpus[v][r]: the CPU variant v's run of repetition r began on (r = 0: the warm-up).
      std::array<std::vector<int>, 3> cpus;
      const auto samples = rotate(
          wctx, 3,
          [&](std::size_t v) {
            int cpu = -1;
            const double t = run_once(*pools[v], w, std::string(kSides[v]) + suffix, &cpu);
            cpus[v].push_back(cpu);
            return t;
          },
          n, 2ms);
      for (std::size_t r = 1; r < cpus[0].size() && r < cpus[1].size(); ++r) apart += cpus[0][r] != cpus[1][r];
      for (std::size_t r = 0; r < samples[0].size(); ++r) {
        states.push_back(std::log(samples[1][r] / samples[0][r]));
        control_ratio.push_back(std::log(samples[2][r] / samples[0][r]));
      }
      for (int v = 0; v < 3; ++v) times[v].insert(times[v].end(), samples[v].begin(), samples[v].end());
    }
    const auto s = bench::median_interval(states);
    const auto c = bench::median_interval(control_ratio);
    std::string note = std::to_string(states.size()) + " rounds in " + std::to_string(blocks) +
                       (blocks == 1 ? " block" : " blocks") + " of fresh pools" +
                       (!pin                    ? ", workers not pinned"
                        : unpinned_workers == 0 ? ", workers pinned"
                                                : ", workers pinned but " + std::to_string(unpinned_workers) +
                                                      " of the pools' workers were not (Scheduler::worker_cpu)") +
                       " (sides began on different CPUs in " +
                       std::to_string(apart) + " rounds); states / no observer: median " + interval_text(s) +
                       "; control (a second unobserved pool / the first): median " + interval_text(c) + "; medians " +
                       bench::format_number(bench::median(times[0]) * 1e3) + " ms (no observer), " +
                       bench::format_number(bench::median(times[1]) * 1e3) + " ms (states)";
    if (c.low > 0 || c.high < 0) {
      note += "; the control's interval excludes 0: identical pools differed, read the verdict with care";
    }
    // The figure is the upper end of the interval: PASS means the data rule out an
    // overhead above 3 % (at 95 %), not only that the median is below it.
    ctx.rows.push_back({std::string(w.label) + ", Recorder states / no observer, paired: 95 % upper bound", workers,
                        "x", std::exp(s.high), 1.0, Target::ratio(1.03), note});
  }
  collector.stop();  // every observed pool is gone: this is the final drain
  check_accounting("paired", recorder, {sink.get()});
}

// ============================================================== 7. C: collector throughput

void bench_collector(Context& ctx, ObserverPools& pools) {
  const Workload& fib = kWorkloads[0];
  const std::string side = "collector, Recorder full, " + std::to_string(ctx.workers) + " workers";
  struct Figures {
    std::vector<double> collected_per_s, produced_per_s, dropped, wall;
  };
  std::array<Figures, 2> figures;  // [0]: default CollectorOptions, [1]: 100 us period
  rotate(ctx, 2, [&](std::size_t v) {
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
  const char* labels[2] = {"collector: drained / produced, fib at full", "collector 100 us: drained / produced, fib at full"};
  const char* options[2] = {"default CollectorOptions (adaptive 100 us - 20 ms)", "collector period 100 us"};
  for (int v = 0; v < 2; ++v) {
    const Figures& f = figures[v];
    ctx.rows.push_back({labels[v], ctx.workers, "M events/s", measured(f.collected_per_s) / 1e6,
                        measured(f.produced_per_s) / 1e6, Target::info(),
                        "dropped " + percent(measured(f.dropped)) + " of the events produced (median); " + options[v] +
                            "; " + std::to_string(ctx.config.collector_fibs) +
                            " fib(32) back to back per repetition, " + bench::format_number(measured(f.wall) * 1e3) +
                            " ms; drained events include drop markers"});
  }
}

// ================================================ 8. D: a real trace file, written and read

void bench_trace(Context& ctx) {
  namespace fs = std::filesystem;
  using lantern::instrumentation::TraceFileSink;
  const Workload& fib = kWorkloads[0];
  const std::string side = "trace, Recorder full, every push, " + std::to_string(ctx.workers) + " workers";
  const fs::path path = fs::temp_directory_path() / ("lantern_instr_bench_" + std::to_string(getpid()) + ".ltrace");
  Recorder recorder(ctx.workers, {.level = Level::full, .deque_push_sample = 1});
  Collector collector(recorder, {.min_period = kFastPeriod, .max_period = kFastPeriod});
  lantern::Scheduler pool({.workers = ctx.workers, .observer = &recorder});
  const lantern::trace::TraceHeader header = lantern::instrumentation::make_trace_header(pool, recorder, "lantern_instr_bench");
  std::vector<double> produced_per_s, written_per_s, dropped, bytes_per_event, read_per_s, written_events;
  const int total = ctx.config.reps + 1;
  for (int r = 0; r < total; ++r) {
    ctx.step(r, total);
    bench::settle();
    auto sink = std::make_shared<TraceFileSink>(path.string(), header);
    if (!sink->ok()) bench::wrong_answer("trace: cannot write " + path.string() + ": " + sink->error());
    collector.attach(sink);
    collector.start();
    const Totals before = totals(recorder);
    const std::uint64_t drained_before = collector.events_collected();
    const auto start = Clock::now();
    for (int i = 0; i < ctx.config.trace_fibs; ++i) run_once(pool, fib, side);
    const double wall = bench::seconds_between(start, Clock::now());
    const Totals after = totals(recorder);
    const std::uint64_t drained_in_run = collector.events_collected() - drained_before;  // the timed rate's
    collector.stop();  // the final drain, then the sink's flush: the file is complete
    collector.detach(sink.get());
    // stop() also drained what was left in the rings, and what the workers recorded as
    // they went idle: part of the file, not of the timed rate.
    const std::uint64_t drained = collector.events_collected() - drained_before;
    const lantern::trace::WriterStats stats = sink->stats();
    if (!sink->ok()) bench::wrong_answer("trace: writing " + path.string() + " failed: " + sink->error());
    bench::check_equal("trace: events written = events drained", static_cast<long long>(stats.events),
                       static_cast<long long>(drained));
    const auto read_start = Clock::now();
    auto reader = lantern::trace::TraceReader::open(path.string());
    std::uint64_t read = 0;
    while (reader.next_chunk()) read += reader.chunk().events.size();
    const double read_seconds = bench::seconds_between(read_start, Clock::now());
    if (reader.has_errors() || !reader.header_ok()) {
      bench::wrong_answer("trace: " + path.string() + " does not read back cleanly (" +
                          std::to_string(reader.problems().size()) + " problems)");
    }
    bench::check_equal("trace: events read = events written", static_cast<long long>(read),
                       static_cast<long long>(stats.events));
    std::error_code ignored;
    fs::remove(path, ignored);
    if (r == 0) continue;  // warm-up
    const double produced = static_cast<double>(after.produced - before.produced);
    produced_per_s.push_back(produced / wall);
    written_per_s.push_back(static_cast<double>(drained_in_run) / wall);
    dropped.push_back(static_cast<double>(after.dropped - before.dropped) / std::max(1.0, produced));
    bytes_per_event.push_back(static_cast<double>(stats.bytes) / static_cast<double>(std::max<std::uint64_t>(1, stats.events)));
    read_per_s.push_back(static_cast<double>(read) / read_seconds);
    written_events.push_back(static_cast<double>(stats.events));
  }
  const double no_baseline = std::nan("");
  const std::string per_rep = std::to_string(ctx.config.trace_fibs) + " fib(32) per repetition, every push recorded; " +
                              bench::format_number(bench::median(written_events) / 1e6) + " M events per file (median)";
  ctx.rows.push_back({"trace: drained and written / produced, fib at full", ctx.workers, "M events/s",
                      bench::median(written_per_s) / 1e6, bench::median(produced_per_s) / 1e6, Target::info(),
                      "dropped " + percent(bench::median(dropped)) + " of the events produced (median; max " +
                          percent(*std::max_element(dropped.begin(), dropped.end())) + "); collector period 100 us; " +
                          per_rep});
  ctx.rows.push_back({"trace: file size, fib at full", ctx.workers, "bytes/event", bench::median(bytes_per_event),
                      no_baseline, Target::lantern(8.0), "header and chunk framing included; " + per_rep});
  ctx.rows.push_back({"trace: read back (TraceReader)", 1, "M events/s", bench::median(read_per_s) / 1e6, no_baseline,
                      Target::info(), "checksums verified, events decoded; the file just written (in the page cache)"});
}

}  // namespace

// count_mode: --count W:O. One run of overhead workload W on one pool, for callgrind.
// The Recorder (level states) and its Collector exist either way; with O = states the
// pool is observed by the Recorder and the Collector runs, as in the "Recorder states"
// row; with O = none the pool has no observer, as in the "no observer" row.
int count_mode(const Config& config) {
  const auto colon = config.count.find(':');
  const std::string name = config.count.substr(0, colon);
  const bool observed = config.count.substr(colon + 1) == "states";
  const Workload& w = *std::find_if(std::begin(kWorkloads), std::end(kWorkloads), [&](const Workload& k) { return name == k.name; });
  Recorder recorder(config.workers, {.level = Level::states});
  auto sink = std::make_shared<CountingSink>();
  Collector collector(recorder);
  collector.attach(sink);
  lantern::SchedulerOptions options{.workers = config.workers};
  if (observed) {
    options.observer = &recorder;
    collector.start();
  }
  long long result = 0;
  {
    lantern::Scheduler pool(options);
    result = pool.run([&w] { return w.body(); });
  }
  collector.stop();
  if (result != w.expected) {
    std::fprintf(stderr, "lantern_instr_bench: --count %s: wrong answer %lld (expected %lld)\n", config.count.c_str(),
                 result, w.expected);
    return 1;
  }
  std::uint64_t tasks = 0;
  for (std::uint32_t i = 0; i < recorder.worker_count(); ++i) tasks += recorder.snapshot(i).tasks;
  std::printf("lantern_instr_bench --count %s: %s on %u workers, answer checked; Recorder: %llu tasks counted\n",
              config.count.c_str(), w.label, config.workers, static_cast<unsigned long long>(tasks));
  return 0;
}

int main(int argc, char** argv) {
  Config config;
  if (const auto exit = parse_command_line(argc, argv, &config)) return *exit;
  auto wants = [&](const char* section) {
    return std::find(config.only.begin(), config.only.end(), section) != config.only.end();
  };
#if !LANTERN_OBSERVER
  std::printf("lantern_instr_bench: built with LANTERN_OBSERVER=OFF: no hook reaches the Recorder, nothing to measure\n");
  return 0;
#endif
  if (!config.count.empty()) return count_mode(config);
  std::string paired;
  if (wants("paired")) {
    paired = ", paired: " + std::to_string(config.paired_rounds) + " rounds (+1 warm-up) on 1 and " +
             std::to_string(config.workers) + " workers";
  }
  std::printf("lantern_instr_bench: %d measured reps per variant (+1 warm-up, rotating order), %u workers%s%s\n",
              config.reps, config.workers, config.quick ? ", --quick" : "", paired.c_str());
  bench::print_cpu_speeds("at the start");
  std::fflush(stdout);

  const bench::Progress progress;
  bench::Watchdog watchdog(120s);
  std::vector<Row> rows;
  if (wants("event")) {
    Context ctx{config, progress, watchdog, rows, "event", 1};
    bench_event(ctx);
    progress.clear();
  }
  if (wants("ring")) {
    Context ctx{config, progress, watchdog, rows, "ring", 1};
    bench_ring(ctx);
    progress.clear();
  }
  if (wants("overhead") || wants("collector")) {
    ObserverPools pools(config, config.workers);
    if (wants("overhead")) {
      Context ctx{config, progress, watchdog, rows, "overhead", config.workers};
      bench_overhead(ctx, pools);
      progress.clear();
    }
    if (wants("collector")) {
      Context ctx{config, progress, watchdog, rows, "collector", config.workers};
      bench_collector(ctx, pools);
      progress.clear();
    }
    pools.finish();
  }
  if (wants("paired")) {
    // On 1 worker and on --workers: issue 16's workloads are measured on both.
    for (const unsigned workers : std::set<unsigned>{1u, config.workers}) {
      Context ctx{config, progress, watchdog, rows, "paired", workers};
      bench_paired(ctx, workers);
      progress.clear();
    }
  }
  if (wants("trace")) {
    Context ctx{config, progress, watchdog, rows, "trace", config.workers};
    bench_trace(ctx);
    progress.clear();
  }
  std::printf("\ncolumns: \"Lantern\" = the variant measured, \"TBB\" = its baseline (one rdtsc; compiled out, or no observer where the row says so; "
              "events produced/s), \"L/TBB\" = variant / baseline\n\n");
  bench::print_table(rows, config.markdown);
  int misses = 0, targets = 0;
  for (const Row& r : rows) {
    if (r.target.kind == Target::none) continue;
    ++targets;
    if (!r.target.met(r.lantern, r.tbb)) ++misses;
  }
  std::printf("\n");
  bench::print_cpu_speeds("at the end");
  std::printf("\n%d of %d targets missed; every answer was checked and right.\n", misses, targets);
  return 0;
}

#endif
