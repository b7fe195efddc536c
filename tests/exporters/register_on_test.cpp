// SPDX-License-Identifier: Apache-2.0
// register_on_test.cpp - Lantern's metrics on the endpoint an app already serves:
// an app with its own prometheus-cpp Exposer, Registry and counter calls register_on
// once; one GET of its single /metrics over a real socket, at the end of a run, carries
// the app's counter and every Lantern family, each sample equal to what the Recorder and
// the Scheduler say (support/scrape_check.hpp, as end_of_run_test.cpp checks Lantern's
// own endpoint). The app's Recorder is built as an app builds it, at level off without
// RecorderOptions::time_tasks: the task-duration histogram must still count every task.
#include <gtest/gtest.h>

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "exporters/support/recorder_reading.hpp"
#include "exporters/support/scrape_at_rest.hpp"
#include "exporters/support/scrape_check.hpp"
#include "lantern/exporters/metric_table.hpp"
#include "lantern/exporters/scheduler_collectable.hpp"
#include "lantern/lantern.hpp"
#include "support/fib.hpp"
#include "support/watchdog.hpp"

namespace lantern::exporters {
namespace {

using namespace std::chrono_literals;

TEST(RegisterOn, TheAppsOwnEndpointCarriesLanternsFamiliesEqualToTheRecorder) {
  lantern::testing::Watchdog watchdog("RegisterOn", 120s);
  // The app's side: its Exposer, its Registry, its own counter.
  prometheus::Exposer exposer("127.0.0.1:0");
  auto registry = std::make_shared<prometheus::Registry>();
  auto& requests =
      prometheus::BuildCounter().Name("app_requests_total").Help("The app's requests.").Register(*registry);
  requests.Add({}).Increment(7);
  exposer.RegisterCollectable(registry);

  // Lantern, as an app builds it: counters only, no task timing asked for.
  instrumentation::Recorder recorder(3, {.level = trace::Level::off});
  Scheduler pool({.workers = 3, .observer = &recorder});
  const auto lantern_metrics = register_on(exposer, pool, recorder);

  EXPECT_EQ(pool.run([] { return lantern::testing::fib(20); }), 6765u);
  for (int burst = 0; burst < 3; ++burst) {
    ASSERT_TRUE(testing::wait_until_all_sleep(pool, recorder)) << pool.describe_state();
    std::vector<Future<int>> futures;
    for (int i = 0; i < 50; ++i) futures.push_back(pool.submit([i] { return i; }));
    for (int i = 0; i < 50; ++i) EXPECT_EQ(futures[static_cast<std::size_t>(i)].get(), i);
  }
  ASSERT_TRUE(testing::wait_until_all_sleep(pool, recorder)) << pool.describe_state();

  const auto ports = exposer.GetListeningPorts();
  ASSERT_EQ(ports.size(), 1u);
  const testing::Scrape scrape = testing::scrape_at_rest(pool, recorder, static_cast<std::uint16_t>(ports[0]));
  EXPECT_EQ(scrape.exposition.sum("app_requests_total"), 7) << "the app's own metric is on the same endpoint";
  const testing::Expected expected =
      testing::expected_samples(scrape.before, scrape.after, recorder.ns_per_tick() * 1e-9);
  const std::string differences = testing::diff(scrape.exposition, expected);
  EXPECT_EQ(differences, "") << "the app's endpoint disagrees with the Recorder:\n"
                             << differences << "--- scrape ---\n"
                             << scrape.text.substr(0, 3000);
  for (const MetricInfo& m : kMetrics) {
    EXPECT_TRUE(scrape.exposition.types.count(std::string(m.name))) << m.name << " missing from the app's endpoint";
  }
  // Every task timed although the app's Recorder was not asked to time tasks.
  EXPECT_GT(scrape.exposition.sum("lantern_tasks_total"), 150);
  EXPECT_EQ(scrape.exposition.sum("lantern_task_duration_seconds_count"), scrape.exposition.sum("lantern_tasks_total"));
  EXPECT_TRUE(recorder.timing_tasks());
  exposer.RemoveCollectable(lantern_metrics);
}

// Timing is asked for while a collectable exists, counted, and withdrawn with the last.
TEST(RegisterOn, TaskTimingLastsAsLongAsACollectable) {
  instrumentation::Recorder recorder(1, {.level = trace::Level::off});
  Scheduler pool({.workers = 1, .observer = &recorder});
  EXPECT_FALSE(recorder.timing_tasks());
  {
    SchedulerCollectable a(pool, recorder);
    {
      SchedulerCollectable b(pool, recorder);
      EXPECT_TRUE(recorder.timing_tasks());
    }
    EXPECT_TRUE(recorder.timing_tasks()) << "a still publishes the histogram";
  }
  EXPECT_FALSE(recorder.timing_tasks());
  instrumentation::Recorder asked(1, {.level = trace::Level::off, .time_tasks = true});
  {
    Scheduler other({.workers = 1, .observer = &asked});
    SchedulerCollectable c(other, asked);
  }
  EXPECT_TRUE(asked.timing_tasks()) << "RecorderOptions::time_tasks stays";
}

}  // namespace
}  // namespace lantern::exporters
