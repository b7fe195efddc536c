// harness.hpp - the benchmark plumbing lantern_bench needs, and nothing about either
// scheduler: a clock, statistics, answer checks, the results table, a progress line,
// a hang watchdog, the process's CPU mask and each CPU's speed.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern char** environ;  // posix_spawn passes it on (Child)

namespace bench {

// ---------------------------------------------------------------------------- time

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// settle lets both pools' workers finish spinning and fall asleep, so that one side's
// idle spinning does not steal the CPU from the other side's next repetition.
inline void settle(std::chrono::milliseconds how_long = std::chrono::milliseconds(10)) {
  std::this_thread::sleep_for(how_long);
}

// ---------------------------------------------------------------------- statistics

// percentile by the nearest-rank method: p in [0, 100]; p = 50 of an even count is the
// lower middle value, so every reported figure is one that was actually measured...
inline double percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const std::size_t index = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return values[std::min(index, values.size() - 1)];
}

// ...except the median, which averages the two middle values of an even count.
inline double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

// MedianInterval: a sample's median and an approximately 95 % confidence interval for
// the median of the distribution it came from, by order statistics (distribution-free:
// no normality assumed; the bounds are values actually measured). With n values sorted,
// the bounds are the values of rank n/2 -+ 0.98 sqrt(n) (the binomial(n, 1/2) spread,
// normal approximation), which needs n >= 6 to lie inside the sample.
struct MedianInterval {
  double median = std::nan("");
  double low = std::nan("");
  double high = std::nan("");
};

inline MedianInterval median_interval(std::vector<double> values) {
  MedianInterval m;
  if (values.empty()) return m;
  m.median = median(values);
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  const double k = std::floor(n / 2.0 - 0.98 * std::sqrt(n));
  if (k < 0) return m;  // too few values for an interval
  m.low = values[static_cast<std::size_t>(k)];
  m.high = values[values.size() - 1 - static_cast<std::size_t>(k)];
  return m;
}

// ------------------------------------------------------------------- answer checks

// wrong_answer reports a wrong result and exits with status 2 at once: the pools may be
// in any state, so no destructor gets a chance to wait for them.
[[noreturn]] inline void wrong_answer(const std::string& what) {
  std::fflush(stdout);
  std::fprintf(stderr, "\nlantern_bench: WRONG ANSWER: %s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(2);
}

inline void check_equal(const std::string& what, long long got, long long expected) {
  if (got != expected) {
    wrong_answer(what + ": got " + std::to_string(got) + ", expected " + std::to_string(expected));
  }
}

// ------------------------------------------------------------------------- targets

// Target is what a row must achieve: the ratio Lantern/TBB at most `limit`, Lantern's own
// figure at most `limit`, or nothing (the row is for information).
struct Target {
  enum Kind { ratio_at_most, lantern_at_most, none };
  Kind kind = none;
  double limit = 0;

  static Target ratio(double limit) { return {ratio_at_most, limit}; }
  static Target lantern(double limit) { return {lantern_at_most, limit}; }
  static Target info() { return {none, 0}; }

  bool met(double lantern, double tbb) const {
    switch (kind) {
      case ratio_at_most: return lantern / tbb <= limit;
      case lantern_at_most: return lantern <= limit;
      case none: return true;
    }
    return true;
  }
};

// ---------------------------------------------------------------------------- table

// Row is one line of the results table: one benchmark's figure on one worker count.
struct Row {
  std::string benchmark;
  unsigned workers = 0;
  std::string unit;      // what the figures measure, e.g. "ns/join" (lower is better)
  double lantern = 0;
  double tbb = 0;
  Target target;
  std::string note;      // printed under the table when not empty
};

inline std::string format_number(double v) {
  char buf[32];
  if (std::isnan(v)) return "n/a";
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
  return buf;
}

inline std::string format_ratio(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", r);
  return buf;
}

inline std::string format_target(const Row& row) {
  switch (row.target.kind) {
    case Target::ratio_at_most: return "ratio <= " + format_number(row.target.limit);
    case Target::lantern_at_most: return "Lantern <= " + format_number(row.target.limit) + " " + row.unit;
    case Target::none: return "-";
  }
  return "-";
}

inline std::string format_verdict(const Row& row) {
  if (row.target.kind == Target::none) return "info";
  return row.target.met(row.lantern, row.tbb) ? "PASS" : "MISS";
}

// print_table prints the rows aligned for a terminal, or as a Markdown table.
inline void print_table(const std::vector<Row>& rows, bool markdown) {
  const std::vector<std::string> header = {"benchmark", "workers", "unit",   "Lantern",
                                           "TBB",       "L/TBB",   "target", "result"};
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    cells.push_back({r.benchmark, std::to_string(r.workers), r.unit, format_number(r.lantern),
                     format_number(r.tbb), format_ratio(r.lantern / r.tbb), format_target(r),
                     format_verdict(r)});
  }
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
  }
  // Text columns are left-aligned, numbers right-aligned.
  auto is_numeric = [](std::size_t c) { return c == 1 || c == 3 || c == 4 || c == 5; };
  auto print_line = [&](const std::vector<std::string>& line) {
    std::string out = markdown ? "|" : "";
    for (std::size_t c = 0; c < line.size(); ++c) {
      const std::string pad(width[c] - line[c].size(), ' ');
      out += markdown ? " " : (c == 0 ? "" : "  ");
      out += is_numeric(c) ? pad + line[c] : line[c] + pad;
      if (markdown) out += " |";
    }
    out.erase(out.find_last_not_of(' ') + 1);
    std::printf("%s\n", out.c_str());
  };
  print_line(header);
  std::string rule = markdown ? "|" : "";
  for (std::size_t c = 0; c < header.size(); ++c) {
    if (markdown) {
      rule += " " + std::string(width[c] - 1, '-') + (is_numeric(c) ? ":" : "-") + " |";
    } else {
      rule += (c == 0 ? "" : "  ") + std::string(width[c], '-');
    }
  }
  std::printf("%s\n", rule.c_str());
  for (const auto& line : cells) print_line(line);
  bool any_note = false;
  for (const Row& r : rows) {
    if (r.note.empty()) continue;
    if (!any_note) std::printf("\n");
    any_note = true;
    std::printf("%s%s (%u workers): %s\n", markdown ? "- " : "note: ", r.benchmark.c_str(), r.workers,
                r.note.c_str());
  }
  std::fflush(stdout);
}

// ------------------------------------------------------------------ CPU speed check

// On a VM the host can run one vCPU slower than another for minutes at a time (seen on
// this project's 2-vCPU host: the same serial loop 50 % slower on CPU 0 than on CPU 1).
// A thread that settles on the slow CPU is that much slower for as long as it stays,
// and a 1-worker row compares two threads that may sit on different CPUs, so such a
// host can decide a row's ratio more than either scheduler does. cpu_speeds times the
// same serial work on every CPU this process may run on, one after another, from a
// thread pinned there; lantern_bench and lantern_instr_bench print it at their start
// and at their end.
struct CpuSpeed {
  int cpu;    // the kernel's CPU number
  double ms;  // median time of the serial work there
};

// process_cpu_mask: the CPUs this process may run on, as the first call found them (a
// bench's main calls it before it pins anything); empty if the kernel would not say.
inline const cpu_set_t& process_cpu_mask() {
  static const cpu_set_t mask = [] {
    cpu_set_t m;
    CPU_ZERO(&m);
    if (sched_getaffinity(0, sizeof m, &m) != 0) CPU_ZERO(&m);
    return m;
  }();
  return mask;
}

// set_thread_cpu: thread `tid` (0: the calling thread) onto `cpu` alone, or with -1 back
// onto process_cpu_mask; false if the kernel refused.
inline bool set_thread_cpu(pid_t tid, int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  if (cpu >= 0) CPU_SET(cpu, &one);
  return sched_setaffinity(tid, sizeof(cpu_set_t), cpu >= 0 ? &one : &process_cpu_mask()) == 0;
}

// allowed_cpus: process_cpu_mask's CPUs, ascending.
inline std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &process_cpu_mask())) cpus.push_back(c);
  }
  return cpus;
}

namespace detail {
// speed_kernel: branchy serial recursion (about 1 ms here), opaque to the optimiser.
[[gnu::noinline]] inline long long speed_kernel(int n) {
  return n < 2 ? n : speed_kernel(n - 1) + speed_kernel(n - 2);
}
}  // namespace detail

inline std::vector<CpuSpeed> cpu_speeds(int samples = 7) {
  std::vector<CpuSpeed> speeds;
  for (const int cpu : allowed_cpus()) {
    double median_ms = 0;
    std::thread probe([&] {
      if (!set_thread_cpu(0, cpu)) return;
      static volatile int depth = 27;
      std::vector<double> ms;
      long long sum = 0;
      for (int i = 0; i < samples + 1; ++i) {  // the first is a warm-up
        const auto start = Clock::now();
        sum += detail::speed_kernel(depth);
        if (i > 0) ms.push_back(seconds_between(start, Clock::now()) * 1e3);
      }
      if (sum != 196418LL * (samples + 1)) return;  // fib(27), each time
      std::sort(ms.begin(), ms.end());
      median_ms = ms[ms.size() / 2];
    });
    probe.join();
    if (median_ms > 0) speeds.push_back({cpu, median_ms});
  }
  return speeds;
}

// cpu_speed_line: "cpu speeds ...: CPU 0 1.10 ms, CPU 1 1.12 ms; slowest / fastest 1.02",
// and a warning when the CPUs differ by more than 10 %. print_cpu_speeds measures and
// prints it.
inline std::string cpu_speed_line(const char* when, const std::vector<CpuSpeed>& speeds, int samples) {
  std::string line = std::string("cpu speeds ") + when + " (the same serial work pinned to each CPU, median of " +
                     std::to_string(samples) + "):";
  double lo = 0, hi = 0;
  char buf[64];
  for (const CpuSpeed& s : speeds) {
    std::snprintf(buf, sizeof buf, " CPU %d %.2f ms,", s.cpu, s.ms);
    line += buf;
    lo = lo == 0 ? s.ms : std::min(lo, s.ms);
    hi = std::max(hi, s.ms);
  }
  if (speeds.empty()) return line + " not measured (no CPU could be pinned, or the work's answer was wrong)";
  line.pop_back();
  std::snprintf(buf, sizeof buf, "; slowest / fastest %.2f", hi / lo);
  line += buf;
  if (hi / lo > 1.10) {
    line += ". WARNING: the CPUs differ by more than 10 %: a row whose two sides ran on different CPUs is off by up to that much (pin them)";
  }
  return line;
}

inline void print_cpu_speeds(const char* when, int samples = 7) {
  std::printf("%s\n", cpu_speed_line(when, cpu_speeds(samples), samples).c_str());
  std::fflush(stdout);
}

// ------------------------------------------------------------------------- progress

// Progress draws one self-overwriting line on stderr, and only when stdout is a
// terminal (so redirected or piped output, e.g. for RESULTS.md, stays clean).
class Progress {
 public:
  Progress() : enabled_(isatty(STDOUT_FILENO) == 1) {}

  // show: `status` is e.g. "3/8" (repetitions done) or "starting".
  void show(const std::string& benchmark, unsigned workers, const std::string& status) const {
    if (!enabled_) return;
    std::fprintf(stderr, "\r\033[K%s, %u worker%s: %s", benchmark.c_str(), workers, workers == 1 ? "" : "s",
                 status.c_str());
    std::fflush(stderr);
  }
  void clear() const {
    if (!enabled_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }

 private:
  bool enabled_;
};

// ------------------------------------------------------------------------- watchdog

// Watchdog exits with status 3 and a message naming the benchmark when no repetition
// has finished for `limit`: a hung scheduler becomes a clear failure, not a stuck run.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit) : limit_(limit), thread_([this] { watch(); }) {}
  ~Watchdog() {
    stop_.store(true);
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // beat: progress was made; `where` must be a string literal (it is read later).
  void beat(const char* where) {
    where_.store(where);
    last_beat_.store(Clock::now().time_since_epoch().count());
  }

 private:
  void watch() {
    while (!stop_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const Clock::time_point last{Clock::duration(last_beat_.load())};
      if (Clock::now() - last > limit_) {
        std::fflush(stdout);
        std::fprintf(stderr, "\nlantern_bench: HANG: no progress for %lld s in %s\n",
                     static_cast<long long>(limit_.count()), where_.load());
        std::fflush(stderr);
        std::_Exit(3);
      }
    }
  }

  const std::chrono::seconds limit_;
  std::atomic<bool> stop_{false};
  std::atomic<const char*> where_{"startup"};
  std::atomic<Clock::rep> last_beat_{Clock::now().time_since_epoch().count()};
  std::thread thread_;
};

// ------------------------------------------------------------------ child process

// Child: another benchmark binary started with `args`, spoken to one line at a time
// (a request on its stdin, one reply line on its stdout). For a comparison that needs
// a second build of the library (a compile-time variant), in the same run: the parent
// alternates its own repetitions with the child's. Any failure ends the parent with
// status 4 and the reason on stderr.
class Child {
 public:
  Child(const std::string& program, const std::string& path, std::vector<std::string> args) : program_(program) {
    std::signal(SIGPIPE, SIG_IGN);  // a child that died is reported by the next read
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) fail("pipe2 failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    args.insert(args.begin(), path);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int err = posix_spawn(&pid_, path.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(to_child[0]);
    close(from_child[1]);
    if (err != 0) fail("cannot start '" + path + "': " + std::strerror(err));
    to_ = fdopen(to_child[1], "w");
    from_ = fdopen(from_child[0], "r");
  }
  ~Child() {
    std::fclose(to_);  // end of input: the child exits
    std::fclose(from_);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // ask_no_reply sends one line and expects no answer (e.g. a request to quit).
  void ask_no_reply(const std::string& request) {
    std::fprintf(to_, "%s\n", request.c_str());
    std::fflush(to_);
  }
  // ask sends one request line and returns the child's reply line.
  std::string ask(const std::string& request) {
    ask_no_reply(request);
    return read_line();
  }
  std::string read_line() {
    char line[512];
    if (!std::fgets(line, sizeof line, from_)) fail("it exited or closed its output (see its message above)");
    std::string s(line);
    s.erase(s.find_last_not_of("\r\n") + 1);
    return s;
  }
  [[noreturn]] void fail(const std::string& what) const {
    std::fflush(stdout);
    std::fprintf(stderr, "\n%s: child process: %s\n", program_.c_str(), what.c_str());
    std::_Exit(4);
  }

 private:
  std::string program_;
  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
};

}  // namespace bench
