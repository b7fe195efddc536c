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

[[noreturn]] void usage(int code) {
  std::fprintf(code ? stderr : stdout,
               "usage: lantern_live_demo [--stream HOST:PORT | --view] [--workers N] [--topology SPEC]\n"
               "                         [--level states|tasks|full] [--ring EVENTS_PER_WORKER] [--client-buffer BYTES]\n"
               "                         [--fib N] [--seconds S | --once] [--wait-for-viewer] [--trace FILE]\n"
               "  --stream HOST:PORT  serve the live trace there (else LANTERN_STREAM, if set)\n"
               "  --view              launch lantern-view on this app (LANTERN_VIEW: its path)\n"
               "  --once              run fib(N) once and exit (what the live benchmark measures)\n"
               "  --wait-for-viewer   start the workload only once a viewer is connected\n"
               "LANTERN_TRACE, LANTERN_LEVEL, LANTERN_METRICS, LANTERN_STREAM, LANTERN_FLIGHT (default 30s:\n"
               "`kill -USR2 PID` dumps it) and LANTERN_FLIGHT_DIR apply where no option says otherwise.\n");
  std::exit(code);
}

}  // namespace

int main(int argc, char** argv) {
  lantern::ObserveOptions observe_options{.program = "lantern_live_demo", .counters = true};
  observe_options.defaults = {.level = "full", .flight = "30s"};
  bool once = false, wait_for_viewer = false;
  int fib_n = 30;
  double seconds = 30;
  lantern::SchedulerOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) usage(2);
      return std::string(argv[++i]);
    };
    if (arg == "--stream") observe_options.settings.stream = value();
    else if (arg == "--view") observe_options.view = true;
    else if (arg == "--topology") options.topology = value();
    else if (arg == "--client-buffer") observe_options.stream_client_buffer_bytes = static_cast<std::size_t>(std::atol(value().c_str()));
    else if (arg == "--ring") observe_options.ring_capacity = static_cast<std::size_t>(std::atol(value().c_str()));
    else if (arg == "--workers") options.workers = static_cast<std::uint32_t>(std::atoi(value().c_str()));
    else if (arg == "--fib") fib_n = std::atoi(value().c_str());
    else if (arg == "--seconds") seconds = std::atof(value().c_str());
    else if (arg == "--once") once = true;
    else if (arg == "--wait-for-viewer") wait_for_viewer = true;
    else if (arg == "--trace") observe_options.settings.trace = value();
    else if (arg == "--level") observe_options.settings.level = value();
    else if (arg == "--help") usage(0);
    else usage(2);
  }
  lantern::Observation obs = lantern::observe(options, observe_options);
  lantern::Scheduler& pool = obs.scheduler();
  const lantern::instrumentation::Recorder& recorder = *obs.recorder();
  // An explicit --stream that cannot be served is this program's purpose failing.
  if (observe_options.settings.stream && !obs.stream()) return 1;
  if (wait_for_viewer && obs.stream()) {
    while (obs.stream()->stats().clients == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  const auto start = Clock::now();
  long rounds = 0;
  do {
    const auto t0 = Clock::now();
    const long r = pool.run([fib_n] { return fib(fib_n); });
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    std::fprintf(stderr, "fib(%d) = %ld in %.1f ms\n", fib_n, r, ms);
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
  if (const lantern::instrumentation::StreamServer* live = obs.stream()) {
    const auto s = live->stats();
    std::printf("stream: %llu events in %llu chunks encoded, %llu events (%llu chunks) dropped for slow viewers, %llu bytes sent, %llu viewers\n",
                static_cast<unsigned long long>(s.events_encoded), static_cast<unsigned long long>(s.chunks_encoded),
                static_cast<unsigned long long>(s.events_dropped), static_cast<unsigned long long>(s.chunks_dropped),
                static_cast<unsigned long long>(s.bytes_sent), static_cast<unsigned long long>(s.clients_total));
  }
  return status;
}
