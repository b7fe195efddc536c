// SPDX-License-Identifier: Apache-2.0
// server_e2e_test.cpp - a real Prometheus server scrapes a real exporter.
//
// This test process is the "app": it runs exactly kTasks submitted tasks and a chain of
// kChain dependent tasks (spawn_after, gated by a signal: kChain releases) on a scheduler
// with a Recorder at level off, then serves /metrics on a free loopback port. It starts
// Debian's `prometheus` on another free loopback port, with a temporary storage
// directory and a generated config that scrapes the app every second, polls the
// server's HTTP API until the app's series arrive, and checks what PromQL returns
// against the known workload, exactly. The workload finishes before serving starts, so
// every scrape sees the same final counts. Every wait is bounded; a failure prints the
// server's log.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "exporters/support/child_process.hpp"
#include "exporters/support/instrumented_pool.hpp"
#include "exporters/support/scrape_check.hpp"
#include "lantern/exporters/prometheus_exporter.hpp"
#include "lantern/exporters/testing/loopback_http.hpp"
#include "support/watchdog.hpp"

namespace lantern::exporters {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::ChildProcess;

constexpr std::uint32_t kWorkers = 2;
constexpr int kTasks = 1000;
constexpr int kChain = 25;

// PrometheusServer: Debian's prometheus binary on a free loopback port, scraping one
// target every second, with its storage and log in a temporary directory.
class PrometheusServer {
 public:
  PrometheusServer(const std::string& binary, const std::string& target) : dir_("lantern_prometheus_e2e_") {
    std::ofstream(dir_.path() / "prometheus.yml") << "global:\n"
                                                     "  scrape_interval: 1s\n"
                                                     "  scrape_timeout: 1s\n"
                                                     "  evaluation_interval: 1s\n"
                                                     "scrape_configs:\n"
                                                     "  - job_name: lantern\n"
                                                     "    static_configs:\n"
                                                     "      - targets: [\""
                                                  << target << "\"]\n";
    // free_port's port can be taken before the server binds it: then the server exits
    // at once, and another port is tried.
    for (int attempt = 0; attempt < 3 && !ready_; ++attempt) {
      port_ = testing::free_port();
      process_ = std::make_unique<ChildProcess>(
          std::vector<std::string>{binary, "--config.file=" + (dir_.path() / "prometheus.yml").string(),
                                   "--storage.tsdb.path=" + (dir_.path() / "data").string(),
                                   "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=info"},
          log_path());
      const auto deadline = std::chrono::steady_clock::now() + 30s;
      while (process_->running() && std::chrono::steady_clock::now() < deadline) {
        try {
          if (testing::http_get(port_, "/-/ready", 1000ms).status == 200) {
            ready_ = true;
            break;
          }
        } catch (const std::runtime_error&) {  // not listening yet
        }
        std::this_thread::sleep_for(100ms);
      }
    }
  }

  bool ready() const { return ready_; }
  std::filesystem::path log_path() const { return dir_.path() / "prometheus.log"; }
  std::string log() const { return testing::read_file(log_path()); }

  // get: the body of any API path, or what went wrong (for failure messages).
  std::string get(const std::string& path) const {
    try {
      return testing::http_get(port_, path, 5000ms).body;
    } catch (const std::runtime_error& e) {
      return e.what();
    }
  }

  // query: the result array of an instant PromQL query (throws on an HTTP or API error),
  // evaluated now or, given `at` (Unix seconds), at that time.
  json query(const std::string& promql, double at = 0) const {
    std::string target = "/api/v1/query?query=" + testing::url_encode(promql);
    if (at > 0) {
      char time[40];
      std::snprintf(time, sizeof time, "&time=%.3f", at);
      target += time;
    }
    const auto response = testing::http_get(port_, target, 5000ms);
    const json body = json::parse(response.body);
    if (response.status != 200 || body.value("status", "") != "success") {
      throw std::runtime_error("query " + promql + " failed: HTTP " + std::to_string(response.status) + " " +
                               response.body);
    }
    return body["data"]["result"];
  }

 private:
  testing::TempDir dir_;  // declared first: destroyed after the process stops
  std::unique_ptr<ChildProcess> process_;
  std::uint16_t port_ = 0;
  bool ready_ = false;
};

// scalar: the value of a one-element instant-vector result, as Prometheus prints it.
std::string scalar(const json& result) {
  if (result.size() != 1) return "<" + std::to_string(result.size()) + " series: " + result.dump() + ">";
  return result[0]["value"][1].get<std::string>();
}

std::set<std::string> label_values(const json& result, const std::string& label) {
  std::set<std::string> out;
  for (const json& series : result) out.insert(series["metric"].value(label, "<none>"));
  return out;
}

template <std::size_t N>
std::set<std::string> as_set(const std::string_view (&names)[N]) {
  return {std::begin(names), std::end(names)};
}

TEST(PrometheusServer, ScrapesExactCountsOfAKnownWorkload) {
  const std::string binary = testing::find_program("prometheus");
  ASSERT_FALSE(binary.empty()) << "the Prometheus server binary `prometheus` is not on PATH; this test needs it: "
                                  "apt-get install prometheus";

  testing::InstrumentedPool app(kWorkers, trace::Level::off);
  testing::submit_and_wait(app.pool, app.recorder, kTasks);
  testing::release_chain(app.pool, app.recorder, kChain);
  PrometheusOptions options;
  options.address = "127.0.0.1:0";
  PrometheusExporter exporter(app.pool, app.recorder, options);

  PrometheusServer server(binary, exporter.address());
  // Every wait below is bounded; this is the backstop if one of them is not.
  lantern::testing::Watchdog watchdog("Prometheus end-to-end test", 150s, [&] {
    return "prometheus log:\n" + server.log() + "\n" + app.pool.describe_state();
  });
  ASSERT_TRUE(server.ready()) << "prometheus did not become ready within 30 s (3 ports tried); its log:\n"
                              << server.log();

  // Prometheus picks up new targets after its discovery delay (about 5 s), then
  // scrapes every second. Wait until the app's series are there.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    const json up = server.query("up{job=\"lantern\"}");
    const json tasks = server.query("sum(lantern_tasks_total)");
    if (up.size() == 1 && scalar(up) == "1" && tasks.size() == 1) break;
    if (std::chrono::steady_clock::now() > deadline) {
      FAIL() << "no scrape of " << exporter.url() << " reached Prometheus within 60 s (up: " << scalar(up)
             << ", sum(lantern_tasks_total): " << scalar(tasks) << ")\ntargets: " << server.get("/api/v1/targets")
             << "\nprometheus log:\n"
             << server.log();
    }
    std::this_thread::sleep_for(250ms);
  }

  // Every task ran once; the chain's tasks were submitted from outside too, but only its
  // first (released by the signal set out here) went through a lane.
  const std::string all = std::to_string(kTasks + kChain), through_lanes = std::to_string(kTasks + 1);
  EXPECT_EQ(scalar(server.query("up{job=\"lantern\"}")), "1");
  EXPECT_EQ(scalar(server.query("sum(lantern_tasks_total)")), all);
  EXPECT_EQ(scalar(server.query("sum(lantern_lane_pops_total)")), through_lanes);
  EXPECT_EQ(scalar(server.query("lantern_tasks_submitted_total")), all);
  EXPECT_EQ(scalar(server.query("sum(lantern_tasks_spawned_total)")), "0");
  EXPECT_EQ(scalar(server.query("sum(lantern_task_duration_seconds_count)")), all);
  EXPECT_EQ(scalar(server.query("sum(lantern_ready_wait_seconds_count)")), through_lanes);
  EXPECT_EQ(scalar(server.query("lantern_ready_wait_seconds_bucket{le=\"+Inf\"}")), through_lanes);
  // Dependencies: one release per chain task, none waiting any more; no IO was done.
  EXPECT_EQ(scalar(server.query("sum(lantern_releases_total)")), std::to_string(kChain));
  EXPECT_EQ(server.query("lantern_releases_total").size(), std::size_t{kWorkers});
  EXPECT_EQ(scalar(server.query("lantern_not_ready_tasks")), "0");
  EXPECT_EQ(scalar(server.query("sum(lantern_io_submitted_total)")), "0");
  EXPECT_EQ(scalar(server.query("sum(lantern_io_completed_total)")), "0");
  EXPECT_EQ(scalar(server.query("sum(lantern_task_exceptions_total)")), "0");
  EXPECT_EQ(scalar(server.query("sum(lantern_events_recorded_total)")), "0");  // level off
  EXPECT_EQ(scalar(server.query("sum(lantern_workers)")), std::to_string(kWorkers));

  EXPECT_EQ(label_values(server.query("lantern_tasks_total"), "worker"), (std::set<std::string>{"0", "1"}));
  EXPECT_EQ(label_values(server.query("lantern_worker_state_seconds_total{worker=\"0\"}"), "state"),
            as_set(trace::kStateNames));
  EXPECT_EQ(label_values(server.query("lantern_steals_total{worker=\"1\"}"), "distance"),
            as_set(trace::kDistanceNames));
  EXPECT_EQ(server.query("lantern_steals_total").size(), std::size_t{kWorkers} * trace::kDistanceCount);

  // PromQL can use the histograms: a median task duration somewhere in the buckets.
  const double median =
      std::stod(scalar(server.query("histogram_quantile(0.5, lantern_task_duration_seconds_bucket)")));
  EXPECT_GT(median, 0);
  EXPECT_LT(median, 17.2);
  // Every worker's time is accounted for in some state.
  EXPECT_EQ(server.query("sum by (worker) (lantern_worker_state_seconds_total) > 0").size(), std::size_t{kWorkers});

  // The end of the run, as Prometheus stored it: every lantern_ series of a scrape taken
  // after the workers came to rest equals what it is made from (the Recorder's counters,
  // else the Scheduler's figures), sample by sample (tests/exporters/support/scrape_check.hpp).
  ASSERT_TRUE(testing::wait_until_all_sleep(app.pool, app.recorder)) << app.pool.describe_state();
  auto wall = [] { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); };
  std::string moved = "not read", differences;
  for (int attempt = 0; attempt < 5 && !moved.empty(); ++attempt) {
    const testing::Reading before = testing::read(app.pool, app.recorder);
    const double after_before = wall();
    // A scrape that started after `before` was read, stored.
    const auto scraped_by = std::chrono::steady_clock::now() + 10s;
    for (;;) {
      const json t = server.query("timestamp(up{job=\"lantern\"})");
      if (t.size() == 1 && std::stod(t[0]["value"][1].get<std::string>()) > after_before) break;
      ASSERT_LT(std::chrono::steady_clock::now(), scraped_by) << "Prometheus stored no new scrape within 10 s";
      std::this_thread::sleep_for(100ms);
    }
    const json series = server.query("{__name__=~\"(lantern|process)_.+\",job=\"lantern\"}", wall());
    const testing::Reading after = testing::read(app.pool, app.recorder);
    moved = testing::what_moved(before, after);
    if (!moved.empty()) continue;  // a worker moved meanwhile: the comparison would mean nothing
    testing::Exposition stored;
    for (const MetricInfo& m : kMetrics) {
      static constexpr const char* kTypes[] = {"counter", "gauge", "histogram"};
      stored.types[std::string(m.name)] = kTypes[static_cast<int>(m.type)];
    }
    for (const json& s : series) {
      testing::Sample sample;
      for (const auto& [label, value] : s["metric"].items()) {
        if (label == "__name__")
          sample.name = value.get<std::string>();
        else if (label != "job" && label != "instance")
          sample.labels[label] = value.get<std::string>();
      }
      sample.value = std::stod(s["value"][1].get<std::string>());
      stored.samples.push_back(std::move(sample));
    }
    differences = testing::diff(stored, testing::expected_samples(before, after, app.recorder.ns_per_tick() * 1e-9));
  }
  ASSERT_EQ(moved, "") << "the pool never held still across a Prometheus scrape (5 tries)";
  EXPECT_EQ(differences, "") << "what Prometheus stored at the end of the run disagrees with the Recorder:\n"
                             << differences;

  if (HasFailure()) std::fprintf(stderr, "prometheus log:\n%s\n", server.log().c_str());
}

}  // namespace
}  // namespace lantern::exporters
