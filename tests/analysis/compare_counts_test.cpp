// SPDX-License-Identifier: Apache-2.0
// compare_counts_test.cpp - lantern::analysis::compare() compares every count
// lantern-trace stats prints, and flags the large relative changes (an A/B of sleep
// strategies: helps 137 -> 1,013, wakes 148 -> 46, IO wakes 72 -> 0).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "lantern/analysis/compare.hpp"

namespace {

using namespace lantern;
using analysis::Analysis;
using analysis::Comparison;
using trace::make_event;

// run: worker 0 helps `helps` times, is woken by work `wakes` times and by IO `io_wakes`
// times (each wake after a sleep).
void run(Analysis& a, int helps, int wakes, int io_wakes) {
  trace::TraceHeader h;
  h.producer = "compare_counts_test";
  h.workers = 2;
  h.level = trace::Level::full;  // every count recorded (1 tick = 1 ns: the default clock)
  a.set_header(h, true);
  std::uint64_t t = 1000;
  a.add(make_event(t, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::started}));
  a.add(make_event(t, 1, StatePayload{WorkerState::idle, WorkerState::idle, StateReason::started}));
  for (int i = 0; i < helps; ++i) a.add(make_event(t += 10, 0, HelpPayload{1, 5}));
  auto sleep_and_wake = [&](WakeCause why) {
    a.add(make_event(t += 10, 0, StatePayload{WorkerState::active, WorkerState::sleeping, StateReason::fell_asleep}));
    a.add(make_event(t += 10, 0, WakePayload{why == WakeCause::io ? kOutsideWaker : 1u, why, 7}));
    a.add(make_event(t, 0, StatePayload{WorkerState::sleeping, WorkerState::active, StateReason::woken}));
  };
  for (int i = 0; i < wakes; ++i) sleep_and_wake(WakeCause::work);
  for (int i = 0; i < io_wakes; ++i) sleep_and_wake(WakeCause::io);
  a.finish();
}

std::map<std::string, Comparison::CountRow> rows(const Comparison& c) {
  std::map<std::string, Comparison::CountRow> out;
  for (const auto& r : c.counts) out.emplace(r.what, r);
  return out;
}

TEST(CompareCounts, EveryCountStatsPrintsIsComparedAndLargeChangesAreNotable) {
  Analysis a, b;
  run(a, 137, 148, 72);
  run(b, 1013, 46, 0);
  const Comparison c = analysis::compare(a, "A", b, "B");
  const auto r = rows(c);
  for (const char* what : {"helps", "wakes", "wakes (work)", "wakes (io)", "sleeps", "worker 0: helps",
                           "worker 0: wakes", "worker 0: sleeps", "events: state"}) {
    ASSERT_TRUE(r.count(what)) << what << " is not compared";
    EXPECT_TRUE(r.at(what).notable) << what << " changed a lot and is not flagged";
  }
  EXPECT_EQ(r.at("helps").a, 137u);
  EXPECT_EQ(r.at("helps").b, 1013u);
  EXPECT_EQ(r.at("wakes").a, 220u);
  EXPECT_EQ(r.at("wakes (io)").a, 72u);
  EXPECT_EQ(r.at("wakes (io)").b, 0u);
  EXPECT_EQ(r.at("sleeps").a, 220u);
  // Compared, equal, not flagged.
  for (const char* what :
       {"steals", "releases", "IO submitted", "events dropped", "warnings", "lane pops", "worker 1: helps", "tasks"}) {
    ASSERT_TRUE(r.count(what)) << what << " is not compared";
    EXPECT_FALSE(r.at(what).notable) << what;
  }
  // IO latency is among the latency rows.
  bool io = false;
  for (const auto& l : c.latencies) io = io || l.what == "IO latency";
  EXPECT_TRUE(io);
  // The notable total counts the count rows.
  std::size_t notable = 0;
  for (const auto& row : c.counts) notable += row.notable;
  EXPECT_GE(c.notable_count(), notable);
  EXPECT_GT(notable, 0u);
}

TEST(CompareCounts, SmallChangesAreNotFlagged) {
  Analysis a, b;
  run(a, 100, 40, 0);
  run(b, 110, 44, 0);  // +10 %: not "by half"
  const auto r = rows(analysis::compare(a, "A", b, "B"));
  EXPECT_FALSE(r.at("helps").notable);
  EXPECT_FALSE(r.at("wakes").notable);
}

// tasks: 10 independent tasks of `each` ns on one worker at level tasks (a graph without
// edges: work 10 x each, span each, parallelism 10).
void tasks(Analysis& a, std::uint64_t each) {
  trace::TraceHeader h;
  h.producer = "compare_counts_test";
  h.workers = 1;
  h.level = trace::Level::tasks;
  a.set_header(h, true);
  std::uint64_t t = 1000;
  a.add(make_event(t, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::started}));
  for (std::uint64_t id = 1; id <= 10; ++id) {
    a.add(make_event(t += 10, 0, TaskBeginPayload{id, TaskSource::own_lane}));
    a.add(make_event(t += each, 0, TaskEndPayload{id, false, 0}));
  }
  a.finish();
}

TEST(CompareGraph, WorkSpanAndParallelismAreComparedAndLargeChangesAreNotable) {
  Analysis a, b;
  tasks(a, 1000);
  tasks(b, 1500);  // every task half as long again: work and span x1.5, parallelism the same
  const Comparison c = analysis::compare(a, "A", b, "B");
  ASSERT_EQ(c.graph.size(), 3u);
  std::map<std::string, Comparison::GraphFigure> g;
  for (const auto& r : c.graph) g.emplace(r.what, r);
  ASSERT_TRUE(g.at("work").a && g.at("work").b);
  EXPECT_NEAR(*g.at("work").b / *g.at("work").a, 1.5, 0.01);
  EXPECT_TRUE(g.at("work").notable);
  EXPECT_TRUE(g.at("span").notable);
  ASSERT_TRUE(g.at("parallelism").a && g.at("parallelism").b);
  EXPECT_NEAR(*g.at("parallelism").a, 10, 0.01);
  EXPECT_FALSE(g.at("parallelism").notable) << "the same parallelism is flagged";
  // A small change is not notable.
  Analysis d;
  tasks(d, 1100);
  const Comparison small = analysis::compare(a, "A", d, "D");
  for (const auto& r : small.graph) EXPECT_FALSE(r.notable) << r.what;
}

}  // namespace
