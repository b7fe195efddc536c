// SPDX-License-Identifier: Apache-2.0
// http_test.cpp - PrometheusExporter over real loopback HTTP: a scrape serves every
// family with exact counts, promtool accepts it, a taken port is a clear error after
// which the scheduler still runs tasks, and the exporter stops serving when destroyed.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "exporters/support/child_process.hpp"
#include "exporters/support/exposition.hpp"
#include "exporters/support/instrumented_pool.hpp"
#include "exporters/support/recorder_reading.hpp"
#include "exporters/support/scrape_check.hpp"
#include "lantern/exporters/metric_table.hpp"
#include "lantern/exporters/prometheus_exporter.hpp"
#include "lantern/exporters/testing/loopback_http.hpp"
#include "support/watchdog.hpp"

namespace lantern::exporters {
namespace {

using testing::http_get;
using testing::InstrumentedPool;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

PrometheusOptions any_free_port() {
  PrometheusOptions o;
  o.address = "127.0.0.1:0";
  return o;
}

TEST(PrometheusExporter, DefaultAddressIsLoopbackPort9464) {
  EXPECT_EQ(kDefaultAddress, "127.0.0.1:9464");
  EXPECT_EQ(PrometheusOptions{}.address, "127.0.0.1:9464");
  EXPECT_EQ(PrometheusOptions{}.path, "/metrics");
}

TEST(PrometheusExporter, ScrapeServesEveryFamilyWithExactCounts) {
  lantern::testing::Watchdog watchdog("ScrapeServesEveryFamilyWithExactCounts", std::chrono::seconds(60));
  InstrumentedPool p(2, trace::Level::off);
  PrometheusExporter exporter(p.pool, p.recorder, any_free_port());
  ASSERT_NE(exporter.port(), 0);
  testing::submit_and_wait(p.pool, p.recorder, 250);

  const auto response = http_get(exporter.port(), "/metrics");
  ASSERT_EQ(response.status, 200) << response.body;
  const testing::Exposition scrape = testing::parse_exposition(response.body);
  static constexpr const char* kTypes[] = {"counter", "gauge", "histogram"};
  for (const MetricInfo& m : kMetrics) {
    const std::string name(m.name);
    ASSERT_TRUE(scrape.types.count(name)) << name << " missing from the scrape";
    EXPECT_EQ(scrape.types.at(name), kTypes[static_cast<int>(m.type)]) << name;
  }
  EXPECT_EQ(scrape.sum("lantern_tasks_total"), 250);
  EXPECT_EQ(scrape.sum("lantern_lane_pops_total"), 250);
  EXPECT_EQ(scrape.sum("lantern_tasks_submitted_total"), 250);
  EXPECT_EQ(scrape.sum("lantern_task_duration_seconds_count"), 250);
  EXPECT_EQ(scrape.sum("lantern_ready_wait_seconds_bucket", {{"le", "+Inf"}}), 250);
  EXPECT_EQ(scrape.sum("lantern_workers"), 2);
  EXPECT_EQ(scrape.label_values("lantern_tasks_total", "worker"), (std::set<std::string>{"0", "1"}));

  EXPECT_EQ(http_get(exporter.port(), "/elsewhere").status, 404);
}

// Accept: application/openmetrics-text (what Prometheus sends first) gets OpenMetrics:
// its content type, counters typed by their family name without _total and sampled with
// it, units, `# EOF` at the end; and the same samples, value for value, as the text format.
TEST(PrometheusExporter, OpenMetricsIsServedWhenAskedFor) {
  lantern::testing::Watchdog watchdog("OpenMetricsIsServedWhenAskedFor", std::chrono::seconds(60));
  InstrumentedPool p(2, trace::Level::off);
  PrometheusExporter exporter(p.pool, p.recorder, any_free_port());
  testing::submit_and_wait(p.pool, p.recorder, 100);
  ASSERT_TRUE(testing::wait_until_all_sleep(p.pool, p.recorder)) << p.pool.describe_state();

  const std::string accept =
      "Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
      "text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n";
  const auto om = http_get(exporter.port(), "/metrics", std::chrono::milliseconds(5000), "127.0.0.1", accept);
  const auto text = http_get(exporter.port(), "/metrics");
  ASSERT_EQ(om.status, 200);
  EXPECT_TRUE(contains(om.head, "Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8")) << om.head;
  EXPECT_TRUE(contains(text.head, "Content-Type: text/plain; version=0.0.4")) << text.head;
  ASSERT_GE(om.body.size(), 6u);
  EXPECT_EQ(om.body.substr(om.body.size() - 6), "# EOF\n");
  EXPECT_FALSE(contains(text.body, "# EOF"));
  EXPECT_TRUE(contains(om.body, "# TYPE lantern_tasks counter\n")) << om.body.substr(0, 2000);
  EXPECT_TRUE(contains(om.body, "\nlantern_tasks_total{worker=\"0\"} "));
  EXPECT_TRUE(contains(om.body, "# UNIT lantern_ready_wait_seconds seconds\n"));
  EXPECT_TRUE(contains(om.body, "# UNIT process_resident_memory_bytes bytes\n"));
  EXPECT_TRUE(contains(om.body, "lantern_ready_wait_seconds_bucket{le=\"+Inf\"} "));

  // The same samples: at rest nothing but the process figures and the time in the
  // current state (every worker asleep) moves between the two scrapes.
  const testing::Exposition a = testing::parse_exposition(om.body), b = testing::parse_exposition(text.body);
  std::map<std::string, double> om_samples, text_samples;
  auto collect = [](const testing::Exposition& e, std::map<std::string, double>& out) {
    for (const testing::Sample& s : e.samples) {
      if (s.name.rfind("process_", 0) == 0 || s.name == "lantern_worker_state_seconds_total") continue;
      std::map<std::string, std::string> labels = s.labels;
      if (auto le = labels.find("le"); le != labels.end()) {
        le->second = testing::format_le(std::strtod(le->second.c_str(), nullptr));
      }
      std::string k = s.name;
      for (const auto& [l, v] : labels) k += "," + l + "=" + v;
      out[k] = s.value;
    }
  };
  collect(a, om_samples);
  collect(b, text_samples);
  EXPECT_EQ(om_samples, text_samples);
  EXPECT_GT(om_samples.size(), 300u);
}

// threads: this process's threads, by name (/proc/self/task/*/comm).
std::multiset<std::string> threads() {
  std::multiset<std::string> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    out.insert(name);
  }
  return out;
}

// The exporter costs one thread, named so that top -H, gdb and perf tell it apart, however
// many clients connect.
TEST(PrometheusExporter, ServesOnOneThreadNamedLanternMetrics) {
  InstrumentedPool p(2, trace::Level::off);
  const auto before = threads();
  PrometheusExporter exporter(p.pool, p.recorder, any_free_port());
  for (int i = 0; i < 20; ++i) ASSERT_EQ(http_get(exporter.port(), "/metrics").status, 200);
  auto after = threads();
  ASSERT_EQ(after.size(), before.size() + 1);
  EXPECT_EQ(after.count("lantern-metrics"), before.count("lantern-metrics") + 1);
}

TEST(PrometheusExporter, PromtoolAcceptsARealScrape) {
  const std::string promtool = testing::find_program("promtool");
  ASSERT_FALSE(promtool.empty()) << "promtool is not on PATH: it comes with Debian's Prometheus server, "
                                    "apt-get install prometheus";
  InstrumentedPool p(2, trace::Level::tasks);
  PrometheusExporter exporter(p.pool, p.recorder, any_free_port());
  testing::submit_and_wait(p.pool, p.recorder, 100);
  p.pool.run([] {
    long a = 0, b = 0;
    lantern::join([&] { a = 1; }, [&] { b = 2; });
    return a + b;
  });
  const auto response = http_get(exporter.port(), "/metrics");
  ASSERT_EQ(response.status, 200);

  testing::TempDir dir("lantern_promtool_");
  const auto scrape = dir.path() / "scrape.txt", report = dir.path() / "promtool.txt";
  std::ofstream(scrape) << response.body;
  const std::string command =
      "'" + promtool + "' check metrics < '" + scrape.string() + "' > '" + report.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << "promtool check metrics rejected the scrape:\n"
                       << testing::read_file(report) << "\n--- scrape ---\n"
                       << response.body.substr(0, 4000);
}

// listen_on_any_port: a listening socket on a kernel-chosen loopback port, as another
// process holding "our" port would have.
struct Listener {
  int fd = -1;
  std::uint16_t port = 0;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 4) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
      ADD_FAILURE() << "cannot set up the listener holding the port";
    }
    port = ntohs(sa.sin_port);
  }
  ~Listener() {
    if (fd >= 0) ::close(fd);
  }
};

TEST(PrometheusExporter, TakenPortIsAClearErrorAndTheSchedulerKeepsRunning) {
  lantern::testing::Watchdog watchdog("TakenPortIsAClearError", std::chrono::seconds(60));
  InstrumentedPool p(2, trace::Level::off);
  Listener holder;
  const std::string address = "127.0.0.1:" + std::to_string(holder.port);
  PrometheusOptions options;
  options.address = address;
  try {
    PrometheusExporter exporter(p.pool, p.recorder, options);
    FAIL() << "expected ExporterError for a port that is taken";
  } catch (const ExporterError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(contains(message, "cannot listen on " + address)) << message;
    EXPECT_TRUE(contains(message, "Address already in use")) << message;
    EXPECT_TRUE(contains(message, "PrometheusOptions::address")) << message;
    EXPECT_TRUE(contains(message, "sport = :" + std::to_string(holder.port))) << message;
  }
  // The scheduler is untouched: it runs tasks, and its counters are still exact.
  testing::submit_and_wait(p.pool, p.recorder, 100);
  EXPECT_EQ(testing::counted_tasks(p.recorder), 100u);
  // And an exporter on a free port serves them.
  PrometheusExporter exporter(p.pool, p.recorder, any_free_port());
  const auto scrape = testing::parse_exposition(http_get(exporter.port(), "/metrics").body);
  EXPECT_EQ(scrape.sum("lantern_tasks_total"), 100);
}

TEST(PrometheusExporter, MalformedAddressIsAClearError) {
  InstrumentedPool p(1, trace::Level::off);
  // Each names the address and says what is wrong with it, in the words of the one
  // address parser, or that a name does not resolve (.invalid never does, RFC 6761).
  const std::pair<const char*, const char*> cases[] = {
      {"no-such-host.invalid:9464", "does not resolve"},
      {"localhost", "has no port"},
      {"127.0.0.1:99999", "not a number from 0 to 65535"},
      {"127.0.0.1:", "HOST:PORT"},
      {"[::1]9464", "HOST:PORT"},
  };
  for (const auto& [bad, reason] : cases) {
    PrometheusOptions options;
    options.address = bad;
    try {
      PrometheusExporter exporter(p.pool, p.recorder, options);
      ADD_FAILURE() << "expected ExporterError for " << bad;
    } catch (const ExporterError& e) {
      EXPECT_TRUE(contains(e.what(), std::string("\"") + bad + "\"")) << e.what();
      EXPECT_TRUE(contains(e.what(), "HOST:PORT")) << e.what();
      EXPECT_TRUE(contains(e.what(), reason)) << e.what();
    }
  }
}

// A host name is listened on at its address, as everywhere else in Lantern.
TEST(PrometheusExporter, AHostNameIsListenedOnAtItsAddress) {
  InstrumentedPool p(1, trace::Level::off);
  PrometheusOptions options;
  options.address = "localhost:0";
  PrometheusExporter exporter(p.pool, p.recorder, options);
  EXPECT_NE(exporter.port(), 0);
  EXPECT_EQ(exporter.url(), "http://127.0.0.1:" + std::to_string(exporter.port()) + "/metrics");
  EXPECT_EQ(http_get(exporter.port(), "/metrics").status, 200);
}

// An IPv6 address is served where the machine has IPv6 loopback (the exporter's own
// server listens on any numeric address), else refused with the system's reason.
TEST(PrometheusExporter, Ipv6IsServedOrRefusedWithTheReason) {
  InstrumentedPool p(1, trace::Level::off);
  PrometheusOptions options;
  options.address = "[::1]:0";
  try {
    PrometheusExporter exporter(p.pool, p.recorder, options);
    EXPECT_TRUE(contains(exporter.address(), "[::1]:")) << exporter.address();
  } catch (const ExporterError& e) {
    EXPECT_TRUE(contains(e.what(), "[::1]:0")) << e.what();
    EXPECT_TRUE(contains(e.what(), "Cannot assign requested address") ||
                contains(e.what(), "Address family not supported"))
        << e.what();
  }
}

TEST(PrometheusExporter, UrlAndScrapeConfigNameTheActualPort) {
  InstrumentedPool p(1, trace::Level::off);
  PrometheusExporter exporter(p.pool, p.recorder, any_free_port());
  const std::string address = "127.0.0.1:" + std::to_string(exporter.port());
  EXPECT_EQ(exporter.address(), address);
  EXPECT_EQ(exporter.url(), "http://" + address + "/metrics");
  EXPECT_TRUE(contains(exporter.scrape_config(), "targets: [\"" + address + "\"]")) << exporter.scrape_config();
  EXPECT_TRUE(contains(exporter.scrape_config("mine"), "job_name: \"mine\"")) << exporter.scrape_config("mine");
}

TEST(PrometheusExporter, CustomPathIsServedAndConfigured) {
  InstrumentedPool p(1, trace::Level::off);
  PrometheusOptions options = any_free_port();
  options.path = "/lantern";
  PrometheusExporter exporter(p.pool, p.recorder, options);
  EXPECT_EQ(http_get(exporter.port(), "/lantern").status, 200);
  EXPECT_TRUE(contains(exporter.scrape_config(), "metrics_path: \"/lantern\"")) << exporter.scrape_config();
}

TEST(PrometheusExporter, StopsServingWhenDestroyed) {
  InstrumentedPool p(1, trace::Level::off);
  std::uint16_t port = 0;
  std::chrono::steady_clock::time_point destroying;
  {
    PrometheusExporter exporter(p.pool, p.recorder, any_free_port());
    port = exporter.port();
    EXPECT_EQ(http_get(port, "/metrics").status, 200);
    destroying = std::chrono::steady_clock::now();
  }
  // The server's thread stops at once: its poll() also waits for the stop request.
  EXPECT_LT(std::chrono::steady_clock::now() - destroying, std::chrono::milliseconds(1500));
  EXPECT_THROW(http_get(port, "/metrics", std::chrono::milliseconds(2000)), std::runtime_error);
}

}  // namespace
}  // namespace lantern::exporters
