// SPDX-License-Identifier: Apache-2.0
// recorder_reading.hpp - one reading of everything /metrics is made from: the Recorder's
// exact per-worker counters and histograms, and the few figures the Scheduler keeps
// itself. Tests compare a scrape with it (end_of_run_test.cpp, server_e2e_test.cpp).
//
// A reading is taken twice around a scrape: when the two agree on every count, nothing
// moved while the scrape read, and the scrape must equal them exactly. Only a worker's
// time in its current state grows between them; the scrape's must lie in between.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lantern/instrumentation/recorder.hpp"
#include "lantern/scheduler.hpp"
#include "lantern/trace/latency_histogram.hpp"

namespace lantern::exporters::testing {

struct Reading {
  // The Recorder's.
  std::vector<instrumentation::WorkerCountersSnapshot> workers;
  trace::LatencyHistogram ready_wait, task_duration, wake_latency;
  // The Scheduler's own (core keeps these at every level, observer or not).
  std::vector<std::uint64_t> tasks_spawned, lane_size;
  std::vector<std::int64_t> deque_size;
  std::vector<WorkerState> published_state;
  std::uint64_t tasks_submitted = 0, not_ready = 0, unhandled = 0;
  Scheduler::SleepSnapshot sleep{};
};

inline Reading read(const Scheduler& pool, const instrumentation::Recorder& recorder) {
  Reading r;
  for (std::uint32_t w = 0; w < recorder.worker_count(); ++w) {
    r.workers.push_back(recorder.snapshot(w));
    r.ready_wait.merge(recorder.counters(w).ready_wait.snapshot());
    r.task_duration.merge(recorder.counters(w).task_duration.snapshot());
    r.wake_latency.merge(recorder.counters(w).wake_latency.snapshot());
    r.tasks_spawned.push_back(pool.tasks_spawned(w));
    r.lane_size.push_back(pool.lane_size(w));
    r.deque_size.push_back(pool.deque_size(w));
    r.published_state.push_back(pool.worker_state(w));
  }
  r.tasks_submitted = pool.tasks_submitted_from_outside();
  r.not_ready = pool.not_ready_tasks();
  r.unhandled = pool.unhandled_exceptions();
  r.sleep = pool.sleep_snapshot();
  return r;
}

// what_moved: "" when a and b agree on every count (everything but the time in states),
// else what differs.
inline std::string what_moved(const Reading& a, const Reading& b) {
  std::ostringstream out;
  auto cmp = [&](const std::string& what, auto x, auto y) {
    if (x != y) out << what << ": " << +x << " -> " << +y << "\n";
  };
  for (std::size_t w = 0; w < a.workers.size(); ++w) {
    const auto &x = a.workers[w], &y = b.workers[w];
    const std::string p = "worker " + std::to_string(w) + " ";
    cmp(p + "tasks", x.tasks, y.tasks);
    cmp(p + "tasks_threw", x.tasks_threw, y.tasks_threw);
    for (std::size_t d = 0; d < x.steals.size(); ++d)
      cmp(p + "steals[" + std::to_string(d) + "]", x.steals[d], y.steals[d]);
    cmp(p + "steal_rounds_failed", x.steal_rounds_failed, y.steal_rounds_failed);
    cmp(p + "helps", x.helps, y.helps);
    cmp(p + "lane_pops", x.lane_pops, y.lane_pops);
    cmp(p + "sleeps", x.sleeps, y.sleeps);
    cmp(p + "wakes_received", x.wakes_received, y.wakes_received);
    cmp(p + "state", x.state, y.state);
    cmp(p + "events_recorded", x.events_recorded, y.events_recorded);
    cmp(p + "events_dropped", x.events_dropped, y.events_dropped);
    cmp(p + "releases", x.releases, y.releases);
    cmp(p + "io_submitted", x.io_submitted, y.io_submitted);
    cmp(p + "io_completed", x.io_completed, y.io_completed);
    cmp(p + "io_wakes", x.io_wakes, y.io_wakes);
    cmp(p + "deadlocks", x.deadlocks, y.deadlocks);
    cmp(p + "tasks_spawned", a.tasks_spawned[w], b.tasks_spawned[w]);
    cmp(p + "lane_size", a.lane_size[w], b.lane_size[w]);
    cmp(p + "deque_size", a.deque_size[w], b.deque_size[w]);
    cmp(p + "published_state", static_cast<int>(a.published_state[w]), static_cast<int>(b.published_state[w]));
  }
  auto histogram = [&](const std::string& what, const trace::LatencyHistogram& x, const trace::LatencyHistogram& y) {
    cmp(what + " count", x.count(), y.count());
    cmp(what + " sum_ns", x.sum_ns(), y.sum_ns());
    for (int i = 0; i < trace::LatencyHistogram::kBuckets; ++i) {
      if (x.bucket(i) != y.bucket(i)) {
        out << what << ": buckets moved\n";
        break;
      }
    }
  };
  histogram("ready_wait", a.ready_wait, b.ready_wait);
  histogram("task_duration", a.task_duration, b.task_duration);
  histogram("wake_latency", a.wake_latency, b.wake_latency);
  cmp("tasks_submitted", a.tasks_submitted, b.tasks_submitted);
  cmp("not_ready", a.not_ready, b.not_ready);
  cmp("unhandled", a.unhandled, b.unhandled);
  cmp("sleep.inactive", a.sleep.inactive, b.sleep.inactive);
  cmp("sleep.sleeping", a.sleep.sleeping, b.sleep.sleeping);
  return out.str();
}

// wait_until_all_sleep: the end of a run - every worker asleep, as the Recorder saw its
// last transition and as the worker published it. Bounded; false after `limit`.
inline bool wait_until_all_sleep(const Scheduler& pool, const instrumentation::Recorder& recorder,
                                 std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    bool all = true;
    for (std::uint32_t w = 0; w < recorder.worker_count(); ++w) {
      all = all && recorder.snapshot(w).state == static_cast<std::uint32_t>(WorkerState::sleeping) &&
            pool.worker_state(w) == WorkerState::sleeping;
    }
    if (all) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace lantern::exporters::testing
