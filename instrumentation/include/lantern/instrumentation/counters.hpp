// SPDX-License-Identifier: Apache-2.0
// counters.hpp - exact per-worker counters, kept beside the event rings.
//
// Events may be dropped under overload; counters never are. Each worker owns one
// cache-line-aligned WorkerCounters and is its only writer, so an increment is a relaxed
// load and store (no locked instruction). Readers (exporters, the viewer, tests) load
// the published values with relaxed loads from any thread and never touch the worker's
// hot path or its ring.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "lantern/instrumentation/histogram.hpp"
#include "lantern/trace/event_table.hpp"

namespace lantern::instrumentation {

// Counter: single-writer, many-reader.
class Counter {
 public:
  void add(std::uint64_t n = 1) noexcept {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::uint64_t get() const noexcept { return value_.load(std::memory_order_relaxed); }
  void set(std::uint64_t v) noexcept { value_.store(v, std::memory_order_relaxed); }
  // word: the counter itself, for a single writer elsewhere (Observer::task_counter).
  std::atomic<std::uint64_t>& word() noexcept { return value_; }

 private:
  std::atomic<std::uint64_t> value_{0};
};

// kNoState: WorkerCounters::state of a worker not started yet, or stopped.
inline constexpr std::uint64_t kNoState = trace::kStateCount;

struct alignas(64) WorkerCounters {
  Counter tasks;        // tasks run: written by core's worker itself (Observer::task_counter)
  Counter tasks_threw;  // task_end with threw = 1
  std::array<Counter, trace::kDistanceCount> steals;  // by distance level
  Counter steal_rounds_failed;
  Counter helps;
  Counter lane_pops;
  Counter sleeps;          // transitions into sleeping
  Counter wakes_received;  // transitions out of sleeping
  Counter releases;        // release: tasks this worker made ready by completing their last dependency
  Counter io_submitted;    // io_submit: asynchronous IO operations this worker submitted
  Counter io_completed;    // io_complete: IO completions this worker reaped (their tasks made ready)
  Counter io_wakes;        // wakes caused by an IO completion: counted here, not in wake_latency
  Counter deadlocks;       // deadlock events (every worker blocked in a wait or idle, nothing ready)
  // Time per state, in clock ticks, up to state_since; plus the current state. A
  // worker's time runs from its `started` state event (its thread began) to its
  // `stopping` one (the scheduler shut it down), the span the trace's analysis counts
  // for the same worker (analysis.hpp, "Time per state"): before and after, `state` is
  // kNoState and no time is counted, so figures read after a run are the run's, however
  // long after it they are read, and equal lantern-trace stats' to the tick.
  std::array<Counter, trace::kStateCount> state_ticks;
  Counter state;        // current state (trace state number), or kNoState
  Counter state_since;  // ticks when it entered the current state
  // Exact latency histograms (ns), kept by the worker itself at every level, so they do
  // not depend on events surviving the ring: how long each task waited in a lane before
  // it started, and how long each task ran (tasks nest through join: a stack of begin
  // times, see Recorder).
  AtomicLatencyHistogram ready_wait;
  AtomicLatencyHistogram task_duration;
  // Wake latency (ns): from the wake call (by a worker or an outside thread) to the
  // woken worker running again, measured by the woken worker. IO wakes have no waker and
  // are not in it (io_wakes counts them): the worker's wake events are wake_latency's
  // count plus io_wakes.
  AtomicLatencyHistogram wake_latency;
  // Event accounting: every event the level selects is either written to the ring or
  // dropped (ring full); a snapshot's events_produced is their sum. Recorded events are
  // not counted one by one: the ring's own push count is the figure (Recorder::snapshot),
  // which saves a store on every recorded event. drop_markers: the `dropped` markers
  // this worker wrote into its ring (the consumer writes one more for drops a stopped
  // worker could not mark: Recorder::drain).
  Counter drop_markers;
  Counter events_dropped;
};

// CountersSnapshot: a plain copy for readers.
struct WorkerCountersSnapshot {
  std::uint64_t tasks, tasks_threw;
  std::array<std::uint64_t, trace::kDistanceCount> steals;
  std::uint64_t steal_rounds_failed, helps, lane_pops, sleeps, wakes_received;
  std::array<std::uint64_t, trace::kStateCount> state_ticks;  // including the open interval
  std::uint32_t state;                                        // kNoState before the worker started and after it stopped
  // events_produced: events the level selected. events_recorded: the worker's events in
  // the trace, its `dropped` markers included (drop_markers of them): what the sinks
  // receive once the consumer has taken everything. events_dropped: lost because the
  // ring was full; once the worker has stopped and its ring is drained, the markers'
  // counts add up to it. Read while no worker writes:
  // events_produced + drop_markers == events_recorded + events_dropped.
  std::uint64_t events_produced, events_recorded, events_dropped;
  std::uint64_t releases;  // last, so positional initialisers written before it stay valid
  std::uint64_t io_submitted, io_completed;
  std::uint64_t io_wakes, deadlocks;
  std::uint64_t drop_markers;
};

WorkerCountersSnapshot snapshot(const WorkerCounters& c, std::uint64_t now_ticks) noexcept;

}  // namespace lantern::instrumentation
