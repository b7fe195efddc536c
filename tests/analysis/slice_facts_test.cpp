// SPDX-License-Identifier: Apache-2.0
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
  feed(a,
       {
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

namespace {

// IO operations are paired by id in time order, whichever order the workers' batches come
// in. Worker 1 completes operation X for worker 0 (at 150), then submits it again (the
// address reused, 200) and completes it (250); worker 1's batch comes first, as a file's
// interleaving may have it. Paired in arrival order, the completion at 150 matched the
// submission at 200 (a slice ending before it began) and 100 matched 250.
TEST(IoPairs, AreMatchedInTimeOrderWhicheverWorkerBatchComesFirst) {
  constexpr std::uint64_t x = 0x7f00'0000'1000;
  const Tick at = 1'000'000;
  const auto submit = [](Tick t, std::uint32_t w) { return make_event(t, w, IoSubmitPayload{x, IoKind::read, 5}); };
  const auto complete = [](Tick t, std::uint32_t w, std::int64_t r) {
    return make_event(t, w, IoCompletePayload{x, r});
  };
  const auto stopping = [](Tick t, std::uint32_t w) {
    return make_event(t, w, StatePayload{WorkerState::idle, WorkerState::idle, StateReason::stopping});
  };
  Analysis a;
  a.set_header(header(2), true);
  // Live: worker 1's batch, then worker 0's. Nothing can be paired before worker 0 has
  // reported past the events (its submission at 100 could still arrive).
  for (const auto& e : {complete(at + 150, 1, 10), submit(at + 200, 1), complete(at + 250, 1, 20)}) a.add(e);
  EXPECT_TRUE(a.io_pairs().empty()) << "paired before every worker had reported that far";
  a.add(submit(at + 100, 0));
  a.add(make_event(at + 300, 0, StatePayload{WorkerState::active, WorkerState::idle, StateReason::out_of_work}));
  // Worker 0 is past 250 and worker 1 at 250: everything up to 250 is final.
  ASSERT_EQ(a.io_pairs().size(), 2u) << "live pairing waits for the slowest worker only";
  EXPECT_EQ(a.io_pairs()[0].submitted, at + 100);
  EXPECT_EQ(a.io_pairs()[0].completed, at + 150);
  EXPECT_EQ(a.io_pairs()[0].submit_worker, 0u);
  EXPECT_EQ(a.io_pairs()[0].complete_worker, 1u);
  EXPECT_EQ(a.io_pairs()[0].result, 10);
  EXPECT_EQ(a.io_pairs()[1].submitted, at + 200);
  EXPECT_EQ(a.io_pairs()[1].completed, at + 250);
  EXPECT_EQ(a.io_pairs()[1].result, 20);
  EXPECT_TRUE(a.in_flight().empty());
  // The completion's own record names the kind its submission had.
  ASSERT_EQ(a.io(1).size(), 3u);
  EXPECT_EQ(a.io(1)[0].kind, IoKind::read);
  // A submission whose completion was lost (dropped), then the id reused: counted as
  // unpaired, and the later pair is still right.
  for (const auto& e : {submit(at + 400, 0), submit(at + 500, 0), complete(at + 520, 1, 7), stopping(at + 600, 0),
                        stopping(at + 610, 1)}) {
    a.add(e);
  }
  a.finish();
  ASSERT_EQ(a.io_pairs().size(), 3u);
  EXPECT_EQ(a.io_pairs()[2].submitted, at + 500);
  EXPECT_EQ(a.io_pairs()[2].completed, at + 520);
  EXPECT_EQ(a.io_unpaired(), 1u);
  const analysis::Summary s = a.summary();
  EXPECT_EQ(s.io_unpaired, 1u) << "what stats prints";
  EXPECT_EQ(s.io_latency.count, 3u) << "every pair is a latency sample";
  EXPECT_DOUBLE_EQ(s.io_latency.max_ns, static_cast<double>(a.to_ns(50)));
}

}  // namespace
