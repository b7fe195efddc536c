// SPDX-License-Identifier: Apache-2.0
// harness.hpp - the plumbing every benchmark program here shares, and nothing about any
// scheduler: a clock, statistics, answer checks, the results table (as text, Markdown or
// JSON), the repetition loop, a progress line, a hang watchdog, the process's CPU mask
// and each CPU's speed, and a child process to alternate repetitions with.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
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

// Target is what a row must achieve: the ratio Lantern/TBB at most `limit`, the ratio
// within [low, limit] (a prediction against a measurement: off by at most so much either
// way), Lantern's own figure at most `limit`, or nothing (the row is for information).
struct Target {
  enum Kind { ratio_at_most, ratio_between, lantern_at_most, none };
  Kind kind = none;
  double limit = 0;
  double low = 0;  // ratio_between only

  static Target ratio(double limit) { return {ratio_at_most, limit}; }
  static Target between(double low, double high) { return {ratio_between, high, low}; }
  static Target lantern(double limit) { return {lantern_at_most, limit}; }
  static Target info() { return {none, 0}; }

  bool met(double lantern, double tbb) const {
    switch (kind) {
      case ratio_at_most: return lantern / tbb <= limit;
      case ratio_between: return lantern / tbb >= low && lantern / tbb <= limit;
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
  std::string unit;  // what the figures measure, e.g. "ns/join" (lower is better)
  double lantern = 0;
  double tbb = 0;
  Target target;
  std::string note;  // printed under the table when not empty
  // values: the figures the note tells of, by name, for the JSON output (print_json),
  // e.g. {"rounds_apart", 0}; a test or a script reads these, never the note's words.
  std::vector<std::pair<std::string, double>> values;
  // peer: who the second figure (`tbb`) is from; its column's header, and in the JSON
  // the figure's key, lowercase ("tbb", "rayon").
  std::string peer = "TBB";
  // subject: what the first figure (`lantern`) is, named as `peer` names the second
  // ("Lantern"; lantern_scale_bench's "predicted" against its peer "measured").
  std::string subject = "Lantern";
};

// json_key: a figure's JSON key, its name in lowercase.
inline std::string json_key(std::string key) {
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}
// peer_key: a row's peer figure's JSON key, its peer's name in lowercase.
inline std::string peer_key(const Row& row) { return json_key(row.peer); }
// subject_key: a row's first figure's JSON key ("lantern" unless Row::subject says else).
inline std::string subject_key(const Row& row) { return json_key(row.subject); }
// ratio_header: the ratio column's header, "L/TBB" (Lantern's rows) or "predicted/measured".
inline std::string ratio_header(const Row& row) {
  return (row.subject == "Lantern" ? std::string("L") : row.subject) + "/" + row.peer;
}

inline std::string format_number(double v) {
  char buf[32];
  if (std::isnan(v)) return "n/a";
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
  return buf;
}

inline std::string format_ratio(double r) {
  if (std::isnan(r)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", r);
  return buf;
}

inline std::string format_target(const Row& row) {
  switch (row.target.kind) {
    case Target::ratio_at_most: return "ratio <= " + format_number(row.target.limit);
    case Target::ratio_between:
      return format_number(row.target.low) + " <= ratio <= " + format_number(row.target.limit);
    case Target::lantern_at_most: return "Lantern <= " + format_number(row.target.limit) + " " + row.unit;
    case Target::none: return "-";
  }
  return "-";
}

inline std::string format_verdict(const Row& row) {
  if (row.target.kind == Target::none) return "info";
  return row.target.met(row.lantern, row.tbb) ? "PASS" : "MISS";
}

// print_table prints the rows aligned for a terminal, or as a Markdown table; the figures'
// columns are named after the first row's subject and peer (a program prints one peer's
// rows at a time).
inline void print_table(const std::vector<Row>& rows, bool markdown) {
  const Row names = rows.empty() ? Row{} : rows.front();
  const std::vector<std::string> header = {"benchmark", "workers",           "unit",   names.subject,
                                           names.peer,  ratio_header(names), "target", "result"};
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    cells.push_back({r.benchmark, std::to_string(r.workers), r.unit, format_number(r.lantern), format_number(r.tbb),
                     format_ratio(r.lantern / r.tbb), format_target(r), format_verdict(r)});
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
    std::printf("%s%s (%u workers): %s\n", markdown ? "- " : "note: ", r.benchmark.c_str(), r.workers, r.note.c_str());
  }
  std::fflush(stdout);
}

namespace detail {
inline std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}
inline std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
}  // namespace detail

// print_json prints the rows as JSON Lines, one object a row: benchmark, workers, unit,
// the first figure under subject_key (lantern, predicted), the peer's figure under
// peer_key (tbb, rayon, measured), ratio (null where a figure is
// not a number), target, result (PASS, MISS or info), note, peer (its name), and values
// (Row::values). lantern_rayon_peer (bench/rayon) prints its rows in this form too.
inline void print_json(const std::vector<Row>& rows) {
  using detail::json_number;
  using detail::json_string;
  for (const Row& r : rows) {
    std::string line;  // appended piece by piece: "literal" + std::string&& trips g++ 12's -Wrestrict
    auto field = [&line](const char* name, const std::string& json) {
      line += line.empty() ? "{\"" : ",\"";
      line += name;
      line += "\":";
      line += json;
    };
    field("benchmark", json_string(r.benchmark));
    field("workers", std::to_string(r.workers));
    field("unit", json_string(r.unit));
    field(subject_key(r).c_str(), json_number(r.lantern));
    field(peer_key(r).c_str(), json_number(r.tbb));
    field("ratio", json_number(r.lantern / r.tbb));
    field("target", json_string(format_target(r)));
    field("result", json_string(format_verdict(r)));
    field("note", json_string(r.note));
    field("peer", json_string(r.peer));
    line += ",\"values\":{";
    for (std::size_t i = 0; i < r.values.size(); ++i) {
      if (i > 0) line += ",";
      line += json_string(r.values[i].first);
      line += ":";
      line += json_number(r.values[i].second);
    }
    std::printf("%s}}\n", line.c_str());
  }
  std::fflush(stdout);
}

// Output: how a program prints its report. --markdown prints the table as Markdown (for
// bench/RESULTS.md); --json prints only the rows on stdout (print_json), and every line
// meant for a reader (the start line, the CPU speeds, the summary) goes to stderr.
struct Output {
  bool markdown = false;
  bool json = false;

  std::FILE* text() const { return json ? stderr : stdout; }
  void rows(const std::vector<Row>& rows) const {
    if (json) {
      print_json(rows);
    } else {
      print_table(rows, markdown);
    }
  }
};

// missed_targets: how many rows with a target missed it, and how many have one.
inline std::pair<int, int> missed_targets(const std::vector<Row>& rows) {
  int misses = 0, targets = 0;
  for (const Row& r : rows) {
    if (r.target.kind == Target::none) continue;
    ++targets;
    if (!r.target.met(r.lantern, r.tbb)) ++misses;
  }
  return {misses, targets};
}

// ------------------------------------------------------------------ CPU speed check

// On a VM the host can run one vCPU slower than another for minutes at a time (seen on
// a 2-vCPU host: the same serial loop 50 % slower on CPU 0 than on CPU 1).
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
[[gnu::noinline]] inline long long speed_kernel(int n) { return n < 2 ? n : speed_kernel(n - 1) + speed_kernel(n - 2); }
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
    line +=
        ". WARNING: the CPUs differ by more than 10 %: a row whose two sides ran on different CPUs is off by up to "
        "that much (pin them)";
  }
  return line;
}

inline void print_cpu_speeds(const char* when, std::FILE* to = stdout, int samples = 7) {
  std::fprintf(to, "%s\n", cpu_speed_line(when, cpu_speeds(samples), samples).c_str());
  std::fflush(to);
}

// report: the end of a program's output: the rows (Output::rows), then, for a reader,
// the CPU speeds at the end (cpu_speeds: where the program printed them at its start)
// and how many targets were missed.
inline void report(const Output& out, const std::vector<Row>& rows, bool cpu_speeds) {
  std::fprintf(out.text(), "\n");
  std::fflush(out.text());
  out.rows(rows);
  const auto [misses, targets] = missed_targets(rows);
  std::fprintf(out.text(), "\n");
  if (cpu_speeds) {
    print_cpu_speeds("at the end", out.text());
    std::fprintf(out.text(), "\n");
  }
  std::fprintf(out.text(), "%d of %d targets missed; every answer was checked and right.\n", misses, targets);
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

// ------------------------------------------------------------------ repetitions

// Context: what a benchmark needs besides its own state: the program's configuration,
// where to report progress, and where its rows go.
template <class Config>
struct Context {
  const Config& config;
  const Progress& progress;
  Watchdog& watchdog;
  std::vector<Row>& rows;
  const char* benchmark = "";  // a string literal (the watchdog keeps the pointer)
  unsigned workers = 0;

  // step reports progress (`done` of `total` steps) to the progress line and watchdog.
  void step(int done, int total) const {
    progress.show(benchmark, workers, std::to_string(done) + "/" + std::to_string(total));
    watchdog.beat(benchmark);
  }
};

// rotate runs one warm-up and `reps` measured repetitions of every variant, with `pause`
// before each (both pools start asleep); in repetition r the order starts at variant
// r % n, so each variant takes each place in the order equally often (two variants:
// A B, B A, A B, ...). rep(v) runs variant v once and returns its figure; samples[v][r]
// is variant v's figure in repetition r + 1. With `raw`, every figure, in run order, also
// goes to stderr.
template <class Config>
std::vector<std::vector<double>> rotate(const Context<Config>& ctx, std::size_t variants,
                                        const std::function<double(std::size_t)>& rep, int reps,
                                        std::chrono::milliseconds pause = std::chrono::milliseconds(10),
                                        bool raw = false) {
  std::vector<std::vector<double>> samples(variants);
  const int total = reps + 1;
  for (int r = 0; r < total; ++r) {
    if (r % 10 == 0 || total < 100) ctx.step(r, total);
    for (std::size_t k = 0; k < variants; ++k) {
      const std::size_t v = (static_cast<std::size_t>(r) + k) % variants;
      settle(pause);
      const double figure = rep(v);
      if (r > 0) samples[v].push_back(figure);
      if (raw) {
        std::fprintf(stderr, "raw %s rep %d%s variant %zu: %.9f\n", ctx.benchmark, r, r == 0 ? " (warm-up)" : "", v,
                     figure);
      }
    }
  }
  return samples;
}

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
