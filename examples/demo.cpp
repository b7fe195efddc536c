// SPDX-License-Identifier: Apache-2.0
// demo.cpp - Lantern's multi-workload demo.
//
// Runs six workloads on one scheduler and prints, per worker, what the scheduler did:
//   1. fork-join: fib(32) through join (deque pushes, steals between workers);
//   2. bursts: batches of tasks submitted from this (outside) thread with idle gaps, so
//      workers fall asleep between bursts and are woken for the next one;
//   3. a flooded worker: worker 0 floods itself with self-spawning work while tasks
//      wait in its lane; the other workers help that lane (fairness-aware helping);
//   4. pipelines: three-stage chains (parse -> render -> compress) built with
//      spawn_after, so each stage is released by the one before it;
//   5. IO: the echo server of examples/echo_server on the same pool, fed by a load
//      client over loopback; with the io_uring sleep strategy (the default here) idle
//      workers wait for wake hints and their own socket completions in one io_uring;
//   6. ordered commits: items decoded in parallel, each committed after its own decode
//      and after the commit before it (spawn_after), so the commits form one chain: a
//      workload limited by its span, which no number of workers makes faster.
// After the run it reads its trace back and prints, per workload, what
// lantern::analysis::scalability() finds in that workload's stretch of the trace: work,
// span, parallelism and the predicted 8-, 64- and 1024-worker times, and for a workload
// whose span limits it, which task label holds the span and what making it faster gives.
// Tasks of each kind name themselves with a label (lantern::label_task), so the trace,
// lantern-trace stats and the viewer show "burst", "flood", "parse"... instead of bare
// task ids. The figures come from lantern::instrumentation's Recorder attached to the
// scheduler. Everything observable - trace, metrics, flight recorder, live stream, viewer -
// is started by one lantern::observe() call, the path any app takes (README, "Observe
// your own app"), so the LANTERN_* environment variables work here too.
#include <lantern/analysis/analysis.hpp>
#include <lantern/analysis/scalability.hpp>
#include <lantern/exporters/prometheus_exporter.hpp>
#include <lantern/instrumentation/recorder.hpp>
#include <lantern/instrumentation/stream_server.hpp>
#include <lantern/instrumentation/trace_sinks.hpp>
#include <lantern/lantern.hpp>
#include <lantern/observe.hpp>
#include <lantern/tools/drop_report.hpp>
#include <lantern/tools/program_cli.hpp>
#include <lantern/tools/topology_check.hpp>
#include <lantern/trace/trace_reader.hpp>

#include "echo_server/echo_load.hpp"
#include "echo_server/echo_server.hpp"

#include <signal.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

// SIGINT and SIGTERM stop the demo early, alike: the workload running finishes, the rest
// are skipped, and the run ends as usual (trace written, figures printed). The handler
// only stores the signal; SA_RESETHAND makes a second one act as if there were none.
std::atomic<int> g_stop_signal{0};
extern "C" void on_stop_signal(int signo) { g_stop_signal.store(signo, std::memory_order_relaxed); }
void stop_on_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (const int signo : {SIGINT, SIGTERM}) sigaction(signo, &action, nullptr);
}
bool stop_requested() { return g_stop_signal.load(std::memory_order_relaxed) != 0; }

// print_figures: the recorder's exact per-worker counters and histograms.
void print_figures(const lantern::instrumentation::Recorder& recorder, const lantern::Topology& topology) {
  using lantern::trace::LatencyHistogram;
  std::printf("\nper-worker figures (exact counters kept by lantern::instrumentation::Recorder)\n");
  std::printf("%-6s %8s %6s %6s %6s %6s %6s %6s %7s %6s %6s %8s | %7s %7s %7s %8s\n", "worker", "tasks", "smt", "l2",
              "llc", "numa", "remote", "helps", "failed", "sleeps", "wakes", "releases", "active", "idle", "sleepy",
              "sleeping");
  std::printf("%-6s %8s %41s %30s | %s\n", "", "", "steals by distance, failed steal rounds", "",
              "time share: from the worker's start to its stop");
  LatencyHistogram ready, duration, wake;
  std::uint64_t io_wakes = 0;
  for (std::uint32_t i = 0; i < recorder.worker_count(); ++i) {
    const auto w = recorder.snapshot(i);
    std::uint64_t total = 0;
    for (auto t : w.state_ticks) total += t;
    auto pct = [&](int s) {
      return total ? 100.0 * static_cast<double>(w.state_ticks[s]) / static_cast<double>(total) : 0.0;
    };
    std::printf(
        "%-6u %8llu %6llu %6llu %6llu %6llu %6llu %6llu %7llu %6llu %6llu %8llu | %6.1f%% %6.1f%% %6.1f%% %7.1f%%\n", i,
        static_cast<unsigned long long>(w.tasks), static_cast<unsigned long long>(w.steals[0]),
        static_cast<unsigned long long>(w.steals[1]), static_cast<unsigned long long>(w.steals[2]),
        static_cast<unsigned long long>(w.steals[3]), static_cast<unsigned long long>(w.steals[4]),
        static_cast<unsigned long long>(w.helps), static_cast<unsigned long long>(w.steal_rounds_failed),
        static_cast<unsigned long long>(w.sleeps), static_cast<unsigned long long>(w.wakes_received),
        static_cast<unsigned long long>(w.releases), pct(0), pct(1), pct(2), pct(3));
    ready.merge(recorder.counters(i).ready_wait.snapshot());
    duration.merge(recorder.counters(i).task_duration.snapshot());
    wake.merge(recorder.counters(i).wake_latency.snapshot());
    io_wakes += w.io_wakes;
  }
  // Printed as lantern-trace stats prints a figure (analysis::format_percentiles), so the
  // two show the same text for the same run; an empty one says why, in the Recorder's terms.
  auto line = [](const char* name, const LatencyHistogram& h, const char* why_empty) {
    lantern::analysis::Percentiles p = lantern::analysis::percentiles(h);
    if (p.count == 0) p.no_samples = why_empty;
    std::printf("%-22s %s\n", name, lantern::analysis::format_percentiles(p).c_str());
  };
  constexpr const char* kNoneHappened = "none happened in this run (the Recorder counts them at every level)";
  line("ready wait (lanes)", ready, kNoneHappened);
  line("task duration", duration,
       recorder.level() < lantern::trace::info(lantern::EventId::task_begin).level
           ? "the Recorder times tasks at level tasks and above (or with RecorderOptions::time_tasks)"
           : "no task ended in this run");
  line("wake latency", wake, "no worker was woken by another thread in this run (IO wakes have no latency)");
  std::printf("%-22s (IO wakes left out: %llu; they have no waker)\n", "", static_cast<unsigned long long>(io_wakes));
  std::printf("topology: %s\n", topology.describe().c_str());
}

// Window: one workload's stretch of the run, in the recording's clock (lantern::ticks_now).
struct Window {
  std::string name;
  std::uint64_t from = 0, to = 0;
  bool forks_with_join = false;  // its span depends on level graph (join's unstolen halves)
};

// read_back: the trace file just written, folded by the one analysis (as lantern-trace
// reads it); false, with *error, when it cannot be read at all.
bool read_back(const std::string& path, lantern::analysis::Analysis& analysis, std::string* error) {
  lantern::trace::TraceReader reader = lantern::trace::TraceReader::open(path);
  reader.read_header();
  analysis.set_header(reader.header(), reader.header_ok());
  std::size_t problems_seen = 0;
  while (reader.next_chunk()) {
    for (; problems_seen < reader.problems().size(); ++problems_seen)  // a chunk skipped: its tasks' ends are lost
      if (!reader.problems()[problems_seen].warning()) analysis.lose_record();
    analysis.add(reader.chunk());
  }
  analysis.finish();
  if (reader.io_failed() || (!reader.header_ok() && analysis.empty())) {
    *error = reader.problems().empty() ? "nothing could be read" : lantern::trace::describe(reader.problems().front());
    return false;
  }
  return true;
}

// print_scalability: per workload, scalability() over its window of the trace: work,
// span, parallelism and the simulated time on 8, 64 and 1024 workers; a workload whose
// parallelism is below 8 gets one line on what limits it, from its critical path's top
// label and that label's what-if. Figures the analysis could not compute say why.
// ring_capacity: the Recorder's events per worker ring, for the hint when events were dropped.
void print_scalability(const std::string& path, const std::vector<Window>& windows, std::size_t ring_capacity) {
  using lantern::analysis::format_duration_ns;
  lantern::analysis::Analysis analysis;
  std::string error;
  std::printf(
      "\nscalability per workload (lantern::analysis::scalability on %s; the whole run: lantern-trace scale %s)\n",
      path.c_str(), path.c_str());
  if (!read_back(path, analysis, &error)) {
    std::printf("  not computed: the trace cannot be read back: %s\n", error.c_str());
    return;
  }
  constexpr std::uint32_t kPredicted[] = {8, 64, 1024};
  lantern::analysis::ScaleOptions options;
  options.workers.assign(std::begin(kPredicted), std::end(kPredicted));
  options.top_labels = 1;  // the label that holds the most span, with its what-if
  options.what_if_workers = {kPredicted[0]};
  std::printf("%-16s %10s %10s %10s %11s %10s %10s %10s\n", "workload", "measured", "work", "span", "parallelism",
              "T_8", "T_64", "T_1024");
  std::vector<std::string> limits;
  for (const Window& w : windows) {
    const lantern::analysis::Scalability s = lantern::analysis::scalability(analysis, options, w.from, w.to);
    if (!s.work_ns || !s.span_ns || !s.parallelism) {
      const std::string why = s.why_not({"work", "span", "parallelism"});
      std::printf("%-16s not computed: %s\n", w.name.c_str(), why.c_str());
      if (why.find("dropped") != std::string::npos)
        std::printf("%-16s (this run's rings hold %zu events a worker: --ring %zu records with larger ones)\n", "",
                    ring_capacity, std::min(ring_capacity * 16, std::size_t{1} << 28));
      continue;
    }
    std::string predicted[std::size(kPredicted)];
    for (std::size_t i = 0; i < std::size(kPredicted); ++i) {
      predicted[i] = "not computed";
      for (const auto& point : s.curve)
        if (point.workers == kPredicted[i] && point.simulated_ns)
          predicted[i] = format_duration_ns(*point.simulated_ns);
    }
    std::printf("%-16s %10s %10s %10s %11.2f %10s %10s %10s\n", w.name.c_str(),
                s.measured_ns ? format_duration_ns(*s.measured_ns).c_str() : "-",
                format_duration_ns(*s.work_ns).c_str(), format_duration_ns(*s.span_ns).c_str(), *s.parallelism,
                predicted[0].c_str(), predicted[1].c_str(), predicted[2].c_str());
    if (*s.parallelism >= kPredicted[0] || s.labels.empty()) continue;
    // Below level graph a join's unstolen half is folded into its parent, which makes a
    // fork-join span look longer than it is: say so instead of blaming the span.
    const bool folded = std::any_of(s.notes.begin(), s.notes.end(),
                                    [](const std::string& note) { return note.find("folded") != std::string::npos; });
    if (folded && w.forks_with_join) {
      limits.push_back(w.name +
                       ": recorded below level graph, where join's unstolen halves are folded into their parent "
                       "(the span is longer than the program's): --level graph records its whole task graph");
      continue;
    }
    const lantern::analysis::LabelFigure& top = s.labels.front();
    // Parallelism P bounds the speedup over one worker by P on any number of workers;
    // whether more workers than the run had still help depends on how close P is to them.
    const std::string ran_on = *s.parallelism < 1.25 * s.measured_workers
                                   ? ", and the " + std::to_string(s.measured_workers) + " it ran on get most of that"
                                   : std::string();
    char bound[240];
    std::snprintf(bound, sizeof bound,
                  "limited by its span (parallelism %.2f: no number of workers runs it more than %.2fx faster than "
                  "one%s)",
                  *s.parallelism, *s.parallelism, ran_on.c_str());
    const std::string share = std::to_string(static_cast<int>(100 * top.span_share + 0.5)) + " % of the span";
    std::string limit = w.name + ": " + bound + "; ";
    // A span made long mostly by preemption is the machine's doing, not the code's.
    const auto preempted = std::find_if(s.notes.begin(), s.notes.end(), [](const std::string& note) {
      return note.rfind("the critical path's tasks waited ", 0) == 0;
    });
    if (preempted != s.notes.end() && s.path_preempted_ns >= 0.5 * *s.span_ns) {
      char low[80];
      std::snprintf(low, sizeof low, ": parallelism %.2f understates it: ", *s.parallelism);
      limits.push_back(w.name + low + *preempted);
      continue;
    }
    if (top.label == 0) {  // unlabelled tasks (join's halves name none): nothing to point at
      limits.push_back(limit + share +
                       " is in tasks without a label: lantern::label_task in them says which code holds it");
      continue;
    }
    limit += share + " is '" + top.name + "' tasks: make '" + top.name + "' faster or let its tasks overlap";
    if (top.what_if && !top.what_if_ns.empty() && !top.baseline_ns.empty()) {
      char gain[160];
      std::snprintf(gain, sizeof gain, " (%g %% faster: %s -> %s on %u workers)", top.what_if->percent,
                    format_duration_ns(top.baseline_ns.front()).c_str(),
                    format_duration_ns(top.what_if_ns.front()).c_str(), top.what_if_workers.front());
      limit += gain;
    }
    limits.push_back(limit);
  }
  for (const std::string& line : limits) std::printf("%s\n", line.c_str());
}

long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  lantern::join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}

void spin_for(std::chrono::nanoseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// sibling_viewer: lantern-view as built beside this demo (build/<dir>/viewer/), if there.
std::string sibling_viewer(const char* argv0) {
  char self[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string(argv0);
  dir = dir.substr(0, dir.find_last_of('/'));
  const std::string candidate = dir + "/../viewer/lantern-view";
  return access(candidate.c_str(), X_OK) == 0 ? candidate : std::string();
}

constexpr const char* kUsage =
    "usage: lantern_demo [--workers N] [--topology SPEC] [--trace FILE | --no-trace]\n"
    "                    [--level off|states|tasks|full|graph] [--metrics ADDR | --no-metrics]\n"
    "                    [--view | --no-view] [--linger SECONDS] [--sleep io_uring|condvar] [--quick]\n"
    "\n"
    "Runs six workloads (fork-join fib, bursts of submitted tasks with idle gaps,\n"
    "one flooded worker, three-stage pipelines of dependent tasks, a TCP echo server\n"
    "under load on loopback, ordered commits: a chain limited by its span) and prints\n"
    "per-worker tasks, steals by topology distance, helps, failed steal rounds,\n"
    "sleeps, wakes, releases and time share per worker state. Tasks carry labels\n"
    "(fib, burst, flood, lane task, parse, render, compress, decode, commit) in the\n"
    "trace. With a trace, it then prints per workload its work, span, parallelism and\n"
    "predicted 8-, 64- and 1024-worker times (lantern-trace scale's analysis), and what\n"
    "limits a workload whose span does.\n"
    "\n"
    "  --workers N      worker threads (default: one per hardware thread)\n"
    "  --topology SPEC  steal order from a synthetic layout, e.g. \"2 sockets x 4 cores x 2 threads\"\n"
    "                   (default: this machine's, read by hwloc)\n"
    "  --trace FILE     record the run to FILE (default: $LANTERN_TRACE, else lantern-demo.trace)\n"
    "  --no-trace       do not record a trace\n"
    "  --level LEVEL    what the trace records: off, states, tasks (default), full, graph\n"
    "  --ring N         events per worker ring (default 32768); events that do not fit are lost,\n"
    "                   counted, and reported at exit with the figures they affect\n"
    "  --metrics ADDR   serve Prometheus metrics on ADDR (default: $LANTERN_METRICS, else 127.0.0.1:9464;\n"
    "                   port 0: any free port)\n"
    "  --no-metrics     do not serve metrics\n"
    "  --linger SECONDS after the workloads, keep running light bursts for this long, so\n"
    "                   Prometheus can scrape and a viewer can attach (default 0)\n"
    "  --view           open the live viewer (lantern-view) on this run (default: when $DISPLAY is set)\n"
    "  --no-view        do not open it; LANTERN_STREAM=HOST:PORT still streams for lantern-view --attach\n"
    "  --sleep S        how idle workers sleep: io_uring (default; hints and IO completions in\n"
    "                   one io_uring) or condvar (condition variables); see core/io/README.md\n"
    "  --quick          smaller workloads (a few hundred milliseconds)\n"
    "  --version        the version and the trace format version\n"
    "  -h, --help       this text\n"
    "\n"
    "Ctrl-C (SIGINT) or SIGTERM stops it early: the workload running finishes, the rest are\n"
    "skipped, and the trace and the figures are written as at a normal end (exit 0); a\n"
    "second one ends it at once.\n"
    "The flight recorder keeps the last 30 s ($LANTERN_FLIGHT changes it): `kill -USR2 PID`\n"
    "dumps it to lantern_demo-flight-<UTC time>-<n>.trace ($LANTERN_FLIGHT_DIR: where;\n"
    "$LANTERN_FLIGHT_SIGNAL: another signal, or none).\n"
    "LANTERN_STREAM=HOST:PORT streams the run for lantern-view --attach. Options given here win\n"
    "over the environment.\n"
    "\n"
    "Options follow README.md, \"Command-line conventions\". Exit status: 0 ok, 1 a failure\n"
    "while running, including anything observing the run (the trace could not be written, the\n"
    "metrics port was taken...; on stderr) and a report that cannot be written to stdout,\n"
    "2 bad options.\n";

}  // namespace

int main(int argc, char** argv) {
  lantern::SchedulerOptions options;
  options.sleep_strategy = lantern::SleepStrategy::io_uring;  // falls back to condvar, with a note, where unavailable
  bool quick = false;
  // Observability: the command line decides first, then LANTERN_* variables, then these
  // defaults (lantern/observe.hpp).
  lantern::ObserveOptions observe_options{.program = "lantern_demo", .counters = true};
  observe_options.defaults = {
      .trace = "lantern-demo.trace", .metrics = std::string(lantern::exporters::kDefaultAddress), .flight = "30s"};
  std::string trace_path, metrics_address;
  double linger_seconds = 0;
  const char* display = std::getenv("DISPLAY");
  bool view = display != nullptr && *display != '\0';
  {
    lantern::tools::Program program("lantern_demo", kUsage);
    CLI::App& app = program.app();
    std::uint32_t workers = 0;
    std::string level_name, sleep_name;
    bool no_trace = false, no_metrics = false, no_view = false;
    lantern::tools::number_option(app, "--workers", &workers, 1u, lantern::kMaxWorkers);
    // Read at parse time: a bad spec is bad usage, before anything starts.
    app.add_option("--topology", options.topology)->check(lantern::tools::topology_check());
    CLI::Option* trace_option = app.add_option("--trace", trace_path);
    app.add_flag("--no-trace", no_trace);
    lantern::tools::choice_option(app, "--level", &level_name, {"off", "states", "tasks", "full", "graph"});
    CLI::Option* metrics_option =
        app.add_option("--metrics", metrics_address)
            ->check(lantern::tools::address_check({.default_host = "0.0.0.0", .allow_port_zero = true}));
    app.add_flag("--no-metrics", no_metrics);
    app.add_flag("--view", view);
    app.add_flag("--no-view", no_view);
    lantern::tools::number_option(app, "--linger", &linger_seconds, 0.0, 86400.0, "seconds from 0 to 86400");
    lantern::tools::number_option<std::size_t>(app, "--ring", &observe_options.ring_capacity, 2, std::size_t{1} << 28);
    lantern::tools::choice_option(app, "--sleep", &sleep_name, {"io_uring", "condvar"});
    app.add_flag("--quick", quick);
    if (const auto exit_status = program.parse(argc, argv)) return *exit_status;
    if (workers) options.workers = workers;
    if (trace_option->count()) observe_options.settings.trace = trace_path;
    if (no_trace) observe_options.settings.trace = "";
    if (metrics_option->count()) observe_options.settings.metrics = metrics_address;
    if (no_metrics) observe_options.settings.metrics = "";
    if (no_view) view = false;
    if (!level_name.empty()) observe_options.settings.level = level_name;
    if (!sleep_name.empty()) options.sleep_strategy = *lantern::parse_strategy(sleep_name);
  }
  // Task labels: interned once here, named by each task as it starts (a hook call, no lock).
  const lantern::Label kFib = lantern::label("fib"), kBurst = lantern::label("burst"), kFlood = lantern::label("flood"),
                       kLaneTask = lantern::label("lane task"), kParse = lantern::label("parse"),
                       kRender = lantern::label("render"), kCompress = lantern::label("compress"),
                       kDecode = lantern::label("decode"), kCommit = lantern::label("commit");
  observe_options.view = view;
  if (view) observe_options.viewer = sibling_viewer(argv[0]);

  try {
    // The one call: the scheduler, its Recorder, and every sink asked for.
    lantern::Observation obs = lantern::observe(options, observe_options);
    lantern::Scheduler& pool = obs.scheduler();
    const lantern::instrumentation::Recorder& recorder = *obs.recorder();
    std::printf("lantern demo: %u workers, %s sleep strategy; topology: %s\n", pool.worker_count(),
                lantern::strategy_name(pool.sleep_strategy()), pool.topology().describe().c_str());
    for (const std::string& w : pool.topology_warnings()) std::printf("  note: %s\n", w.c_str());
    if (obs.stream() && view) {
      std::printf("viewer: lantern-view attached on %s\n", obs.stream()->address().c_str());
      if (linger_seconds == 0) linger_seconds = 10;  // give the viewer something to watch
    } else if (!obs.stream()) {
      std::printf(
          "viewer: no display; to watch live, run with LANTERN_STREAM=127.0.0.1:7777 and attach\n"
          "        xvfb-run or a desktop: lantern-view --attach 127.0.0.1:7777; replay later: lantern-view %s\n",
          obs.trace() ? obs.trace()->path().c_str() : "FILE");
    }
    if (lantern::exporters::PrometheusExporter* exporter = obs.metrics()) {
      std::printf("metrics: %s\n  scrape config for prometheus.yml:\n", exporter->url().c_str());
      std::string config = exporter->scrape_config("lantern_demo");
      for (std::size_t at = 0; at < config.size();) {  // indent each line
        const std::size_t nl = config.find('\n', at);
        std::printf("    %s\n", config.substr(at, nl - at).c_str());
        at = nl == std::string::npos ? config.size() : nl + 1;
      }
    }

    stop_on_signals();
    // Each workload's stretch of the run, for the scalability figures at the end.
    std::vector<Window> windows;
    auto begin_window = [&windows](const char* name) { windows.push_back({name, lantern::ticks_now(), 0}); };
    auto end_window = [&windows] { windows.back().to = lantern::ticks_now(); };
    // 1. fork-join
    const int n = quick ? 27 : 32;
    begin_window("1. fork-join");
    windows.back().forks_with_join = true;
    auto t0 = std::chrono::steady_clock::now();
    const long r = pool.run([n, kFib] {
      lantern::label_task(kFib);  // the root task only: labelling each of fib's calls would record millions
      return fib(n);
    });
    auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    end_window();
    std::printf("1. fork-join   fib(%d) = %ld through join, %.1f ms\n", n, r, ms);

    if (!stop_requested()) {
      // 2. bursts of submitted work with idle gaps
      const int bursts = quick ? 5 : 20;
      std::atomic<long> burst_tasks{0};
      begin_window("2. bursts");
      t0 = std::chrono::steady_clock::now();
      for (int b = 0; b < bursts; ++b) {
        lantern::TaskGroup group(pool);
        for (int i = 0; i < 200; ++i) {
          group.spawn([&] {
            lantern::label_task(kBurst);
            spin_for(std::chrono::microseconds(5));
            burst_tasks.fetch_add(1, std::memory_order_relaxed);
          });
        }
        group.wait();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // idle gap: workers fall asleep
      }
      end_window();
      ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::printf("2. bursts      %d bursts of 200 submitted tasks with 20 ms idle gaps, %ld tasks, %.1f ms\n", bursts,
                  burst_tasks.load(), ms);
    }
    if (!stop_requested()) {
      // 3. one flooded worker: worker 0 floods itself while tasks wait in its lane
      const long flood_total = quick ? 5000 : 40000;
      std::atomic<long> flooded{0};
      // Two chains of self-spawning tasks; each task claims the next task's place before
      // spawning it, so exactly flood_total tasks run, whichever chain gets there first.
      // (Counting after the work instead lets both chains pass the check at flood_total - 1.)
      constexpr long kChains = 2;
      std::atomic<long> claimed{kChains};
      struct Flood {
        lantern::Scheduler* pool;
        std::atomic<long>* done;
        std::atomic<long>* claimed;
        long total;
        lantern::Label label;
        void operator()() const {
          lantern::label_task(label);
          spin_for(std::chrono::microseconds(2));
          done->fetch_add(1);
          if (claimed->fetch_add(1) < total) pool->spawn(*this);
        }
      };
      // The lane tasks are submitted from inside the pool, right after the flood starts:
      // on a small machine the flooded workers would otherwise keep this thread from
      // submitting them at all, and the demo would measure the OS, not the scheduler.
      // Each lane task records how long it waited between its submission and its start.
      constexpr int kLaneTasks = 50;
      std::array<std::atomic<long>, kLaneTasks> waited_ns{};
      begin_window("3. flood");
      t0 = std::chrono::steady_clock::now();
      std::vector<lantern::Future<void>> lane_tasks = pool.run([&] {
        for (long i = 0; i < kChains; ++i) pool.spawn(Flood{&pool, &flooded, &claimed, flood_total, kFlood});
        std::vector<lantern::Future<void>> futures;
        for (int i = 0; i < kLaneTasks; ++i) {
          const auto submitted = std::chrono::steady_clock::now();
          futures.push_back(pool.submit_to_lane(0, [&waited_ns, i, submitted, kLaneTask] {
            lantern::label_task(kLaneTask);
            waited_ns[i] =
                std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - submitted)
                    .count();
          }));
        }
        return futures;
      });
      for (auto& f : lane_tasks) f.get();
      long worst_wait_ns = 0;
      for (auto& w : waited_ns) worst_wait_ns = std::max(worst_wait_ns, w.load());
      while (flooded.load() < flood_total) std::this_thread::yield();
      end_window();
      ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::printf(
          "3. flood       %ld self-spawning tasks in %.1f ms; %d tasks in worker 0's lane waited at most %.2f ms\n",
          flooded.load(), ms, kLaneTasks, static_cast<double>(worst_wait_ns) / 1e6);
    }
    if (!stop_requested()) {
      // 4. pipelines: each item is parsed, then rendered, then compressed; each stage is
      // spawned after the one before (spawn_after), so its release is what starts it.
      const int items = quick ? 50 : 200;
      begin_window("4. pipelines");
      t0 = std::chrono::steady_clock::now();
      {
        std::vector<lantern::TaskHandle> last;
        last.reserve(static_cast<std::size_t>(items));
        for (int i = 0; i < items; ++i) {
          auto stage = [](lantern::Label label, std::chrono::microseconds work) {
            return [label, work] {
              lantern::label_task(label);
              spin_for(work);
            };
          };
          lantern::TaskHandle parse = pool.spawn_handle(stage(kParse, std::chrono::microseconds(30)));
          lantern::TaskHandle render = pool.spawn_after({parse}, stage(kRender, std::chrono::microseconds(60)));
          last.push_back(pool.spawn_after({render}, stage(kCompress, std::chrono::microseconds(20))));
        }
        for (auto& h : last) h.wait();
      }
      end_window();
      ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::printf("4. pipelines   %d items through parse -> render -> compress (spawn_after), %.1f ms\n", items, ms);
    }
    if (!stop_requested()) {
      // 5. IO: an echo server on this pool and a load client on this thread.
      {
        begin_window("5. echo");
        lantern::examples::EchoServer server(pool);
        server.start();
        lantern::examples::LoadOptions load;
        load.port = server.port();
        load.connections = 8;
        load.seconds = 0;
        load.messages_per_connection = quick ? 200 : 2000;
        load.min_bytes = 64;
        load.max_bytes = 4096;
        const lantern::examples::LoadResult res = lantern::examples::run_load(load);
        end_window();
        std::printf(
            "5. echo        %llu requests over %d loopback connections (%s sleep strategy): %.0f/s, "
            "p99 %.0f us, %s\n",
            static_cast<unsigned long long>(res.requests), load.connections,
            lantern::strategy_name(pool.sleep_strategy()), res.requests_per_second(), res.p99_us,
            res.mismatches == 0 && res.errors == 0
                ? "every byte came back unchanged"
                : ("PROBLEM: " + std::to_string(res.mismatches) + " bytes differ, " + std::to_string(res.errors) +
                   " connections failed " + res.first_error)
                      .c_str());
      }
    }
    if (!stop_requested()) {
      // 6. ordered commits: each item is decoded (in parallel), then committed after its
      // own decode and after the commit before it, as a log written in order is: the
      // commits are one chain, the span, and the decodes fill the time beside it. More
      // workers cannot make it faster than the chain; a faster commit can.
      const int items = quick ? 50 : 200;
      begin_window("6. ordered");
      t0 = std::chrono::steady_clock::now();
      {
        auto stage = [](lantern::Label label, std::chrono::microseconds work) {
          return [label, work] {
            lantern::label_task(label);
            spin_for(work);
          };
        };
        lantern::TaskHandle commit;
        for (int i = 0; i < items; ++i) {
          lantern::TaskHandle decode = pool.spawn_handle(stage(kDecode, std::chrono::microseconds(20)));
          commit = i == 0 ? pool.spawn_after({decode}, stage(kCommit, std::chrono::microseconds(100)))
                          : pool.spawn_after({decode, commit}, stage(kCommit, std::chrono::microseconds(100)));
        }
        commit.wait();
      }
      end_window();
      ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::printf("6. ordered     %d items decoded in parallel, committed in order (a chain of spawn_after), %.1f ms\n",
                  items, ms);
    }
    if (linger_seconds > 0 && !stop_requested()) {
      std::printf("7. lingering   %.0f s of light bursts (metrics stay up; Ctrl-C to stop early)\n", linger_seconds);
      lantern::tools::flush_stdout();
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(linger_seconds);
      while (std::chrono::steady_clock::now() < until && !stop_requested()) {
        lantern::TaskGroup group(pool);
        for (int i = 0; i < 50; ++i) {
          group.spawn([kBurst] {
            lantern::label_task(kBurst);
            spin_for(std::chrono::microseconds(20));
          });
        }
        group.wait();
        pool.run([kFib] {
          lantern::label_task(kFib);
          return fib(18);
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    if (const int signo = g_stop_signal.load(std::memory_order_relaxed)) {
      std::printf("stopped early by %s: the workloads after the one running were skipped\n",
                  signo == SIGINT ? "SIGINT" : "SIGTERM");
    }
    // Stops serving metrics, shuts the pool down, drains the last events into the trace
    // and the stream; non-zero when anything observing the run failed.
    const int status = obs.finish();
    print_figures(recorder, pool.topology());
    if (const lantern::instrumentation::TraceFileSink* trace = obs.trace(); trace && trace->ok()) {
      const auto stats = trace->stats();
      const std::string& path = trace->path();
      std::printf("\ntrace: %s (%llu events, %llu bytes, level %s)\n", path.c_str(),
                  static_cast<unsigned long long>(stats.events), static_cast<unsigned long long>(stats.bytes),
                  std::string(lantern::trace::kLevelNames[static_cast<int>(recorder.level())]).c_str());
      std::printf("  inspect:  lantern-trace info %s\n", path.c_str());
      std::printf("            lantern-trace stats %s   (task durations per label)\n", path.c_str());
      std::printf("  export:   lantern-trace export --chrome %s -o lantern-demo.json   (open in ui.perfetto.dev)\n",
                  path.c_str());
      std::printf("  scale:    lantern-trace scale %s   (work, span, critical path, speedup on more workers)\n",
                  path.c_str());
      std::printf("  (lantern-trace is built at build/release/instrumentation/tools/lantern_trace/lantern-trace)\n");
    }
    if (obs.trace() || obs.stream() || obs.flight()) {
      std::fputs(lantern::tools::drop_report(
                     recorder, obs.stream(),
                     "The per-worker figures above are the Recorder's exact counters and include the lost events; "
                     "the trace's own counts (lantern-trace stats, lantern-view, the Chrome export) are lower by "
                     "each worker's loss.")
                     .c_str(),
                 stdout);
    }
    if (const lantern::instrumentation::TraceFileSink* trace = obs.trace(); trace && trace->ok())
      print_scalability(trace->path(), windows, recorder.ring_capacity());
    if (status != 0) {
      lantern::tools::flush_stdout();
      std::fprintf(stderr, "lantern_demo: the workloads ran, but observing them failed:\n");
      for (const std::string& p : obs.problems()) std::fprintf(stderr, "lantern_demo: %s\n", p.c_str());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lantern_demo: %s\n", e.what());
    return 1;
  }
  return 0;
}
