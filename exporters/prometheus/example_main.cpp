// example_main.cpp - lantern_prometheus_example: a scheduler with a steady mixed workload
// whose metrics are served for Prometheus at http://127.0.0.1:9464/metrics.
//
// It prints the address and a scrape config to paste into prometheus.yml, then runs
// until Ctrl-C (or --seconds): every 100 ms a burst of tasks submitted from this thread
// (they wait in lanes: ready-wait), a fib(24) through join (deques and steals), and a
// pause in which workers go to sleep (sleeps, wakes, wake latency).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "lantern/exporters/prometheus_exporter.hpp"
#include "lantern/lantern.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  lantern::join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: lantern_prometheus_example [--address IP:PORT] [--workers N] [--seconds S]\n"
               "                                   [--level off|states|tasks|full]\n"
               "\n"
               "Serves a busy scheduler's metrics for Prometheus (default address %s;\n"
               "port 0 takes any free port) and prints a scrape config. Runs until Ctrl-C, or\n"
               "for S seconds. Exit status: 0, 1 on a bad option, 2 if the address cannot be used.\n",
               std::string(lantern::exporters::kDefaultAddress).c_str());
}

bool parse_level(const char* text, lantern::trace::Level* level) {
  const char* names[] = {"off", "states", "tasks", "full"};
  for (int i = 0; i < 4; ++i) {
    if (std::strcmp(text, names[i]) == 0) {
      *level = static_cast<lantern::trace::Level>(i);
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  lantern::exporters::PrometheusOptions options;
  unsigned workers = 0;
  double seconds = 0;  // 0: until interrupted
  // No collector drains the trace rings here, so by default record nothing: the
  // counters and histograms the exporter serves are kept at every level.
  lantern::trace::Level level = lantern::trace::Level::off;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else if (arg == "--address" && has_value) {
      options.address = argv[++i];
    } else if (arg == "--workers" && has_value) {
      workers = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    } else if (arg == "--seconds" && has_value) {
      seconds = std::strtod(argv[++i], nullptr);
    } else if (arg == "--level" && has_value && parse_level(argv[i + 1], &level)) {
      ++i;
    } else {
      std::fprintf(stderr, "lantern_prometheus_example: bad option '%s'\n\n", arg.c_str());
      usage(stderr);
      return 1;
    }
  }
  if (workers == 0) workers = std::thread::hardware_concurrency();

  // time_tasks: the task-duration histogram at every level (two clock reads per task).
  lantern::instrumentation::Recorder recorder(workers, {.level = level, .time_tasks = true});
  lantern::SchedulerOptions scheduler_options;
  scheduler_options.workers = workers;
  scheduler_options.observer = &recorder;
  lantern::Scheduler pool(scheduler_options);

  std::unique_ptr<lantern::exporters::PrometheusExporter> exporter;
  try {
    exporter = std::make_unique<lantern::exporters::PrometheusExporter>(pool, recorder, options);
  } catch (const lantern::exporters::ExporterError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  std::printf("serving %u workers' metrics at %s\n\nprometheus.yml:\n%s\n", workers, exporter->url().c_str(),
              exporter->scrape_config().c_str());
  std::fflush(stdout);

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::vector<lantern::Future<void>> burst;
  while (!g_stop && (seconds <= 0 || std::chrono::steady_clock::now() < until)) {
    for (int t = 0; t < 200; ++t) {
      burst.push_back(pool.submit([] {
        volatile long sink = 0;
        for (int k = 0; k < 2000; ++k) sink = sink + k;
      }));
    }
    pool.run([] { return fib(24); });
    for (auto& f : burst) f.get();
    burst.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::printf("stopping\n");
  return 0;
}
