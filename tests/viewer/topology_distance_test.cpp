// SPDX-License-Identifier: Apache-2.0
// topology_distance_test.cpp - the steal matrix's tint (Model::distance, from the trace
// header's CPU rows) is core's Topology::distance. Both apply the vocabulary's
// distance_between, the model to the trace header's rows (it does not link core); this
// holds the header's rows and the model's worker-to-CPU mapping to core's answer.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "lantern/topology.hpp"
#include "lantern/viewer/model.hpp"

namespace {

using lantern::Topology;
using lantern::viewer::Model;

// header_of: the trace header a recording on `t` writes (instrumentation's trace sinks).
lantern::trace::TraceHeader header_of(const Topology& t, std::uint32_t workers) {
  lantern::trace::TraceHeader h;
  h.producer = "topology_distance_test";
  h.workers = workers;
  for (const lantern::CpuInfo& c : t.cpus()) h.cpus.push_back({c.os_cpu, c.core, c.l2, c.llc, c.numa_node, c.package});
  return h;
}

void expect_same_distances(const Topology& t, std::uint32_t workers) {
  Model m;
  m.apply_header(header_of(t, workers), true);
  const int n = t.cpu_count();
  for (std::uint32_t a = 0; a < workers; ++a) {
    for (std::uint32_t b = 0; b < workers; ++b) {
      EXPECT_EQ(m.distance(a, b), static_cast<int>(t.distance(static_cast<int>(a % n), static_cast<int>(b % n))))
          << "workers " << a << " and " << b;
    }
  }
}

TEST(TopologyDistance, TheStealMatrixTintIsCoresDistance) {
  for (const char* spec : {"4 cores", "2 sockets x 4 cores x 2 threads", "2 nodes x 2 sockets x 4 cores x 2 threads"}) {
    SCOPED_TRACE(spec);
    std::string error;
    const auto t = Topology::parse_spec(spec, &error);
    ASSERT_TRUE(t) << error;
    expect_same_distances(*t, static_cast<std::uint32_t>(t->cpu_count()));
    expect_same_distances(*t, static_cast<std::uint32_t>(t->cpu_count()) + 3);  // more workers than CPUs
  }
  // Shared L2s without SMT, and a NUMA node with two LLCs: every level of the table.
  std::string error;
  const auto t = Topology::from_hwloc_synthetic("pack:1 numa:2 l3:2 l2:2 core:2 pu:2", &error);
  ASSERT_TRUE(t) << error;
  std::set<lantern::Distance> levels;
  for (int a = 0; a < t->cpu_count(); ++a)
    for (int b = 0; b < t->cpu_count(); ++b) levels.insert(t->distance(a, b));
  EXPECT_EQ(static_cast<int>(levels.size()), lantern::kDistanceLevels) << "the machine has every level";
  expect_same_distances(*t, static_cast<std::uint32_t>(t->cpu_count()));
}

}  // namespace
