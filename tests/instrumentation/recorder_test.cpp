// SPDX-License-Identifier: Apache-2.0
// Recorder and collector: exact accounting under a stalled collector, levels, counters.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "lantern/clock.hpp"
#include "lantern/graph.hpp"
#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/process_labels.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/lantern.hpp"
#include "support/fib.hpp"
#include "support/watchdog.hpp"

using lantern::testing::fib;

using namespace std::chrono_literals;
using lantern::EventId;
using lantern::instrumentation::Collector;
using lantern::instrumentation::Recorder;
using lantern::instrumentation::Sink;
using lantern::trace::Event;
using lantern::trace::Level;

namespace {

// CountingSink counts events by worker and type, and sums drop markers.
struct CountingSink final : Sink {
  std::mutex mutex;
  std::map<std::uint32_t, std::uint64_t> real_events, dropped_marked;
  std::map<EventId, std::uint64_t> by_type;
  void on_batch(std::span<const Event> events) override {
    std::lock_guard<std::mutex> lock(mutex);
    for (const Event& e : events) {
      if (e.type == EventId::dropped) {
        dropped_marked[e.worker] += lantern::trace::payload<lantern::DroppedPayload>(e).count;
      } else {
        ++real_events[e.worker];
        ++by_type[e.type];
      }
    }
  }
  // count: events of `type` so far, read under the lock (the Collector's thread may be
  // delivering a batch; after Collector::stop the maps may be read directly).
  std::uint64_t count(EventId type) {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = by_type.find(type);
    return it == by_type.end() ? 0 : it->second;
  }
};
}  // namespace

// Forwarder counts, independently of the recorder, the hooks the recorder's level
// selects (at full: all of them), then passes each on.
struct Forwarder final : lantern::Observer {
  explicit Forwarder(Recorder& r) : recorder(r) {}
  void on_event(std::uint32_t w, lantern::EventId h, std::uint64_t a, std::uint64_t b) noexcept override {
    ++produced[w];
    recorder.on_event(w, h, a, b);
  }
  Recorder& recorder;
  std::uint64_t produced[8] = {};  // each slot written by its own worker only
};

TEST(Recorder, StalledCollectorAccountsForEveryEventExactly) {
  const std::uint32_t workers = 2;
  // A tiny ring and no collector thread while the workload runs: most events drop.
  Recorder recorder(workers, {.level = Level::full, .ring_capacity = 256, .deque_push_sample = 1});
  Forwarder forwarder(recorder);
  {
    lantern::Scheduler pool({.workers = workers, .observer = &forwarder});
    lantern::testing::Watchdog dog("stalled collector workload", 60s, [&] { return pool.describe_state(); });
    EXPECT_EQ(pool.run([] { return fib(20); }), 6765);
  }
  auto sink = std::make_shared<CountingSink>();
  Collector collector(recorder);
  collector.attach(sink);
  collector.stop();  // drains what the rings hold
  for (std::uint32_t w = 0; w < workers; ++w) {
    const auto s = recorder.snapshot(w);
    EXPECT_EQ(s.events_produced, forwarder.produced[w]) << "worker " << w;
    EXPECT_EQ(s.events_recorded - s.drop_markers + s.events_dropped, forwarder.produced[w]) << "worker " << w;
    EXPECT_EQ(sink->real_events[w], s.events_recorded - s.drop_markers) << "worker " << w;
    // Every drop is marked once, the last ones (after the ring filled for good, the
    // worker's `stopping` among them) by the collector's final drain.
    EXPECT_EQ(sink->dropped_marked[w], s.events_dropped) << "worker " << w;
  }
  std::uint64_t dropped = 0;
  for (std::uint32_t w = 0; w < workers; ++w) dropped += recorder.snapshot(w).events_dropped;
  EXPECT_GT(dropped, 0u) << "the ring was meant to overflow";
}

// A Collector whose period is an hour drains a ring as soon as it passes half full: the
// worker asks for the pass (drain_request.hpp). Without the request the sink sees
// nothing for an hour and the watchdog fails the test.
TEST(Collector, DrainsARingPastHalfFullWithoutWaitingForItsPeriod) {
  const std::size_t capacity = 1024;
  Recorder recorder(1, {.level = Level::tasks, .ring_capacity = capacity});
  auto sink = std::make_shared<CountingSink>();
  Collector collector(recorder, {.min_period = std::chrono::hours(1), .max_period = std::chrono::hours(1)});
  collector.attach(sink);
  collector.start();                                          // one pass now, then an hour's wait
  while (collector.passes() == 0) std::this_thread::yield();  // that pass is over before anything is recorded
  lantern::Scheduler pool({.workers = 1, .observer = &recorder});
  lantern::testing::Watchdog dog("a drain asked for by a ring past half full", 30s,
                                 [&] { return pool.describe_state(); });
  // Record until the ring is past half full, then nothing more: the pass that follows
  // can only be the one the ring asked for.
  while (recorder.snapshot(0).events_recorded <= capacity / 2) {
    lantern::TaskGroup group(pool);
    for (int i = 0; i < 16; ++i) group.spawn([] {});
    group.wait();
  }
  while (sink->count(EventId::task_begin) == 0) std::this_thread::yield();
  EXPECT_EQ(recorder.snapshot(0).events_dropped, 0u);
}

TEST(Recorder, CountersAreExactAtEveryLevel) {
  for (Level level : {Level::off, Level::states, Level::tasks, Level::full, Level::graph}) {
    Recorder recorder(2, {.level = level});
    std::uint64_t submitted = 200;
    {
      lantern::Scheduler pool({.workers = 2, .observer = &recorder});
      for (std::uint64_t i = 0; i < submitted; ++i) pool.submit([] {}).get();
    }
    std::uint64_t tasks = 0, lane = 0;
    for (std::uint32_t w = 0; w < 2; ++w) {
      tasks += recorder.snapshot(w).tasks;
      lane += recorder.snapshot(w).lane_pops;
    }
    EXPECT_EQ(tasks, submitted) << "level " << static_cast<int>(level);
    EXPECT_EQ(lane, submitted);
    if (level == Level::off) {
      EXPECT_EQ(recorder.snapshot(0).events_produced + recorder.snapshot(1).events_produced, 0u);
    }
  }
}

TEST(Recorder, LevelsSelectEvents) {
  Recorder recorder(2, {.level = Level::states});
  auto sink = std::make_shared<CountingSink>();
  Collector collector(recorder);
  collector.attach(sink);
  collector.start();
  {
    lantern::Scheduler pool({.workers = 2, .observer = &recorder});
    pool.run([] { return fib(15); });
    recorder.set_level(Level::tasks);
    pool.run([] { return fib(15); });
  }
  collector.stop();
  EXPECT_GT(sink->by_type[EventId::state], 0u);
  EXPECT_GT(sink->by_type[EventId::task_begin], 0u);  // recorded after the switch only
  EXPECT_EQ(sink->by_type[EventId::push], 0u);        // full-level event never recorded
}

TEST(Recorder, TaskLabelsAreRecordedAtTasksNotAtStates) {
  const lantern::Label kind = lantern::label("recorder_test.kind");
  Recorder recorder(2, {.level = Level::states});
  // Below "tasks" nobody wants task_label: the scheduler does not even call the recorder.
  EXPECT_EQ(recorder.interest.load() & lantern::Observer::bit(lantern::EventId::task_label), 0u);
  auto sink = std::make_shared<CountingSink>();
  Collector collector(recorder);
  collector.attach(sink);
  collector.start();
  constexpr int kTasks = 50;
  {
    lantern::Scheduler pool({.workers = 2, .observer = &recorder});
    lantern::testing::Watchdog dog("labels by level", 60s, [&] { return pool.describe_state(); });
    for (int i = 0; i < kTasks; ++i) pool.submit([&] { lantern::label_task(kind); }).get();
    collector.drain_now();
    EXPECT_GT(sink->count(EventId::state), 0u);
    EXPECT_EQ(sink->count(EventId::task_label), 0u);  // level states: not recorded
    recorder.set_level(Level::tasks);
    EXPECT_NE(recorder.interest.load() & lantern::Observer::bit(lantern::EventId::task_label), 0u);
    for (int i = 0; i < kTasks; ++i) pool.submit([&] { lantern::label_task(kind); }).get();
  }
  collector.stop();
#if LANTERN_OBSERVER
  EXPECT_EQ(sink->by_type[EventId::task_label], static_cast<std::uint64_t>(kTasks));
  EXPECT_EQ(sink->by_type[EventId::task_begin], static_cast<std::uint64_t>(kTasks));
#endif
}

// The task graph's events at their levels (core/README.md, "The task graph"): none at
// states (the scheduler is not even asked for them); at tasks a TaskGroup's spawns and
// wait, and a join only once stolen (1 worker: never); at graph also every join's fork
// and its half as a task, which the worker counts as a task too.
TEST(Recorder, LevelGraphRecordsEveryJoinAndTasksTheTaskGraph) {
  constexpr int kFib = 12;                            // fib(12): 232 joins
  constexpr std::uint64_t kJoins = 232, kSpawns = 5;  // and one TaskGroup of 5
  for (Level level : {Level::states, Level::tasks, Level::graph}) {
    Recorder recorder(1, {.level = level});
    const std::uint32_t graph_bits =
        lantern::Observer::bit(EventId::spawn) | lantern::Observer::bit(EventId::wait_begin) |
        lantern::Observer::bit(EventId::wait_end) | lantern::Observer::bit(EventId::signal_set);
    EXPECT_EQ(recorder.interest.load() & graph_bits, level >= Level::tasks ? graph_bits : 0u);
    EXPECT_EQ((recorder.interest.load() & lantern::Observer::kJoinTasks) != 0, level == Level::graph);
    auto sink = std::make_shared<CountingSink>();
    Collector collector(recorder);
    collector.attach(sink);
    collector.start();
    {
      lantern::Scheduler pool({.workers = 1, .observer = &recorder});
      lantern::testing::Watchdog dog("task graph events by level", 60s, [&] { return pool.describe_state(); });
      EXPECT_EQ(pool.run([] { return fib(kFib); }), 144u);
      pool.run([] {
        lantern::TaskGroup group;
        for (std::uint64_t i = 0; i < kSpawns; ++i) group.spawn([] {});
        group.wait();
      });
    }
    collector.stop();
    const std::uint64_t runs = 2, tasks = runs + kSpawns + (level == Level::graph ? kJoins : 0);
    EXPECT_EQ(recorder.snapshot(0).tasks, tasks) << "level " << static_cast<int>(level);
#if LANTERN_OBSERVER
    if (level == Level::states) {
      EXPECT_EQ(sink->by_type[EventId::spawn] + sink->by_type[EventId::wait_begin], 0u);
      continue;
    }
    EXPECT_EQ(sink->by_type[EventId::spawn], kSpawns + (level == Level::graph ? kJoins : 0));
    EXPECT_EQ(sink->by_type[EventId::wait_begin], 1u);  // the group's wait; no join was stolen
    EXPECT_EQ(sink->by_type[EventId::wait_end], 1u);
    EXPECT_EQ(sink->by_type[EventId::task_begin], tasks);
    EXPECT_EQ(sink->by_type[EventId::task_end], tasks);
#endif
  }
}

// The Recorder measures what recording one event costs when it is made, without
// touching its workers' rings or counters, and every header make_trace_header writes
// carries the figure (trace files, flight dumps, the live stream take that header).
TEST(Recorder, MeasuresItsOwnCostPerEventIntoTheHeader) {
  Recorder recorder(2, {.level = Level::states});
  EXPECT_GT(recorder.event_cost_ns(), 0.0);
  EXPECT_LT(recorder.event_cost_ns(), 100000.0);
  for (std::uint32_t w = 0; w < 2; ++w) {
    const auto s = recorder.snapshot(w);
    EXPECT_EQ(s.events_recorded, 0u);
    EXPECT_EQ(s.events_dropped, 0u);
    EXPECT_EQ(s.tasks, 0u);
  }
  EXPECT_EQ(recorder.level(), Level::states) << "measured at graph, restored";
  lantern::Scheduler pool({.workers = 2, .observer = &recorder});
  const lantern::trace::TraceHeader h = lantern::instrumentation::make_trace_header(pool, recorder, "test");
  ASSERT_TRUE(h.event_cost_ns.has_value());
  EXPECT_EQ(*h.event_cost_ns, recorder.event_cost_ns());
}

TEST(Recorder, IoOperationsAreCountedAtEveryLevelAndRecordedAtTasks) {
  // The IO hooks as core reports them (a: op id, b: kind | fd << 8, or the result),
  // called directly: one thread per worker index, as a worker's own thread would.
  lantern::testing::Watchdog dog("IO hooks from two threads", 30s);
  for (Level level : {Level::off, Level::states, Level::tasks}) {
    Recorder recorder(2, {.level = level});
    auto sink = std::make_shared<CountingSink>();
    Collector collector(recorder);
    collector.attach(sink);
    std::thread workers[2];
    for (std::uint32_t w = 0; w < 2; ++w) {
      workers[w] = std::thread([&recorder, w] {
        for (std::uint64_t op = 1; op <= 10 + w; ++op) {
          recorder.on_event(w, lantern::EventId::io_submit, op, 1 | (7 << 8));
          recorder.on_event(w, lantern::EventId::io_complete, op, static_cast<std::uint64_t>(std::int64_t{-11}));
        }
        recorder.on_event(w, lantern::EventId::io_submit, 99, 2 | (8 << 8));  // still in flight
      });
    }
    for (auto& t : workers) t.join();
    collector.stop();
    for (std::uint32_t w = 0; w < 2; ++w) {
      EXPECT_EQ(recorder.snapshot(w).io_submitted, 11u + w) << "level " << static_cast<int>(level);
      EXPECT_EQ(recorder.snapshot(w).io_completed, 10u + w);
    }
    const std::uint64_t recorded = level >= Level::tasks ? 1 : 0;
    EXPECT_EQ(sink->by_type[EventId::io_submit], recorded * 23);
    EXPECT_EQ(sink->by_type[EventId::io_complete], recorded * 21);
  }
}

// The core's suspected-deadlock report (core/README.md, "Nested waits can deadlock")
// reaches the Recorder's counters: one worker blocked in a Signal wait with nothing ready
// is reported once.
TEST(Recorder, CountsTheSuspectedDeadlockReport) {
  Recorder recorder(1, {.level = Level::states});
  {
    lantern::Scheduler pool({.workers = 1, .observer = &recorder});
    lantern::testing::Watchdog dog("deadlock report", std::chrono::seconds(60));
    // Also written to a trace file (kept in the test temp dir: `lantern-trace stats` on
    // it shows the "deadlock suspected" finding).
    auto sink = std::make_shared<lantern::instrumentation::TraceFileSink>(
        ::testing::TempDir() + "lantern_deadlock.trace",
        lantern::instrumentation::make_trace_header(pool, "recorder_test"));
    ASSERT_TRUE(sink->ok()) << sink->error();
    lantern::instrumentation::Collector collector(recorder);
    collector.attach(sink);
    collector.start();
    lantern::Signal gate;
    auto waiter = pool.submit([&] { gate.wait(); });
    while (pool.describe_state().find("deadlock suspected") == std::string::npos) std::this_thread::yield();
    gate.set();
    waiter.get();
    pool.shutdown();
    collector.stop();
    EXPECT_TRUE(sink->ok()) << sink->error();
  }
  EXPECT_EQ(recorder.snapshot(0).deadlocks, 1u);
}

TEST(AtomicLatencyHistogram, BucketsAndQuantiles) {
  using lantern::instrumentation::AtomicLatencyHistogram;
  using Buckets = lantern::trace::LatencyBuckets;
  // Every value falls in a bucket whose bounds contain it; powers of two are edges.
  for (std::uint64_t v : {0ull, 1ull, 7ull, 8ull, 9ull, 15ull, 16ull, 1000ull, 123456789ull, 1ull << 40}) {
    const int b = Buckets::bucket_of(v);
    EXPECT_LE(Buckets::lower_bound(b), v);
    EXPECT_LT(v, Buckets::upper_bound(b));
  }
  for (int k = 3; k < 60; ++k) EXPECT_EQ(Buckets::lower_bound(Buckets::bucket_of(1ull << k)), 1ull << k);
  AtomicLatencyHistogram h;
  for (std::uint64_t v = 1; v <= 1000; ++v) h.record(v * 1000);  // 1 us .. 1 ms uniform
  const lantern::trace::LatencyHistogram s = h.snapshot();
  EXPECT_EQ(s.count(), 1000u);
  EXPECT_NEAR(s.quantile_ns(0.5), 500e3, 500e3 * 0.07);
  EXPECT_NEAR(s.quantile_ns(0.99), 990e3, 990e3 * 0.07);
  EXPECT_EQ(s.count_below(1u << 20), 1000u);  // 1,048,576 ns > 1 ms
  EXPECT_EQ(s.count_below(1u << 19), 524u);   // values < 524,288 ns: 1..524 us
}

// A percentile read off the Recorder's histograms is never above the largest value
// recorded nor below the smallest (LatencyBuckets::quantile_ns clamps the bucket's
// midpoint), so the demo's figures equal the analysis' for the same samples.
TEST(AtomicLatencyHistogram, QuantilesStayWithinTheValuesRecorded) {
  using lantern::instrumentation::AtomicLatencyHistogram;
  using lantern::trace::LatencyHistogram;
  AtomicLatencyHistogram h;
  h.record(2'900'000);  // its bucket is [2,883,584, 3,145,728): midpoint 3,014,656
  LatencyHistogram s = h.snapshot();
  EXPECT_EQ(s.min_ns(), 2'900'000u);
  EXPECT_EQ(s.max_ns(), 2'900'000u);
  EXPECT_EQ(s.quantile_ns(0.5), 2'900'000.0);
  EXPECT_EQ(s.quantile_ns(0.99), 2'900'000.0);
  AtomicLatencyHistogram other;  // merged over workers: the smallest of the minima, the largest maximum
  other.record(2'883'600);
  s.merge(other.snapshot());
  EXPECT_EQ(s.min_ns(), 2'883'600u);
  EXPECT_EQ(s.quantile_ns(0.0), 2'900'000.0) << "both in one bucket, whose midpoint is above both";
  EXPECT_EQ(LatencyHistogram{}.quantile_ns(0.5), 0.0);
}

// Time per state runs from each worker's `started` state event to its `stopping` one: not
// from the Recorder's construction, and not on after the pool stopped, so figures read
// after a run are the run's (and the trace's analysis counts the same span).
TEST(Recorder, TimePerStateRunsFromStartedToStopping) {
  Recorder recorder(2, {.level = Level::off});
  std::this_thread::sleep_for(30ms);  // before the pool: no worker exists, no time counted
  const std::uint64_t pool_built = lantern::ticks_now();
  {
    lantern::Scheduler pool({.workers = 2, .observer = &recorder});
    pool.run([] { return fib(15); });
    std::this_thread::sleep_for(5ms);
  }
  const std::uint64_t pool_gone = lantern::ticks_now();
  const auto a0 = recorder.snapshot(0), a1 = recorder.snapshot(1);
  std::this_thread::sleep_for(30ms);  // after the pool: no worker runs, no time counted
  const auto b0 = recorder.snapshot(0), b1 = recorder.snapshot(1);
  EXPECT_EQ(a0.state_ticks, b0.state_ticks);
  EXPECT_EQ(a1.state_ticks, b1.state_ticks);
  EXPECT_EQ(b0.state, lantern::instrumentation::kNoState);
  for (const auto& w : {b0, b1}) {
    std::uint64_t total = 0;
    for (const auto t : w.state_ticks) total += t;
    EXPECT_GT(total, 0u);
    EXPECT_LE(total, pool_gone - pool_built) << "only the pool's lifetime";
  }
}

// With time_tasks the task-duration histogram counts every task at every level; without
// it, below level tasks, the Recorder is not called per task (durations stay empty) and
// the task count is still exact (kept by the workers themselves).
TEST(Recorder, HistogramsCountEveryTask) {
  for (const bool time_tasks : {true, false}) {
    Recorder recorder(2, {.level = Level::off, .time_tasks = time_tasks});
    const int submitted = 300;
    {
      lantern::Scheduler pool({.workers = 2, .observer = &recorder});
      for (int i = 0; i < submitted; ++i) pool.submit([] {}).get();
      pool.run([] { return fib(10); });
    }
    lantern::trace::LatencyHistogram ready, duration;
    std::uint64_t tasks = 0;
    for (std::uint32_t w = 0; w < 2; ++w) {
      ready.merge(recorder.counters(w).ready_wait.snapshot());
      duration.merge(recorder.counters(w).task_duration.snapshot());
      tasks += recorder.snapshot(w).tasks;
    }
    EXPECT_EQ(ready.count(), static_cast<std::uint64_t>(submitted + 1));  // + the run() task
    EXPECT_GE(tasks, static_cast<std::uint64_t>(submitted + 1));
    EXPECT_EQ(duration.count(), time_tasks ? tasks : 0u) << "time_tasks " << time_tasks;
  }
}

// process_labels() is how every chunk-encoding sink names the labels its chunks use.
TEST(ProcessLabels, NamesInternedLabelsAndNothingElse) {
  const lantern::Label kind = lantern::label("process_labels_test.kind");
  const lantern::trace::LabelNames& names = lantern::instrumentation::process_labels();
  EXPECT_EQ(names.name(kind.id()), "process_labels_test.kind");
  EXPECT_FALSE(names.name(0).has_value());
  EXPECT_FALSE(names.name(lantern::label_count() + 1).has_value());
}

// At level full, own-deque pushes are sampled one in RecorderOptions::deque_push_sample;
// each sampled push carries the deque depth (>= 1) in its upper 32 bits. One worker, so
// the number of joins (pushes) is exact: fib(20) makes 10,945 joins.
TEST(Recorder, OwnDequePushesAreSampledWithTheirDepth) {
  for (std::uint32_t every : {1u, 64u}) {
    Recorder recorder(1, {.level = Level::full, .ring_capacity = 1 << 16, .deque_push_sample = every});
    {
      lantern::Scheduler pool({.workers = 1, .observer = &recorder});
      lantern::testing::Watchdog dog("sampled pushes", 30s, [&] { return pool.describe_state(); });
      EXPECT_EQ(pool.run([] { return fib(20); }), 6765u);
    }
    std::vector<Event> events(1 << 16);
    const std::size_t n = recorder.drain(0, events.data(), events.size(), true);
    std::uint64_t pushes = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (events[i].type != EventId::push || lantern::trace::payload<lantern::PushPayload>(events[i]).to_lane) continue;
      ++pushes;
      EXPECT_GE(lantern::trace::payload<lantern::PushPayload>(events[i]).depth, 1u);
    }
    EXPECT_EQ(pushes, 10945u / every) << "one in " << every;
  }
}

// A level switched while a task runs never splits its pair of events: a worker reads the
// observer's interest once per task, at its begin, and reports task_end exactly when that
// read asked for task_begin too; the Recorder records a task_end exactly when it recorded
// its task_begin (one interest load per task). Tasks switch the level
// themselves, so the switch lands inside a running task deterministically.
namespace {
struct TaskSequenceSink final : Sink {
  std::mutex mutex;
  std::vector<Event> tasks;  // task_begin and task_end, in the order recorded
  void on_batch(std::span<const Event> events) override {
    std::lock_guard<std::mutex> lock(mutex);
    for (const Event& e : events) {
      if (e.type == EventId::task_begin || e.type == EventId::task_end) tasks.push_back(e);
    }
  }
};
}  // namespace

TEST(Recorder, ALevelSwitchInsideATaskNeverSplitsItsBeginAndEnd) {
  for (const bool time_tasks : {false, true}) {
    Recorder recorder(1, {.level = Level::states, .time_tasks = time_tasks});
    auto sink = std::make_shared<TaskSequenceSink>();
    Collector collector(recorder);
    collector.attach(sink);
    constexpr int kTasks = 40;
    {
      lantern::Scheduler pool({.workers = 1, .observer = &recorder});
      lantern::testing::Watchdog dog("level switch inside tasks", 60s, [&] { return pool.describe_state(); });
      for (int i = 0; i < kTasks; ++i) {
        // Even tasks switch states -> tasks mid-task, odd ones tasks -> states.
        const Level to = i % 2 == 0 ? Level::tasks : Level::states;
        pool.submit([&recorder, to] { recorder.set_level(to); }).get();
      }
    }
    collector.stop();
#if LANTERN_OBSERVER
    // Tasks do not nest here: the recorded task events alternate begin, end of the same
    // task. Begun at states (even tasks): neither; begun at tasks (odd tasks): both.
    ASSERT_EQ(sink->tasks.size(), static_cast<std::size_t>(kTasks)) << "time_tasks " << time_tasks;
    for (std::size_t i = 0; i + 1 < sink->tasks.size(); i += 2) {
      ASSERT_EQ(sink->tasks[i].type, EventId::task_begin) << i;
      ASSERT_EQ(sink->tasks[i + 1].type, EventId::task_end) << i;
      EXPECT_EQ(lantern::trace::payload<lantern::TaskBeginPayload>(sink->tasks[i]).task,
                lantern::trace::payload<lantern::TaskEndPayload>(sink->tasks[i + 1]).task);
    }
    EXPECT_EQ(recorder.snapshot(0).tasks, static_cast<std::uint64_t>(kTasks));
#endif
  }
}

// The push and task hooks test each worker's own copy of the observer's interest
// (Worker::hooks_: with an observer those tests cost what they cost without one). Observer::set_interest, which
// Recorder::set_level calls, updates every copy, so a level switched to full inside a task reaches that task's very
// next push; and the task hooks from the next task on. One worker, every push sampled: the counts are exact.
TEST(Recorder, ALevelSwitchReachesTheWorkersCopyOfTheInterestAtOnce) {
  Recorder recorder(1, {.level = Level::states, .ring_capacity = 1 << 12, .deque_push_sample = 1});
  constexpr int kSpawns = 3;
  auto spawn_some = [] {
    lantern::TaskGroup group;
    for (int i = 0; i < kSpawns; ++i) group.spawn([] {});
    group.wait();
  };
  {
    lantern::Scheduler pool({.workers = 1, .observer = &recorder});
    lantern::testing::Watchdog dog("push interest refresh", 30s, [&] { return pool.describe_state(); });
    pool.run([&] {
      recorder.set_level(Level::full);
      spawn_some();  // pushed after the switch: reported; the spawned tasks begin at full
    });
  }
  std::vector<Event> events(1 << 12);
  const std::size_t n = recorder.drain(0, events.data(), events.size(), true);
  std::uint64_t pushes = 0, begins = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (events[i].type == EventId::push && !lantern::trace::payload<lantern::PushPayload>(events[i]).to_lane) ++pushes;
    if (events[i].type == EventId::task_begin) ++begins;
  }
#if LANTERN_OBSERVER
  EXPECT_EQ(pushes, static_cast<std::uint64_t>(kSpawns));
  EXPECT_EQ(begins, static_cast<std::uint64_t>(kSpawns));  // not the switching task, begun at states
#else
  EXPECT_EQ(pushes, 0u);
#endif
}

// Every task that ends by throwing is counted once in tasks_threw, whoever receives the
// exception: a submit()'s Future, a TaskGroup, a TaskHandle, or nobody (the
// unhandled-exception handler). A Future or a TaskGroup that catches the exception inside
// the task must not make the task count as one that returned.
TEST(Recorder, CountsEveryTaskThatThrewWhoeverGetsTheException) {
  for (Level level : {Level::off, Level::tasks}) {
    Recorder recorder(2, {.level = level});
    std::atomic<int> unhandled{0};
    {
      lantern::SchedulerOptions options;
      options.workers = 2;
      options.observer = &recorder;
      options.on_unhandled_exception = [&](std::exception_ptr) { unhandled.fetch_add(1); };
      lantern::Scheduler pool(options);
      EXPECT_THROW(pool.submit([]() -> int { throw std::runtime_error("to the future"); }).get(), std::runtime_error);
      EXPECT_THROW(pool.submit([] { throw std::runtime_error("to a void future"); }).get(), std::runtime_error);
      pool.run([] {  // a group made and waited in a task, its spawns on the owner's fast path
        lantern::TaskGroup group;
        group.spawn([] { throw std::runtime_error("to the group"); });
        group.spawn([] {});
        EXPECT_THROW(group.wait(), std::runtime_error);
      });
      {
        lantern::TaskGroup group(pool);  // a group made outside: its spawns are injected
        group.spawn([] { throw std::runtime_error("to the outside group"); });
        EXPECT_THROW(group.wait(), std::runtime_error);
      }
      EXPECT_THROW(pool.spawn_handle([] { throw std::runtime_error("to the handle"); }).wait(), std::runtime_error);
      pool.spawn([] { throw std::runtime_error("to nobody"); });
      pool.submit([] {}).get();  // tasks that return are not counted
    }                            // the destructor drains: the unobserved spawn has run
    std::uint64_t threw = 0;
    for (std::uint32_t w = 0; w < 2; ++w) threw += recorder.snapshot(w).tasks_threw;
    EXPECT_EQ(threw, 6u) << "level " << static_cast<int>(level);
    EXPECT_EQ(unhandled.load(), 1) << "only the task nobody waited for reaches the handler";
  }
}

// A throw is counted once for every kind of job that runs a user's code, at every level:
// by the task_end hook when a task hook was wanted at the task's begin, else from the
// job's catch site (detail::task_threw), never both and never neither. The kinds beyond
// the test above: a Scheduler::run, a graph's node, an IO callback, a spawn_after; and
// tasks that begin after the level changed under the task that runs them (1 worker, so
// they nest inside it: an inner task counted from its catch site inside an outer one
// counted by its task_end, and the other way round).
TEST(Recorder, CountsAThrowOfEveryKindOfJobOnceAtEveryLevel) {
  for (Level level : {Level::off, Level::states, Level::tasks, Level::full, Level::graph}) {
    Recorder recorder(1, {.level = level});
    std::atomic<int> unhandled{0};
    std::uint64_t expected = 0;
    int fds[2] = {-1, -1};
    {
      lantern::SchedulerOptions options;
      options.workers = 1;
      options.observer = &recorder;
      options.on_unhandled_exception = [&](std::exception_ptr) { unhandled.fetch_add(1); };
      lantern::Scheduler pool(options);
      lantern::testing::Watchdog dog("throws of every kind", 60s, [&] { return pool.describe_state(); });

      EXPECT_THROW(pool.run([] { throw std::runtime_error("from run"); }), std::runtime_error);
      ++expected;

      lantern::TaskGraph graph;
      graph.add("fails", [] { throw std::runtime_error("from a node"); });
      graph.add("returns", [] {});
      EXPECT_THROW(graph.run(pool), std::runtime_error);
      ++expected;

      lantern::TaskHandle first = pool.spawn_handle([] {});
      EXPECT_THROW(pool.spawn_after({first}, [] { throw std::runtime_error("after"); }).wait(), std::runtime_error);
      ++expected;

      ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
      char byte = 0;
      std::atomic<bool> called{false};
      pool.run([&] {
        lantern::io::read(fds[0], &byte, 1, [&](lantern::IoResult) {
          called.store(true);
          called.notify_one();
          throw std::runtime_error("from an IO callback");
        });
      });
      ASSERT_EQ(write(fds[1], "x", 1), 1);
      called.wait(false);
      ++expected;

      // The level changes inside a task; the tasks it then waits for run nested in it.
      // First the outer task begins at `level` and the nested ones at off, then the
      // outer one at off and the nested ones at tasks.
      for (Level inner : {Level::off, Level::tasks}) {
        EXPECT_THROW(pool.run([&] {
          recorder.set_level(inner);
          lantern::TaskGroup group;
          group.spawn([] { throw std::runtime_error("nested"); });
          group.spawn([] {});
          EXPECT_THROW(group.wait(), std::runtime_error);
          throw std::runtime_error("outer");
        }),
                     std::runtime_error);
        expected += 2;
      }
    }  // the destructor drains: the IO callback's task has ended
    close(fds[0]);
    close(fds[1]);
    EXPECT_EQ(recorder.snapshot(0).tasks_threw, expected) << "level " << static_cast<int>(level);
    EXPECT_EQ(unhandled.load(), 1) << "only the IO callback's exception has nobody to go to";
  }
}

namespace {

// pin: the calling thread onto one CPU.
bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

// run_task: one task of at least `length` wall time on "worker" 0's hooks, spinning on the
// clock; returns its recorded task_end, and *begin_ticks its task_begin's time.
Event run_task(Recorder& recorder, std::uint64_t id, std::chrono::nanoseconds length, std::uint64_t* begin_ticks) {
  using lantern::TaskBeginPayload;
  using lantern::TaskEndPayload;
  const auto b = TaskBeginPayload{id, lantern::TaskSource::own_deque}.encode();
  recorder.on_event(0, EventId::task_begin, b.a, b.b);
  const auto until = std::chrono::steady_clock::now() + length;
  while (std::chrono::steady_clock::now() < until) {
  }
  const auto e = TaskEndPayload{id, false}.encode();
  recorder.on_event(0, EventId::task_end, e.a, e.b);
  Event out[8];
  Event end{};
  for (std::size_t n; (n = recorder.drain(0, out, 8, true)) > 0;)
    for (std::size_t i = 0; i < n; ++i)
      if (out[i].type == EventId::task_end)
        end = out[i];
      else if (out[i].type == EventId::task_begin)
        *begin_ticks = out[i].ticks;
  return end;
}

}  // namespace

// A long task whose thread the kernel preempted: its task_end says for how long it waited
// for a CPU (off_cpu_ticks), so Health can say "preempted" instead of blaming the code.
// The task's thread shares one CPU with two busy threads (sched_setaffinity), so it runs
// about a third of its 30 ms; a short task carries nothing, and a task never carries more
// than its own length.
TEST(Recorder, ALongTaskRecordsTheTimeItsThreadWaitedForACpu) {
  if (::access("/proc/thread-self/schedstat", R_OK) != 0)
    GTEST_SKIP() << "the kernel has no schedstats (/proc/thread-self/schedstat): nothing to measure";
  lantern::testing::Watchdog watchdog("a preempted task", 30s);
  Recorder recorder(1, {.level = Level::tasks});
  const double ns_per_tick = recorder.ns_per_tick();
  std::atomic<bool> stop{false};
  Event short_end{}, long_end{};
  std::uint64_t short_begin = 0, long_begin = 0;
  std::thread worker([&] {
    ASSERT_TRUE(pin_to(0));
    const auto s =
        lantern::StatePayload{lantern::WorkerState::idle, lantern::WorkerState::active, lantern::StateReason::started}
            .encode();
    recorder.on_event(0, EventId::state, s.a, s.b);
    short_end = run_task(recorder, 1, 100us, &short_begin);
    // Competitors on the same CPU, each bounded by the flag and by 5 s.
    std::vector<std::thread> busy;
    std::atomic<int> running{0};
    for (int i = 0; i < 2; ++i) {
      busy.emplace_back([&] {
        pin_to(0);
        running.fetch_add(1);
        const auto until = std::chrono::steady_clock::now() + 5s;
        while (!stop.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < until) {
        }
      });
    }
    while (running.load() < 2) std::this_thread::yield();
    long_end = run_task(recorder, 2, 30ms, &long_begin);
    stop = true;
    for (auto& t : busy) t.join();
  });
  worker.join();
  ASSERT_EQ(short_end.type, EventId::task_end);
  ASSERT_EQ(long_end.type, EventId::task_end);
  // A task under 1 ms is not measured (this one may take longer on a busy machine).
  if (static_cast<double>(short_end.ticks - short_begin) * ns_per_tick < 1e6) {
    EXPECT_EQ(lantern::TaskEndPayload::decode(short_end.a, short_end.b).off_cpu_ticks, 0u);
  }
  const auto end = lantern::TaskEndPayload::decode(long_end.a, long_end.b);
  EXPECT_FALSE(end.threw);
  // The task spun until 30 ms had passed on the clock; its thread ran about a third of
  // the time it took (the kernel shares the CPU with the two busy threads), so it waited
  // for the CPU for most of it: at least 30 % here, leaving room for the 1 ms lower bound.
  const double off_ms = static_cast<double>(end.off_cpu_ticks) * ns_per_tick / 1e6;
  const double length_ms = static_cast<double>(long_end.ticks - long_begin) * ns_per_tick / 1e6;
  std::printf("the task took %.2f ms and waited %.2f ms of them for a CPU\n", length_ms, off_ms);
  EXPECT_GE(length_ms, 30.0);
  EXPECT_GE(off_ms, 0.3 * length_ms) << "sharing a CPU with two busy threads, it waited most of the time";
  EXPECT_LE(off_ms, length_ms) << "never more than its length";
}
