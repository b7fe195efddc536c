// SPDX-License-Identifier: Apache-2.0
// chrome_wake_arrows_test.cpp - the Chrome export's wake_arrows is the analysis' number
// (Summary::wake_arrows, lantern-trace stats' "by a worker of the pool"), and the arrows
// it could draw have a name of their own.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "chrome_export.hpp"
#include "lantern/analysis/analysis.hpp"

namespace {

using namespace lantern;
using nlohmann::json;
using trace::make_event;

json export_json(const analysis::Analysis& a, const trace::TraceHeader& h, trace::cli::ChromeExportCounts* counts) {
  std::FILE* f = std::tmpfile();
  EXPECT_NE(f, nullptr);
  EXPECT_TRUE(trace::cli::write_chrome_trace(f, h, a, 0, counts));
  std::rewind(f);
  std::string text;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  return json::parse(text);
}

// A dump (a flight recorder's, or a live stream joined late): worker 2's record starts
// after it woke worker 1 and holds no state event, so the arrow's start has no state
// slice to bind to. The analysis counts the wake as one by a worker of the pool; the
// export's wake_arrows left it out (1 where stats says 2).
TEST(ChromeWakeArrows, WakeArrowsIsTheAnalysisNumber) {
  trace::TraceHeader h;
  h.producer = "chrome_wake_arrows_test";
  h.workers = 3;
  h.clock = trace::ClockCalibration{false, 1.0, 0, 0};
  analysis::Analysis a;
  a.set_header(h, true);
  const std::vector<trace::Event> events = {
      make_event(1000, 1, StatePayload{WorkerState::idle, WorkerState::sleeping, StateReason::fell_asleep}),
      // Worker 2 woke worker 1 at 1200; worker 2's record begins at 1400, state unknown.
      make_event(1400, 2, StealRoundFailedPayload{1, 0}),
      make_event(1500, 1, WakePayload{2, WakeCause::work, 300}),
      make_event(1500, 1, StatePayload{WorkerState::sleeping, WorkerState::idle, StateReason::woken}),
      make_event(1600, 1, StatePayload{WorkerState::idle, WorkerState::sleeping, StateReason::fell_asleep}),
      // Worker 0 wakes worker 1, with a state slice at both ends: drawn.
      make_event(1700, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::found_work}),
      make_event(1900, 1, WakePayload{0, WakeCause::latch, 100}),
      make_event(1900, 1, StatePayload{WorkerState::sleeping, WorkerState::idle, StateReason::woken}),
      make_event(2000, 1, StatePayload{WorkerState::idle, WorkerState::sleeping, StateReason::fell_asleep}),
      make_event(2100, 1, WakePayload{kOutsideWaker, WakeCause::work, 50}),  // from outside the pool
      make_event(2100, 1, StatePayload{WorkerState::sleeping, WorkerState::idle, StateReason::woken}),
      make_event(2200, 1, StatePayload{WorkerState::idle, WorkerState::sleeping, StateReason::fell_asleep}),
      make_event(2300, 1, WakePayload{kOutsideWaker, WakeCause::io, 0}),  // an IO completion
      make_event(2300, 1, StatePayload{WorkerState::sleeping, WorkerState::idle, StateReason::woken}),
      make_event(2400, 0, StatePayload{WorkerState::active, WorkerState::idle, StateReason::out_of_work}),
  };
  for (const trace::Event& e : events) ASSERT_TRUE(a.add(e));
  a.finish();
  const analysis::Summary s = a.summary();
  ASSERT_EQ(s.wakes, 4u);
  ASSERT_EQ(s.wake_arrows, 2u) << "by workers 2 and 0";

  trace::cli::ChromeExportCounts counts;
  const json doc = export_json(a, h, &counts);
  std::uint64_t flow_starts = 0;
  for (const json& e : doc.at("traceEvents")) flow_starts += e.at("ph") == "s" && e.at("name") == "wake";
  const json& other = doc.at("otherData");
  EXPECT_EQ(other.at("wake_arrows").get<std::uint64_t>(), s.wake_arrows) << "the analysis' number, as stats prints it";
  EXPECT_EQ(other.at("wake_arrows_drawn").get<std::uint64_t>(), 1u);
  EXPECT_EQ(other.at("wake_arrows_drawn").get<std::uint64_t>(), flow_starts) << "the arrows drawn are the flows";
  const json& without = other.at("wakes_without_arrow");
  EXPECT_EQ(without.at("an_end_has_no_state_slice").get<std::uint64_t>(), 1u);
  EXPECT_EQ(without.at("waker_outside_the_pool").get<std::uint64_t>(), 1u);
  EXPECT_EQ(without.at("io_completion_no_waker").get<std::uint64_t>(), 1u);
  // Every wake is accounted for once, and the analysis' arrows are drawn or said not to be.
  EXPECT_EQ(other.at("wakes").get<std::uint64_t>(), other.at("wake_arrows_drawn").get<std::uint64_t>() +
                                                        without.at("an_end_has_no_state_slice").get<std::uint64_t>() +
                                                        without.at("waker_outside_the_pool").get<std::uint64_t>() +
                                                        without.at("io_completion_no_waker").get<std::uint64_t>());
  EXPECT_EQ(other.at("wake_arrows").get<std::uint64_t>(),
            other.at("wake_arrows_drawn").get<std::uint64_t>() +
                without.at("an_end_has_no_state_slice").get<std::uint64_t>());
  EXPECT_EQ(counts.wake_arrows, s.wake_arrows);
  EXPECT_EQ(counts.wake_flows, 1u);
}

}  // namespace
