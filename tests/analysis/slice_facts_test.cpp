// slice_facts_test.cpp - what the analysis keeps per task slice, steal and wake, read
// the way the views read it (the timeline's tooltip, the Chrome export, the Health panel).
#include <gtest/gtest.h>

#include <vector>

#include "lantern/analysis/analysis.hpp"

namespace {

using namespace lantern;
using analysis::Analysis;
using analysis::Tick;
using trace::make_event;

trace::TraceHeader header(std::uint32_t workers) {
  trace::TraceHeader h;
  h.producer = "slice_facts_test";
  h.workers = workers;
  h.clock = trace::ClockCalibration{true, 1.0 / 3.0, 0, 0};  // a 3 GHz TSC
  return h;
}

void feed(Analysis& a, const std::vector<trace::Event>& events) {
  for (const trace::Event& e : events) a.add(e);
  a.finish();
}

// A task that waited 3 s in a lane on a 3 GHz clock waited 9e9 ticks: more than 32 bits
// hold. The tooltip printed the slice's wait, saturated to 2^32 - 2 ticks (1.43 s), while
// the latency figures and the health check used the whole wait.
TEST(SliceFacts, AReadyWaitLongerThan32BitsIsKeptWhole) {
  const Tick long_wait = 9'000'000'000ull;  // 3 s at 3 GHz
  const Tick short_wait = 1'234;
  const Tick at = 20'000'000'000ull;
  Analysis a;
  a.set_header(header(1), true);
  feed(a, {
              make_event(at, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::found_work}),
              make_event(at, 0, LanePopPayload{0, long_wait}),
              make_event(at + 10, 0, TaskBeginPayload{1, TaskSource::own_lane}),
              make_event(at + 20, 0, TaskEndPayload{1, false}),
              make_event(at + 30, 0, LanePopPayload{0, short_wait}),
              make_event(at + 40, 0, TaskBeginPayload{2, TaskSource::help}),
              make_event(at + 50, 0, TaskEndPayload{2, false}),
              make_event(at + 60, 0, TaskBeginPayload{3, TaskSource::own_deque}),  // not from a lane
              make_event(at + 70, 0, TaskEndPayload{3, false}),
              make_event(at + 80, 0, TaskBeginPayload{4, TaskSource::own_lane}),  // its lane pop was not recorded
              make_event(at + 90, 0, TaskEndPayload{4, false}),
          });
  const analysis::WorkerTrack& t = a.track(0);
  ASSERT_EQ(t.slices(0).size(), 4u);
  EXPECT_EQ(t.ready_wait(t.slices(0)[0]), std::optional<Tick>(long_wait)) << "the tooltip's wait is the whole wait";
  EXPECT_EQ(t.ready_wait(t.slices(0)[1]), std::optional<Tick>(short_wait));
  EXPECT_EQ(t.ready_wait(t.slices(0)[2]), std::nullopt) << "from its own deque: no lane wait";
  EXPECT_EQ(t.ready_wait(t.slices(0)[3]), std::nullopt) << "no lane pop before it: no wait known";
  // The same wait as the figures that print it (stats' ready wait, the latency view).
  EXPECT_DOUBLE_EQ(a.summary().ready_wait.max_ns, static_cast<double>(a.to_ns(long_wait)));
}

// Views read the vocabulary values the analysis stores through typed accessors, and a
// value outside its table (damaged data) has no name rather than an out-of-bounds one.
TEST(SliceFacts, TypedAccessorsNameWhatIsStored) {
  Analysis a;
  a.set_header(header(2), true);
  trace::Event bad_steal = make_event(200, 1, StealPayload{0, StealDistance::numa, TaskSource::stolen_lane});
  bad_steal.b = 0xEE;  // distance 0xEE, source 0: damaged
  feed(a, {
              make_event(100, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::found_work}),
              make_event(100, 1, StatePayload{WorkerState::sleeping, WorkerState::idle, StateReason::woken}),
              make_event(100, 1, WakePayload{0, WakeCause::latch, 10}),
              make_event(150, 1, StealPayload{0, StealDistance::numa, TaskSource::stolen_lane}),
              make_event(160, 1, TaskBeginPayload{7, TaskSource::stolen_lane}),
              make_event(170, 1, TaskEndPayload{7, false}),
              bad_steal,
          });
  const analysis::WorkerTrack& t = a.track(1);
  ASSERT_EQ(t.slices(0).size(), 1u);
  EXPECT_EQ(t.slices(0)[0].task_source(), TaskSource::stolen_lane);
  EXPECT_EQ(t.interval_reason(static_cast<std::size_t>(t.interval_at(100))), StateReason::woken);
  ASSERT_EQ(a.steals(1).size(), 2u);
  EXPECT_EQ(a.steals(1)[0].steal_distance(), StealDistance::numa);
  EXPECT_EQ(a.steals(1)[0].task_source(), TaskSource::stolen_lane);
  EXPECT_FALSE(valid(a.steals(1)[1].steal_distance()));
  EXPECT_EQ(name_of(a.steals(1)[1].steal_distance()), "");
  ASSERT_EQ(a.wakes(1).size(), 1u);
  EXPECT_EQ(a.wakes(1)[0].cause(), WakeCause::latch);
  analysis::Wake damaged = a.wakes(1)[0];
  damaged.why = 0x100 + static_cast<std::uint32_t>(WakeCause::io);  // never wraps into the table
  EXPECT_FALSE(valid(damaged.cause()));
}

// The Health panel at a replay's playhead counts what had happened by then: findings
// that had ended, and those going on at the playhead; at the newest event it is THE count.
TEST(SliceFacts, HealthAsOfAPlayhead) {
  Analysis a;
  trace::TraceHeader h = header(2);
  h.clock = trace::ClockCalibration{false, 1.0, 0, 0};  // 1 tick = 1 ns
  a.set_header(h, true);
  const Tick ms = 1'000'000;
  feed(a, {
              make_event(0, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::found_work}),
              make_event(0, 1, StatePayload{WorkerState::idle, WorkerState::active, StateReason::found_work}),
              make_event(1 * ms, 0, TaskBeginPayload{1, TaskSource::own_deque}),
              make_event(13 * ms, 0, TaskEndPayload{1, false}),  // 12 ms: a long task, ended at 13 ms
              make_event(10 * ms, 1, TaskBeginPayload{2, TaskSource::own_deque}),
              make_event(40 * ms, 1, TaskEndPayload{2, false}),  // 30 ms, ended at 40 ms
              make_event(80 * ms, 0, StatePayload{WorkerState::active, WorkerState::sleeping, StateReason::fell_asleep}),
              make_event(80 * ms, 1, StatePayload{WorkerState::active, WorkerState::sleeping, StateReason::fell_asleep}),
          });
  const analysis::HealthChecker& c = a.health();
  ASSERT_EQ(c.problems().size(), 2u);
  EXPECT_EQ(c.warning_count(a, a.last_tick()), c.warning_count(a));
  EXPECT_EQ(c.ended_by(12 * ms).size(), 0u);
  EXPECT_EQ(c.warning_count(a, 12 * ms), 1u) << "worker 0's task, going on at 12 ms for 11 ms";
  EXPECT_EQ(c.ended_by(30 * ms).size(), 1u);
  EXPECT_EQ(c.warning_count(a, 30 * ms), 2u) << "worker 0's, ended; worker 1's, going on for 20 ms";
  EXPECT_EQ(c.warning_count(a, 5 * ms), 0u);
}

}  // namespace
