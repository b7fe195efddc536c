// SPDX-License-Identifier: Apache-2.0
// wake_diag.cpp - lantern_wake_diag: lantern_bench's wake samples (scheduler/wake.hpp)
// with what explains their figures. Two rounds in eight also time the floor, a bare
// FUTEX_WAKE of a thread blocked on a futex word after the same pause, timed the same
// way: what any pool that sleeps in a futex starts from. The p50 row's note gives the
// floor, the p99 row's each side's late wakes (samples slower than three times the
// floor's p50). With --wake-trace it marks each sample in the kernel's trace and lists
// the samples, for wake_phases.py (wake_trace.sh runs both).
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include "harness.hpp"
#include "lantern/lantern.hpp"
#include "lantern/tools/program_cli.hpp"
#include "wake.hpp"

namespace {

using bench::Row;
using bench::Target;
using namespace std::chrono_literals;

constexpr const char* kUsage = R"(usage: lantern_wake_diag [options]

lantern_bench's wake benchmark (lantern_bench --help, "wake") with what explains its
figures. Both pools (a Lantern Scheduler and a oneTBB arena of W workers) idle for
20 ms, then the main thread submits one task that stamps its start; the samples of the
two sides interleave. Two rounds in eight also time the floor between them: a bare
FUTEX_WAKE of a thread blocked on a futex word after the same 20 ms pause, timed the
same way (no scheduler: what any pool that sleeps in a futex starts from). The p50
row's note gives the floor's p50 and p99; the p99 row's note gives each side's late
wakes, the share of its samples slower than three times the floor's p50: a side with
over 1 % of its samples late reads its p99 among them, one with fewer below them.

options:
  -h, --help           this text
  --version            print the version
  --workers LIST       worker counts, e.g. 1,2 (default: 1 and hardware_concurrency)
  --wake-samples N     samples per side and worker count, 20 to 100000 (default 2000)
  --quick              20 samples (unless --wake-samples is given)
  --markdown           print the table as Markdown
  --json               print the rows as JSON, one object a line, on stdout (every
                       other line goes to stderr); the notes' figures are in "values"
  --sleep STRATEGY     Lantern's sleep strategy: condvar (default) or io_uring
  --wake-trace FILE    write a marker into the kernel's trace
                       (/sys/kernel/tracing/trace_marker; needs root and tracefs)
                       before each sample, and one line per sample to FILE: side (L
                       Lantern, T oneTBB, F the floor), workers, index, latency in us,
                       the task's thread id. wake_trace.sh runs this under ftrace and
                       splits each wake into phases (wake_phases.py)

Exit status: 0 when the run completed; 1 when the trace could not be written; 2 on bad
usage; 3 on a hang (no progress for 120 s).
)";

struct Config {
  std::vector<unsigned> workers;
  int wake_samples = 2000;
  bench::Output output;
  lantern::SleepStrategy sleep = lantern::SleepStrategy::condvar;
  std::string wake_trace;
};

// WakeTrace (--wake-trace): a marker in the kernel's trace before each wake sample, and
// one line per sample in a file, so that wake_phases.py can find each sample's scheduler
// events (who woke whom, on which CPU, when each thread ran) in an ftrace.
class WakeTrace {
 public:
  // open: nullptr and `*error` set when the marker file or the list cannot be opened.
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

// FloorProbe: the wake benchmark's shape with no scheduler: one thread blocked on a
// futex word, woken by the main thread with FUTEX_WAKE, stamps its start; the main
// thread blocks as for the pools' samples.
class FloorProbe {
 public:
  explicit FloorProbe(bool record_tid) : thread_([this] { run(); }) { probe_.record_tid = record_tid; }
  ~FloorProbe() {
    quit_.store(true, std::memory_order_relaxed);
    ring();
    thread_.join();
  }
  // sample: one wake after the pause; `before` runs just before the clock read.
  template <class Before>
  double sample(Before&& before) {
    std::this_thread::sleep_for(bench::wake::kIdle);
    return probe_.sample([this] { ring(); }, before);
  }
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
  bench::wake::Probe probe_;
  std::thread thread_;  // last: it starts once the rest is built
};

// Samples: one side's latencies in us.
struct Samples {
  std::vector<double> lantern, tbb, floor;
};

Samples take_samples(const bench::Context<Config>& ctx, lantern::Scheduler& pool, tbb::task_arena& arena,
                     const WakeTrace* trace, int* not_asleep) {
  bench::wake::Probe lantern_probe, tbb_probe;
  lantern_probe.record_tid = tbb_probe.record_tid = trace != nullptr;
  FloorProbe floor(trace != nullptr);
  Samples s;
  int i = 0;
  auto mark = [&](char side) {
    return [&, side] {
      if (trace) trace->mark(side, ctx.workers, i);
    };
  };
  auto record = [&](char side, std::vector<double>& to, double us, pid_t tid) {
    if (trace) trace->record(side, ctx.workers, i, us, tid);
    to.push_back(us);
  };
  auto lantern_sample = [&] {
    bool asleep = true;
    const double us = bench::wake::sample_lantern(pool, lantern_probe, &asleep, mark('L'));
    *not_asleep += asleep ? 0 : 1;
    record('L', s.lantern, us, lantern_probe.tid);
  };
  auto tbb_sample = [&] { record('T', s.tbb, bench::wake::sample_tbb(arena, tbb_probe, mark('T')), tbb_probe.tid); };
  auto floor_sample = [&] { record('F', s.floor, floor.sample(mark('F')), floor.tid()); };
  // Two rounds in eight also time the floor, between the two sides: after Lantern's
  // sample in one, after TBB's in the other.
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
  return s;
}

void bench_wake(bench::Context<Config>& ctx, const WakeTrace* trace) {
  lantern::Scheduler pool({.workers = ctx.workers, .sleep_strategy = ctx.config.sleep});
  tbb::task_arena arena(static_cast<int>(ctx.workers), /*reserved_for_masters=*/0);
  arena.initialize();
  int not_asleep = 0;
  const Samples s = take_samples(ctx, pool, arena, trace, &not_asleep);
  const double floor_p50 = bench::percentile(s.floor, 50);
  const double floor_p99 = bench::percentile(s.floor, 99);
  char floor_note[256];
  std::snprintf(floor_note, sizeof floor_note,
                "the floor, a bare FUTEX_WAKE of a thread blocked on a futex word after the same 20 ms pause "
                "(%zu samples among the others'): p50 %.1f us (%.2f of TBB's), p99 %.1f us",
                s.floor.size(), floor_p50, floor_p50 / bench::percentile(s.tbb, 50), floor_p99);
  // The late wakes: samples slower than three times the floor's p50 (twice would count
  // much of oneTBB's ordinary wakes, whose p50 is near it). The host's late wakes meet
  // the bare futex wake too, and a p99 is a side's slowest 1 %: a side with over 1 % of
  // its samples late reads its p99 among them, one with fewer below them, so the p99
  // row's ratio turns on these shares.
  const double late_us = 3 * floor_p50;
  auto late_percent = [late_us](const std::vector<double>& samples) {
    if (samples.empty()) return 0.0;
    const auto late = std::count_if(samples.begin(), samples.end(), [late_us](double us) { return us > late_us; });
    return 100.0 * static_cast<double>(late) / static_cast<double>(samples.size());
  };
  char late_note[256];
  std::snprintf(
      late_note, sizeof late_note,
      "late wakes (slower than three times the floor's p50, %.1f us): Lantern %.1f %%, TBB %.1f %%, floor %.1f %% "
      "of samples; a side with over 1 %% late reads its p99 among them",
      late_us, late_percent(s.lantern), late_percent(s.tbb), late_percent(s.floor));
  std::string note = late_note;
  if (not_asleep > 0) {
    note = std::to_string(not_asleep) + " of " + std::to_string(s.lantern.size()) +
           " Lantern samples started with some worker awake after 1 s of idleness; " + note;
  }
  ctx.rows.push_back({"wake latency p50",
                      ctx.workers,
                      "us",
                      bench::percentile(s.lantern, 50),
                      bench::percentile(s.tbb, 50),
                      Target::ratio(0.8),
                      floor_note,
                      {{"floor_samples", static_cast<double>(s.floor.size())},
                       {"floor_p50_us", floor_p50},
                       {"floor_p99_us", floor_p99}}});
  ctx.rows.push_back({"wake latency p99",
                      ctx.workers,
                      "us",
                      bench::percentile(s.lantern, 99),
                      bench::percentile(s.tbb, 99),
                      Target::ratio(1.0),
                      note,
                      {{"late_us", late_us},
                       {"late_lantern_percent", late_percent(s.lantern)},
                       {"late_tbb_percent", late_percent(s.tbb)},
                       {"late_floor_percent", late_percent(s.floor)},
                       {"lantern_samples_not_asleep", static_cast<double>(not_asleep)}}});
}

std::optional<int> parse_command_line(int argc, char** argv, Config* config) {
  lantern::tools::Program program("lantern_wake_diag", kUsage);
  auto& app = program.app();
  bool quick = false;
  std::string sleep = lantern::strategy_name(config->sleep);
  lantern::tools::number_list_option(app, "--workers", &config->workers, 1u, lantern::kMaxWorkers);
  CLI::Option* samples = lantern::tools::number_option(app, "--wake-samples", &config->wake_samples, 20, 100000);
  app.add_flag("--quick", quick);
  app.add_flag("--markdown", config->output.markdown);
  app.add_flag("--json", config->output.json);
  lantern::tools::choice_option(app, "--sleep", &sleep, {"condvar", "io_uring"});
  app.add_option("--wake-trace", config->wake_trace);
  if (const auto exit = program.parse(argc, argv)) return exit;
  config->sleep = *lantern::parse_strategy(sleep);
  if (quick && samples->count() == 0) config->wake_samples = 20;
  if (config->workers.empty()) {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    config->workers = {1};
    if (hw > 1) config->workers.push_back(hw);
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (const auto exit = parse_command_line(argc, argv, &config)) return *exit;
  std::unique_ptr<WakeTrace> trace;
  if (!config.wake_trace.empty()) {
    std::string error;
    trace = WakeTrace::open(config.wake_trace, &error);
    if (!trace) {
      std::fprintf(stderr, "lantern_wake_diag: %s\n", error.c_str());
      return 2;
    }
  }
  // The arena's W slots are all for TBB workers (the main thread stays outside): allow
  // as many as the widest pool.
  const unsigned widest = *std::max_element(config.workers.begin(), config.workers.end());
  tbb::global_control tbb_threads(tbb::global_control::max_allowed_parallelism,
                                  std::max<std::size_t>(widest + 1, std::thread::hardware_concurrency()));
  std::FILE* text = config.output.text();
  std::fprintf(text, "lantern_wake_diag: %d samples per side, sleep %s\n", config.wake_samples,
               lantern::strategy_name(config.sleep));
  const bench::Progress progress;
  bench::Watchdog watchdog(120s);
  std::vector<Row> rows;
  for (const unsigned workers : config.workers) {
    bench::Context<Config> ctx{config, progress, watchdog, rows, "wake", workers};
    bench_wake(ctx, trace.get());
    progress.clear();
  }
  std::fprintf(text, "\n");
  std::fflush(text);
  config.output.rows(rows);
  if (trace) {
    std::string error;
    if (!trace->finish(config.wake_trace, &error)) {
      std::fprintf(stderr, "lantern_wake_diag: %s\n", error.c_str());
      return 1;
    }
  }
  return 0;
}
