// SPDX-License-Identifier: Apache-2.0
// live_demo.cpp - an app that streams its scheduler live, to try lantern-view --attach
// and to test and measure live attach.
//
//   lantern_live_demo --stream :7777 &        then   lantern-view --attach :7777
//   lantern_live_demo --view                  opens the viewer itself (open_viewer)
//   LANTERN_STREAM=:7777 lantern_live_demo    the environment variable, no flag
//
// Workloads, repeated until --seconds have passed (or once with --once): fork-join
// fib(N), bursts of submitted tasks with idle gaps (workers sleep and are woken), and a
// flooded worker whose lane other workers help.
//
// It is observed through lantern::observe (lantern/observe.hpp), the path every app
// takes: its options are observe's settings, the LANTERN_* variables fill in the rest,
// and a flight recorder (the last 30 s) is dumped by `kill -USR2`.
#include <lantern/instrumentation/recorder.hpp>
#include <lantern/instrumentation/stream_server.hpp>
#include <lantern/lantern.hpp>
#include <lantern/observe.hpp>
#include <lantern/tools/drop_report.hpp>
#include <lantern/tools/program_cli.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  lantern::join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}

void spin_for(std::chrono::nanoseconds d) {
  const auto until = Clock::now() + d;
  while (Clock::now() < until) {
  }
}

void bursts(lantern::Scheduler& pool, int count) {
  for (int b = 0; b < count; ++b) {
    lantern::TaskGroup group(pool);
    for (int i = 0; i < 200; ++i) group.spawn([] { spin_for(std::chrono::microseconds(5)); });
    group.wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(15));  // idle gap: workers fall asleep
  }
}

void flood(lantern::Scheduler& pool) {
  std::atomic<long> done{0};
  const long total = 20000;
  struct Flood {
    lantern::Scheduler* pool;
    std::atomic<long>* done;
    long total;
    void operator()() const {
      spin_for(std::chrono::microseconds(2));
      if (done->fetch_add(1) + 1 < total) pool->spawn(*this);
    }
  };
  pool.submit_to_lane(0, [&] { pool.spawn(Flood{&pool, &done, total}); }).get();
  std::vector<lantern::Future<void>> lane;
  for (int i = 0; i < 50; ++i) lane.push_back(pool.submit_to_lane(0, [] { spin_for(std::chrono::microseconds(20)); }));
  for (auto& f : lane) f.get();
  while (done.load() < total) std::this_thread::yield();
}

constexpr const char* kUsage =
    "usage: lantern_live_demo [--stream HOST:PORT | --view] [--workers N] [--topology SPEC]\n"
    "                         [--level states|tasks|full|graph] [--ring EVENTS_PER_WORKER] [--client-buffer BYTES]\n"
    "                         [--fib N] [--seconds S | --once] [--wait-for-viewer] [--trace FILE]\n"
    "  --stream HOST:PORT  serve the live trace there (else LANTERN_STREAM, if set); ':PORT' is\n"
    "                      127.0.0.1, port 0 any free port\n"
    "  --view              launch lantern-view on this app (LANTERN_VIEW: its path)\n"
    "  --workers N         worker threads (default: one per hardware thread)\n"
    "  --topology SPEC     steal order from a synthetic layout, e.g. \"2 sockets x 4 cores\"\n"
    "  --level L           what is recorded: states, tasks, full (default) or graph\n"
    "  --ring N            events per worker ring (default 32768)\n"
    "  --client-buffer B   bytes queued per viewer before chunks are dropped (default 16 MiB)\n"
    "  --fib N             the fork-join workload's fib(N) (default 30)\n"
    "  --seconds S         repeat the workloads for S seconds (default 30)\n"
    "  --once              run fib(N) once and exit (what the live benchmark measures)\n"
    "  --wait-for-viewer   start the workload only once a viewer is connected\n"
    "  --trace FILE        also record a trace file\n"
    "  --version           the version and the trace format version\n"
    "  -h, --help          this text\n"
    "LANTERN_TRACE, LANTERN_LEVEL, LANTERN_METRICS, LANTERN_STREAM, LANTERN_FLIGHT (default 30s:\n"
    "`kill -USR2 PID` dumps it), LANTERN_FLIGHT_DIR and LANTERN_FLIGHT_SIGNAL apply where no\n"
    "option says otherwise.\n"
    "Options follow README.md, \"Command-line conventions\"; exit status 2: bad options,\n"
    "1: something observing the run failed (on stderr), or stdout cannot be written.\n";

}  // namespace

int main(int argc, char** argv) {
  std::string stream, trace_path;
  bool view = false, once = false, wait_for_viewer = false;
  int fib_n = 30;
  double seconds = 30;
  lantern::SchedulerOptions options;
  std::string level_name;
  std::size_t ring = 0;           // 0: the Recorder's default (32768)
  std::size_t client_buffer = 0;  // 0: the stream's default (16 MiB)
  {
    lantern::tools::Program program("lantern_live_demo", kUsage);
    CLI::App& app = program.app();
    app.add_option("--stream", stream)->check(lantern::tools::address_check({.allow_port_zero = true}));
    app.add_flag("--view", view);
    app.add_option("--topology", options.topology);
    lantern::tools::number_option<std::size_t>(app, "--client-buffer", &client_buffer, 1, std::size_t{1} << 40);
    lantern::tools::number_option<std::size_t>(app, "--ring", &ring, 2, std::size_t{1} << 28);
    lantern::tools::number_option(app, "--workers", &options.workers, 1u, lantern::kMaxWorkers);
    lantern::tools::number_option(app, "--fib", &fib_n, 0, 60);
    lantern::tools::number_option(app, "--seconds", &seconds, 0.0, 86400.0, "seconds from 0 to 86400");
    app.add_flag("--once", once);
    app.add_flag("--wait-for-viewer", wait_for_viewer);
    app.add_option("--trace", trace_path);
    lantern::tools::choice_option(app, "--level", &level_name, {"states", "tasks", "full", "graph"});
    if (const auto exit_status = program.parse(argc, argv)) return *exit_status;
  }
  lantern::ObserveOptions observe_options{.program = "lantern_live_demo",
                                          .counters = true,
                                          .view = view,
                                          .ring_capacity = ring,
                                          .stream_client_buffer_bytes = client_buffer};
  observe_options.defaults = {.level = "full", .flight = "30s"};
  if (!stream.empty()) observe_options.settings.stream = stream;
  if (!trace_path.empty()) observe_options.settings.trace = trace_path;
  if (!level_name.empty()) observe_options.settings.level = level_name;
  lantern::Observation obs = lantern::observe(options, observe_options);
  lantern::Scheduler& pool = obs.scheduler();
  const lantern::instrumentation::Recorder& recorder = *obs.recorder();
  // An explicit --stream that cannot be served is this program's purpose failing.
  if (!stream.empty() && !obs.stream()) {
    std::fprintf(stderr, "lantern_live_demo: cannot stream on %s (above: why)\n", stream.c_str());
    return 1;
  }
  if (wait_for_viewer && obs.stream()) {
    while (obs.stream()->stats().clients == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  const auto start = Clock::now();
  long rounds = 0;
  do {
    const auto t0 = Clock::now();
    const long r = pool.run([fib_n] { return fib(fib_n); });
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    std::printf("fib(%d) = %ld in %.1f ms\n", fib_n, r, ms);  // a result: stdout, as the summary below
    lantern::tools::flush_stdout();
    if (once) break;
    bursts(pool, 10);
    flood(pool);
    ++rounds;
  } while (std::chrono::duration<double>(Clock::now() - start).count() < seconds);

  const int status = obs.finish();  // shutdown, final drain, viewers receive the last chunks
  std::uint64_t produced = 0, ring_dropped = 0;
  for (std::uint32_t w = 0; w < recorder.worker_count(); ++w) {
    produced += recorder.snapshot(w).events_produced;
    ring_dropped += recorder.snapshot(w).events_dropped;
  }
  std::printf("recorder: %llu events produced, %llu dropped in the rings\n", static_cast<unsigned long long>(produced),
              static_cast<unsigned long long>(ring_dropped));
  std::fputs(lantern::tools::drop_report(recorder, obs.stream(),
                                         "The fib times above are measured by this program, not read from events: "
                                         "unaffected; the trace's and each viewer's counts are lower by each "
                                         "worker's loss.")
                 .c_str(),
             stdout);
  if (const lantern::instrumentation::StreamServer* live = obs.stream()) {
    const auto s = live->stats();
    std::printf(
        "stream: %llu events in %llu chunks encoded, %llu events (%llu chunks) dropped for slow viewers, %llu bytes "
        "sent, %llu viewers\n",
        static_cast<unsigned long long>(s.events_encoded), static_cast<unsigned long long>(s.chunks_encoded),
        static_cast<unsigned long long>(s.events_dropped), static_cast<unsigned long long>(s.chunks_dropped),
        static_cast<unsigned long long>(s.bytes_sent), static_cast<unsigned long long>(s.clients_total));
  }
  return status;
}
