// SPDX-License-Identifier: Apache-2.0
// prometheus_exporter.hpp - PrometheusExporter: one object that serves a scheduler's
// metrics at http://127.0.0.1:9464/metrics for Prometheus to scrape.
//
//   lantern::instrumentation::Recorder recorder(workers, {.level = lantern::trace::Level::off});
//   lantern::Scheduler pool({.workers = workers, .observer = &recorder});
//   lantern::exporters::PrometheusExporter exporter(pool, recorder);  // serving from here on
//
// It serves one SchedulerCollectable on one thread of its own ("lantern-metrics"): a
// poll() loop over non-blocking sockets, so a connection that stalls, or is kept alive
// between scrapes, holds no thread, and a new scraper is always served (README.md, "No
// client can lock a scraper out"). Each scrape reads the published counters on that
// thread; nothing runs on a worker's hot path. It answers in Prometheus's text format,
// or in OpenMetrics when the scraper's Accept header asks for it (Prometheus does).
// Declare it after the Scheduler and the Recorder so that it stops serving before they
// go away. To add Lantern's metrics to an endpoint the app already serves instead, see
// register_on (scheduler_collectable.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "lantern/exporters/scheduler_collectable.hpp"

namespace lantern::exporters::detail {
class HttpServer;
}

namespace lantern::exporters {

// kDefaultAddress: loopback only, so nothing is exposed beyond this machine unless asked
// for; port 9464, the one this project documents for Lantern's /metrics.
inline constexpr std::string_view kDefaultAddress = "127.0.0.1:9464";

struct PrometheusOptions {
  // "HOST:PORT" to listen on: "127.0.0.1:9464" (the default), "0.0.0.0:9464" for every
  // IPv4 interface, "[::1]:9464" for IPv6 loopback, port 0 for any free port (read it
  // back with PrometheusExporter::port()).
  std::string address = std::string(kDefaultAddress);
  std::string path = "/metrics";  // the URL path Prometheus scrapes

  // What a client can hold. Every connection is served by the exporter's one thread,
  // which never waits for a client, so these bound memory and descriptors, not threads:
  //
  // request_timeout: a request's header must be complete this long after its first byte
  // (or after the connection opened), else the connection is closed. A scrape request
  // is ~100-300 bytes in one packet, so this only ends clients that trickle bytes.
  std::chrono::milliseconds request_timeout{1000};
  // keep_alive_timeout: an HTTP/1.1 connection is kept open this long after a response
  // for the next request (0: close after every response). Prometheus reuses its
  // connection when it scrapes more often than this.
  std::chrono::milliseconds keep_alive_timeout{5000};
  // max_connections: connections open at once (a descriptor and a few KiB each). When
  // all are taken, a new connection takes the slot of the least recently active one that
  // is not receiving a response, so no number of idle, slow or kept-alive clients keeps
  // a new scraper out.
  std::size_t max_connections = 128;
  // max_requests_per_connection: the response to the last one says "Connection: close"
  // and the connection ends: a kept-alive connection's lifetime is bounded.
  unsigned max_requests_per_connection = 1000;
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
  // The recorder times tasks while the exporter exists (SchedulerCollectable).
  PrometheusExporter(const Scheduler& scheduler, instrumentation::Recorder& recorder, PrometheusOptions options = {});
  // ~PrometheusExporter stops the HTTP server (a scrape in progress completes first).
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
  std::unique_ptr<detail::HttpServer> server_;
  std::string path_;
  std::string address_;
  std::uint16_t port_ = 0;
};

}  // namespace lantern::exporters
