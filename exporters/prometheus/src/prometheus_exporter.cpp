// SPDX-License-Identifier: Apache-2.0
// prometheus_exporter.cpp - start prometheus-cpp's Exposer; turn its failures into
// messages that say what to do.
#include "lantern/exporters/prometheus_exporter.hpp"

#include <CivetServer.h>
#include <prometheus/exposer.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "lantern/thread_signals.hpp"
#include "listen_address.hpp"

namespace lantern::exporters {

namespace {

std::string cannot_listen_message(const std::string& address, const detail::ListenAddress& parsed,
                                  const std::string& library_error) {
  std::string why = detail::why_cannot_listen(parsed);
  if (why.empty()) why = library_error;  // the port came free in between: say what civetweb said
  return "lantern Prometheus exporter: cannot listen on " + address + ": " + why +
         ". Pass another address in PrometheusOptions::address (\"127.0.0.1:0\" takes any free port), "
         "or find what holds this one with `ss -ltnp 'sport = :" +
         std::to_string(parsed.port) + "'`. The scheduler is unaffected and keeps running.";
}

// civetweb_options: what the Exposer passes to civetweb. Every connection holds one of
// civetweb's threads until it is done; see PrometheusOptions for why these values.
std::vector<std::string> civetweb_options(const PrometheusOptions& o, const std::string& address) {
  const auto ms = [](std::chrono::milliseconds d) { return std::to_string(std::max<std::int64_t>(0, d.count())); };
  return {
      "listening_ports",
      address,
      "num_threads",
      std::to_string(std::max(1u, o.http_threads)),
      // The header of a request must be complete this long after its first byte, else the
      // connection is dropped: what ends a slowloris client's hold on a thread.
      "request_timeout_ms",
      ms(o.request_timeout),
      // Kept alive, a connection's response carries no "Connection: close" and the next
      // request reuses it. Off (civetweb's default), civetweb closes after every response
      // without announcing it, which clients such as wrk count as read errors.
      "enable_keep_alive",
      o.keep_alive_timeout.count() > 0 ? "yes" : "no",
      "keep_alive_timeout_ms",
      ms(o.keep_alive_timeout),
      // Connections waiting for a thread: queued rather than refused during a burst.
      "listen_backlog",
      "512",
  };
}

// naming_callbacks: civetweb calls init_thread first thing in each thread it starts
// (listener, workers, and the rest), after naming it "civetweb-<what>": the name becomes
// Lantern's, so top -H, gdb and perf tell the exporter's threads from the app's.
const CivetCallbacks* naming_callbacks() {
  static const CivetCallbacks callbacks = [] {
    CivetCallbacks c;
    c.init_thread = [](const mg_context*, int) -> void* {
      pthread_setname_np(pthread_self(), "lantern-metrics");
      return nullptr;
    };
    return c;
  }();
  return &callbacks;
}

}  // namespace

PrometheusExporter::PrometheusExporter(const Scheduler& scheduler, const instrumentation::Recorder& recorder,
                                       PrometheusOptions options)
    : collectable_(std::make_shared<SchedulerCollectable>(scheduler, recorder)), path_(std::move(options.path)) {
  // Parse first: civetweb reads some malformed addresses as something else (a bare
  // "localhost:9464" fails late and vaguely), so refuse them here with the expected form.
  std::string why_not;
  const auto parsed = detail::parse_listen_address(options.address, &why_not);
  if (!parsed) {
    throw ExporterError("lantern Prometheus exporter: cannot listen on \"" + options.address + "\": " + why_not +
                        ". Pass HOST:PORT (e.g. 127.0.0.1:9464, localhost:9464, 0.0.0.0:9464, 127.0.0.1:0 for any "
                        "free port). The scheduler is unaffected and keeps running.");
  }
  if (parsed->ipv6 && detail::civetweb_has_ipv6() == false) {
    throw ExporterError("lantern Prometheus exporter: cannot listen on " + options.address +
                        ": this system's civetweb (the HTTP server under prometheus-cpp) was built without IPv6. "
                        "Listen on an IPv4 address instead (127.0.0.1:9464, or 0.0.0.0:9464 for every interface). "
                        "The scheduler is unaffected and keeps running.");
  }
  try {
    // civetweb gets the address as parsed (":9464" becomes "0.0.0.0:9464"). Its threads,
    // started here, inherit the mask: they never take the application's signals.
    const ApplicationSignalsBlocked blocked;
    exposer_ = std::make_unique<prometheus::Exposer>(civetweb_options(options, detail::format_listen_address(*parsed)),
                                                     naming_callbacks());
  } catch (const std::exception& e) {  // CivetException: "null context ... problem binding to port"
    throw ExporterError(cannot_listen_message(options.address, *parsed, e.what()));
  }
  const std::vector<int> ports = exposer_->GetListeningPorts();
  detail::ListenAddress actual = *parsed;
  if (!ports.empty()) actual.port = static_cast<std::uint16_t>(ports.front());
  port_ = actual.port;
  address_ = detail::format_listen_address(actual);
  exposer_->RegisterCollectable(collectable_, path_);
}

PrometheusExporter::~PrometheusExporter() {
  // civetweb's listener thread sees the stop request only when its poll() returns: up to
  // 2 s later when nobody connects. Connections to our own port while the Exposer stops
  // make it return at once, so an application's shutdown takes milliseconds.
  const auto listening = detail::parse_listen_address(address_);
  std::atomic<bool> stopped{false};
  std::thread nudger = start_thread("lantern-metrics", [&] {
    while (listening && !stopped.load(std::memory_order_relaxed)) {
      detail::poke(*listening);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  exposer_.reset();
  stopped.store(true, std::memory_order_relaxed);
  nudger.join();
}

std::string PrometheusExporter::url() const { return "http://" + address_ + path_; }

std::string PrometheusExporter::scrape_config(std::string_view job_name) const {
  std::string config = "scrape_configs:\n  - job_name: \"" + std::string(job_name) + "\"\n";
  if (path_ != "/metrics") config += "    metrics_path: \"" + path_ + "\"\n";
  config += "    static_configs:\n      - targets: [\"" + address_ + "\"]\n";
  return config;
}

}  // namespace lantern::exporters
