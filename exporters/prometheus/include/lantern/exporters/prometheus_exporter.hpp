// SPDX-License-Identifier: Apache-2.0
// prometheus_exporter.hpp - PrometheusExporter: one object that serves a scheduler's
// metrics at http://127.0.0.1:9464/metrics for Prometheus to scrape.
//
//   lantern::instrumentation::Recorder recorder(workers, {.level = lantern::trace::Level::off,
//                                                         .time_tasks = true});  // task-duration histogram
//   lantern::Scheduler pool({.workers = workers, .observer = &recorder});
//   lantern::exporters::PrometheusExporter exporter(pool, recorder);  // serving from here on
//
// It is prometheus-cpp's pull Exposer (civetweb, PrometheusOptions::http_threads HTTP
// threads, request and keep-alive timeouts so stalled clients cannot block it) with one
// SchedulerCollectable registered: each scrape reads the published counters on the HTTP
// thread that serves it. There is no background thread of ours and nothing on a
// worker's hot path. Declare it after the Scheduler and the Recorder so that it stops
// serving before they go away.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "lantern/exporters/scheduler_collectable.hpp"

namespace prometheus {
class Exposer;
}

namespace lantern::exporters {

// kDefaultAddress: loopback only, so nothing is exposed beyond this machine unless asked
// for; port 9464, the one this project documents for Lantern's /metrics.
inline constexpr std::string_view kDefaultAddress = "127.0.0.1:9464";

struct PrometheusOptions {
  // "IP:PORT" to listen on: "127.0.0.1:9464" (the default), "0.0.0.0:9464" for every
  // IPv4 interface, "[::1]:9464" for IPv6 loopback (where civetweb has IPv6; Debian 12's
  // does not, and the constructor then throws saying so), port 0 for any free port (read
  // it back with PrometheusExporter::port()).
  std::string address = std::string(kDefaultAddress);
  std::string path = "/metrics";  // the URL path Prometheus scrapes

  // The HTTP server (civetweb) serves each connection on one of its threads, from the
  // first byte of a request to the end of the response, or of the kept-alive idle time
  // after it. These three bound what a client that connects and then stalls can hold:
  //
  // http_threads: connections served at once. A scrape waits only if this many are
  // busy, so it is the number of slow or idle connections the server absorbs without
  // delaying a scrape (100 slowloris connections: tests/exporters/hostile_clients_test).
  // The threads sleep in poll() until a connection comes: no CPU while idle, ~16 KiB of
  // buffers each.
  unsigned http_threads = 128;
  // request_timeout: a request's header must be complete this long after its first byte
  // (or after the connection opened), else the connection is dropped. A scrape request is
  // ~100 bytes in one packet, so this only ever ends clients that trickle bytes.
  std::chrono::milliseconds request_timeout{1000};
  // keep_alive_timeout: an HTTP/1.1 connection is kept open this long after a response
  // for the next request (0: close after every response). Prometheus reuses its
  // connection when it scrapes more often than this.
  std::chrono::milliseconds keep_alive_timeout{5000};
};

// ExporterError: the exporter could not start. what() names the address, says why, and
// what to do. The scheduler is not affected: it keeps running, unobserved.
class ExporterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class PrometheusExporter {
 public:
  // PrometheusExporter starts serving before it returns. Throws ExporterError when the
  // address cannot be listened on (e.g. the port is taken) and std::invalid_argument when
  // the recorder's worker count is not the scheduler's. Both must outlive the exporter.
  PrometheusExporter(const Scheduler& scheduler, const instrumentation::Recorder& recorder,
                     PrometheusOptions options = {});
  // ~PrometheusExporter stops the HTTP server (waits for a scrape in progress).
  ~PrometheusExporter();
  PrometheusExporter(const PrometheusExporter&) = delete;
  PrometheusExporter& operator=(const PrometheusExporter&) = delete;

  // port: the port actually listened on (differs from the option's when that was 0).
  std::uint16_t port() const noexcept { return port_; }
  // address: "IP:PORT" with the actual port, e.g. "127.0.0.1:9464".
  const std::string& address() const noexcept { return address_; }
  // url: where the metrics are, e.g. "http://127.0.0.1:9464/metrics".
  std::string url() const;
  // scrape_config: a ready-to-paste prometheus.yml fragment that scrapes this exporter.
  std::string scrape_config(std::string_view job_name = "lantern") const;

  // collectable: the SchedulerCollectable being served (to Collect() without HTTP).
  const SchedulerCollectable& collectable() const noexcept { return *collectable_; }

 private:
  std::shared_ptr<SchedulerCollectable> collectable_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::string path_;
  std::string address_;
  std::uint16_t port_ = 0;
};

}  // namespace lantern::exporters
