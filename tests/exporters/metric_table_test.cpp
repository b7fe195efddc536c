// SPDX-License-Identifier: Apache-2.0
// metric_table_test.cpp - the metric table follows Prometheus's naming conventions, and
// the README's reference table says exactly what the metric table says.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "lantern/exporters/metric_table.hpp"

#ifndef LANTERN_EXPORTERS_DIR
#error "LANTERN_EXPORTERS_DIR must name the exporters/ source directory"
#endif

namespace lantern::exporters {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

const char* type_name(MetricType t) {
  switch (t) {
    case MetricType::counter: return "counter";
    case MetricType::gauge: return "gauge";
    case MetricType::histogram: return "histogram";
  }
  return "?";
}

TEST(MetricTable, NamesFollowPrometheusConventions) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const MetricInfo& m = kMetrics[i];
    SCOPED_TRACE(std::string(m.name));
    EXPECT_EQ(static_cast<std::size_t>(m.id), i) << "ids are dense, in table order";
    EXPECT_TRUE(names.insert(m.name).second) << "duplicate name";
    // Lantern's own, or the process_* names Prometheus's client libraries use.
    EXPECT_TRUE(m.name.substr(0, 8) == "lantern_" || m.name.substr(0, 8) == "process_") << m.name;
    EXPECT_EQ(m.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string_view::npos) << "snake_case";
    EXPECT_EQ(ends_with(m.name, "_total"), m.type == MetricType::counter) << "_total exactly on counters";
    if (m.type == MetricType::histogram) {
      EXPECT_TRUE(ends_with(m.name, "_seconds")) << "latencies in base units";
    }
    EXPECT_EQ(m.name.find("millis"), std::string_view::npos);
    EXPECT_EQ(m.name.find("nanos"), std::string_view::npos);
    EXPECT_FALSE(m.help.empty());
    // Only the bounded label names.
    std::stringstream labels{std::string(m.labels)};
    for (std::string label; std::getline(labels, label, ',');) {
      label.erase(0, label.find_first_not_of(' '));
      EXPECT_TRUE(label == "worker" || label == "state" || label == "distance" ||
                  (label == "version" && m.id == Metric::build_info))
          << label;
    }
  }
  // Bucket bounds rise, by at most 12.5 % each in the fine range (100 ns .. 100 ms).
  for (std::size_t i = 1; i < kBucketBounds; ++i) {
    EXPECT_GT(kBucketBoundsNs[i], kBucketBoundsNs[i - 1]);
    if (kBucketBoundsNs[i] <= 128'000'000) {
      EXPECT_LE(kBucketBoundsNs[i] * 8, kBucketBoundsNs[i - 1] * 9) << i;
    }
  }
  EXPECT_LE(kBucketBoundsNs.front(), 100u);
  EXPECT_GE(kBucketBoundsNs.back(), 10'000'000'000u);
}

// The README row of a metric: | `name` | type | labels | meaning |
struct Row {
  std::string name, type, labels;
};

std::vector<Row> readme_rows() {
  const std::string path = std::string(LANTERN_EXPORTERS_DIR) + "/prometheus/README.md";
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::vector<Row> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `lantern_", 0) != 0 && line.rfind("| `process_", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream cells_in(line.substr(1));
    for (std::string cell; std::getline(cells_in, cell, '|');) {
      cell.erase(0, cell.find_first_not_of(' '));
      cell.erase(cell.find_last_not_of(' ') + 1);
      std::erase(cell, '`');
      cells.push_back(cell);
    }
    if (cells.size() < 4) {
      ADD_FAILURE() << "README row with fewer than 4 cells: " << line;
      continue;
    }
    rows.push_back({cells[0], cells[1], cells[2] == "-" ? "" : cells[2]});
  }
  return rows;
}

TEST(MetricTable, ReadmeReferenceTableMatchesTheMetricTable) {
  const std::vector<Row> rows = readme_rows();
  ASSERT_EQ(rows.size(), kMetricCount) << "exporters/prometheus/README.md must have one row per metric";
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const MetricInfo& m = kMetrics[i];
    EXPECT_EQ(rows[i].name, m.name) << "row " << i + 1;
    EXPECT_EQ(rows[i].type, type_name(m.type)) << m.name;
    EXPECT_EQ(rows[i].labels, m.labels) << m.name;
  }
}

}  // namespace
}  // namespace lantern::exporters
