// core_bench.cpp - lantern_bench: Lantern's scheduler core against oneTBB.
//
// Every benchmark runs both schedulers in the same process, on the same worker counts,
// alternating their repetitions so that machine noise hits both, checks every answer,
// and reports medians in one table (run with --help for the list). Layout:
//   1. configuration and command line     4. the benchmarks, one section each
//   2. the two pools of one worker count   5. the benchmark list and main
//   3. the repetition loop
#include <fcntl.h>
#include <sys/resource.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <iterator>
#include <map>
#include <mutex>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#include <tbb/task_scheduler_observer.h>

#include "harness.hpp"
#include "lantern/lantern.hpp"
#include "lantern/tools/program_cli.hpp"
#include "lantern/tools/topology_check.hpp"
#include "workloads.hpp"

namespace {

using bench::Clock;
using bench::Row;
using bench::Target;
using namespace std::chrono_literals;
using namespace bench::workloads;  // fib_lantern, skynet_join and their constants

// ===================================================================== 1. configuration

struct Config {
  int reps = 7;                    // measured repetitions per side (plus one warm-up)
  bool quick = false;              // CI smoke: few reps, short idle test, few wake samples
  bool markdown = false;           // print the table as Markdown
  std::vector<unsigned> workers;   // worker counts to run; default 1 and all hardware threads
  std::vector<std::string> only;   // benchmark names; empty means the default set
  std::string topology;            // Lantern's SchedulerOptions::topology ("" = this machine)
  lantern::SleepStrategy sleep = lantern::SleepStrategy::condvar;  // Lantern's sleep strategy
  int wake_samples = 2000;         // per side and worker count
  std::string wake_trace;          // --wake-trace FILE: per-sample list + ftrace markers
  std::chrono::milliseconds idle_duration = 2000ms;
  bool pin = false;                // pin both sides' threads: slot i on the i-th CPU
};

constexpr const char* kUsage = R"(usage: lantern_bench [options]

Runs Lantern's scheduler core and oneTBB side by side in one process, on 1 worker and
on all hardware threads (a Lantern Scheduler and a tbb::task_arena of the same
concurrency), checks every answer and prints one table: the median of each side, the
ratio Lantern/TBB (lower is better for every figure here), the target and PASS/MISS.
Repetitions alternate between the two sides (L T, T L, ...) after one warm-up each,
with a 10 ms pause before each so that both pools start asleep. Times are end to end
from the main thread: Lantern's run() hands the job to a worker and blocks, TBB's
execute() lets the main thread join the arena. Where the main thread only submits
(spawn_chain, wake, idle), TBB gets an arena whose W slots all go to TBB workers.
Exit status: 0 when every answer was right, even if targets were missed; 2 on a wrong
answer, bad usage or (--pin) a thread not where it was put; 3 when a benchmark made no
progress for 120 s (a hang).

options:
  -h, --help           this text
  --version            print the version
  --reps N             measured repetitions per side, median reported, 1 to 1000
                       (default 7)
  --only NAME[,NAME]   run only these benchmarks (names below)
  --workers LIST       worker counts, e.g. 1,2 (default: 1 and hardware_concurrency)
  --quick              CI smoke test: 2 reps (unless --reps is given), 20 wake
                       samples (unless --wake-samples is given), 0.3 s idle test;
                       same problem sizes, so every answer is still checked
  --wake-samples N     wake latency samples per side and worker count, 20 to 100000
                       (default 2000; about 85 s per worker count)
  --markdown           print the table as Markdown (for bench/RESULTS.md)
  --topology SPEC      Lantern's topology, e.g. "2 sockets x 8 cores x 2 threads"
                       (default: read this machine's)
  --sleep STRATEGY     Lantern's sleep strategy: condvar (default) or io_uring
  --pin                pin both sides' threads, Lantern's worker i and the thread in
                       TBB's arena slot i alike, to the CPU Lantern pins its worker i
                       to (the i-th of its topology), and the main thread to the first
                       (or, once it has run TBB's side in an arena slot, to that
                       slot's CPU), so that the two sides of a row run on the same
                       CPUs (TBB's side pays its observer's callback on each arena
                       entry); for every benchmark but wake, idle and
                       lane_flood, whose figure is the kernel's placement of a woken
                       or preempted thread (their threads are unpinned first). After
                       each benchmark every thread's CPU mask is checked (exit status
                       2 if one is wrong). A synthetic --topology pins nothing. Every run prints
                       how fast each CPU is at its start and end: where they differ,
                       a 1-worker row unpinned compares two CPUs as much as two
                       schedulers (bench/RESULTS.md, "Session 19")
  --wake-trace FILE    for the wake benchmark: write a marker into the kernel's trace
                       (/sys/kernel/tracing/trace_marker; needs root and tracefs) before
                       each sample, and one line per sample to FILE: side (L or T),
                       workers, index, latency in us, the task's thread id.
                       bench/wake_trace.sh runs it under ftrace and splits each wake
                       into phases (bench/wake_phases.py)

benchmarks (default set, in this order):
  fib           fib(32) by binary fork-join: lantern::join / tbb::parallel_invoke.
                Figure: ns per join (total time / 3524577 joins). Target ratio <= 0.5.
  skynet        10-ary tree of 1,000,000 leaves, leaf i returns i, sum 499999500000.
                Lantern: each node splits its 10 children with nested lantern::join;
                TBB: task_group run x10 + wait per node. Figure: ms. Target ratio <= 1.0.
  skynet_taskgroup  the same tree, both sides with the same decomposition: a
                lantern::TaskGroup / tbb::task_group per node, 10 spawns (run) then
                wait. 1,111,110 tasks. Figure: ms. Target ratio <= 0.5.
  nqueens       nqueens(12) = 14200: one task per queen placement in each of the
                first 3 rows (Lantern TaskGroup / tbb::task_group), serial below.
                Figure: ms. Target ratio <= 1.0.
  nqueens_tg    nqueens(12) = 14200 with a TaskGroup / tbb::task_group at every row:
                a task for each legal placement, down to the leaves (856,188 tasks).
                Figure: ms. Target ratio <= 0.7.
  parallel_for  sum of 10,000,000 int64 with grain 1024: lantern::parallel_for with a
                (begin, end) body / tbb::parallel_for over a blocked_range with the
                simple_partitioner; each chunk adds its partial sum to one atomic.
                Figure: ms. Target ratio <= 1.0.
  spawn_chain   task i spawns task i+1, 1000 deep (Scheduler::spawn / task_group::run;
                the first task enters from the main thread by spawn / arena.enqueue),
                the main thread blocks on an atomic the last task sets. Figure: ns per
                spawn, from the first task's start to the last task's start / 999.
                Target ratio <= 0.7. A note gives how long task 0's own spawn took
                on each side: in a pool that starts asleep, that spawn finds the
                other workers asleep and would wake one (Lantern's poster wakes one
                ahead of it after a posted task fanned out: SLEEP.md's fan-out
                credit).
  taskgroup_chain  200 chains of 1000 through a TaskGroup / tbb::task_group inside one
                task (Scheduler::run / arena.execute): task i of a chain spawns task
                i+1 into the chain's group, and the task that made the group waits on
                it (the instrumentation bench's paired chain). Figure: ns per spawn.
                Target ratio <= 0.7, as the spawn chain's.
  wake          wake latency: both pools idle for 20 ms (Lantern's verified: every
                worker counted as sleeping and in state sleeping), then the main thread
                submits one task (Scheduler::spawn / task_arena::enqueue) that stamps
                its start. 2000 samples per side (--wake-samples), interleaved.
                Figures: p50 and p99 in us. Targets: Lantern p99 <= TBB p99 (ratio
                <= 1.0), p50 ratio <= 0.8. (p99 is the 20th-slowest of 2000 wakes.
                With 500 it was the 5th, and a few late host wakes on either side
                decided it: TBB's own p99 ranged 60-143 us over four such runs.)
                The p50 row's note gives the floor: two rounds in eight also time a
                bare FUTEX_WAKE of a thread blocked on a futex word, after the same
                20 ms pause and timed the same way (no scheduler: what any pool
                that sleeps in a futex starts from). The p99 row's note gives each
                side's late wakes: the share of its samples slower than three times the
                floor's p50. A side with over 1 % late reads its p99 among them.
  idle          idle CPU: one tiny task every 10 ms for 2 s from the main thread
                (Scheduler::spawn / task_arena::enqueue), each side on its own; the
                CPU time of the pool's own threads (/proc/self/task/*/schedstat; not
                the ticking main thread) over wall time, in % of one core; the note
                gives the whole process (getrusage). Measured once per side per run.
                Target: Lantern <= 0.5 %.

opt-in (only with --only):
  lane_flood    4 outside threads each submit 20,000 tiny tasks (Scheduler::spawn /
                task_arena::enqueue) into a pool of W workers while a 5th outside
                thread spins (an oversubscribed machine). Figure: ms until every task
                ran. Target ratio <= 1.0.
)";

constexpr const char* kDefaultBenchmarks[] = {"fib", "skynet", "skynet_taskgroup", "nqueens", "nqueens_tg", "parallel_for",
                                              "spawn_chain", "taskgroup_chain", "wake", "idle"};
constexpr const char* kOptInBenchmarks[] = {"lane_flood"};

// parse_command_line fills *config; it returns the exit status to end with at once
// after --help, --version or bad usage (program_cli.hpp), nullopt to run.
std::optional<int> parse_command_line(int argc, char** argv, Config* config) {
  lantern::tools::Program program("lantern_bench", kUsage);
  auto& app = program.app();
  std::vector<std::string> benchmarks(std::begin(kDefaultBenchmarks), std::end(kDefaultBenchmarks));
  benchmarks.insert(benchmarks.end(), std::begin(kOptInBenchmarks), std::end(kOptInBenchmarks));
  std::string sleep = lantern::strategy_name(config->sleep);
  CLI::Option* reps = lantern::tools::number_option(app, "--reps", &config->reps, 1, 1000);
  CLI::Option* wake_samples = lantern::tools::number_option(app, "--wake-samples", &config->wake_samples, 20, 100000);
  lantern::tools::choice_list_option(app, "--only", &config->only, benchmarks);
  lantern::tools::number_list_option(app, "--workers", &config->workers, 1u, lantern::kMaxWorkers);
  app.add_flag("--quick", config->quick);
  app.add_flag("--markdown", config->markdown);
  app.add_option("--topology", config->topology)->check(lantern::tools::topology_check());
  lantern::tools::choice_option(app, "--sleep", &sleep, {"condvar", "io_uring"});
  app.add_option("--wake-trace", config->wake_trace);
  app.add_flag("--pin", config->pin);
  if (const auto exit = program.parse(argc, argv)) return exit;
  config->sleep = *lantern::parse_strategy(sleep);
  if (config->quick) {
    if (reps->count() == 0) config->reps = 2;
    if (wake_samples->count() == 0) config->wake_samples = 20;
    config->idle_duration = 300ms;
  }
  if (config->workers.empty()) {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    config->workers = {1};
    if (hw > 1) config->workers.push_back(hw);
  }
  if (config->only.empty()) config->only.assign(std::begin(kDefaultBenchmarks), std::end(kDefaultBenchmarks));
  return std::nullopt;
}

// ============================================================ 2. the pools of one width

// Pools: a Lantern Scheduler and two TBB arenas, all of the same concurrency W.
//  - lantern: W workers; the main thread blocks in run() or waits outside.
//  - tbb: for execute(). Its W slots are the main thread, which joins the arena in
//    execute(), plus W - 1 TBB workers (TBB's default of one slot kept for the caller).
//  - tbb_outside: for enqueue() from the main thread, which stays outside the arena, so
//    no slot is kept for it: W TBB workers. (Enqueueing into `tbb` would leave a
//    2-thread arena with a single worker.)
// ------------------------------------------------------- threads and their CPU time

// thread_ids: every thread of this process, from /proc/self/task.
std::vector<pid_t> thread_ids() {
  std::vector<pid_t> ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    ids.push_back(static_cast<pid_t>(std::stol(entry.path().filename().string())));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// thread_cpu_ns: CPU time thread `tid` has run, in ns (schedstat's first field: exact,
// unlike stat's utime/stime in clock ticks). 0 for a thread that is gone.
std::uint64_t thread_cpu_ns(pid_t tid) {
  std::FILE* f = std::fopen(("/proc/self/task/" + std::to_string(tid) + "/schedstat").c_str(), "r");
  if (!f) return 0;
  unsigned long long ns = 0;
  if (std::fscanf(f, "%llu", &ns) != 1) ns = 0;
  std::fclose(f);
  return ns;
}

std::vector<pid_t> minus(const std::vector<pid_t>& a, const std::vector<pid_t>& b) {
  std::vector<pid_t> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// The threads that are neither Lantern's nor TBB's: main, the watchdog (set in main).
std::vector<pid_t> g_harness_threads;

// ------------------------------------------------------------- pinning (--pin)

// Where this bench put each thread it pinned or unpinned (-1: the process mask), for the
// placement check; Lantern's workers are pinned by Lantern, not here.
std::mutex g_pins_mutex;
std::map<pid_t, int> g_pins;

void note_pin(pid_t tid, int cpu) {
  const std::lock_guard<std::mutex> lock(g_pins_mutex);
  g_pins[tid] = cpu;
}
std::optional<int> pin_of(pid_t tid) {
  const std::lock_guard<std::mutex> lock(g_pins_mutex);
  const auto it = g_pins.find(tid);
  return it == g_pins.end() ? std::nullopt : std::optional<int>(it->second);
}

// The calling thread's pin as this bench last set it, valid only while g_pin_generation
// is what it was then: reset_threads changes other threads' masks from outside and bumps
// it. It spares TBB's threads a system call (~1 us on this project's VMs) each time they
// enter a pinned arena on the CPU they are on.
std::atomic<unsigned> g_pin_generation{1};
thread_local int t_pinned_cpu = -1;
thread_local unsigned t_pin_generation = 0;

// pin_calling_thread: the calling thread onto `cpu` (-1: back to the process mask). A
// refusal is left for the placement check to report (the thread is not where g_pins says).
void pin_calling_thread(int cpu) {
  const unsigned generation = g_pin_generation.load(std::memory_order_acquire);
  if (t_pin_generation == generation && t_pinned_cpu == cpu) return;
  note_pin(static_cast<pid_t>(gettid()), cpu);
  if (!bench::set_thread_cpu(0, cpu)) return;
  t_pinned_cpu = cpu;
  t_pin_generation = generation;
}

// reset_threads: threads `tids` back to the process mask, from outside. A TBB worker
// pinned by an arena of a pinned benchmark may still be in it when that arena goes
// (observe(false) runs no exit callback for it), and TBB's workers serve every arena
// after: each unpinned benchmark resets them first.
void reset_threads(const std::vector<pid_t>& tids) {
  for (const pid_t tid : tids) {
    note_pin(tid, -1);
    bench::set_thread_cpu(tid, -1);
  }
  g_pin_generation.fetch_add(1, std::memory_order_acq_rel);
}

// Reading a thread's mask: once per thread per check.
std::optional<cpu_set_t> thread_mask(pid_t tid) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(tid, sizeof mask, &mask) != 0) return std::nullopt;
  return mask;
}
// only_cpu: the mask's CPU if it holds exactly one, else -1.
int only_cpu(const cpu_set_t& mask) {
  if (CPU_COUNT(&mask) != 1) return -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &mask)) return c;
  }
  return -1;
}
bool is_process_mask(const cpu_set_t& mask) { return CPU_EQUAL(&mask, &bench::process_cpu_mask()); }
// mask_text: "CPUs 0,1", or why the mask could not be read.
std::string mask_text(const std::optional<cpu_set_t>& mask) {
  if (!mask) return "mask unreadable (the thread is gone?)";
  std::string text = "CPUs";
  char sep = ' ';
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &*mask)) continue;
    text += sep;
    text += std::to_string(c);
    sep = ',';
  }
  return text;
}
std::string where_text(int cpu) { return cpu < 0 ? std::string("the process mask") : "CPU " + std::to_string(cpu); }

// ArenaPin (--pin): every thread that enters `arena` is pinned to the CPU of its slot,
// slot i on cpus[i % size], the CPU Lantern pinned its worker i to (cpus: worker_cpus).
// It stays pinned when it leaves (so a worker that comes back pays nothing);
// reset_threads unpins TBB's threads before an unpinned benchmark, and ~Pools the main
// thread. entries() counts the entries it saw (the placement check wants some).
class ArenaPin final : public tbb::task_scheduler_observer {
 public:
  ArenaPin(tbb::task_arena& arena, std::vector<int> cpus) : tbb::task_scheduler_observer(arena), cpus_(std::move(cpus)) {
    if (!cpus_.empty()) observe(true);
  }
  ~ArenaPin() override { observe(false); }
  void on_scheduler_entry(bool) override {
    const int slot = tbb::this_task_arena::current_thread_index();
    if (slot >= 0) pin_calling_thread(cpus_[static_cast<std::size_t>(slot) % cpus_.size()]);
    entries_.fetch_add(1, std::memory_order_relaxed);
  }
  unsigned entries() const noexcept { return entries_.load(std::memory_order_relaxed); }

 private:
  const std::vector<int> cpus_;
  std::atomic<unsigned> entries_{0};
};

// worker_cpus: where Lantern pinned each worker (Scheduler::worker_cpu); empty when one
// is not pinned (a synthetic topology, --topology, whose CPUs are not this machine's).
std::vector<int> worker_cpus(const lantern::Scheduler& pool) {
  std::vector<int> cpus;
  for (std::uint32_t i = 0; i < pool.worker_count(); ++i) {
    if (pool.worker_cpu(i) < 0) return {};
    cpus.push_back(pool.worker_cpu(i));
  }
  return cpus;
}

// Pools of a pinned benchmark (pin): Lantern's workers pinned by Lantern, TBB's threads
// by ArenaPin, and the main thread on the first CPU (it runs TBB's side inside execute()
// as slot 0, and submits Lantern's; ArenaPin moves it when it takes another slot) until
// ~Pools. Unpinned: every thread but the harness's on the process mask.
struct Pools {
  Pools(unsigned workers, const std::string& topology, lantern::SleepStrategy sleep, bool pin)
      : threads_before(thread_ids()),
        lantern({.workers = workers, .topology = topology, .pin_workers = pin, .sleep_strategy = sleep}),
        lantern_threads(minus(thread_ids(), threads_before)),
        cpus(pin ? worker_cpus(lantern) : std::vector<int>{}),
        tbb(static_cast<int>(workers)),
        tbb_outside(static_cast<int>(workers), /*reserved_for_masters=*/0),
        tbb_pin(tbb, cpus),
        tbb_outside_pin(tbb_outside, cpus) {
    tbb.initialize();
    tbb_outside.initialize();
    if (cpus.empty()) {
      reset_threads(tbb_worker_threads());
      pin_calling_thread(-1);
    } else {
      pin_calling_thread(cpus[0]);
    }
  }
  ~Pools() { pin_calling_thread(-1); }
  // The threads Lantern's constructor started (its workers), and TBB's: every other
  // thread that is not the harness's (TBB starts its workers lazily, so ask late).
  std::vector<pid_t> lantern_worker_threads() const { return lantern_threads; }
  std::vector<pid_t> tbb_worker_threads() const {
    std::vector<pid_t> skip = g_harness_threads;
    skip.insert(skip.end(), lantern_threads.begin(), lantern_threads.end());
    std::sort(skip.begin(), skip.end());
    return minus(thread_ids(), skip);
  }
  // placement_problem: "" when the threads sit where this benchmark put them, else what
  // is wrong (each thread's mask read once). A thread this bench pinned or unpinned is
  // where g_pins says (a TBB thread stays on the CPU of an earlier pinned benchmark
  // until an arena takes it). Unpinned: every other thread on the process mask. Pinned:
  // the main thread on one of cpus, Lantern's new threads on exactly cpus (one each, as
  // worker_cpus says), some thread entered a pinned arena, and every other thread on the
  // process mask or (a TBB thread started by a pinned thread, before it entered an
  // arena) on one of cpus.
  std::string placement_problem() const {
    std::string problem;
    auto note = [&](const std::string& what) { problem += (problem.empty() ? "" : "; ") + what; };
    auto in_cpus = [&](int cpu) { return cpu >= 0 && std::find(cpus.begin(), cpus.end(), cpu) != cpus.end(); };
    const pid_t self = static_cast<pid_t>(gettid());
    std::vector<int> lantern_seen;  // pinned: the CPUs of Lantern's new threads, not set here
    enum class Whose { main, lantern, tbb };
    auto check = [&](pid_t t, Whose whose) {
      const std::optional<cpu_set_t> mask = thread_mask(t);
      const std::string name = std::string(whose == Whose::main      ? "the main thread"
                                           : whose == Whose::lantern ? "Lantern thread"
                                                                     : "TBB thread") +
                               " " + std::to_string(t);
      if (!mask) {
        note(name + ": " + mask_text(mask));
        return;
      }
      if (const std::optional<int> put = pin_of(t)) {
        const bool there = *put < 0 ? is_process_mask(*mask) : only_cpu(*mask) == *put;
        if (!there) note(name + " was put on " + where_text(*put) + " but is on " + mask_text(mask));
        if (whose == Whose::main && !cpus.empty() && !in_cpus(*put)) note("the main thread is not on one of the pinned CPUs");
        return;
      }
      if (is_process_mask(*mask)) {
        if (whose == Whose::main && !cpus.empty()) note("the main thread is not pinned");
        return;
      }
      if (!cpus.empty() && whose == Whose::lantern && only_cpu(*mask) >= 0) {
        lantern_seen.push_back(only_cpu(*mask));
      } else if (!cpus.empty() && in_cpus(only_cpu(*mask))) {
        // A TBB thread started by a pinned thread inherits its CPU until it enters an arena.
      } else {
        note(name + " is on " + mask_text(mask) + ", put there by nobody");
      }
    };
    check(self, Whose::main);
    for (const pid_t t : lantern_threads) check(t, Whose::lantern);
    for (const pid_t t : tbb_worker_threads()) check(t, Whose::tbb);
    if (!cpus.empty()) {
      std::vector<int> want = cpus;
      std::sort(want.begin(), want.end());
      std::sort(lantern_seen.begin(), lantern_seen.end());
      if (lantern_seen != want) {
        note("Lantern's threads are on " + std::to_string(lantern_seen.size()) + " single CPUs, not one each on its " +
             std::to_string(want.size()) + " workers' CPUs");
      }
      if (tbb_pin.entries() + tbb_outside_pin.entries() == 0) note("no thread entered a pinned TBB arena");
    }
    return problem;
  }

  std::vector<pid_t> threads_before;
  lantern::Scheduler lantern;
  std::vector<pid_t> lantern_threads;
  const std::vector<int> cpus;  // pinned: worker_cpus(lantern); else empty
  tbb::task_arena tbb;
  tbb::task_arena tbb_outside;
  // Declared after the arenas: they stop observing before the arenas go.
  ArenaPin tbb_pin;
  ArenaPin tbb_outside_pin;
};

// ================================================================ 3. the repetition loop

// Context: what a benchmark needs besides its pools: the configuration, where to report
// progress, and where its rows go.
// WakeTrace (--wake-trace): a marker in the kernel's trace before each wake sample, and
// one line per sample in a file, so that bench/wake_phases.py can find each sample's
// scheduler events (who woke whom, on which CPU, when each thread ran) in an ftrace.
class WakeTrace {
 public:
  // open: nullopt and `*error` set when the marker file or the list cannot be opened.
  static std::unique_ptr<WakeTrace> open(const std::string& path, std::string* error) {
    const char* marker_path = "/sys/kernel/tracing/trace_marker";
    const int fd = ::open(marker_path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      *error = std::string("--wake-trace: cannot open ") + marker_path + ": " + std::strerror(errno) +
               " (it needs root and tracefs: mount -t tracefs nodev /sys/kernel/tracing)";
      return nullptr;
    }
    std::FILE* out = std::fopen(path.c_str(), "w");
    if (!out) {
      *error = "--wake-trace: cannot write " + path + ": " + std::strerror(errno);
      ::close(fd);
      return nullptr;
    }
    return std::unique_ptr<WakeTrace>(new WakeTrace(fd, out));
  }
  ~WakeTrace() {
    ::close(marker_fd_);
    std::fclose(out_);
  }
  WakeTrace(const WakeTrace&) = delete;
  WakeTrace& operator=(const WakeTrace&) = delete;

  // mark: "lantern_wake SIDE WORKERS INDEX" into the trace, before the sample's clock read.
  void mark(char side, unsigned workers, int index) const {
    char text[64];
    const int n = std::snprintf(text, sizeof text, "lantern_wake %c %u %d", side, workers, index);
    if (::write(marker_fd_, text, static_cast<std::size_t>(n)) != n) ++failed_marks_;
  }
  // record: the sample's line in the list.
  void record(char side, unsigned workers, int index, double us, pid_t tid) const {
    std::fprintf(out_, "%c %u %d %.3f %d\n", side, workers, index, us, static_cast<int>(tid));
  }
  // finish: false (and `*error` set) when a marker or the list could not be written.
  bool finish(const std::string& path, std::string* error) const {
    if (std::fflush(out_) != 0 || std::ferror(out_)) {
      *error = "--wake-trace: writing " + path + " failed: " + std::strerror(errno);
      return false;
    }
    if (failed_marks_ > 0) {
      *error = "--wake-trace: " + std::to_string(failed_marks_) + " trace markers could not be written";
      return false;
    }
    return true;
  }

 private:
  WakeTrace(int fd, std::FILE* out) : marker_fd_(fd), out_(out) {}
  int marker_fd_;
  std::FILE* out_;
  mutable int failed_marks_ = 0;
};

struct Context {
  const Config& config;
  const bench::Progress& progress;
  bench::Watchdog& watchdog;
  std::vector<Row>& rows;
  const char* benchmark = "";  // a string literal (the watchdog keeps the pointer)
  unsigned workers = 0;
  const WakeTrace* wake_trace = nullptr;  // --wake-trace, or none

  // step reports progress (`done` of `total` steps) to the progress line and watchdog.
  void step(int done, int total) const {
    progress.show(benchmark, workers, std::to_string(done) + "/" + std::to_string(total));
    watchdog.beat(benchmark);
  }
};

struct Samples {
  std::vector<double> lantern, tbb;  // seconds per repetition, warm-up excluded
};

// alternate runs one warm-up and config.reps measured repetitions of each side, in the
// order L T, T L, L T, ... with a pause between them. Each function returns the
// seconds its repetition measured (and checks its own answer).
Samples alternate(const Context& ctx, const std::function<double()>& lantern_rep,
                  const std::function<double()>& tbb_rep) {
  Samples s;
  const int total = ctx.config.reps + 1;
  for (int r = 0; r < total; ++r) {
    ctx.step(r, total);
    const bool lantern_first = r % 2 == 0;
    for (int k = 0; k < 2; ++k) {
      const bool is_lantern = (k == 0) == lantern_first;
      bench::settle();
      const double seconds = is_lantern ? lantern_rep() : tbb_rep();
      if (r > 0) (is_lantern ? s.lantern : s.tbb).push_back(seconds);
    }
  }
  return s;
}

// time_seconds runs fn once and returns how long it took.
template <class F>
double time_seconds(F&& fn) {
  const auto start = Clock::now();
  fn();
  return bench::seconds_between(start, Clock::now());
}

std::string side_label(const char* side, unsigned workers) {
  return std::string(side) + ", " + std::to_string(workers) + (workers == 1 ? " worker" : " workers");
}

// ============================================================== 4a. fib(32) by fork-join

// fib_lantern and the fib constants are in workloads.hpp.

long long fib_tbb(int n) {
  if (n < 2) return n;
  long long a = 0, b = 0;
  tbb::parallel_invoke([&] { a = fib_tbb(n - 1); }, [&] { b = fib_tbb(n - 2); });
  return a + b;
}

void bench_fib(Context& ctx, Pools& pools) {
  const Samples s = alternate(
      ctx,
      [&] {
        long long result = 0;
        const double t = time_seconds([&] { result = pools.lantern.run([] { return fib_lantern(kFibN); }); });
        bench::check_equal("fib(32), " + side_label("Lantern", ctx.workers), result, kFibValue);
        return t;
      },
      [&] {
        long long result = 0;
        const double t = time_seconds([&] { result = pools.tbb.execute([] { return fib_tbb(kFibN); }); });
        bench::check_equal("fib(32), " + side_label("TBB", ctx.workers), result, kFibValue);
        return t;
      });
  constexpr double kNsPerJoin = 1e9 / kFibJoins;
  ctx.rows.push_back({"fib(32) join", ctx.workers, "ns/join", bench::median(s.lantern) * kNsPerJoin,
                      bench::median(s.tbb) * kNsPerJoin, Target::ratio(0.5)});
}

// ================================================================ 4b. skynet, 10-ary tree

// skynet_join and the skynet constants are in workloads.hpp.

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
  const Samples s = alternate(
      ctx,
      [&] {
        long long result = 0;
        const double t = time_seconds([&] { result = pools.lantern.run(lantern_skynet); });
        bench::check_equal(std::string(label) + ", " + side_label("Lantern", ctx.workers), result, kSkynetSum);
        return t;
      },
      [&] {
        long long result = 0;
        const double t = time_seconds([&] { result = pools.tbb.execute([] { return skynet_tbb(0, kSkynetLeaves); }); });
        bench::check_equal(std::string(label) + ", " + side_label("TBB", ctx.workers), result, kSkynetSum);
        return t;
      });
  ctx.rows.push_back({label, ctx.workers, "ms", bench::median(s.lantern) * 1e3, bench::median(s.tbb) * 1e3,
                      Target::ratio(target)});
}

void bench_skynet(Context& ctx, Pools& pools) {
  run_skynet(ctx, pools, "skynet 1M (join)", 1.0, [] { return skynet_join(0, kSkynetLeaves); });
}

void bench_skynet_taskgroup(Context& ctx, Pools& pools) {
  run_skynet(ctx, pools, "skynet 1M (TaskGroup)", 0.5, [&pools] { return skynet_taskgroup(pools.lantern, 0, kSkynetLeaves); });
}

// =================================================================== 4c. nqueens(12)

constexpr int kQueensN = 12;
constexpr long long kQueensSolutions = 14200;
constexpr int kQueensSpawnRows = 3;  // nqueens: one task per placement in rows 0..2, serial below
constexpr unsigned kQueensAll = (1u << kQueensN) - 1;

// Board state as bit masks: occupied columns, and the diagonals attacking the next row.
long long queens_serial(unsigned cols, unsigned left, unsigned right) {
  if (cols == kQueensAll) return 1;
  long long count = 0;
  for (unsigned free = kQueensAll & ~(cols | left | right); free != 0; free &= free - 1) {
    const unsigned bit = free & (~free + 1);
    count += queens_serial(cols | bit, (left | bit) << 1, (right | bit) >> 1);
  }
  return count;
}

// queens_parallel spawns one task per free square of `row` into a group made by
// make_group (a lantern::TaskGroup or a tbb::task_group), down to kQueensSpawnRows.
template <class MakeGroup>
long long queens_parallel(const MakeGroup& make_group, int row, unsigned cols, unsigned left, unsigned right,
                          int spawn_rows = kQueensSpawnRows) {
  if (row == spawn_rows) return queens_serial(cols, left, right);
  std::array<long long, kQueensN> counts{};
  auto group = make_group();  // neither group type is movable: guaranteed elision
  int slot = 0;
  for (unsigned free = kQueensAll & ~(cols | left | right); free != 0; free &= free - 1) {
    const unsigned bit = free & (~free + 1);
    auto task = [&, slot, bit] {
      counts[slot] = queens_parallel(make_group, row + 1, cols | bit, (left | bit) << 1, (right | bit) >> 1, spawn_rows);
    };
    if constexpr (requires { group.spawn(task); }) {
      group.spawn(task);  // lantern::TaskGroup
    } else {
      group.run(task);  // tbb::task_group
    }
    ++slot;
  }
  group.wait();
  return std::accumulate(counts.begin(), counts.end(), 0LL);
}

// run_nqueens: spawn_rows = kQueensSpawnRows is the nqueens row; kQueensN (a task for
// every legal placement, down to the leaves, where row == N returns 1) is nqueens_tg.
void run_nqueens(Context& ctx, Pools& pools, const char* label, int spawn_rows, double target) {
  auto lantern_group = [&pools] { return lantern::TaskGroup(pools.lantern); };
  auto tbb_group = [] { return tbb::task_group(); };
  const Samples s = alternate(
      ctx,
      [&] {
        long long result = 0;
        const double t = time_seconds([&] { result = pools.lantern.run([&] { return queens_parallel(lantern_group, 0, 0, 0, 0, spawn_rows); }); });
        bench::check_equal(std::string(label) + ", " + side_label("Lantern", ctx.workers), result, kQueensSolutions);
        return t;
      },
      [&] {
        long long result = 0;
        const double t = time_seconds([&] { result = pools.tbb.execute([&] { return queens_parallel(tbb_group, 0, 0, 0, 0, spawn_rows); }); });
        bench::check_equal(std::string(label) + ", " + side_label("TBB", ctx.workers), result, kQueensSolutions);
        return t;
      });
  ctx.rows.push_back({label, ctx.workers, "ms", bench::median(s.lantern) * 1e3, bench::median(s.tbb) * 1e3,
                      Target::ratio(target)});
}

void bench_nqueens(Context& ctx, Pools& pools) { run_nqueens(ctx, pools, "nqueens(12)", kQueensSpawnRows, 1.0); }
void bench_nqueens_tg(Context& ctx, Pools& pools) {
  run_nqueens(ctx, pools, "nqueens(12) TaskGroup every row", kQueensN, 0.7);
}

// ========================================================= 4d. parallel_for, 10M int64

constexpr std::size_t kSumN = 10'000'000;
constexpr std::size_t kSumGrain = 1024;
constexpr long long kSumValue = static_cast<long long>(kSumN) * (kSumN - 1) / 2;

// Out of line, so both sides run the very same machine code: inlined, each side had its
// own copy of this loop, and where the copies landed moved the row by 0.75-1.1 between
// two builds with the same instruction count (bench/RESULTS.md, session 7).
[[gnu::noinline]] std::int64_t sum_chunk(const std::vector<std::int64_t>& data, std::size_t begin, std::size_t end) {
  std::int64_t sum = 0;
  for (std::size_t i = begin; i < end; ++i) sum += data[i];
  return sum;
}

void bench_parallel_for(Context& ctx, Pools& pools) {
  std::vector<std::int64_t> data(kSumN);
  std::iota(data.begin(), data.end(), std::int64_t{0});
  std::atomic<std::int64_t> total{0};
  auto add_chunk = [&](std::size_t begin, std::size_t end) {
    total.fetch_add(sum_chunk(data, begin, end), std::memory_order_relaxed);
  };
  const Samples s = alternate(
      ctx,
      [&] {
        total.store(0);
        const double t = time_seconds([&] { pools.lantern.run([&] { lantern::parallel_for(0, kSumN, kSumGrain, add_chunk); }); });
        bench::check_equal("parallel_for sum, " + side_label("Lantern", ctx.workers), total.load(), kSumValue);
        return t;
      },
      [&] {
        total.store(0);
        const double t = time_seconds([&] {
          pools.tbb.execute([&] {
            tbb::parallel_for(
                tbb::blocked_range<std::size_t>(0, kSumN, kSumGrain),
                [&](const tbb::blocked_range<std::size_t>& r) { add_chunk(r.begin(), r.end()); },
                tbb::simple_partitioner());
          });
        });
        bench::check_equal("parallel_for sum, " + side_label("TBB", ctx.workers), total.load(), kSumValue);
        return t;
      });
  ctx.rows.push_back({"parallel_for sum 10M", ctx.workers, "ms", bench::median(s.lantern) * 1e3,
                      bench::median(s.tbb) * 1e3, Target::ratio(1.0)});
}

// ============================================================ 4e. a chain of spawns

constexpr int kChainDepth = 1000;

// Chain: task i spawns task i + 1 through `spawn_next`; task 0 stamps `first`, the last
// task stamps `last` and wakes the main thread, which blocks on `done`. Task 0 also times
// its own spawn: in a pool that starts asleep that first spawn is the one that finds the
// other workers asleep and would wake one (on a VM, a cross-CPU wake of an idle vCPU costs
// the waker tens of microseconds; Lantern's fan-out credit has the poster wake it ahead),
// so the row's note can say how much of the chain it was.
struct Chain {
  std::function<void(Chain&, int)> spawn_next;  // makes a task that calls step(i)
  Clock::time_point first, last;
  double first_spawn_seconds = 0;
  std::atomic<int> done{0};
  std::atomic<int> steps{0};

  void step(int i) {
    if (i == 0) first = Clock::now();
    steps.fetch_add(1, std::memory_order_relaxed);
    if (i + 1 == kChainDepth) {
      last = Clock::now();
      done.store(1, std::memory_order_release);
      done.notify_one();
      return;
    }
    if (i == 0) {
      spawn_next(*this, 1);
      first_spawn_seconds = bench::seconds_between(first, Clock::now());
      return;
    }
    spawn_next(*this, i + 1);
  }
  void reset() {
    done.store(0);
    steps.store(0);
  }
  // wait: blocks until the last task ran; returns the seconds from first to last start.
  double wait() {
    done.wait(0, std::memory_order_acquire);
    return bench::seconds_between(first, last);
  }
};

void bench_spawn_chain(Context& ctx, Pools& pools) {
  Chain lantern_chain{[&pools](Chain& c, int i) { pools.lantern.spawn([&c, i] { c.step(i); }); }};
  tbb::task_group tbb_group;
  Chain tbb_chain{[&tbb_group](Chain& c, int i) { tbb_group.run([&c, i] { c.step(i); }); }};
  auto check = [&](const char* side, Chain& c) {
    bench::check_equal("spawn_chain, " + side_label(side, ctx.workers), c.steps.load(), kChainDepth);
  };
  std::vector<double> lantern_first, tbb_first;  // task 0's spawn, seconds
  const Samples s = alternate(
      ctx,
      [&] {
        lantern_chain.reset();
        pools.lantern.spawn([&] { lantern_chain.step(0); });
        const double t = lantern_chain.wait();
        check("Lantern", lantern_chain);
        lantern_first.push_back(lantern_chain.first_spawn_seconds);
        return t;
      },
      [&] {
        tbb_chain.reset();
        pools.tbb_outside.enqueue([&] { tbb_chain.step(0); });
        const double t = tbb_chain.wait();
        pools.tbb_outside.execute([&] { tbb_group.wait(); });
        check("TBB", tbb_chain);
        tbb_first.push_back(tbb_chain.first_spawn_seconds);
        return t;
      });
  constexpr double kNsPerSpawn = 1e9 / (kChainDepth - 1);
  ctx.rows.push_back({"spawn chain 1000", ctx.workers, "ns/spawn", bench::median(s.lantern) * kNsPerSpawn,
                      bench::median(s.tbb) * kNsPerSpawn, Target::ratio(0.7),
                      "task 0's own spawn (the first, which may find the other workers asleep and wake one) took a median of " +
                          bench::format_number(bench::median(lantern_first) * 1e6) + " us of Lantern's " +
                          bench::format_number(bench::median(s.lantern) * 1e6) + " us chain, " +
                          bench::format_number(bench::median(tbb_first) * 1e6) + " us of TBB's " +
                          bench::format_number(bench::median(s.tbb) * 1e6) + " us"});
}

// ============================================ 4e''. chains of spawns through a TaskGroup

constexpr int kGroupChains = 200;

// Lantern's side is lantern_instr_bench's chain workload (workloads.hpp, spawn_chains);
// tbb_group_step is its chain_step on a tbb::task_group.
void tbb_group_step(tbb::task_group& group, long long& steps, int i) {
  ++steps;
  if (i + 1 < kChainDepth) group.run([&group, &steps, i] { tbb_group_step(group, steps, i + 1); });
}

void bench_taskgroup_chain(Context& ctx, Pools& pools) {
  constexpr long long kSteps = static_cast<long long>(kGroupChains) * kChainDepth;
  const Samples s = alternate(
      ctx,
      [&] {
        long long total = 0;
        const double t = time_seconds([&] {
          total = pools.lantern.run([] { return bench::workloads::spawn_chains(kGroupChains); });
        });
        bench::check_equal("taskgroup_chain, " + side_label("Lantern", ctx.workers), total, kSteps);
        return t;
      },
      [&] {
        long long total = 0;
        const double t = time_seconds([&] {
          pools.tbb.execute([&] {
            for (int c = 0; c < kGroupChains; ++c) {
              long long steps = 0;
              tbb::task_group group;
              group.run([&] { tbb_group_step(group, steps, 0); });
              group.wait();
              total += steps;
            }
          });
        });
        bench::check_equal("taskgroup_chain, " + side_label("TBB", ctx.workers), total, kSteps);
        return t;
      });
  ctx.rows.push_back({"TaskGroup chain 1000 x200", ctx.workers, "ns/spawn", bench::median(s.lantern) * 1e9 / kSteps,
                      bench::median(s.tbb) * 1e9 / kSteps, Target::ratio(0.7)});
}

// ============================================= 4e'. outside submitters flooding the lanes

constexpr int kFloodThreads = 4;
constexpr int kFloodPerThread = 20'000;

// flood_seconds: kFloodThreads outside threads submit kFloodPerThread tasks each through
// `submit` while one more outside thread spins, so the machine has more runnable threads
// than cores and a lock holder can be preempted. Seconds from the start signal until
// every task ran.
double flood_seconds(const std::function<void(std::function<void()>)>& submit) {
  std::atomic<int> ran{0};
  std::atomic<bool> go{false}, stop_spinner{false};
  constexpr int total = kFloodThreads * kFloodPerThread;
  std::thread spinner([&] {
    while (!stop_spinner.load(std::memory_order_relaxed)) {
    }
  });
  std::vector<std::thread> submitters;
  for (int t = 0; t < kFloodThreads; ++t) {
    submitters.emplace_back([&] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (int i = 0; i < kFloodPerThread; ++i) {
        submit([&ran] {
          if (ran.fetch_add(1, std::memory_order_acq_rel) + 1 == total) ran.notify_all();
        });
      }
    });
  }
  const auto start = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& t : submitters) t.join();
  for (int seen = ran.load(std::memory_order_acquire); seen != total; seen = ran.load(std::memory_order_acquire)) {
    ran.wait(seen, std::memory_order_acquire);
  }
  const double seconds = bench::seconds_between(start, Clock::now());
  stop_spinner.store(true, std::memory_order_relaxed);
  spinner.join();
  return seconds;
}

void bench_lane_flood(Context& ctx, Pools& pools) {
  const Samples s = alternate(
      ctx, [&] { return flood_seconds([&](std::function<void()> f) { pools.lantern.spawn(std::move(f)); }); },
      [&] { return flood_seconds([&](std::function<void()> f) { pools.tbb_outside.enqueue(std::move(f)); }); });
  ctx.rows.push_back({"lane flood 4x20k", ctx.workers, "ms", bench::median(s.lantern) * 1e3, bench::median(s.tbb) * 1e3,
                      Target::ratio(1.0)});
}

// ===================================================================== 4f. wake latency

constexpr auto kWakeIdle = 20ms;  // long enough for every worker of both pools to sleep

// WakeProbe is one task's start stamp, and the flag the main thread blocks on.
// With a WakeTrace it also notes the task's thread and marks the kernel's trace first.
struct WakeProbe {
  Clock::time_point started;
  std::atomic<int> done{0};
  const WakeTrace* trace = nullptr;
  pid_t tid = 0;  // the thread that ran the task (with a trace only)

  void fire() {
    started = Clock::now();
    if (trace) tid = static_cast<pid_t>(gettid());
    done.store(1, std::memory_order_release);
    done.notify_one();
  }
  // sample: submits a task that fires through `submit` and returns the latency in us.
  template <class Submit>
  double sample(Submit&& submit, char side, unsigned workers, int index) {
    done.store(0);
    if (trace) trace->mark(side, workers, index);
    const auto submitted = Clock::now();
    submit();
    done.wait(0, std::memory_order_acquire);
    return bench::seconds_between(submitted, started) * 1e6;
  }
};

// FloorProbe: the wake benchmark's shape with no scheduler (the floor any pool that
// sleeps in a futex meets): one thread blocked on a futex word, woken by the main thread
// with FUTEX_WAKE, stamps its start; the main thread blocks as for the pools' samples.
class FloorProbe {
 public:
  explicit FloorProbe(const WakeTrace* trace) : thread_([this] { run(); }) { probe_.trace = trace; }
  ~FloorProbe() {
    quit_.store(true, std::memory_order_relaxed);
    ring();
    thread_.join();
  }
  // sample: one wake; the latency in us (marked in the trace as side F, with a trace).
  double sample(unsigned workers, int index) { return probe_.sample([this] { ring(); }, 'F', workers, index); }
  pid_t tid() const noexcept { return probe_.tid; }

 private:
  void ring() {
    word_.store(1, std::memory_order_release);
    ::syscall(SYS_futex, &word_, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  }
  void run() {
    for (;;) {
      while (word_.load(std::memory_order_acquire) == 0) {
        ::syscall(SYS_futex, &word_, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
      }
      word_.store(0, std::memory_order_relaxed);
      if (quit_.load(std::memory_order_relaxed)) return;
      probe_.fire();
    }
  }
  std::atomic<std::uint32_t> word_{0};
  std::atomic<bool> quit_{false};
  WakeProbe probe_;
  std::thread thread_;  // last: it starts once the rest is built
};

// asleep_now: every worker counted as sleeping and past its last look for work (it
// counts itself before that look and publishes `sleeping` after it, SLEEP.md "Falling
// asleep"): a sample posted earlier could be found by that look, without a wake.
bool asleep_now(const lantern::Scheduler& pool) {
  if (pool.sleep_snapshot().sleeping != pool.worker_count()) return false;
  for (std::uint32_t i = 0; i < pool.worker_count(); ++i) {
    if (pool.worker_state(i) != lantern::WorkerState::sleeping) return false;
  }
  return true;
}

// all_asleep waits (at most 1 s) until every Lantern worker is blocked.
bool all_asleep(const lantern::Scheduler& pool) {
  const auto deadline = Clock::now() + 1s;
  while (!asleep_now(pool)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

void bench_wake(Context& ctx, Pools& pools) {
  WakeProbe lantern_probe, tbb_probe;
  lantern_probe.trace = tbb_probe.trace = ctx.wake_trace;
  std::vector<double> lantern_us, tbb_us;
  int not_asleep = 0;
  int i = 0;
  auto record = [&](char side, const WakeProbe& probe, double us) {
    if (ctx.wake_trace) ctx.wake_trace->record(side, ctx.workers, i, us, probe.tid);
    return us;
  };
  auto lantern_sample = [&] {
    std::this_thread::sleep_for(kWakeIdle);
    if (!all_asleep(pools.lantern)) ++not_asleep;
    const double us = lantern_probe.sample([&] { pools.lantern.spawn([&] { lantern_probe.fire(); }); }, 'L',
                                           ctx.workers, i);
    lantern_us.push_back(record('L', lantern_probe, us));
  };
  auto tbb_sample = [&] {
    std::this_thread::sleep_for(kWakeIdle);
    const double us =
        tbb_probe.sample([&] { pools.tbb_outside.enqueue([&] { tbb_probe.fire(); }); }, 'T', ctx.workers, i);
    tbb_us.push_back(record('T', tbb_probe, us));
  };
  // Two rounds in eight also time the floor (FloorProbe), between the two sides: after
  // Lantern's sample in one, after TBB's in the other.
  FloorProbe floor(ctx.wake_trace);
  std::vector<double> floor_us;
  auto floor_sample = [&] {
    std::this_thread::sleep_for(kWakeIdle);
    const double us = floor.sample(ctx.workers, i);
    if (ctx.wake_trace) ctx.wake_trace->record('F', ctx.workers, i, us, floor.tid());
    floor_us.push_back(us);
  };
  const int n = ctx.config.wake_samples;
  for (; i < n; ++i) {
    if (i % 10 == 0) ctx.step(i, n);
    if (i % 2 == 0) {
      lantern_sample();
      if (i % 8 == 0) floor_sample();
      tbb_sample();
    } else {
      tbb_sample();
      if (i % 8 == 5) floor_sample();
      lantern_sample();
    }
  }
  std::string note;
  if (not_asleep > 0) {
    note = std::to_string(not_asleep) + " of " + std::to_string(n) +
           " Lantern samples started with some worker awake after 1 s of idleness";
  }
  char floor_note[256];
  const double floor_p50 = bench::percentile(floor_us, 50);
  std::snprintf(floor_note, sizeof floor_note,
                "the floor, a bare FUTEX_WAKE of a thread blocked on a futex word after the same 20 ms pause "
                "(%zu samples among the others'): p50 %.1f us (%.2f of TBB's), p99 %.1f us",
                floor_us.size(), floor_p50, floor_p50 / bench::percentile(tbb_us, 50),
                bench::percentile(floor_us, 99));
  // The late wakes: samples slower than three times the floor's p50 (twice would count
  // much of oneTBB's ordinary wakes, whose p50 is near it). The host's late wakes meet
  // the bare futex wake too (bench/RESULTS.md, "Session 21"), and a p99 is a side's
  // slowest 1 %: a side with over 1 % of its samples late reads its p99 among them, one
  // with fewer below them, so the p99 row's ratio turns on these shares.
  const double late_us = 3 * floor_p50;
  auto late_percent = [late_us](const std::vector<double>& samples) {
    if (samples.empty()) return 0.0;
    const auto late = std::count_if(samples.begin(), samples.end(), [late_us](double us) { return us > late_us; });
    return 100.0 * static_cast<double>(late) / static_cast<double>(samples.size());
  };
  char late_note[256];
  std::snprintf(late_note, sizeof late_note,
                "late wakes (slower than three times the floor's p50, %.1f us): Lantern %.1f %%, TBB %.1f %%, floor %.1f %% "
                "of samples; a side with over 1 %% late reads its p99 among them",
                late_us, late_percent(lantern_us), late_percent(tbb_us), late_percent(floor_us));
  note = note.empty() ? std::string(late_note) : note + "; " + late_note;
  ctx.rows.push_back({"wake latency p50", ctx.workers, "us", bench::percentile(lantern_us, 50),
                      bench::percentile(tbb_us, 50), Target::ratio(0.8), floor_note});
  ctx.rows.push_back({"wake latency p99", ctx.workers, "us", bench::percentile(lantern_us, 99),
                      bench::percentile(tbb_us, 99), Target::ratio(1.0), note});
}

// ========================================================================= 4g. idle CPU

constexpr auto kIdleTick = 10ms;

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// IdleCpu: over one idle run, the CPU time of the pool's own threads (the figure) and
// of the whole process (the earlier measure, which includes the ticking main thread),
// both in % of one core.
struct IdleCpu {
  double pool_percent, process_percent;
};

// idle_cpu submits one tiny task every kIdleTick for `duration` from the main thread.
// `threads` lists the pool's threads; asked at the start and at the end (a pool may
// start threads lazily: those count from zero).
IdleCpu idle_cpu(Context& ctx, const char* side, std::chrono::milliseconds duration,
                 const std::function<void(std::function<void()>)>& submit,
                 const std::function<std::vector<pid_t>()>& threads) {
  std::atomic<int> ran{0};
  auto task = [&ran] {
    ran.fetch_add(1, std::memory_order_release);
    ran.notify_one();
  };
  std::this_thread::sleep_for(50ms);  // let the other pool fall asleep first
  std::map<pid_t, std::uint64_t> start_ns;
  for (pid_t t : threads()) start_ns[t] = thread_cpu_ns(t);
  const double cpu_start = cpu_seconds();
  const auto start = Clock::now();
  int submitted = 0;
  for (auto next = start; next < start + duration; next += kIdleTick) {
    std::this_thread::sleep_until(next);
    submit(task);
    ++submitted;
  }
  for (int seen = ran.load(std::memory_order_acquire); seen != submitted; seen = ran.load(std::memory_order_acquire)) {
    ran.wait(seen, std::memory_order_acquire);
  }
  const double wall = bench::seconds_between(start, Clock::now());
  const double cpu = cpu_seconds() - cpu_start;
  std::uint64_t pool_ns = 0;
  for (pid_t t : threads()) {
    const auto it = start_ns.find(t);
    pool_ns += thread_cpu_ns(t) - (it == start_ns.end() ? 0 : it->second);
  }
  bench::check_equal(std::string("idle tasks run, ") + side_label(side, ctx.workers), ran.load(), submitted);
  return {static_cast<double>(pool_ns) * 1e-9 / wall * 100.0, cpu / wall * 100.0};
}

void bench_idle(Context& ctx, Pools& pools) {
  ctx.step(0, 2);
  const IdleCpu lantern = idle_cpu(
      ctx, "Lantern", ctx.config.idle_duration, [&](std::function<void()> task) { pools.lantern.spawn(std::move(task)); },
      [&] { return pools.lantern_worker_threads(); });
  ctx.step(1, 2);
  const IdleCpu tbb = idle_cpu(
      ctx, "TBB", ctx.config.idle_duration, [&](std::function<void()> task) { pools.tbb_outside.enqueue(std::move(task)); },
      [&] { return pools.tbb_worker_threads(); });
  ctx.rows.push_back({"idle CPU, 10 ms ticks", ctx.workers, "% core", lantern.pool_percent, tbb.pool_percent,
                      Target::lantern(0.5),
                      "the pool's own threads (/proc/self/task/*/schedstat); whole process (getrusage, includes the "
                      "ticking main thread): Lantern " +
                          bench::format_number(lantern.process_percent) + " %, TBB " +
                          bench::format_number(tbb.process_percent) + " %"});
}

// ================================================================ 5. the list, and main

// pinnable: --pin applies. Not to the rows whose figure is the kernel's placement of a
// woken or preempted thread (wake, idle, lane_flood): pinned, every wake of a 1-worker
// pool crosses to the worker's CPU (a halted vCPU here), and two TBB threads pinned to
// one CPU take turns by time slice (measured: TBB's 1-worker wake p99 3.8 ms, its idle
// CPU 24 % of a core; bench/RESULTS.md, "Session 19").
struct Benchmark {
  const char* name;
  void (*run)(Context&, Pools&);
  bool pinnable = true;
};

constexpr Benchmark kBenchmarks[] = {
    {"fib", bench_fib},
    {"skynet", bench_skynet},
    {"skynet_taskgroup", bench_skynet_taskgroup},
    {"nqueens", bench_nqueens},
    {"nqueens_tg", bench_nqueens_tg},
    {"parallel_for", bench_parallel_for},
    {"spawn_chain", bench_spawn_chain},
    {"taskgroup_chain", bench_taskgroup_chain},
    {"lane_flood", bench_lane_flood, false},
    {"wake", bench_wake, false},
    {"idle", bench_idle, false},
};

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (const auto exit = parse_command_line(argc, argv, &config)) return *exit;
  bench::process_cpu_mask();  // read before anything is pinned

  std::unique_ptr<WakeTrace> wake_trace;
  if (!config.wake_trace.empty()) {
    std::string error;
    wake_trace = WakeTrace::open(config.wake_trace, &error);
    if (!wake_trace) {
      std::fprintf(stderr, "lantern_bench: %s\n", error.c_str());
      return 2;
    }
  }

  // TBB's default is hardware_concurrency threads in all, the caller included, i.e.
  // hardware_concurrency - 1 workers. Allow as many workers as the widest Lantern pool,
  // which tbb_outside needs (its W slots are all for workers); arenas still cap each
  // benchmark at W threads.
  const unsigned widest = *std::max_element(config.workers.begin(), config.workers.end());
  tbb::global_control tbb_threads(tbb::global_control::max_allowed_parallelism,
                                  std::max<std::size_t>(widest + 1, std::thread::hardware_concurrency()));

  std::string worker_list;
  for (unsigned w : config.workers) worker_list += (worker_list.empty() ? "" : ",") + std::to_string(w);
  const std::string topology = config.topology.empty() ? "of this machine" : "\"" + config.topology + "\"";
  std::printf("lantern_bench: %d measured reps per side (+1 warm-up, alternating), workers %s, topology %s, sleep %s%s%s\n",
              config.reps, worker_list.c_str(), topology.c_str(), lantern::strategy_name(config.sleep),
              config.quick ? ", --quick" : "", config.pin ? ", --pin" : "");
  bench::print_cpu_speeds("at the start");
  std::fflush(stdout);

  const bench::Progress progress;
  bench::Watchdog watchdog(120s);
  g_harness_threads = thread_ids();  // main and the watchdog: in neither pool's figure
  std::vector<Row> rows;
  int placement_checks = 0;        // --pin: benchmark runs whose threads were checked
  std::string placement_problems;  // ... and what was wrong, a line each
  for (const Benchmark& b : kBenchmarks) {
    if (std::find(config.only.begin(), config.only.end(), b.name) == config.only.end()) continue;
    for (unsigned workers : config.workers) {
      Context ctx{config, progress, watchdog, rows, b.name, workers, wake_trace.get()};
      progress.show(b.name, workers, "starting");
      watchdog.beat(b.name);
      Pools pools(workers, config.topology, config.sleep, config.pin && b.pinnable);
      b.run(ctx, pools);
      progress.clear();
      if (config.pin) {
        ++placement_checks;
        if (const std::string problem = pools.placement_problem(); !problem.empty()) {
          placement_problems += std::string(placement_problems.empty() ? "" : "\n") + "  " + b.name + ", " +
                                std::to_string(workers) + " workers: " + problem;
        }
      }
    }
  }
  std::printf("\n");
  bench::print_table(rows, config.markdown);
  int misses = 0, targets = 0;
  for (const Row& r : rows) {
    if (r.target.kind == Target::none) continue;
    ++targets;
    if (!r.target.met(r.lantern, r.tbb)) ++misses;
  }
  std::printf("\n");
  bench::print_cpu_speeds("at the end");
  if (config.pin && placement_problems.empty()) {
    std::printf("\nplacement check (--pin): in all %d benchmark runs every thread was where it was put (%s; "
                "wake, idle, lane_flood: none pinned)\n",
                placement_checks,
                config.topology.empty() ? "pinned runs: Lantern's worker i and TBB's arena slot i on Lantern's i-th "
                                          "worker CPU"
                                        : "a synthetic --topology: nothing pinned");
  }
  std::printf("\n%d of %d targets missed; every answer was checked and right.\n", misses, targets);
  int status = 0;
  if (wake_trace) {
    std::string error;
    if (!wake_trace->finish(config.wake_trace, &error)) {
      std::fprintf(stderr, "lantern_bench: %s\n", error.c_str());
      status = 1;
    }
  }
  if (!placement_problems.empty()) {
    std::fprintf(stderr, "lantern_bench: --pin: threads not where they were put:\n%s\n", placement_problems.c_str());
    status = 2;
  }
  return status;
}
