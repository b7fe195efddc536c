// SPDX-License-Identifier: Apache-2.0
// drop_marker_test.cpp - every event a full ring dropped is counted by exactly one
// `dropped` marker in what the Collector delivers, including the drops at the very end of
// a worker's run (before: those were only counted by the Recorder, so /metrics said N
// dropped while the trace, lantern-trace stats and the viewer said 0); and the Recorder's
// events_recorded is the number of events in the trace, its markers included.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include "lantern/clock.hpp"
#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/lantern.hpp"
#include "lantern/trace/trace_reader.hpp"
#include "support/fib.hpp"
#include "support/watchdog.hpp"

namespace lantern::instrumentation {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using lantern::EventId;
using trace::Event;
using trace::Level;

// PerWorkerSink: what the collector delivered, per worker.
struct PerWorkerSink final : Sink {
  struct Worker {
    std::uint64_t events = 0, markers = 0, marked = 0;
    std::uint64_t last_ticks = 0, backwards = 0;
    Event last{};
  };
  std::mutex mutex;
  std::map<std::uint32_t, Worker> workers;
  void on_batch(std::span<const Event> events) override {
    std::lock_guard<std::mutex> lock(mutex);
    for (const Event& e : events) {
      Worker& w = workers[e.worker];
      ++w.events;
      if (e.ticks < w.last_ticks) ++w.backwards;
      w.last_ticks = std::max(w.last_ticks, e.ticks);
      w.last = e;
      if (e.type == EventId::dropped) {
        const auto d = trace::payload<DroppedPayload>(e);
        EXPECT_EQ(d.reason, DropReason::ring_full);
        ++w.markers;
        w.marked += d.count;
      }
    }
  }
};

std::uint64_t marked_in(const trace::TraceContents& t) {
  std::uint64_t marked = 0;
  for (const Event& e : t.events) {
    if (e.type == EventId::dropped) marked += trace::payload<DroppedPayload>(e).count;
  }
  return marked;
}

// check_accounting: after the pool stopped and the collector's final drain, per worker
// the delivered markers count every dropped event once and the delivered events are the
// Recorder's events_recorded. Returns the events dropped in all.
std::uint64_t check_accounting(const Recorder& recorder, PerWorkerSink& sink) {
  std::uint64_t dropped = 0;
  for (std::uint32_t w = 0; w < recorder.worker_count(); ++w) {
    SCOPED_TRACE("worker " + std::to_string(w));
    const WorkerCountersSnapshot s = recorder.snapshot(w);
    const PerWorkerSink::Worker& got = sink.workers[w];
    EXPECT_EQ(got.marked, s.events_dropped) << "the markers delivered must count every dropped event, once";
    EXPECT_EQ(got.events, s.events_recorded) << "events_recorded is the events delivered, markers included";
    EXPECT_EQ(got.markers, s.drop_markers);
    EXPECT_EQ(s.events_produced + s.drop_markers, s.events_recorded + s.events_dropped);
    EXPECT_EQ(got.backwards, 0u) << "a marker (or event) earlier than the worker's previous one";
    dropped += s.events_dropped;
  }
  return dropped;
}

// The collector only drains after the pool has stopped: each ring keeps its first events
// and everything after is dropped, the workers' `stopping` events included. Nothing is
// left for a worker to write a marker in front of: its drops must still reach the trace
// file, the flight recorder and every other sink, at the end, once.
TEST(DropMarkers, AWorkersDropsAtTheEndOfARunAreMarkedOnce) {
  for (const std::uint32_t workers : {1u, 2u}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    const fs::path dir = fs::temp_directory_path() / ("lantern-drop-markers-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const std::string file = (dir / "run.trace").string(), dump = (dir / "flight.trace").string();
    Recorder recorder(workers, {.level = Level::full, .ring_capacity = 64, .deque_push_sample = 1});
    auto sink = std::make_shared<PerWorkerSink>();
    std::shared_ptr<TraceFileSink> trace_file;
    std::shared_ptr<FlightRecorder> flight;
    Collector collector(recorder);  // not started: no pass before stop()
    {
      Scheduler pool({.workers = workers, .observer = &recorder});
      lantern::testing::Watchdog dog("drops at the end of a run", 60s, [&] { return pool.describe_state(); });
      trace_file = std::make_shared<TraceFileSink>(file, make_trace_header(pool, recorder, "drop_marker_test"));
      ASSERT_TRUE(trace_file->ok()) << trace_file->error();
      flight = std::make_shared<FlightRecorder>(make_trace_header(pool, recorder, "drop_marker_test"));
      collector.attach(sink);
      collector.attach(trace_file);
      collector.attach(flight);
      EXPECT_EQ(pool.run([] { return lantern::testing::fib(18); }), 2584);
    }
    const std::uint64_t before_stop = ticks_now();
    collector.stop();
    ASSERT_TRUE(trace_file->ok()) << trace_file->error();
    ASSERT_EQ(flight->dump(dump), "");

    const std::uint64_t dropped = check_accounting(recorder, *sink);
    ASSERT_GT(dropped, 0u) << "the rings were meant to overflow";
    std::uint64_t recorded = 0;
    for (std::uint32_t w = 0; w < workers; ++w) {
      recorded += recorder.snapshot(w).events_recorded;
      if (recorder.snapshot(w).events_dropped == 0) continue;
      // This worker's final events were dropped: its last delivered event is the marker
      // for them, at its `stopping` (after everything it delivered, before the drain).
      const Event& last = sink->workers[w].last;
      EXPECT_EQ(last.type, EventId::dropped) << "worker " << w;
      EXPECT_LE(last.ticks, before_stop) << "worker " << w;
    }
    // The same in the trace file and the flight recorder's dump: what lantern-trace
    // stats, the viewer and the Chrome export count, and events_recorded counts them all.
    for (const std::string& path : {file, dump}) {
      const trace::TraceContents t = trace::read_trace(path);
      ASSERT_TRUE(t.header_ok) << path;
      EXPECT_TRUE(t.problems.empty()) << path;
      EXPECT_EQ(marked_in(t), dropped) << path;
      EXPECT_EQ(t.events.size(), recorded) << path;
    }
    fs::remove_all(dir);
  }
}

// The collector runs while the workers overflow their tiny rings: markers are written by
// the workers when room appears and, for drops a worker could not mark before it stopped,
// by the collector's drain. Either way exactly once (ThreadSanitizer checks the hand-off).
TEST(DropMarkers, WorkersAndARunningCollectorMarkEveryDropOnce) {
  Recorder recorder(2, {.level = Level::full, .ring_capacity = 16, .deque_push_sample = 1});
  auto sink = std::make_shared<PerWorkerSink>();
  Collector collector(recorder,
                      {.min_period = std::chrono::microseconds(50), .max_period = std::chrono::microseconds(200)});
  collector.attach(sink);
  collector.start();
  {
    Scheduler pool({.workers = 2, .observer = &recorder});
    lantern::testing::Watchdog dog("drops with a running collector", 60s, [&] { return pool.describe_state(); });
    for (int i = 0; i < 5; ++i) EXPECT_EQ(pool.run([] { return lantern::testing::fib(16); }), 987);
  }
  collector.stop();
  EXPECT_GT(check_accounting(recorder, *sink), 0u) << "the rings were meant to overflow";
}

// The hook calls a worker's thread makes, made here by the test's own thread (one thread
// at a time per worker, as the ring requires), so the positions are exact.
struct FakeWorker {
  Recorder& recorder;
  void state(StateReason why) {
    const auto w = StatePayload{WorkerState::idle, WorkerState::active, why}.encode();
    recorder.on_event(0, EventId::state, w.a, w.b);
  }
  // run: a thread's life: started, `helps` events, stopping.
  void run(int helps) {
    state(StateReason::started);
    for (int i = 0; i < helps; ++i) recorder.on_event(0, EventId::help, 0, 0);
    state(StateReason::stopping);
  }
};

// A worker that stops with a full ring: its last drops are marked by the drain that
// empties the ring, after the last event it recorded, and only once.
TEST(DropMarkers, TheDrainMarksTheDropsOfAStoppedWorker) {
  Recorder recorder(1, {.level = Level::full, .ring_capacity = 8});
  FakeWorker{recorder}.run(20);  // 22 events: the ring keeps 8, 14 are dropped
  ASSERT_EQ(recorder.snapshot(0).events_dropped, 14u);
  std::vector<Event> out(64);
  // A drain that fills its buffer leaves the marker for the next one.
  ASSERT_EQ(recorder.drain(0, out.data(), 8), 8u);
  const std::uint64_t last_recorded = out[7].ticks;
  ASSERT_EQ(recorder.drain(0, out.data(), out.size()), 1u);
  EXPECT_EQ(out[0].type, EventId::dropped);
  EXPECT_EQ(trace::payload<DroppedPayload>(out[0]).count, 14u);
  EXPECT_EQ(trace::payload<DroppedPayload>(out[0]).reason, DropReason::ring_full);
  EXPECT_GE(out[0].ticks, last_recorded);
  EXPECT_LE(out[0].ticks, ticks_now());
  EXPECT_EQ(recorder.drain(0, out.data(), out.size(), true), 0u) << "marked once";
  const WorkerCountersSnapshot s = recorder.snapshot(0);
  EXPECT_EQ(s.events_recorded, 9u);
  EXPECT_EQ(s.drop_markers, 1u);
  EXPECT_EQ(s.events_produced, 22u);
}

// The next thread of the worker (a new Scheduler on the same Recorder) starts before the
// consumer could mark its predecessor's last drops (the ring was not empty yet): it marks
// them itself, in front of its `started`, and the drain does not mark them again.
TEST(DropMarkers, TheNextThreadOfAWorkerMarksItsPredecessorsDropsFirst) {
  Recorder recorder(1, {.level = Level::full, .ring_capacity = 8});
  FakeWorker worker{recorder};
  worker.run(20);  // 8 kept, 14 dropped
  std::vector<Event> out(64);
  ASSERT_EQ(recorder.drain(0, out.data(), 6), 6u);  // 2 left: no marker yet
  worker.run(0);                                    // started, stopping
  std::size_t n = 0;
  for (std::size_t got; (got = recorder.drain(0, out.data() + n, out.size() - n, true)) != 0;) n += got;
  ASSERT_EQ(n, 5u);  // the 2 left, the marker, started, stopping
  EXPECT_EQ(out[1].type, EventId::help);
  ASSERT_EQ(out[2].type, EventId::dropped);
  EXPECT_EQ(trace::payload<DroppedPayload>(out[2]).count, 14u);
  ASSERT_EQ(out[3].type, EventId::state);
  EXPECT_EQ(trace::payload<StatePayload>(out[3]).reason, StateReason::started);
  EXPECT_EQ(out[2].ticks, out[3].ticks);
  EXPECT_EQ(recorder.drain(0, out.data(), out.size(), true), 0u) << "marked once";
  EXPECT_EQ(recorder.snapshot(0).events_dropped, 14u);
  EXPECT_EQ(recorder.snapshot(0).events_recorded, 8u + 3u);  // the first thread's 8, the marker, started, stopping
}

}  // namespace
}  // namespace lantern::instrumentation
