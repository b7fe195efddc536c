// lantern_echo_server - a TCP echo server on Lantern's asynchronous IO, observable like
// any Lantern app through lantern::observe: --metrics serves Prometheus metrics, --trace
// records a trace that lantern-view and lantern-trace open, the flight recorder is dumped
// by SIGUSR2, and the LANTERN_* environment variables work as in any observed app.
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
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/lantern.hpp"
#include "lantern/observe.hpp"

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
               "  --metrics ADDR   serve Prometheus metrics on ADDR, e.g. 127.0.0.1:9464 (else $LANTERN_METRICS)\n"
               "  --trace FILE     record a trace (level tasks) to FILE, for lantern-view and lantern-trace\n"
               "                   (else $LANTERN_TRACE)\n"
               "  --help           this text\n"
               "\n"
               "The first line printed is 'listening on IP:PORT ...'. A flight recorder keeps the last 30 s\n"
               "($LANTERN_FLIGHT changes it; LANTERN_FLIGHT= turns it off): `kill -USR2 PID` dumps it to\n"
               "lantern_echo_server-flight-<UTC time>-<n>.trace ($LANTERN_FLIGHT_DIR: where). Exit status 1:\n"
               "something observing the server failed (trace, metrics port...), as said on stderr.\n");
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
  // Observability: these options first, then LANTERN_* variables, then the defaults.
  lantern::ObserveOptions observe_options{.program = "lantern_echo_server", .counters = true};
  observe_options.defaults.flight = "30s";
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
      observe_options.settings.metrics = value("--metrics");
    } else if (arg == "--trace") {
      observe_options.settings.trace = value("--trace");
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

  try {
    // The one call: the scheduler, its Recorder, and every sink asked for. With nothing
    // that reads events (LANTERN_FLIGHT= and no trace or stream) it records none and runs
    // no collector thread; the counters behind /metrics are exact either way.
    lantern::Observation obs = lantern::observe(options, observe_options);
    lantern::Scheduler& pool = obs.scheduler();
    std::unique_ptr<lantern::examples::EchoServer> server;
    try {
      server = std::make_unique<lantern::examples::EchoServer>(pool, server_options);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lantern_echo_server: %s\n", e.what());
      return 1;
    }
    std::printf("listening on %s:%u (%u workers, %s sleep strategy)\n", server_options.address.c_str(), server->port(),
                pool.worker_count(), lantern::strategy_name(pool.sleep_strategy()));
    if (const auto* trace = obs.trace()) {
      std::printf("trace: %s (lantern-view %s)\n", trace->path().c_str(), trace->path().c_str());
    }
    if (const auto* exporter = obs.metrics()) std::printf("metrics: %s\n", exporter->url().c_str());
    std::fflush(stdout);
    server->start();
    int sig = 0;
    sigwait(&stop_signals, &sig);
    server->stop();
    server->wait_until_open_at_most(0);
    const lantern::examples::EchoStats s = server->stats();
    server.reset();
    const int status = obs.finish();
    std::printf("stopped (%s): %llu connections served, %llu bytes echoed, %llu ended in errors\n",
                sig == SIGINT ? "SIGINT" : "SIGTERM", static_cast<unsigned long long>(s.accepted),
                static_cast<unsigned long long>(s.bytes_echoed), static_cast<unsigned long long>(s.errors));
    if (status != 0) {
      std::fflush(stdout);
      std::fprintf(stderr, "lantern_echo_server: served, but observing it failed:\n");
      for (const std::string& p : obs.problems()) std::fprintf(stderr, "  %s\n", p.c_str());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lantern_echo_server: %s\n", e.what());
    return 1;
  }
  return 0;
}
