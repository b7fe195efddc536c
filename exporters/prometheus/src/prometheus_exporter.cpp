// prometheus_exporter.cpp - start prometheus-cpp's Exposer; turn its failures into
// messages that say what to do.
#include "lantern/exporters/prometheus_exporter.hpp"

#include <prometheus/exposer.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <string>
#include <thread>
#include <utility>

#include "listen_address.hpp"

namespace lantern::exporters {

namespace {

std::string cannot_listen_message(const std::string& address, const detail::ListenAddress& parsed,
                                  const std::string& library_error) {
  std::string why = detail::why_cannot_listen(parsed);
  if (why.empty()) why = library_error;  // the port came free in between: say what civetweb said
  return "lantern Prometheus exporter: cannot listen on " + address + ": " + why +
         ". Pass another address in PrometheusOptions::address (\"127.0.0.1:0\" takes any free port), "
         "or find what holds this one with `ss -ltnp 'sport = :" + std::to_string(parsed.port) +
         "'`. The scheduler is unaffected and keeps running.";
}

}  // namespace

PrometheusExporter::PrometheusExporter(const Scheduler& scheduler, const instrumentation::Recorder& recorder,
                                       PrometheusOptions options)
    : collectable_(std::make_shared<SchedulerCollectable>(scheduler, recorder)), path_(std::move(options.path)) {
  // Parse first: civetweb reads some malformed addresses as something else (a bare
  // "localhost:9464" fails late and vaguely), so refuse them here with the expected form.
  const auto parsed = detail::parse_listen_address(options.address);
  if (!parsed) {
    throw ExporterError("lantern Prometheus exporter: cannot listen on \"" + options.address +
                        "\": it is not of the form IP:PORT with a numeric IP (e.g. 127.0.0.1:9464, [::1]:9464, "
                        "127.0.0.1:0 for any free port). The scheduler is unaffected and keeps running.");
  }
  try {
    // civetweb gets the address as parsed (":9464" becomes "0.0.0.0:9464").
    exposer_ = std::make_unique<prometheus::Exposer>(detail::format_listen_address(*parsed), /*num_threads=*/2);
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
  std::thread nudger([&] {
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
