// lantern_echo_server - a TCP echo server on Lantern's asynchronous IO, observable like
// any Lantern app: --metrics serves Prometheus metrics, --trace records a trace that
// lantern-view and lantern-trace open.
//
//   lantern_echo_server --port 7000                      # io_uring sleep strategy
//   lantern_echo_server --port 7000 --sleep condvar      # the baseline
//   lantern_echo_client --port 7000 --connections 8 --seconds 5
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "echo_server.hpp"
#include "lantern/exporters/prometheus_exporter.hpp"
#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/lantern.hpp"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: lantern_echo_server [--address IP] [--port N] [--workers N] [--sleep io_uring|condvar]\n"
               "                           [--buffer BYTES] [--metrics ADDR] [--trace FILE]\n"
               "\n"
               "A TCP echo server (every byte received is sent back unchanged) built on lantern/io.hpp.\n"
               "Runs until SIGINT or SIGTERM, then closes every connection and prints what it served.\n"
               "\n"
               "  --address IP     IPv4 address to listen on (default 127.0.0.1)\n"
               "  --port N         TCP port (default 7000; 0: any free port, printed at start)\n"
               "  --workers N      worker threads (default: one per hardware thread)\n"
               "  --sleep S        how idle workers sleep: io_uring (default; they wait for wake hints and\n"
               "                   their own IO completions in one io_uring) or condvar (condition variables,\n"
               "                   completions reaped by a completer thread); see core/src/IO.md\n"
               "  --buffer BYTES   per-connection buffer (default 16384)\n"
               "  --metrics ADDR   serve Prometheus metrics on ADDR, e.g. 127.0.0.1:9464\n"
               "  --trace FILE     record a trace (level tasks) to FILE, for lantern-view and lantern-trace\n"
               "  --help           this text\n"
               "\n"
               "The first line printed is 'listening on IP:PORT ...'.\n");
}

bool parse_uint(const std::string& s, unsigned long max, unsigned long* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 10) return false;
  const unsigned long v = std::stoul(s);
  if (v > max) return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  lantern::examples::EchoServerOptions server_options;
  server_options.port = 7000;
  lantern::SchedulerOptions options;
  options.sleep_strategy = lantern::SleepStrategy::io_uring;
  std::string metrics_address, trace_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "lantern_echo_server: %s needs a value (see --help)\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    auto bad = [&](const char* name, const std::string& v, const char* want) {
      std::fprintf(stderr, "lantern_echo_server: %s takes %s, not '%s'\n", name, want, v.c_str());
      std::exit(2);
    };
    unsigned long n = 0;
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else if (arg == "--address") {
      server_options.address = value("--address");
    } else if (arg == "--port") {
      const std::string v = value("--port");
      if (!parse_uint(v, 65535, &n)) bad("--port", v, "a port from 0 to 65535");
      server_options.port = static_cast<std::uint16_t>(n);
    } else if (arg == "--workers") {
      const std::string v = value("--workers");
      if (!parse_uint(v, lantern::kMaxWorkers, &n) || n == 0) bad("--workers", v, "a number from 1 to 1024");
      options.workers = static_cast<std::uint32_t>(n);
    } else if (arg == "--sleep") {
      const std::string v = value("--sleep");
      const auto strategy = lantern::parse_strategy(v);
      if (!strategy) {
        bad("--sleep", v, "io_uring or condvar");  // exits
      } else {
        options.sleep_strategy = *strategy;
      }
    } else if (arg == "--buffer") {
      const std::string v = value("--buffer");
      if (!parse_uint(v, 64ul << 20, &n) || n == 0) bad("--buffer", v, "a size from 1 to 67108864 bytes");
      server_options.buffer_bytes = n;
    } else if (arg == "--metrics") {
      metrics_address = value("--metrics");
    } else if (arg == "--trace") {
      trace_path = value("--trace");
    } else {
      std::fprintf(stderr, "lantern_echo_server: unknown option '%s' (see --help)\n", arg.c_str());
      return 2;
    }
  }

  // Block the stop signals in every thread (workers inherit the mask); main waits for them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const unsigned workers = options.workers ? options.workers : std::max(1u, std::thread::hardware_concurrency());
  // Without --trace nothing reads events: record none (level off), keep the exact
  // counters the metrics need, and run no collector thread, so an idle server sleeps.
  lantern::instrumentation::Recorder recorder(workers, {.level = trace_path.empty() ? lantern::trace::Level::off
                                                                                   : lantern::trace::Level::tasks,
                                                       .time_tasks = true});
  options.observer = &recorder;
  lantern::instrumentation::Collector collector(recorder);
  try {
    lantern::Scheduler pool(options);
    std::unique_ptr<lantern::examples::EchoServer> server;
    try {
      server = std::make_unique<lantern::examples::EchoServer>(pool, server_options);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lantern_echo_server: %s\n", e.what());
      return 1;
    }
    std::printf("listening on %s:%u (%u workers, %s sleep strategy)\n", server_options.address.c_str(), server->port(),
                pool.worker_count(), lantern::strategy_name(pool.sleep_strategy()));
    if (!trace_path.empty()) {
      auto trace = std::make_shared<lantern::instrumentation::TraceFileSink>(
          trace_path, lantern::instrumentation::make_trace_header(pool, "lantern_echo_server"));
      if (trace->ok()) {
        collector.attach(trace);
        std::printf("trace: %s (lantern-view %s)\n", trace_path.c_str(), trace_path.c_str());
      } else {
        std::fprintf(stderr, "lantern_echo_server: not recording a trace: %s\n", trace->error().c_str());
      }
    }
    if (!trace_path.empty()) collector.start();
    std::unique_ptr<lantern::exporters::PrometheusExporter> exporter;
    if (!metrics_address.empty()) {
      try {
        exporter = std::make_unique<lantern::exporters::PrometheusExporter>(
            pool, recorder, lantern::exporters::PrometheusOptions{.address = metrics_address});
        std::printf("metrics: %s\n", exporter->url().c_str());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "lantern_echo_server: not serving metrics: %s\n", e.what());
      }
    }
    std::fflush(stdout);
    server->start();
    int sig = 0;
    sigwait(&stop_signals, &sig);
    server->stop();
    server->wait_until_open_at_most(0);
    const lantern::examples::EchoStats s = server->stats();
    server.reset();
    exporter.reset();
    collector.stop();
    std::printf("stopped (%s): %llu connections served, %llu bytes echoed, %llu ended in errors\n",
                sig == SIGINT ? "SIGINT" : "SIGTERM", static_cast<unsigned long long>(s.accepted),
                static_cast<unsigned long long>(s.bytes_echoed), static_cast<unsigned long long>(s.errors));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lantern_echo_server: %s\n", e.what());
    return 1;
  }
  return 0;
}
