// SPDX-License-Identifier: Apache-2.0
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
#include "lantern/tools/drop_report.hpp"
#include "lantern/tools/program_cli.hpp"

namespace {

constexpr const char* kUsage =
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
    "                   completions reaped by a completer thread); see core/io/README.md\n"
    "  --buffer BYTES   per-connection buffer (default 16384)\n"
    "  --metrics ADDR   serve Prometheus metrics on ADDR, e.g. 127.0.0.1:9464 (else $LANTERN_METRICS)\n"
    "  --trace FILE     record a trace (level tasks) to FILE, for lantern-view and lantern-trace\n"
    "  --ring N         events per worker ring (default 32768); events that do not fit are lost,\n"
    "                   counted, and reported when the server stops\n"
    "                   (else $LANTERN_TRACE)\n"
    "  --version        the version and the trace format version\n"
    "  -h, --help       this text\n"
    "\n"
    "The first line printed is 'listening on IP:PORT ...'. Options follow README.md,\n"
    "\"Command-line conventions\". A flight recorder keeps the last 30 s ($LANTERN_FLIGHT changes\n"
    "it; LANTERN_FLIGHT= turns it off): `kill -USR2 PID` dumps it to\n"
    "lantern_echo_server-flight-<UTC time>-<n>.trace ($LANTERN_FLIGHT_DIR: where;\n"
    "$LANTERN_FLIGHT_SIGNAL: another signal, or none).\n"
    "Exit status: 0 stopped by a signal, 1 could not serve or something observing it failed\n"
    "(trace, metrics port, a flight dump; on stderr) or stdout cannot be written, 2 bad options.\n";

}  // namespace

int main(int argc, char** argv) {
  lantern::examples::EchoServerOptions server_options;
  server_options.port = 7000;
  lantern::SchedulerOptions options;
  options.sleep_strategy = lantern::SleepStrategy::io_uring;
  std::string metrics_address, trace_path;
  std::size_t ring = 0;
  {
    lantern::tools::Program program("lantern_echo_server", kUsage);
    CLI::App& app = program.app();
    std::uint32_t workers = 0;
    std::string sleep_name;
    app.add_option("--address", server_options.address)->check(lantern::tools::ipv4_check());
    lantern::tools::number_option<std::uint16_t>(app, "--port", &server_options.port, 0, 65535,
                                                 "a port from 0 to 65535");
    lantern::tools::number_option(app, "--workers", &workers, 1u, lantern::kMaxWorkers);
    lantern::tools::choice_option(app, "--sleep", &sleep_name, {"io_uring", "condvar"});
    lantern::tools::number_option<std::size_t>(app, "--buffer", &server_options.buffer_bytes, 1, 64u << 20,
                                               "a size from 1 to 67108864 bytes");
    app.add_option("--metrics", metrics_address)
        ->check(lantern::tools::address_check({.default_host = "0.0.0.0", .allow_port_zero = true}));
    app.add_option("--trace", trace_path);
    lantern::tools::number_option<std::size_t>(app, "--ring", &ring, 2, std::size_t{1} << 28);
    if (const auto exit_status = program.parse(argc, argv)) return *exit_status;
    if (workers) options.workers = workers;
    if (!sleep_name.empty()) options.sleep_strategy = *lantern::parse_strategy(sleep_name);
  }
  // Observability: these options first, then LANTERN_* variables, then the defaults.
  lantern::ObserveOptions observe_options{.program = "lantern_echo_server", .counters = true};
  observe_options.defaults.flight = "30s";
  observe_options.ring_capacity = ring;
  if (!metrics_address.empty()) observe_options.settings.metrics = metrics_address;
  if (!trace_path.empty()) observe_options.settings.trace = trace_path;

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
    lantern::tools::flush_stdout();
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
    if (obs.recorder() && (obs.trace() || obs.stream() || obs.flight())) {
      std::fputs(lantern::tools::drop_report(*obs.recorder(), obs.stream(),
                                             "The figures above are the server's own counts, not read from "
                                             "events: unaffected; the trace's counts (lantern-trace stats, "
                                             "lantern-view) are lower by each worker's loss.")
                     .c_str(),
                 stdout);
    }
    if (status != 0) {
      lantern::tools::flush_stdout();
      std::fprintf(stderr, "lantern_echo_server: served, but observing it failed:\n");
      for (const std::string& p : obs.problems()) std::fprintf(stderr, "lantern_echo_server: %s\n", p.c_str());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lantern_echo_server: %s\n", e.what());
    return 1;
  }
  return 0;
}
