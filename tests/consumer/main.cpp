// SPDX-License-Identifier: Apache-2.0
// An app built against an installed Lantern (tests/consumer_test.sh): one call observes
// it, and it checks what each installed library gave it.
//
//   consumer DIR          settings in code: a trace, /metrics on a free port, a flight
//                         recorder; scrapes itself, dumps the flight recorder, reads both
//                         traces back with the format library
//   consumer --env DIR    no settings in code: whatever the LANTERN_* variables say
//                         (the test sets LANTERN_TRACE and LANTERN_METRICS)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <lantern/exporters/prometheus_exporter.hpp>  // lantern::prometheus
#include <lantern/instrumentation/recorder.hpp>       // lantern::instrumentation
#include <lantern/lantern.hpp>                        // lantern::core
#include <lantern/observe.hpp>                        // lantern::observe
#include <lantern/trace/trace_reader.hpp>             // lantern::trace_format

#include <cstdio>
#include <cstring>
#include <string>

namespace {

long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  lantern::join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}

int failures = 0;
void check(bool ok, const std::string& what) {
  std::printf("consumer: %s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  if (!ok) ++failures;
}

// scrape: GET /metrics from 127.0.0.1:port over a plain socket.
std::string scrape(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string body;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
    const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[65536];
      for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) body.append(buffer, static_cast<std::size_t>(n));
    }
  }
  close(fd);
  return body;
}

void check_trace(const std::string& path, const char* producer) {
  const lantern::trace::TraceContents t = lantern::trace::read_trace(path);
  check(t.header_ok && t.problems.empty() && !t.events.empty() && t.header.producer == producer,
        path + " reads back: " + std::to_string(t.events.size()) + " events from " + t.header.producer);
}

}  // namespace

int main(int argc, char** argv) {
  const bool env = argc == 3 && std::strcmp(argv[1], "--env") == 0;
  if (argc != 2 && !env) {
    std::fprintf(stderr, "usage: consumer DIR | consumer --env DIR\n");
    return 2;
  }
  const std::string dir = argv[argc - 1];

  lantern::ObserveOptions options{.program = env ? "consumer-env" : "consumer"};
  if (!env) {
    options.settings = {.trace = dir + "/code.trace", .level = "full", .metrics = "127.0.0.1:0", .flight = "10s"};
  }
  auto obs = lantern::observe({.workers = 2}, options);  // the one call
  lantern::Scheduler& pool = obs.scheduler();

  const long r = pool.run([] { return fib(20); });
  check(r == 6765, "fib(20) = " + std::to_string(r) + " on " + std::to_string(pool.worker_count()) + " workers");
  lantern::TaskGroup group(pool);
  for (int i = 0; i < 100; ++i) group.spawn([] {});
  group.wait();

  check(obs.recorder() != nullptr, "a Recorder is attached");
  std::uint64_t tasks = 0;
  for (std::uint32_t w = 0; w < obs.recorder()->worker_count(); ++w) tasks += obs.recorder()->snapshot(w).tasks;
  check(tasks >= 101, "the Recorder counted " + std::to_string(tasks) + " tasks");

  check(obs.metrics() != nullptr, "serving /metrics");
  if (obs.metrics()) {
    const std::string body = scrape(obs.metrics()->port());
    check(body.find("lantern_") != std::string::npos, "a scrape of " + obs.metrics()->url() + " has lantern_ metrics");
  }
  std::string flight_path;
  if (!env) {
    std::string error;
    flight_path = obs.dump_flight("", &error);
    check(!flight_path.empty(), "dump_flight wrote " + flight_path + error);
  }

  const int status = obs.finish();
  check(status == 0 && obs.ok(), "observe reports no problem");
  check(obs.settings().trace.has_value(), "a trace was asked for");
  if (obs.settings().trace) check_trace(*obs.settings().trace, env ? "consumer-env" : "consumer");
  if (!flight_path.empty()) check_trace(flight_path, "consumer");
  return failures == 0 ? 0 : 1;
}
