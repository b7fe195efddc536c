// SPDX-License-Identifier: Apache-2.0
// grafana_dashboard_test.cpp - every PromQL expression in exporters/grafana's dashboard
// names only metrics the exporter actually emits on a scrape, and the dashboard covers
// what it is for (state share, steals, ready-wait quantiles and heatmap, queues, drops).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "exporters/support/exposition.hpp"
#include "exporters/support/instrumented_pool.hpp"
#include "exporters/support/promql_names.hpp"
#include "lantern/exporters/prometheus_exporter.hpp"
#include "lantern/exporters/testing/loopback_http.hpp"

#ifndef LANTERN_EXPORTERS_DIR
#error "LANTERN_EXPORTERS_DIR must name the exporters/ source directory"
#endif

namespace lantern::exporters {
namespace {

using nlohmann::json;

const std::string kDashboard = std::string(LANTERN_EXPORTERS_DIR) + "/grafana/lantern-dashboard.json";

json load_dashboard() {
  std::ifstream in(kDashboard);
  if (!in) throw std::runtime_error("cannot read " + kDashboard);
  return json::parse(in);  // throws, naming the position, on malformed JSON
}

// Queries found in the dashboard: panel targets' "expr", and template variables' queries.
struct Queries {
  std::vector<std::string> exprs;      // PromQL
  std::vector<std::string> variables;  // Grafana's label_values(...) and the like
};

void collect_exprs(const json& node, std::vector<std::string>& out) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (key == "expr" && value.is_string()) {
        out.push_back(value.get<std::string>());
      } else {
        collect_exprs(value, out);
      }
    }
  } else if (node.is_array()) {
    for (const json& child : node) collect_exprs(child, out);
  }
}

Queries queries(const json& dashboard) {
  Queries q;
  collect_exprs(dashboard["panels"], q.exprs);
  for (const json& variable : dashboard["templating"]["list"]) {
    if (variable.value("type", "") != "query") continue;
    const json& query = variable["query"];
    q.variables.push_back(query.is_string() ? query.get<std::string>() : query.value("query", ""));
  }
  return q;
}

// emitted: the sample names and label names of a real scrape of a busy scheduler.
struct Emitted {
  std::set<std::string> names, labels;
};

Emitted scrape() {
  testing::InstrumentedPool p(2, trace::Level::tasks);
  PrometheusOptions options;
  options.address = "127.0.0.1:0";
  PrometheusExporter exporter(p.pool, p.recorder, options);
  testing::submit_and_wait(p.pool, p.recorder, 100);
  const testing::Exposition e = testing::parse_exposition(testing::http_get(exporter.port(), "/metrics").body);
  Emitted out{e.sample_names(), e.label_names()};
  out.labels.insert({"instance", "job"});  // added by Prometheus to every scraped series
  return out;
}

TEST(GrafanaDashboard, EveryExpressionNamesOnlyEmittedMetrics) {
  const json dashboard = load_dashboard();
  const Queries q = queries(dashboard);
  const Emitted emitted = scrape();
  ASSERT_GE(q.exprs.size(), 10u) << "the dashboard should have its panels' queries";
  std::set<std::string> used;
  for (const std::string& expr : q.exprs) {
    const auto names = testing::metric_names(expr);
    EXPECT_FALSE(names.empty()) << "no metric name found in: " << expr;
    for (const std::string& name : names) {
      EXPECT_TRUE(emitted.names.count(name)) << name << " is not emitted by the exporter; in: " << expr;
      used.insert(name);
    }
  }
  // Template variables: label_values(SELECTOR, LABEL).
  for (const std::string& variable : q.variables) {
    const std::string_view prefix = "label_values(";
    const auto comma = variable.rfind(',');
    ASSERT_TRUE(variable.rfind(prefix, 0) == 0 && variable.back() == ')' && comma != std::string::npos)
        << "unexpected variable query (expected label_values(SELECTOR, LABEL)): " << variable;
    const std::string selector = variable.substr(prefix.size(), comma - prefix.size());
    std::string label = variable.substr(comma + 1, variable.size() - comma - 2);
    label.erase(0, label.find_first_not_of(' '));
    for (const std::string& name : testing::metric_names(selector)) {
      EXPECT_TRUE(emitted.names.count(name)) << name << " is not emitted; in variable: " << variable;
    }
    EXPECT_TRUE(emitted.labels.count(label)) << "label " << label << " is not emitted; in: " << variable;
  }
  // What the dashboard is for.
  for (const char* needed :
       {"lantern_worker_state_seconds_total", "lantern_steals_total", "lantern_ready_wait_seconds_bucket",
        "lantern_lane_depth", "lantern_deque_depth", "lantern_events_dropped_total", "lantern_workers"}) {
    EXPECT_TRUE(used.count(needed)) << "the dashboard has no panel on " << needed;
  }
}

TEST(GrafanaDashboard, HasReadyWaitQuantilesAndHeatmap) {
  const json dashboard = load_dashboard();
  bool quantile = false, heatmap = false;
  for (const json& panel : dashboard["panels"]) {
    for (const json& target : panel.value("targets", json::array())) {
      const std::string expr = target.value("expr", "");
      if (expr.find("histogram_quantile(") != std::string::npos &&
          expr.find("lantern_ready_wait_seconds_bucket") != std::string::npos) {
        quantile = true;
      }
      if (panel.value("type", "") == "heatmap" && target.value("format", "") == "heatmap" &&
          expr.find("lantern_ready_wait_seconds_bucket") != std::string::npos) {
        heatmap = true;
      }
    }
  }
  EXPECT_TRUE(quantile);
  EXPECT_TRUE(heatmap);
  EXPECT_EQ(dashboard.value("uid", ""), "lantern-scheduler");
}

}  // namespace
}  // namespace lantern::exporters
