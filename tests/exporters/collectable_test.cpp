// SPDX-License-Identifier: Apache-2.0
// collectable_test.cpp - SchedulerCollectable without HTTP: families follow the metric
// table, label values come from the event table, counts of a known workload are exact at
// every recording level, histograms are cumulative and exact, counters never go down.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include "exporters/support/instrumented_pool.hpp"
#include "lantern/clock.hpp"
#include "lantern/exporters/metric_table.hpp"
#include "lantern/exporters/scheduler_collectable.hpp"
#include "support/watchdog.hpp"

namespace lantern::exporters {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using testing::InstrumentedPool;

const MetricFamily& family(const std::vector<MetricFamily>& families, Metric m) {
  return families.at(static_cast<std::size_t>(m));
}

double value(const MetricFamily& f, const ClientMetric& m) {
  return f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
}

double sum(const std::vector<MetricFamily>& families, Metric m) {
  const MetricFamily& f = family(families, m);
  double total = 0;
  for (const ClientMetric& metric : f.metric) total += value(f, metric);
  return total;
}

std::set<std::string> label_values(const MetricFamily& f, const std::string& label) {
  std::set<std::string> out;
  for (const ClientMetric& m : f.metric) {
    for (const auto& l : m.label) {
      if (l.name == label) out.insert(l.value);
    }
  }
  return out;
}

template <std::size_t N>
std::set<std::string> as_set(const std::string_view (&names)[N]) {
  return {std::begin(names), std::end(names)};
}

// Parameterised by worker count and recording level: counters are exact at every level.
class CollectableTest : public ::testing::TestWithParam<std::tuple<std::uint32_t, trace::Level>> {
 protected:
  std::uint32_t workers() const { return std::get<0>(GetParam()); }
  trace::Level level() const { return std::get<1>(GetParam()); }
};

TEST_P(CollectableTest, FamiliesFollowTheMetricTable) {
  InstrumentedPool p(workers(), level());
  SchedulerCollectable collectable(p.pool, p.recorder);
  const auto families = collectable.Collect();
  ASSERT_EQ(families.size(), kMetricCount);
  for (const MetricInfo& m : kMetrics) {
    const MetricFamily& f = family(families, m.id);
    SCOPED_TRACE(std::string(m.name));
    EXPECT_EQ(f.name, m.name);
    EXPECT_EQ(f.help, m.help);
    std::size_t expected_samples = m.labels.find("worker") != std::string_view::npos ? workers() : 1;
    if (m.labels.find("state") != std::string_view::npos) expected_samples *= trace::kStateCount;
    if (m.labels.find("distance") != std::string_view::npos) expected_samples *= trace::kDistanceCount;
    EXPECT_EQ(f.metric.size(), expected_samples);
    for (const ClientMetric& metric : f.metric) {
      std::string labels;
      for (const auto& l : metric.label) labels += (labels.empty() ? "" : ", ") + l.name;
      EXPECT_EQ(labels, m.labels);
    }
  }
  std::set<std::string> worker_names;
  for (std::uint32_t w = 0; w < workers(); ++w) worker_names.insert(std::to_string(w));
  EXPECT_EQ(label_values(family(families, Metric::tasks), "worker"), worker_names);
  EXPECT_EQ(label_values(family(families, Metric::worker_state_seconds), "state"), as_set(trace::kStateNames));
  EXPECT_EQ(label_values(family(families, Metric::workers), "state"), as_set(trace::kStateNames));
  EXPECT_EQ(label_values(family(families, Metric::steals), "distance"), as_set(trace::kDistanceNames));
  EXPECT_EQ(sum(families, Metric::workers), workers());
}

TEST_P(CollectableTest, CountsOfAKnownWorkloadAreExact) {
  lantern::testing::Watchdog watchdog("CountsOfAKnownWorkloadAreExact", std::chrono::seconds(60));
  InstrumentedPool p(workers(), level());
  SchedulerCollectable collectable(p.pool, p.recorder);
  constexpr int kTasks = 500;
  testing::submit_and_wait(p.pool, p.recorder, kTasks);
  const auto families = collectable.Collect();
  // Submitted from outside: each task goes through a lane and runs once.
  EXPECT_EQ(sum(families, Metric::tasks), kTasks);
  EXPECT_EQ(sum(families, Metric::lane_pops), kTasks);
  EXPECT_EQ(sum(families, Metric::tasks_submitted), kTasks);
  EXPECT_EQ(sum(families, Metric::tasks_spawned), 0);
  EXPECT_EQ(sum(families, Metric::task_exceptions), 0);
  EXPECT_EQ(sum(families, Metric::lane_depth), 0);
  EXPECT_EQ(sum(families, Metric::unhandled_exceptions), 0);
  for (Metric m : {Metric::ready_wait, Metric::task_duration}) {
    const ClientMetric::Histogram& h = family(families, m).metric.at(0).histogram;
    SCOPED_TRACE(std::string(info(m).name));
    EXPECT_EQ(h.sample_count, static_cast<std::uint64_t>(kTasks));
    EXPECT_EQ(h.bucket.back().cumulative_count, static_cast<std::uint64_t>(kTasks));
    EXPECT_GT(h.sample_sum, 0);
  }
  if (level() == trace::Level::off) {
    EXPECT_EQ(sum(families, Metric::events_recorded), 0);
  }
}

TEST_P(CollectableTest, ReleasesAndNotReadyTasksOfAKnownChainAreExact) {
  lantern::testing::Watchdog watchdog("ReleasesAndNotReadyTasksOfAKnownChainAreExact", std::chrono::seconds(60));
  InstrumentedPool p(workers(), level());
  SchedulerCollectable collectable(p.pool, p.recorder);
  constexpr int kChain = 40;
  std::uint64_t gated = 0;
  testing::release_chain(p.pool, p.recorder, kChain, &gated);
  EXPECT_EQ(gated, static_cast<std::uint64_t>(kChain));  // every task of the chain waited
  const auto families = collectable.Collect();
#if LANTERN_OBSERVER
  EXPECT_EQ(sum(families, Metric::releases), kChain);
  EXPECT_EQ(sum(families, Metric::tasks), kChain);
#endif
  EXPECT_EQ(sum(families, Metric::not_ready_tasks), 0);
  EXPECT_EQ(sum(families, Metric::io_submitted), 0);
  EXPECT_EQ(sum(families, Metric::io_completed), 0);
  // spawn_after from outside is a submission; only the first task, released by a signal
  // set outside the pool, goes through a lane: the others go to their releaser's deque.
  EXPECT_EQ(sum(families, Metric::tasks_submitted), kChain);
  EXPECT_EQ(sum(families, Metric::tasks_spawned), 0);
#if LANTERN_OBSERVER
  EXPECT_EQ(sum(families, Metric::lane_pops), 1);
#endif
  // Gated again: the gauge follows the scheduler's count while tasks wait.
  Signal go;
  TaskHandle waiting = p.pool.spawn_after({go}, [] {});
  EXPECT_EQ(sum(collectable.Collect(), Metric::not_ready_tasks), 1);
  go.set();
  waiting.wait();
}

TEST_P(CollectableTest, HistogramBucketsAreCumulativeAtTheTableBoundsAndExact) {
  InstrumentedPool p(workers(), level());
  SchedulerCollectable collectable(p.pool, p.recorder);
  testing::submit_and_wait(p.pool, p.recorder, 300);
  const auto families = collectable.Collect();
  // Nothing runs now, so the recorder's histograms hold still and can be compared.
  trace::LatencyHistogram expected;
  for (std::uint32_t w = 0; w < workers(); ++w) expected.merge(p.recorder.counters(w).ready_wait.snapshot());
  const ClientMetric::Histogram& h = family(families, Metric::ready_wait).metric.at(0).histogram;
  ASSERT_EQ(h.bucket.size(), kBucketBounds + 1);
  for (std::size_t i = 0; i < kBucketBounds; ++i) {
    const auto& b = h.bucket[i];
    EXPECT_DOUBLE_EQ(b.upper_bound, static_cast<double>(kBucketBoundsNs[i]) / 1e9);
    EXPECT_EQ(b.cumulative_count, expected.count_below(kBucketBoundsNs[i])) << "le " << kBucketBoundsNs[i] << " ns";
    if (i > 0) {
      EXPECT_GE(b.cumulative_count, h.bucket[i - 1].cumulative_count);
    }
  }
  EXPECT_TRUE(std::isinf(h.bucket.back().upper_bound));
  EXPECT_EQ(h.sample_count, expected.count());
  EXPECT_DOUBLE_EQ(h.sample_sum, static_cast<double>(expected.sum_ns()) / 1e9);
}

std::string param_name(const ::testing::TestParamInfo<CollectableTest::ParamType>& info) {
  static constexpr const char* kLevels[] = {"off", "states", "tasks", "full"};
  return std::to_string(std::get<0>(info.param)) + "_workers_level_" +
         kLevels[static_cast<int>(std::get<1>(info.param))];
}

INSTANTIATE_TEST_SUITE_P(WorkersAndLevels, CollectableTest,
                         ::testing::Combine(::testing::Values(1u, 2u, 4u),
                                            ::testing::Values(trace::Level::off, trace::Level::states,
                                                              trace::Level::tasks, trace::Level::full)),
                         param_name);

// key: a sample's family and labels, to match samples across two scrapes.
std::string key(const MetricFamily& f, const ClientMetric& m) {
  std::string k = f.name;
  for (const auto& l : m.label) k += "," + l.name + "=" + l.value;
  return k;
}

TEST(SchedulerCollectable, CountersNeverGoDownWhileWorkersRun) {
  lantern::testing::Watchdog watchdog("CountersNeverGoDownWhileWorkersRun", std::chrono::seconds(60));
  InstrumentedPool p(2, trace::Level::off);
  SchedulerCollectable collectable(p.pool, p.recorder);
  std::map<std::string, double> last;
  for (int round = 0; round < 50; ++round) {
    // Work in flight while collecting: states change under the collectable's feet.
    auto busy = p.pool.submit([] {
      long a = 0;
      for (int i = 0; i < 64; ++i)
        lantern::spawn([] {
          volatile int x = 0;
          for (int k = 0; k < 1000; ++k) x = x + k;
        });
      return a;
    });
    for (const MetricFamily& f : collectable.Collect()) {
      if (f.type != prometheus::MetricType::Counter) continue;
      for (const ClientMetric& m : f.metric) {
        const std::string k = key(f, m);
        if (const auto it = last.find(k); it != last.end()) {
          EXPECT_GE(m.counter.value, it->second) << k;
        }
        last[k] = m.counter.value;
      }
    }
    busy.get();
  }
}

TEST(SchedulerCollectable, StateSecondsAddUpToTheTimeSinceTheWorkersStarted) {
  // Measured in clock ticks and converted with the recorder's own ns_per_tick, so the
  // check is exact whatever the calibration's accuracy: it tests the accounting (every
  // worker in exactly one state at a time) and the exporter's conversion to seconds.
  // A worker's clock starts at its `started` state event (counters.hpp, "Time per
  // state"), which its thread reports soon after the Scheduler is built.
  const std::uint64_t before = lantern::ticks_now();
  InstrumentedPool p(2, trace::Level::off);
  for (std::uint32_t w = 0; w < 2; ++w) {
    while (p.recorder.snapshot(w).state == instrumentation::kNoState) std::this_thread::yield();
  }
  const std::uint64_t built = lantern::ticks_now();
  SchedulerCollectable collectable(p.pool, p.recorder);
  testing::submit_and_wait(p.pool, p.recorder, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::uint64_t collecting = lantern::ticks_now();
  const auto families = collectable.Collect();
  const std::uint64_t collected = lantern::ticks_now();
  const double seconds_per_tick = p.recorder.ns_per_tick() / 1e9;
  std::map<std::string, double> per_worker;
  const MetricFamily& f = family(families, Metric::worker_state_seconds);
  for (const ClientMetric& m : f.metric) per_worker[m.label.at(0).value] += m.counter.value;
  ASSERT_EQ(per_worker.size(), 2u);
  for (const auto& [worker, seconds] : per_worker) {
    EXPECT_LE(seconds, static_cast<double>(collected - before) * seconds_per_tick * (1 + 1e-9)) << "worker " << worker;
    EXPECT_GE(seconds, static_cast<double>(collecting - built) * seconds_per_tick * (1 - 1e-9)) << "worker " << worker;
  }
}

TEST(SchedulerCollectable, ConcurrentCollectsAgree) {
  lantern::testing::Watchdog watchdog("ConcurrentCollectsAgree", std::chrono::seconds(60));
  InstrumentedPool p(2, trace::Level::tasks);
  SchedulerCollectable collectable(p.pool, p.recorder);
  testing::submit_and_wait(p.pool, p.recorder, 100);
  // Two HTTP threads may scrape at once; both must see complete, equal counts.
  auto scrape = [&] {
    for (int i = 0; i < 50; ++i) {
      const auto families = collectable.Collect();
      EXPECT_EQ(sum(families, Metric::tasks), 100);
    }
  };
  std::thread other(scrape);
  scrape();
  other.join();
}

TEST(SchedulerCollectable, ARecorderOfAnotherWorkerCountIsRefused) {
  instrumentation::Recorder recorder(3);
  SchedulerOptions options;
  options.workers = 2;
  Scheduler pool(options);
  try {
    SchedulerCollectable collectable(pool, recorder);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Recorder has 3 workers but the Scheduler has 2"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace lantern::exporters
