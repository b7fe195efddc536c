// SPDX-License-Identifier: Apache-2.0
// preemption_test.cpp - a long task whose thread waited for a CPU (task_end's
// off_cpu_ticks, measured by the Recorder): the analysis keeps it per slice, Health says
// "preempted" (and gives advice about CPUs, not the code) when the wait was most of the
// task, and the Chrome export carries it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chrome_export.hpp"
#include "lantern/analysis/analysis.hpp"

namespace {

using namespace lantern;
using analysis::Analysis;
using analysis::Problem;
using analysis::ProblemKind;
using trace::make_event;

constexpr std::uint64_t kMs = 1'000'000;  // ticks: 1 tick = 1 ns here

void run(Analysis& a) {
  trace::TraceHeader h;
  h.producer = "preemption_test";
  h.workers = 1;
  h.clock = trace::ClockCalibration{false, 1.0, 0, 0};
  a.set_header(h, true);
  const std::vector<trace::Event> events = {
      make_event(0, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::started}),
      // 20 ms, of which 15 ms waiting for a CPU: the kernel made it long.
      make_event(1 * kMs, 0, TaskBeginPayload{0xA, TaskSource::own_deque}),
      make_event(21 * kMs, 0, TaskEndPayload{0xA, false, 15 * kMs}),
      // 20 ms, 1 ms of it waiting: the task's own doing.
      make_event(100 * kMs, 0, TaskBeginPayload{0xB, TaskSource::own_deque}),
      make_event(120 * kMs, 0, TaskEndPayload{0xB, true, 1 * kMs}),
      make_event(200 * kMs, 0, StatePayload{WorkerState::active, WorkerState::idle, StateReason::stopping}),
  };
  for (const auto& e : events) a.add(e);
  a.advance_health();
  a.finish();
}

TEST(Preemption, TheAnalysisKeepsTheWaitAndHealthTellsPreemptionFromSlowCode) {
  Analysis a;
  run(a);
  const analysis::WorkerTrack& t = a.track(0);
  ASSERT_EQ(t.slices(0).size(), 2u);
  EXPECT_EQ(t.off_cpu(t.slices(0)[0]), 15 * kMs);
  EXPECT_EQ(t.off_cpu(t.slices(0)[1]), 1 * kMs);
  EXPECT_TRUE(t.slices(0)[1].flags & analysis::kSliceThrew) << "threw still reads as before";
  EXPECT_EQ(a.off_cpu_tasks(), 2u);
  std::vector<Problem> long_tasks;
  for (const Problem& p : a.health().problems())
    if (p.kind == ProblemKind::long_task) long_tasks.push_back(p);
  ASSERT_EQ(long_tasks.size(), 2u);
  EXPECT_EQ(long_tasks[0].detail, 0xAu);
  EXPECT_EQ(long_tasks[0].off_cpu, 15 * kMs);
  EXPECT_EQ(long_tasks[0].task_ticks, 20 * kMs);
  EXPECT_TRUE(analysis::preempted(long_tasks[0]));
  EXPECT_NE(std::string(analysis::problem_advice(long_tasks[0])).find("Preempted"), std::string::npos);
  EXPECT_EQ(std::string(analysis::problem_advice(long_tasks[0])).find("split it"), std::string::npos)
      << "a preempted task is not blamed on its code";
  EXPECT_FALSE(analysis::preempted(long_tasks[1]));
  EXPECT_STREQ(analysis::problem_advice(long_tasks[1]), analysis::problem_kind_advice(ProblemKind::long_task));
}

TEST(Preemption, TheChromeExportCarriesTheWait) {
  Analysis a;
  run(a);
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&buf, &size);
  trace::cli::ChromeExportCounts counts;
  ASSERT_TRUE(trace::cli::write_chrome_trace(out, trace::TraceHeader{}, a, 0, &counts));
  std::fclose(out);
  const std::string json(buf, size);
  std::free(buf);
  EXPECT_NE(json.find("\"waited_for_cpu_ns\":15000000"), std::string::npos);
  EXPECT_NE(json.find("\"waited_for_cpu_ns\":1000000"), std::string::npos);
}

}  // namespace
