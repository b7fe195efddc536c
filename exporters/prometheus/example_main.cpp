// SPDX-License-Identifier: Apache-2.0
// example_main.cpp - lantern_prometheus_example: a scheduler with a steady mixed workload
// whose metrics are served for Prometheus at http://127.0.0.1:9464/metrics.
//
// It prints the address and a scrape config to paste into prometheus.yml, then runs
// until Ctrl-C (or --seconds): every 100 ms a burst of tasks submitted from this thread
// (they wait in lanes: ready-wait), a fib(24) through join (deques and steals), and a
// pause in which workers go to sleep (sleeps, wakes, wake latency).
//
// With --app-endpoint it plays an app that already serves its own metrics with
// prometheus-cpp (its Exposer, its Registry, its own counter) and adds Lantern's to that
// one endpoint with register_on, as README.md's "On the app's own endpoint" shows.
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lantern/exporters/prometheus_exporter.hpp"
#include "lantern/exporters/scheduler_collectable.hpp"
#include "lantern/lantern.hpp"
#include "lantern/tools/program_cli.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  lantern::join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}

const std::string kUsage =
    "usage: lantern_prometheus_example [options]\n"
    "\n"
    "Serves a busy scheduler's metrics for Prometheus and prints a scrape config.\n"
    "Runs until Ctrl-C (or SIGTERM), or for --seconds.\n"
    "\n"
    "options:\n"
    "  -h, --help              this text\n"
    "  --version               print the version\n"
    "  --address HOST:PORT     where to serve /metrics (default " +
    std::string(lantern::exporters::kDefaultAddress) +
    ";\n"
    "                          port 0 takes any free port)\n"
    "  --workers N             the pool's workers (default: one per hardware thread)\n"
    "  --seconds S             stop after S seconds (default: run until interrupted)\n"
    "  --level LEVEL           the Recorder's level: off, states, tasks, full or graph\n"
    "                          (default off: no collector drains the rings here; the\n"
    "                          counters and histograms served are kept at every level)\n"
    "  --app-endpoint          serve as an app's own prometheus-cpp Exposer would, with\n"
    "                          the app's counter, and Lantern's added by register_on\n"
    "\n"
    "Exit status: 0, 2 on bad usage, 3 if the address cannot be used.\n";

}  // namespace

int main(int argc, char** argv) {
  lantern::exporters::PrometheusOptions options;
  unsigned workers = 0;
  double seconds = 0;  // 0: until interrupted
  // No collector drains the trace rings here, so by default record nothing: the
  // counters and histograms the exporter serves are kept at every level.
  lantern::trace::Level level = lantern::trace::Level::off;
  lantern::tools::Program program("lantern_prometheus_example", kUsage);
  auto& app = program.app();
  app.add_option("--address", options.address)->check(lantern::tools::address_check({.allow_port_zero = true}));
  lantern::tools::number_option(app, "--workers", &workers, 1u, 1024u);
  lantern::tools::number_option(app, "--seconds", &seconds, 0.001, 1e9, "a number of seconds above 0");
  std::string level_name = "off";
  lantern::tools::choice_option(app, "--level", &level_name, {"off", "states", "tasks", "full", "graph"});
  bool app_endpoint = false;
  app.add_flag("--app-endpoint", app_endpoint);
  if (const auto exit = program.parse(argc, argv)) return *exit;
  const char* names[] = {"off", "states", "tasks", "full", "graph"};
  for (int i = 0; i < 5; ++i)
    if (level_name == names[i]) level = static_cast<lantern::trace::Level>(i);
  if (workers == 0) workers = std::thread::hardware_concurrency();

  // The exporter has the recorder time every task (the task-duration histogram) at every level.
  lantern::instrumentation::Recorder recorder(workers, {.level = level});
  lantern::SchedulerOptions scheduler_options;
  scheduler_options.workers = workers;
  scheduler_options.observer = &recorder;
  lantern::Scheduler pool(scheduler_options);

  // Either Lantern's own endpoint, or the app's (its Exposer and Registry, declared before
  // what they serve so that they stop serving first).
  std::unique_ptr<lantern::exporters::PrometheusExporter> exporter;
  std::unique_ptr<prometheus::Exposer> app_exposer;
  prometheus::Counter* app_bursts = nullptr;
  std::shared_ptr<prometheus::Registry> app_registry;
  std::shared_ptr<lantern::exporters::SchedulerCollectable> lantern_metrics;
  if (app_endpoint) {
    try {
      app_exposer = std::make_unique<prometheus::Exposer>(options.address);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lantern_prometheus_example: cannot listen on %s: %s\n", options.address.c_str(), e.what());
      return 3;
    }
    app_registry = std::make_shared<prometheus::Registry>();
    app_bursts = &prometheus::BuildCounter()
                      .Name("example_bursts_total")
                      .Help("Bursts of tasks the example submitted (the app's own metric).")
                      .Register(*app_registry)
                      .Add({});
    app_exposer->RegisterCollectable(app_registry);
    lantern_metrics = lantern::exporters::register_on(*app_exposer, pool, recorder);  // Lantern's, same endpoint
    const std::string host = options.address.substr(0, options.address.rfind(':'));
    std::printf("serving the app's metrics and %u workers' Lantern metrics at http://%s:%d/metrics\n", workers,
                host.c_str(), app_exposer->GetListeningPorts().front());
  } else {
    try {
      exporter = std::make_unique<lantern::exporters::PrometheusExporter>(pool, recorder, options);
    } catch (const lantern::exporters::ExporterError& e) {
      std::fprintf(stderr, "lantern_prometheus_example: %s\n", e.what());
      return 3;
    }
    std::printf("serving %u workers' metrics at %s\n\nprometheus.yml:\n%s\n", workers, exporter->url().c_str(),
                exporter->scrape_config().c_str());
  }
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
    if (app_bursts) app_bursts->Increment();
    pool.run([] { return fib(24); });
    for (auto& f : burst) f.get();
    burst.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::printf("stopping\n");
  return 0;
}
