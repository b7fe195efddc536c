// SPDX-License-Identifier: Apache-2.0
// prometheus_exporter.cpp - open the listening socket, say what to do when that fails,
// and serve the collectable on it.
#include "lantern/exporters/prometheus_exporter.hpp"

#include <string>
#include <utility>

#include "exposition.hpp"
#include "http_server.hpp"
#include "listen_address.hpp"

namespace lantern::exporters {

namespace {

std::string cannot_listen_message(const std::string& address, const detail::ListenAddress& parsed,
                                  const std::string& why) {
  return "lantern Prometheus exporter: cannot listen on " + address + ": " + why +
         ". Pass another address in PrometheusOptions::address (\"127.0.0.1:0\" takes any free port), "
         "or find what holds this one with `ss -ltnp 'sport = :" +
         std::to_string(parsed.port) + "'`. The scheduler is unaffected and keeps running.";
}

}  // namespace

PrometheusExporter::PrometheusExporter(const Scheduler& scheduler, instrumentation::Recorder& recorder,
                                       PrometheusOptions options)
    : collectable_(std::make_shared<SchedulerCollectable>(scheduler, recorder)), path_(std::move(options.path)) {
  std::string why_not;
  const auto parsed = detail::parse_listen_address(options.address, &why_not);
  if (!parsed) {
    throw ExporterError("lantern Prometheus exporter: cannot listen on \"" + options.address + "\": " + why_not +
                        ". Pass HOST:PORT (e.g. 127.0.0.1:9464, localhost:9464, 0.0.0.0:9464, [::1]:9464, 127.0.0.1:0 "
                        "for any free port). The scheduler is unaffected and keeps running.");
  }
  const int fd = detail::open_listener(*parsed, &why_not);
  if (fd < 0) throw ExporterError(cannot_listen_message(options.address, *parsed, why_not));
  detail::ListenAddress actual = *parsed;
  actual.port = detail::bound_port(fd);
  port_ = actual.port;
  address_ = detail::format_listen_address(actual);

  detail::HttpServerOptions http;
  http.request_timeout = options.request_timeout;
  http.keep_alive_timeout = options.keep_alive_timeout;
  http.max_connections = options.max_connections;
  http.max_requests_per_connection = options.max_requests_per_connection;
  server_ = std::make_unique<detail::HttpServer>(
      fd, http,
      [collectable = collectable_, path = path_](const detail::HttpRequest& request) {
        detail::HttpReply reply;
        if (request.path != path) {
          reply.status = 404;
          reply.body = "Not found: this exporter serves " + path + "\n";
          return reply;
        }
        const detail::Exposition format = detail::negotiate(request.accept);
        reply.content_type = std::string(detail::content_type(format));
        reply.body = detail::serialize(collectable->Collect(), format);
        return reply;
      },
      "lantern-metrics");
}

PrometheusExporter::~PrometheusExporter() = default;

std::string PrometheusExporter::url() const { return "http://" + address_ + path_; }

std::string PrometheusExporter::scrape_config(std::string_view job_name) const {
  std::string config = "scrape_configs:\n  - job_name: \"" + std::string(job_name) + "\"\n";
  if (path_ != "/metrics") config += "    metrics_path: \"" + path_ + "\"\n";
  config += "    static_configs:\n      - targets: [\"" + address_ + "\"]\n";
  return config;
}

}  // namespace lantern::exporters
