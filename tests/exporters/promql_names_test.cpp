// SPDX-License-Identifier: Apache-2.0
// promql_names_test.cpp - the dashboard check's metric-name extraction, on the shapes of
// PromQL dashboards use (so a dashboard cannot pass the check by fooling it).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "exporters/support/promql_names.hpp"

namespace lantern::exporters::testing {
namespace {

using Names = std::set<std::string>;

TEST(PromqlNames, PlainSelectorsAndCalls) {
  EXPECT_EQ(metric_names("lantern_workers"), (Names{"lantern_workers"}));
  EXPECT_EQ(metric_names("sum(rate(lantern_tasks_total[5m]))"), (Names{"lantern_tasks_total"}));
  EXPECT_EQ(metric_names("rate ( lantern_tasks_total [1m:10s] )"), (Names{"lantern_tasks_total"}));
}

TEST(PromqlNames, LabelMatchersAndGroupingListsAreNotNames) {
  EXPECT_EQ(
      metric_names(
          R"(sum by (worker, state) (rate(lantern_worker_state_seconds_total{state="active", worker=~"$worker"}[$__rate_interval])))"),
      (Names{"lantern_worker_state_seconds_total"}));
  EXPECT_EQ(metric_names("sum(lantern_steals_total) without (worker)"), (Names{"lantern_steals_total"}));
  EXPECT_EQ(metric_names("count without (worker) (lantern_steals_total)"), (Names{"lantern_steals_total"}));
  EXPECT_EQ(metric_names("a_total / on (worker) group_left (state) b_total"), (Names{"a_total", "b_total"}));
  EXPECT_EQ(metric_names(R"(x{le="+Inf", name="not_a_metric"})"), (Names{"x"}));
}

TEST(PromqlNames, NumbersDurationsKeywordsAndVariablesAreNotNames) {
  EXPECT_EQ(
      metric_names("histogram_quantile(0.99, sum by (le) (rate(lantern_ready_wait_seconds_bucket[$__rate_interval])))"),
      (Names{"lantern_ready_wait_seconds_bucket"}));
  EXPECT_EQ(metric_names("a > bool 1e-9 and b offset 5m or c unless d"), (Names{"a", "b", "c", "d"}));
  EXPECT_EQ(metric_names("clamp_min(x, 1e-9) * 100 + ${factor} - $other"), (Names{"x"}));
  EXPECT_EQ(metric_names("vector(1)"), Names{});
}

TEST(PromqlNames, AMisspelledNameIsFound) {
  // The check is only as good as this: a typo must surface as an unknown name.
  EXPECT_EQ(metric_names("sum(rate(lantern_task_total[5m]))"), (Names{"lantern_task_total"}));
}

}  // namespace
}  // namespace lantern::exporters::testing
