// SPDX-License-Identifier: Apache-2.0
// model_test.cpp - the viewer's Model without a window: intervals, occupancy at any
// zoom, task nesting, steals, series, histograms and incremental equals whole.
#include <gtest/gtest.h>

#include <lantern/trace/chunk_encoder.hpp>
#include <lantern/trace/trace_writer.hpp>
#include <lantern/viewer/model.hpp>
#include <lantern/viewer/synthetic_trace.hpp>

#include "trace_builder.hpp"

namespace lantern::viewer {
namespace {

using test::TraceBuilder;

TEST(WorkerTrack, StateIntervalsAndOccupancyAtAnyRange) {
  TraceBuilder b(1);
  b.state(0, 100, 1, 0);   // idle -> active at 100
  b.state(0, 300, 0, 1);   // active -> idle at 300
  b.state(0, 400, 1, 3);   // idle -> sleeping at 400
  b.state(0, 1000, 3, 1);  // woken at 1000
  Model m;
  b.apply_to(m);
  const WorkerTrack& t = m.track(0);
  ASSERT_EQ(t.interval_count(), 4u);  // the unknown interval at 100 became "idle", replaced by active
  EXPECT_EQ(t.interval_state(0), 0);
  const Occupancy all = t.occupancy(100, 1100, 1100);
  EXPECT_DOUBLE_EQ(all[0], 200);        // active 100..300
  EXPECT_DOUBLE_EQ(all[1], 100 + 100);  // idle 300..400, 1000..1100
  EXPECT_DOUBLE_EQ(all[3], 600);
  const Occupancy part = t.occupancy(250, 450, 1100);
  EXPECT_DOUBLE_EQ(part[0], 50);
  EXPECT_DOUBLE_EQ(part[1], 100);
  EXPECT_DOUBLE_EQ(part[3], 50);
}

TEST(WorkerTrack, OccupancyMatchesBruteForceAcrossCheckpoints) {
  TraceBuilder b(1);
  std::uint64_t t = 1000;
  int state = 1;
  for (int i = 0; i < 500; ++i) {
    const int to = (state + 1 + i % 3) % 4;
    b.state(0, t, state, to);
    state = to;
    t += 7 + (i * 13) % 50;
  }
  Model m;
  b.apply_to(m);
  const WorkerTrack& track = m.track(0);
  for (Tick a : {1000ull, 1003ull, 1500ull, 4000ull}) {
    for (Tick len : {1ull, 17ull, 333ull, 9000ull}) {
      Occupancy brute{};
      for (std::size_t i = 0; i < track.interval_count(); ++i) {
        const Tick s = std::max(a, track.interval_start(i)), e = std::min(a + len, track.interval_end(i, t));
        if (e > s) brute[track.interval_state(i)] += static_cast<double>(e - s);
      }
      const Occupancy fast = track.occupancy(a, a + len, t);
      for (int s = 0; s < kStateSlots; ++s) EXPECT_DOUBLE_EQ(fast[s], brute[s]) << a << "+" << len;
    }
  }
}

TEST(WorkerTrack, NestedTasksStackMatchAndInheritWaitAndSteal) {
  TraceBuilder b(2);
  b.state(0, 10, 1, 0);
  b.event(0, 11, EventId::lane_pop, 0, 500);
  b.task_begin(0, 12, 7, 1);  // own lane: ready wait 500
  b.task_begin(0, 20, 8, 0);  // nested (join)
  b.task_end(0, 30, 8);
  b.event(0, 40, EventId::steal, 1, 2 | (2 << 8));
  b.task_begin(0, 41, 9, 2);  // stolen: brings the steal
  b.task_end(0, 50, 9);
  b.task_end(0, 60, 7);
  Model m;
  b.apply_to(m);
  const WorkerTrack& t = m.track(0);
  ASSERT_EQ(t.depth_count(), 2);
  ASSERT_EQ(t.slices(0).size(), 1u);
  EXPECT_EQ(t.slices(0)[0].start, 12u);
  EXPECT_EQ(t.slices(0)[0].end, 60u);
  EXPECT_EQ(t.ready_wait(t.slices(0)[0]), std::optional<Tick>(500));
  ASSERT_EQ(t.slices(1).size(), 2u);
  EXPECT_EQ(t.slices(1)[1].steal, 0);
  EXPECT_EQ(m.steals(0)[0].victim, 1u);
  EXPECT_EQ(m.steal_count(0, 1), 1u);
  EXPECT_EQ(m.task_duration().count(), 3u);
}

TEST(WorkerTrack, LostEndClosesInnerTasks) {
  TraceBuilder b(1);
  b.task_begin(0, 10, 1, 0);
  b.task_begin(0, 20, 2, 0);  // its end is lost
  b.task_end(0, 50, 1);
  b.task_end(0, 60, 99);  // never began here
  Model m;
  b.apply_to(m);
  const WorkerTrack& t = m.track(0);
  EXPECT_EQ(t.slices(1)[0].end, 50u);
  EXPECT_TRUE(t.slices(1)[0].flags & kSliceEndLost);
  EXPECT_EQ(t.unmatched_ends(), 1u);
  EXPECT_EQ(t.open_depth(), 0);
}

TEST(Model, LabelsReleasesAndIoEventsFromAFile) {
  using lantern::EventId;
  TraceBuilder b(2);
  b.state(0, 10, 1, 0);
  b.state(1, 10, 1, 0);
  // Worker 1 runs task 6 before the file shows what released it: the collector drained
  // worker 1's ring first. The model must link the release either way.
  b.task_begin(1, 300, 6, 0);
  b.event(1, 301, EventId::task_label, 6, 2);
  b.event(1, 310, EventId::io_submit, 77, 0 | 5 << 8);
  b.task_end(1, 350, 6);
  b.task_begin(0, 100, 1, 1);
  b.event(0, 101, EventId::task_label, 1, 1);
  b.event(0, 102, EventId::task_label, 1, 3);    // named twice: the last name counts
  b.event(0, 150, EventId::release, 5, 1);       // task 1 releases task 5 ...
  b.event(0, 160, EventId::release, 6, 1);       // ... and task 6 (already in the file)
  b.event(0, 170, EventId::release, 8, 0x5160);  // a signal released task 8: no releasing task
  b.task_end(0, 200, 1);
  b.task_begin(1, 400, 5, 0);  // task 5 begins after its release
  b.task_end(1, 450, 5);
  b.event(1, 500, EventId::io_complete, 77, 4096);
  trace::LabelTable names;
  names.define(1, "parse");
  names.define(2, "render");
  names.define(3, "compress");
  auto session = test::load(b.bytes(&names), 5);
  std::lock_guard<std::mutex> lock(session->mutex());
  Model& m = session->model();
  m.prepare_series();
  ASSERT_TRUE(m.trace_problems().empty());
  EXPECT_EQ(m.labels(), names);
  EXPECT_EQ(m.label_name(3), "compress");
  EXPECT_EQ(m.label_name(9), "label 9");
  EXPECT_EQ(m.label_uses(), (std::map<std::uint32_t, std::uint64_t>{{1, 1}, {2, 1}, {3, 1}}));
  EXPECT_EQ(m.track(0).slices(0)[0].label, 3u);
  EXPECT_EQ(m.track(1).slices(0)[0].label, 2u);  // task 6
  EXPECT_EQ(m.track(1).slices(0)[1].label, 0u);  // task 5 never named itself

  ASSERT_EQ(m.releases(0).size(), 3u);
  for (const Release& r : m.releases(0)) {
    SCOPED_TRACE("release of task " + std::to_string(r.released));
    if (r.released == 8) {
      EXPECT_FALSE(r.from.valid());  // a signal, not a task of worker 0
      EXPECT_FALSE(r.to.valid());    // task 8 never ran in this trace
      continue;
    }
    ASSERT_TRUE(r.from.valid());
    EXPECT_EQ(m.slice(r.from).id, 1u);
    ASSERT_TRUE(r.to.valid());
    EXPECT_EQ(r.to.worker, 1);
    EXPECT_EQ(m.slice(r.to).id, r.released);
    EXPECT_GE(m.slice(r.to).start, r.t);
  }
  ASSERT_EQ(m.io(1).size(), 2u);
  EXPECT_FALSE(m.io(1)[0].completed);
  EXPECT_TRUE(m.io(1)[1].completed);
  EXPECT_EQ(m.io(1)[1].value, 4096u);
  const TimeSeries* ts = m.series();
  ASSERT_NE(ts, nullptr);
  const double all = 1 << 20;  // whole buckets: a sum inside one interpolates
  EXPECT_DOUBLE_EQ(ts->sum(kSeriesReleases, -all, all), 3.0);
  EXPECT_DOUBLE_EQ(ts->sum(kSeriesIoSubmits, -all, all), 1.0);
  EXPECT_DOUBLE_EQ(ts->sum(kSeriesIoCompletions, -all, all), 1.0);
}

// The pool's not-ready count is one gauge, sampled by whichever worker: each sample holds
// until the next one in time. Workers' batches interleave (all of worker 0's samples, then
// worker 1's, older ones among them), so the series follows the analysis' time-ordered
// samples; taking them in arrival order would draw worker 0's value over worker 1's
// later samples, values the pool never had.
TEST(Model, NotReadyTasksFollowTheSamplesInTimeOrderAcrossWorkers) {
  const std::uint64_t t0 = 1 << 20, u = 100 << 10;  // whole 1,024-tick buckets
  TraceBuilder b(2);
  b.state(0, t0, 1, 0);  // time zero
  b.event(0, t0 + u, EventId::not_ready, 1, 0);
  b.event(0, t0 + 3 * u, EventId::not_ready, 3, 0);
  b.event(1, t0, EventId::not_ready, 5, 0);          // before every sample so far
  b.event(1, t0 + 2 * u, EventId::not_ready, 2, 0);  // between worker 0's two
  b.event(1, t0 + 4 * u, EventId::not_ready, 4, 0);  // the last: holds until the next
  Model m;
  b.apply_to(m);
  m.prepare_series();
  ASSERT_EQ(m.analysis().not_ready_samples().size(), 5u);
  const TimeSeries* ts = m.series();
  ASSERT_NE(ts, nullptr);
  const double du = static_cast<double>(u);
  auto level = [&](int k) { return ts->sum(kSeriesNotReady, k * du, (k + 1) * du) / du; };
  EXPECT_DOUBLE_EQ(level(0), 5.0);
  EXPECT_DOUBLE_EQ(level(1), 1.0);
  EXPECT_DOUBLE_EQ(level(2), 2.0);
  EXPECT_DOUBLE_EQ(level(3), 3.0);
  EXPECT_DOUBLE_EQ(level(4), 0.0);  // nothing after the last sample yet
}

TEST(TimeSeries, PointsAndIntervalsSumOverAnyRange) {
  TimeSeries s(2, 1000, 1 << 20, 4);  // 16-tick buckets
  s.add_point(0, 1000, 1);
  s.add_point(0, 1100, 2);
  s.add_interval(1, 1010, 1500, 1);  // one task queued for 490 ticks
  s.add_interval(1, 1200, 1210, 2);
  s.prepare();
  EXPECT_DOUBLE_EQ(s.sum(0, 0, 1000), 3);
  EXPECT_DOUBLE_EQ(s.sum(1, 0, 1000), 490 + 20);
  EXPECT_NEAR(s.sum(1, 100, 300), 200 + 20, 1e-9);
}

TEST(TimeSeries, CoarsensInsteadOfGrowingPastTheBudget) {
  TimeSeries s(1, 0, 64, 0);
  for (std::uint64_t t = 0; t < 10000; t += 10) s.add_point(0, t, 1);
  s.add_interval(0, 0, 10000, 0.5);
  s.prepare();
  EXPECT_LE(s.bucket_count(), 64u);
  EXPECT_NEAR(s.sum(0, 0, 20000), 1000 + 5000, 1e-6);
}

TEST(Model, SyntheticTraceFedByteByByteEqualsWholeFile) {
  SyntheticOptions o;
  o.workers = 3;
  o.target_events = 20000;
  const auto bytes = synthetic_trace_bytes(o);
  const auto whole_session = test::load(bytes, bytes.size());
  const auto trickle_session = test::load(bytes, 7);
  const Model& whole = whole_session->model();
  const Model& trickle = trickle_session->model();
  EXPECT_EQ(whole.events(), trickle.events());
  EXPECT_GE(whole.events(), 20000u);
  for (std::uint32_t w = 0; w < 3; ++w) {
    EXPECT_EQ(whole.track(w).interval_count(), trickle.track(w).interval_count());
    EXPECT_EQ(whole.steals(w).size(), trickle.steals(w).size());
  }
  EXPECT_EQ(whole.health().problems().size(), trickle.health().problems().size());
  EXPECT_TRUE(whole.trace_problems().empty()) << trace::describe(whole.trace_problems().front());
}

TEST(Model, StopsGrowingAtItsEventLimit) {
  TraceBuilder a(1), b(1);
  for (int i = 0; i < 80; ++i) a.event(0, 10 + i, EventId::steal_round_failed, 1, 0);
  for (int i = 0; i < 50; ++i) b.event(0, 100 + i, EventId::steal_round_failed, 1, 0);
  Model m;
  m.set_event_limit(100);
  a.apply_to(m);
  m.apply(b.events());
  // Exactly the limit is kept: the batch that crosses it is cut, not dropped whole (with
  // --max-events 10, the first chunk alone was over the limit and nothing was kept).
  EXPECT_EQ(m.events(), 100u);
  EXPECT_EQ(m.discarded_events(), 30u);
  EXPECT_NE(m.status().message.find("memory limit reached after 100 events"), std::string::npos) << m.status().message;
  m.apply(b.events());
  EXPECT_EQ(m.events(), 100u);
  EXPECT_EQ(m.discarded_events(), 80u);
  Model small;
  small.set_event_limit(10);
  a.apply_to(small);
  EXPECT_EQ(small.events(), 10u);
  EXPECT_EQ(small.discarded_events(), 70u);
}

TEST(Model, SyntheticProblemsAreFound) {
  SyntheticOptions o;
  o.workers = 4;
  o.target_events = 100000;  // covers periods 0-2, where problems are planted
  const auto session = test::load(synthetic_trace_bytes(o), 1 << 16);
  const Model* m = &session->model();
  const HealthChecker& h = m->health();
  EXPECT_GE(h.count(ProblemKind::long_task), 1u);
  EXPECT_GE(h.count(ProblemKind::spinning), 1u);
  EXPECT_GE(h.count(ProblemKind::queued_while_asleep), 1u);
  EXPECT_GE(h.count(ProblemKind::events_dropped), 1u);
  EXPECT_EQ(m->dropped_events(), 750u);
  EXPECT_GT(m->ready_wait().count(), 0u);
  EXPECT_GT(m->wake_latency().count(), 0u);
}

// A worker flapping between idle and sleepy - never finding work, never reaching
// sleeping - searches for the whole run, however short each interval: one finding.
TEST(Health, IdleSleepyFlappingIsSearchingWithoutWork) {
  TraceBuilder b(1);
  b.state(0, 0, 1, 0);     // idle -> active
  b.state(0, 1000, 0, 1);  // active -> idle
  std::uint64_t t = 1000;
  for (int k = 0; k < 20; ++k) {  // 20 x (0.2 ms idle + 0.2 ms sleepy) = 8 ms of search
    b.state(0, t += 200'000, 1, 2);
    b.state(0, t += 200'000, 2, 1);
  }
  b.state(0, t += 1000, 1, 0);  // found work at last
  b.state(0, t += 1000, 0, 1);
  Model m;
  b.apply_to(m);
  m.finish();
  ASSERT_EQ(m.health().count(ProblemKind::spinning), 1u) << "each interval is 0.2 ms, the run is 8 ms (threshold 5 ms)";
  const Problem& p = m.health().problems().at(0);
  EXPECT_EQ(p.start, 1000u);
  EXPECT_GE(p.value, 8'000'000u);
}

// A worker that stopped (its `stopping` state event: the thread ended) is not searching,
// however long the trace runs on after it: at the end of a trace, or at a playhead past
// the stop, it is not an ongoing "searching without work". Before, its last interval
// (idle, from the stop) was taken for a search that had lasted since then.
TEST(Health, AStoppedWorkerIsNotSearching) {
  const auto stopping = static_cast<std::uint64_t>(StateReason::stopping);
  TraceBuilder b(2);
  b.state(0, 0, 1, 0);
  b.state(1, 0, 1, 0);
  b.state(0, 1'000'000, 0, 1, stopping);  // worker 0 stops at 1 ms
  b.task_begin(1, 1'000'000, 0xB, 0);     // worker 1 runs on to 20 ms
  b.task_end(1, 3'000'000, 0xB);
  b.state(1, 20'000'000, 0, 1, stopping);
  Model m;
  b.apply_to(m);
  m.finish();
  for (const Tick at : {Tick{12'000'000}, m.analysis().last_tick()}) {
    for (const Problem& p : m.health().ongoing(m.analysis(), at)) {
      EXPECT_FALSE(p.worker == 0 && p.kind == ProblemKind::spinning) << "at " << at << ": from " << p.start;
    }
  }
  EXPECT_EQ(m.health().count(ProblemKind::spinning), 0u);
}

TEST(Health, DeadlockEventsAreAFinding) {
  TraceBuilder b(2);
  b.state(0, 0, 1, 0);
  b.state(1, 0, 1, 0);
  const PayloadWords d = DeadlockPayload{2, 7}.encode();
  b.event(1, 500, EventId::deadlock, d.a, d.b);
  Model m;
  b.apply_to(m);
  m.finish();
  ASSERT_EQ(m.health().count(ProblemKind::deadlock), 1u);
  EXPECT_EQ(m.health().problems().at(0).value, 7u);   // unfinished tasks
  EXPECT_EQ(m.health().problems().at(0).detail, 2u);  // workers blocked
  EXPECT_STREQ(problem_kind_name(ProblemKind::deadlock), "deadlock suspected");
  EXPECT_EQ(m.warning_count(), m.analysis().summary().warnings);
}

// IO wakes have no waker and latency 0: counted as wakes, left out of wake latency (the
// viewer showed p50 0 ns when it kept them).
TEST(Analysis, WakeLatencyLeavesIoWakesOut) {
  TraceBuilder b(2);
  b.state(0, 0, 1, 3);
  b.state(1, 0, 1, 3);
  for (int k = 0; k < 10; ++k) {
    const PayloadWords io = WakePayload{kOutsideWaker, WakeCause::io, 0}.encode();
    b.event(0, 100 + k, EventId::wake, io.a, io.b);
  }
  const PayloadWords work = WakePayload{0, WakeCause::work, 20'000}.encode();
  b.event(1, 50'000, EventId::wake, work.a, work.b);
  Model m;
  b.apply_to(m);
  m.finish();
  const auto s = m.analysis().summary();
  EXPECT_EQ(s.wakes, 11u);
  EXPECT_EQ(s.io_wakes, 10u);
  EXPECT_EQ(m.wake_latency().count(), 1u);
  EXPECT_GT(m.wake_latency().quantile_ns(0.5), 19'000.0) << "not the 0 ns of the IO wakes";
  EXPECT_EQ(s.wake_arrows, 1u);
  EXPECT_EQ(s.workers[0].wakes_performed, 1u);
}

// A worker's time per state runs from its first event to its `stopping` state event (its
// thread ended there), not to the end of the stream, which another worker's later events
// set: the span the Recorder's counters cover, so both show the same shares.
TEST(Analysis, StateTimeEndsWhereTheWorkerStopped) {
  TraceBuilder b(2);
  const auto started = static_cast<std::uint64_t>(StateReason::started);
  const auto stopping = static_cast<std::uint64_t>(StateReason::stopping);
  b.state(0, 100, 1, 1, started);
  b.state(0, 200, 1, 0);            // active 200..500
  b.state(0, 500, 0, 1, stopping);  // worker 0 stops at 500
  b.state(1, 150, 1, 1, started);
  b.state(1, 300, 1, 3);   // sleeping 300..2000
  b.state(1, 2000, 3, 0);  // active 2000..3000
  b.state(1, 3000, 0, 1, stopping);
  Model m;
  b.apply_to(m);
  m.finish();
  const Summary s = m.analysis().summary();
  EXPECT_EQ(m.analysis().span_end(0), 500u);
  EXPECT_EQ(s.workers[0].state_ticks[0], 300u);
  EXPECT_EQ(s.workers[0].state_ticks[1], 100u) << "idle 100..200 only: nothing after it stopped";
  EXPECT_EQ(s.workers[1].state_ticks[1], 150u);
  EXPECT_EQ(s.workers[1].state_ticks[3], 1700u);
  EXPECT_EQ(s.workers[1].state_ticks[0], 1000u);
  // A stream without the stop (a live view, a flight-recorder dump) runs to its end.
  TraceBuilder cut(2);
  cut.state(0, 100, 1, 1, started);
  cut.state(0, 200, 1, 0);
  cut.state(1, 150, 1, 1, started);
  cut.state(1, 3000, 1, 3);
  Model n;
  cut.apply_to(n);
  EXPECT_EQ(n.analysis().span_end(0), 3000u);
  EXPECT_EQ(n.analysis().summary().workers[0].state_ticks[0], 2800u);
}

// What the timeline draws of a stopped worker ends at its `stopping` event too: its
// intervals (the last one ending at the stop, whatever open end a view passes: the
// stream's last event, the playhead) and every range query over them add up to the
// summary's time per state, and nothing is left after the stop. (The timeline, the plots
// and the Chrome export ran a stopped worker's last interval on to the end of the stream:
// idle for 2.5 us here that the summary does not count.)
TEST(Analysis, AStoppedWorkersIntervalsEndAtItsStopInEveryView) {
  TraceBuilder b(2);
  const auto started = static_cast<std::uint64_t>(StateReason::started);
  const auto stopping = static_cast<std::uint64_t>(StateReason::stopping);
  b.state(0, 100, 1, 1, started);
  b.state(0, 200, 1, 0);
  b.state(0, 500, 0, 1, stopping);  // worker 0 stops at 500
  b.state(1, 150, 1, 1, started);
  b.state(1, 300, 1, 0);
  b.state(1, 3000, 0, 1, stopping);  // the stream runs on to 3000
  Model m;
  b.apply_to(m);
  m.finish();
  const Summary s = m.analysis().summary();
  for (std::uint32_t w = 0; w < 2; ++w) {
    SCOPED_TRACE("worker " + std::to_string(w));
    const WorkerTrack& t = m.track(w);
    std::array<std::uint64_t, kStateSlots> drawn{};
    Tick end = 0;
    for (std::size_t i = 0; i < t.interval_count(); ++i) {
      const Tick a = t.interval_start(i), e = t.interval_end(i, m.last_tick());
      if (e > a) drawn[static_cast<std::size_t>(t.interval_state(i))] += e - a, end = std::max(end, e);
    }
    EXPECT_EQ(end, m.analysis().span_end(w)) << "the last interval ends at the stop";
    EXPECT_EQ(drawn, s.workers[w].state_ticks);
    const Occupancy whole = t.occupancy(t.first_tick(), m.last_tick(), m.last_tick());
    const Occupancy played = t.cumulative(2000, 2000);  // a playhead before the stream's end
    for (int k = 0; k < kStateSlots; ++k) {
      EXPECT_EQ(whole[k], static_cast<double>(s.workers[w].state_ticks[static_cast<std::size_t>(k)])) << k;
      if (w == 0) {
        EXPECT_EQ(played[k], whole[k]) << k << ": nothing after the stop";
      }
    }
  }
  const Occupancy after = m.track(0).occupancy(500, 3000, m.last_tick());
  for (int k = 0; k < kStateSlots; ++k) EXPECT_EQ(after[k], 0.0) << k;
  EXPECT_EQ(m.track(0).interval_end(m.track(0).interval_count() - 1, m.last_tick()), 500u);
}

// Percentiles are bucket midpoints kept within the samples: never above the max, never
// below the min, for the views reading the analysis (stats, diff, the viewer's panel).
TEST(Analysis, PercentilesStayWithinTheSamples) {
  LatencyHistogram one;
  one.record(2'900'000);  // bucket [2,883,584, 3,145,728): midpoint 3,014,656
  EXPECT_EQ(one.quantile_ns(0.5), 2'900'000.0);
  EXPECT_EQ(one.quantile_ns(0.99), 2'900'000.0);
  const Percentiles p = percentiles(one);
  EXPECT_EQ(p.p50_ns, p.max_ns);
  EXPECT_EQ(p.p99_ns, p.max_ns);
  LatencyHistogram low;
  low.record(2'883'600);  // just above the bucket's lower edge: the midpoint is above it
  low.record(2'883'700);
  EXPECT_EQ(low.quantile_ns(0.0), 2'883'700.0) << "clamped to the max, as both samples are below the midpoint";
  LatencyHistogram spread;  // many buckets: the clamp changes nothing inside the range
  for (std::uint64_t v = 1000; v <= 1'000'000; v += 1000) spread.record(v);
  EXPECT_EQ(spread.quantile_ns(0.5), trace::LatencyBuckets::midpoint(trace::LatencyBuckets::bucket_of(500'000)));
  EXPECT_GE(spread.quantile_ns(0.0), spread.min_ns());
  EXPECT_LE(spread.quantile_ns(1.0), spread.max_ns());
  EXPECT_EQ(LatencyHistogram().quantile_ns(0.5), 0.0);
}

// An empty figure says why, from the trace header's recording level; the viewer's
// panels and lantern-trace stats print this sentence.
TEST(Analysis, NoSamplesSaysWhyFromTheHeadersLevel) {
  TraceBuilder b(1);
  b.state(0, 100, 1, 0);
  b.task_begin(0, 100, 0x10, 0);
  b.task_end(0, 200, 0x10);
  trace::TraceHeader h = b.header();
  auto summary_at = [&](std::optional<trace::Level> level) {
    h.level = level;
    Model m;
    m.apply_header(h, true);
    m.apply(b.events());
    m.finish();
    EXPECT_EQ(m.analysis().level(), level);
    return m.analysis().summary();
  };
  Summary s = summary_at(trace::Level::tasks);
  EXPECT_EQ(s.level, trace::Level::tasks);
  EXPECT_EQ(s.ready_wait.count, 0u);
  EXPECT_EQ(s.ready_wait.no_samples.rfind("not recorded at level tasks: lane_pop events are recorded at level full", 0),
            0u)
      << s.ready_wait.no_samples;
  EXPECT_EQ(s.task_duration.count, 1u);
  EXPECT_EQ(s.task_duration.no_samples, "");
  EXPECT_EQ(s.wake_latency.no_samples,
            "none happened (the trace was recorded at level tasks, which records wake events)");
  s = summary_at(trace::Level::states);
  EXPECT_EQ(
      s.io_latency.no_samples.rfind("not recorded at level states: io_complete events are recorded at level tasks", 0),
      0u)
      << s.io_latency.no_samples;
  s = summary_at(std::nullopt);
  EXPECT_NE(s.ready_wait.no_samples.find("the trace's header does not say its level"), std::string::npos)
      << s.ready_wait.no_samples;
}

}  // namespace
// After a skipped chunk, a release whose task began in the lost bytes is
// not linked to a later task that reuses the id; tasks open at the gap end there.
TEST(Model, SkippedChunkUnlinksWaitingReleasesAndEndsOpenTasks) {
  test::TraceBuilder before(2), after(2);
  before.state(0, 0, 1, 0);
  before.state(1, 0, 1, 0);
  before.task_begin(0, 1'000'000, 0x10, 0);
  before.event(0, 1'500'000, EventId::release, 0x99, 0x10);  // releases task 0x99
  before.task_begin(1, 1'600'000, 0x20, 0);                  // its end is lost
  // (lost: task 0x99 begins and ends on worker 1; task 0x10 and 0x20 end)
  after.task_begin(1, 9'000'000, 0x99, 0);  // a new task at the same address, much later
  after.task_end(1, 9'100'000, 0x99);
  after.state(0, 10'000'000, 0, 3);
  Model m;
  before.apply_to(m);
  m.add_trace_problem(trace::TraceError{trace::TraceErrorKind::corrupt_chunk, 4096, "a damaged chunk"});
  m.apply(after.events());
  m.finish();
  ASSERT_EQ(m.releases(0).size(), 1u);
  EXPECT_FALSE(m.releases(0)[0].to.valid()) << "linked across the gap to a later task with the same id";
  // Task 0x20 ends where worker 1's record stopped (1.6 ms), marked, and the later task
  // is at depth 0, not nested in it.
  const auto& row = m.track(1).slices(0);
  ASSERT_EQ(row.size(), 2u);
  EXPECT_EQ(row[0].end, 1'600'000u);
  EXPECT_TRUE(row[0].flags & kSliceEndLost);
  EXPECT_EQ(row[1].id, 0x99u);
  // The analysis did it (Analysis::lose_record, what lantern-trace's reader calls too),
  // and the two tasks whose ends were lost (0x10, 0x20) still count as never ended.
  EXPECT_EQ(m.analysis().summary().unfinished_tasks, 2u);
}

// What is "happening now" is asked at a time - the replay's playhead -
// not only at the end of the trace.
TEST(Health, OngoingAtThePlayhead) {
  test::TraceBuilder b(2);
  b.state(0, 0, 1, 0);
  b.state(1, 0, 1, 0);
  b.task_begin(0, 1'000'000, 0xA, 0);  // worker 0: one task from 1 ms to 30 ms
  b.task_end(0, 30'000'000, 0xA);
  b.state(1, 12'000'000, 0, 1);  // worker 1: searching (idle) from 12 ms to 20 ms
  b.state(1, 20'000'000, 1, 3);  // then asleep
  b.state(0, 40'000'000, 0, 3);
  Model m;
  b.apply_to(m);
  m.finish();
  auto kinds = [&](Tick at) {
    std::vector<std::pair<std::uint32_t, ProblemKind>> out;
    for (const Problem& p : m.health().ongoing(m.analysis(), at)) out.emplace_back(p.worker, p.kind);
    return out;
  };
  using K = std::vector<std::pair<std::uint32_t, ProblemKind>>;
  EXPECT_EQ(kinds(5'000'000), K{});                                // 4 ms into the task: under 10 ms
  EXPECT_EQ(kinds(15'000'000), (K{{0, ProblemKind::long_task}}));  // 14 ms; worker 1 idle 3 ms
  EXPECT_EQ(kinds(19'000'000), (K{{0, ProblemKind::long_task}, {1, ProblemKind::spinning}}));
  EXPECT_EQ(kinds(35'000'000), K{});  // the task ended, worker 1 sleeps
  // At the playhead the finding ends there and started where the task began.
  const auto at19 = m.health().ongoing(m.analysis(), 19'000'000);
  ASSERT_FALSE(at19.empty());
  EXPECT_EQ(at19[0].start, 1'000'000u);
  EXPECT_EQ(at19[0].end, 19'000'000u);
}

}  // namespace lantern::viewer
