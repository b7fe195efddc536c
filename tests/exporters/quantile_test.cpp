// SPDX-License-Identifier: Apache-2.0
// quantile_test.cpp - on a real run, histogram_quantile over the scraped buckets lands
// within 10 % of the exact percentile, for task durations spread over 100 ns .. 10 ms
// and for wake latencies (exporters/prometheus/README.md, "Histogram buckets").
//
// The run is observed as a user observes it: lantern::observe with /metrics on a free
// port and a trace at level tasks. The exact percentiles come from the trace, through
// the one analysis (every task slice's duration and every timed wake's latency, in
// nanoseconds converted as the Recorder converts them, so they are the very samples the
// histograms counted). The estimates come from one GET /metrics over a real socket,
// computed as Prometheus's histogram_quantile computes them: the bucket holding the
// rank, and linear interpolation inside it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "exporters/support/child_process.hpp"
#include "exporters/support/exposition.hpp"
#include "exporters/support/recorder_reading.hpp"
#include "lantern/analysis/analysis.hpp"
#include "lantern/exporters/prometheus_exporter.hpp"
#include "lantern/exporters/testing/loopback_http.hpp"
#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/lantern.hpp"
#include "lantern/observe.hpp"
#include "lantern/trace/trace_reader.hpp"
#include "support/watchdog.hpp"

namespace lantern::exporters {
namespace {

using namespace std::chrono_literals;

// histogram_quantile: Prometheus's bucketQuantile over one scraped histogram.
double histogram_quantile(double q, const testing::Exposition& scrape, const std::string& family) {
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
  for (const testing::Sample& s : scrape.samples) {
    if (s.name == family + "_bucket") buckets.emplace_back(std::strtod(s.labels.at("le").c_str(), nullptr), s.value);
  }
  std::sort(buckets.begin(), buckets.end());
  const double rank = q * buckets.back().second;
  std::size_t b = 0;
  while (buckets[b].second < rank) ++b;
  if (std::isinf(buckets[b].first)) return buckets[b - 1].first;
  const double start = b == 0 ? 0 : buckets[b - 1].first;
  const double below = b == 0 ? 0 : buckets[b - 1].second;
  return start + (buckets[b].first - start) * (rank - below) / (buckets[b].second - below);
}

// exact: the q-th sample (rank ceil(q n)), in seconds.
double exact(double q, std::vector<std::uint64_t> ns) {
  std::sort(ns.begin(), ns.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(ns.size())));
  return static_cast<double>(ns[std::max<std::size_t>(rank, 1) - 1]) / 1e9;
}

void spin_for(std::chrono::nanoseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

TEST(HistogramQuantile, LandsWithinTenPercentOfTheExactPercentileOnARealRun) {
  testing::TempDir dir("lantern_quantile_");
  const std::string trace_path = (dir.path() / "run.trace").string();
  ObserveOptions options{.program = "quantile_test"};
  options.environment = false;
  options.settings.metrics = "127.0.0.1:0";
  options.settings.trace = trace_path;
  options.settings.level = "tasks";
  options.log = nullptr;
  Observation obs = observe({.workers = 2}, options);
  ASSERT_TRUE(obs.ok()) << ::testing::PrintToString(obs.problems());
  Scheduler& pool = obs.scheduler();
  const instrumentation::Recorder& recorder = *obs.recorder();
  lantern::testing::Watchdog watchdog("quantile test", 180s, [&] { return pool.describe_state(); });

  // Task durations log-uniform over 100 ns .. 10 ms, from a fixed seed.
  std::mt19937_64 random(36);
  std::uniform_real_distribution<double> exponent(std::log(100.0), std::log(1e7));
  std::vector<Future<void>> tasks;
  for (int i = 0; i < 1500; ++i) {
    const auto d = std::chrono::nanoseconds(static_cast<long long>(std::exp(exponent(random))));
    tasks.push_back(pool.submit([d] { spin_for(d); }));
  }
  for (auto& t : tasks) t.get();
  // Wakes: one task at a time into a pool that is fully asleep, 1,000 times (p99 is then
  // the 990th of them: the top buckets are not sparse).
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(testing::wait_until_all_sleep(pool, recorder)) << pool.describe_state();
    pool.submit([] {}).get();
  }
  ASSERT_TRUE(testing::wait_until_all_sleep(pool, recorder)) << pool.describe_state();
  obs.collector()->drain_now();
  const auto response = testing::http_get(obs.metrics()->port(), "/metrics");
  ASSERT_EQ(response.status, 200);
  const testing::Exposition scrape = testing::parse_exposition(response.body);
  ASSERT_EQ(obs.finish(), 0) << ::testing::PrintToString(obs.problems());

  // The exact samples, from the trace.
  trace::TraceReader reader = trace::TraceReader::open(trace_path);
  analysis::Analysis a;
  ASSERT_TRUE(reader.read_header());
  a.set_header(reader.header(), reader.header_ok());
  while (reader.next_chunk()) a.add(reader.chunk());
  a.finish();
  std::vector<std::uint64_t> durations, wakes;
  std::vector<std::pair<analysis::Tick, std::uint64_t>> timed_wakes;  // (when, latency)
  for (std::uint32_t w = 0; w < a.worker_count(); ++w) {
    const analysis::WorkerTrack& track = a.track(w);
    for (int depth = 0; depth < track.depth_count(); ++depth) {
      for (const analysis::TaskSlice& s : track.slices(depth)) {
        if (!s.open()) durations.push_back(a.to_ns(s.end - s.start));
      }
    }
    for (const analysis::Wake& wake : a.wakes(w)) {
      if (wake.timed()) timed_wakes.emplace_back(wake.t, a.to_ns(wake.latency));
    }
  }
  // finish() wakes the workers to stop them, after the scrape: the scrape's wakes are the
  // trace's first ones.
  std::sort(timed_wakes.begin(), timed_wakes.end());
  const auto scraped_wakes = static_cast<std::size_t>(scrape.sum("lantern_wake_latency_seconds_count"));
  ASSERT_LE(scraped_wakes, timed_wakes.size());
  ASSERT_LE(timed_wakes.size() - scraped_wakes, pool.worker_count()) << "only the stopping workers' wakes";
  for (std::size_t i = 0; i < scraped_wakes; ++i) wakes.push_back(timed_wakes[i].second);
  ASSERT_EQ(scrape.sum("lantern_events_dropped_total"), 0) << "the trace must hold every sample";
  ASSERT_EQ(static_cast<double>(durations.size()), scrape.sum("lantern_task_duration_seconds_count"));
  ASSERT_EQ(static_cast<double>(wakes.size()), scrape.sum("lantern_wake_latency_seconds_count"));
  ASSERT_GE(wakes.size(), 1000u);

  auto check = [&](const char* what, const std::string& family, const std::vector<std::uint64_t>& samples,
                   std::initializer_list<double> qs) {
    for (const double q : qs) {
      const double estimate = histogram_quantile(q, scrape, family), truth = exact(q, samples);
      std::printf("  %s p%g: histogram_quantile %.4g s, exact %.4g s (%+.1f %%)\n", what, q * 100, estimate, truth,
                  100 * (estimate / truth - 1));
      EXPECT_NEAR(estimate / truth, 1.0, 0.10)
          << what << " p" << q * 100 << ": " << estimate << " s vs " << truth << " s";
    }
  };
  check("task duration", "lantern_task_duration_seconds", durations, {0.1, 0.25, 0.5, 0.75, 0.9, 0.99});
  check("wake latency", "lantern_wake_latency_seconds", wakes, {0.5, 0.9, 0.99});
}

}  // namespace
}  // namespace lantern::exporters
