// SPDX-License-Identifier: Apache-2.0
// recorder.hpp - the Observer that turns scheduler hooks into events and counters.
//
// Attach one Recorder to a Scheduler (SchedulerOptions::observer). On every hook the
// worker's thread updates its exact counters and, if the current level records that
// event, writes one 32-byte Event into its own bounded single-producer ring
// (event_ring.hpp: faster than Boost.Lockfree's spsc_queue, measured side by side by
// `lantern_instr_bench --only ring`): the worker never blocks and never allocates; when the
// ring is full the event is dropped and counted, and a `dropped` marker carrying the
// count is written as soon as there is room again, so readers see where the gap is.
// Every drop is marked exactly once: a worker whose ring is still full when it stops
// (its `stopping` state event, its last) hands the count it could not mark to the
// consumer, whose drain() adds the marker once that worker's ring is empty; a new thread
// of the same worker (the next Scheduler) takes a count not yet marked back first. The
// hand-off is the one place a worker takes a lock, held for a few instructions: at its
// thread's end with drops unmarked, and at its start when a count waits.
//
// Off-CPU time of long tasks. A task that takes long on the clock may not have run for
// most of that time: the kernel preempted its thread (more runnable threads than CPUs).
// From level tasks up, the recorder puts into each recorded task_end of a task of 1 ms or
// more how long its thread waited in the run queue meanwhile (TaskEndPayload's
// off_cpu_ticks; Health then says "preempted for X of its Y" instead of blaming the
// code). The source is the thread's run-queue delay, /proc/thread-self/schedstat's second
// field (kernel schedstats; where it cannot be read nothing is measured), and reading it is
// a system call, so the task path reads it rarely:
//   - at a task_begin, only when the worker's last reading is older than 1 ms (at most one
//     read per worker per millisecond; a short task after it costs a compare and two
//     stores, the reading the task starts with);
//   - at a task_end, only when the task took 1 ms or more; that reading is the next
//     task's too.
// A task's off-CPU time is then the delay accrued since the reading it started with,
// less the time from that reading to its begin (at most 1 ms, which may have been spent
// waiting too): a lower bound, exact when the reading was taken at its begin. Rejected:
// getrusage(RUSAGE_THREAD) at every task_begin (a system call per task: fork-join tasks
// take less than one), and CPU time (wall minus CPU time counts a task blocked in a
// system call as preempted, and that is the task's own doing).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "lantern/instrumentation/counters.hpp"
#include "lantern/instrumentation/drain_request.hpp"
#include "lantern/instrumentation/event_ring.hpp"
#include "lantern/observer.hpp"
#include "lantern/trace/event_table.hpp"

namespace lantern::instrumentation {

struct RecorderOptions {
  trace::Level level = trace::Level::tasks;
  std::size_t ring_capacity = 1 << 15;  // events per worker (32 bytes each: 1 MiB)
  // At level full, pushes onto a worker's own deque are recorded one in this many
  // (rounded up to a power of two; 1 records every one), each with the deque's depth.
  // Fork-join code pushes once per join and a join costs about what recording an event
  // costs, so recording all of them makes fib(32) 2.6 times as slow; one in 64 costs it
  // under 10 % at level full (`lantern_instr_bench --only overhead`). Pushes into lanes
  // are always recorded.
  std::uint32_t deque_push_sample = 64;
  // time_tasks: time every task (the task_duration histogram) at levels off and states
  // too. Costs two hook calls and two clock reads per task; with false those levels
  // make no call per task at all (the task count is kept by the worker itself, see
  // Observer::task_counter), and task_duration stays empty below level tasks. From
  // level tasks up every task is timed anyway (its events carry the times).
  bool time_tasks = false;
};

class Recorder final : public Observer {
 public:
  Recorder(std::uint32_t workers, RecorderOptions options = {});
  // ns_per_tick converts the clock's ticks for the histograms (from lantern::calibration()).
  double ns_per_tick() const noexcept { return ns_per_tick_; }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // The hook: runs on worker `worker`'s thread.
  void on_event(std::uint32_t worker, EventId hook, std::uint64_t a, std::uint64_t b) noexcept override;
  // task_counter: core's worker counts its tasks straight into counters(worker).tasks.
  std::atomic<std::uint64_t>* task_counter(std::uint32_t worker) noexcept override;

  // Level can change while the scheduler runs; counters are kept at every level.
  void set_level(trace::Level level) noexcept {
    // One change at a time, so that the interest stored last is the one for the level and
    // the timing requests stored last (set_level and time_tasks may run on any thread).
    std::lock_guard<std::mutex> lock(interest_mutex_);
    level_.store(static_cast<std::uint8_t>(level), std::memory_order_relaxed);
    // Every hook feeds a counter except push and task_label (nothing to count), which
    // are only wanted when they are recorded: below their level the scheduler skips the
    // call entirely.
    std::uint32_t mask = ~0u;
    // Every join as a task (its fork, its half's begin and end) only at level graph.
    if (level < trace::Level::graph) mask &= ~Observer::kJoinTasks;
    if (level < trace::info(EventId::push).level) mask &= ~Observer::bit(EventId::push);
    // The task graph's events feed no counter: not asked for below their level.
    for (const EventId e :
         {EventId::spawn, EventId::wait_begin, EventId::wait_end, EventId::signal_set, EventId::satisfy}) {
      if (level < trace::info(e).level) mask &= ~Observer::bit(e);
    }
    if (level < trace::info(EventId::task_label).level) mask &= ~Observer::bit(EventId::task_label);
    // not_ready is a sample that core computes on purpose (a sum over the workers): not
    // asked for when it would not be recorded.
    if (level < trace::info(EventId::not_ready).level) mask &= ~Observer::bit(EventId::not_ready);
    // Tasks are counted by the workers themselves (task_counter); the task hooks only
    // for recording or timing them.
    if (level < trace::info(EventId::task_begin).level && time_tasks_.load(std::memory_order_relaxed) == 0) {
      mask &= ~(Observer::bit(EventId::task_begin) | Observer::bit(EventId::task_end));
    }
    set_interest(mask);
  }
  // time_tasks / stop_timing_tasks: a reader that publishes the task_duration histogram
  // (the Prometheus collectable) asks for every task to be timed while it exists, at
  // every level, as RecorderOptions::time_tasks does from the start; the requests are
  // counted, so timing stops when the last one is withdrawn (and never when
  // RecorderOptions::time_tasks asked for it). A task running when timing starts is not
  // timed (a task's hooks are decided at its begin); every later one is.
  void time_tasks() noexcept {
    time_tasks_.fetch_add(1, std::memory_order_relaxed);
    set_level(level());
  }
  void stop_timing_tasks() noexcept {
    time_tasks_.fetch_sub(1, std::memory_order_relaxed);
    set_level(level());
  }
  bool timing_tasks() const noexcept { return time_tasks_.load(std::memory_order_relaxed) != 0; }
  trace::Level level() const noexcept { return static_cast<trace::Level>(level_.load(std::memory_order_relaxed)); }
  // event_cost_ns: what recording one event costs the recording thread, in ns, measured
  // by the constructor (measure_event_cost) and written into every trace header the
  // instrumentation makes (make_trace_header: trace files, flight recorder dumps, the
  // live stream), where the scalability analysis takes it off each task's own time
  // per event recorded inside the task.
  double event_cost_ns() const noexcept { return event_cost_ns_; }
  std::uint32_t worker_count() const noexcept { return static_cast<std::uint32_t>(workers_.size()); }
  std::size_t ring_capacity() const noexcept { return workers_.empty() ? 0 : workers_[0]->ring.capacity(); }

  // drain: the consumer side (one thread at a time, normally the Collector). Moves up
  // to `max` events of one worker's ring into `out`; returns how many. `everything`:
  // also the last event of a half-written cache line (see EventRing::pop). When the
  // worker stopped with drops it could not mark and its ring is now empty, the last of
  // them is the `dropped` marker for those drops, at the tick of the worker's `stopping`.
  std::size_t drain(std::uint32_t worker, trace::Event* out, std::size_t max, bool everything = false) noexcept;

  // drain_request: where a worker whose ring passes half full asks the consumer to drain
  // early (drain_request.hpp); the Collector waits on it.
  DrainRequest& drain_request() noexcept { return drain_request_; }

  const WorkerCounters& counters(std::uint32_t worker) const noexcept { return workers_[worker]->counters; }
  WorkerCountersSnapshot snapshot(std::uint32_t worker) const noexcept;

 private:
  struct alignas(64) PerWorker {
    explicit PerWorker(std::size_t capacity) : ring(capacity) {}
    ~PerWorker();  // closes schedstat_fd
    WorkerCounters counters;
    EventRing ring;
    std::uint64_t pending_dropped = 0;  // dropped since the last marker (worker-only)
    // Begin times of the tasks this worker is running, innermost last (join nests
    // tasks on one worker). Deeper nesting than this is not timed.
    static constexpr int kMaxDepth = 256;
    std::array<std::uint64_t, kMaxDepth> task_begin_ticks{};
    std::array<bool, kMaxDepth> begin_recorded{};  // ... and whether each one's task_begin was recorded
    // Run-queue delay readings (see "Off-CPU time" above): the latest, and per depth the
    // one each running task started with. Worker-only.
    struct SchedReading {
      std::uint64_t ticks = 0;     // when it was read
      std::uint64_t delay_ns = 0;  // the thread's run-queue delay so far
    };
    SchedReading sched;
    std::array<SchedReading, kMaxDepth> begin_sched{};
    int schedstat_fd = -2;  // this thread's schedstat: -2 not opened yet, -1 unavailable
    int depth = 0;
    bool core_counts_tasks = false;  // set before the worker starts (task_counter)
    // The hand-off of a stopped worker's unmarked drops (see the top of this file), on
    // lines of their own: drain() reads the flag on every call.
    alignas(64) std::atomic<bool> handed_off{false};  // set while a count waits
    std::mutex handoff_mutex;
    std::uint64_t handoff_count = 0;                 // guarded by handoff_mutex
    std::uint64_t handoff_ticks = 0;                 // ... the tick of the `stopping` that handed it
    std::atomic<std::uint64_t> consumer_markers{0};  // markers drain() wrote (its only writer)
  };
  void count(PerWorker& p, EventId hook, std::uint64_t a, std::uint64_t b, std::uint64_t now) noexcept;
  void record(PerWorker& p, const trace::Event& e) noexcept;
  static void hand_off(PerWorker& p, std::uint64_t now) noexcept;
  // read_sched: the worker thread's run-queue delay now, into p.sched; false when it
  // cannot be read. off_cpu_ticks: the off-CPU time of the task at depth p.depth that
  // began at `begin` and ends at `now` (0 below 1 ms or unknown).
  bool read_sched(PerWorker& p, std::uint64_t now) noexcept;
  std::uint64_t off_cpu_ticks(PerWorker& p, std::uint64_t begin, std::uint64_t now) noexcept;
  static void close_sched(PerWorker& p) noexcept;
  // sched_unavailable: closes p's file and marks it unreadable for this thread; false.
  static bool sched_unavailable(PerWorker& p) noexcept;
  static void take_back(PerWorker& p) noexcept;
  // measure_event_cost: the median cost of one event through the whole hook (on_event,
  // through its virtual call: the clock, the counters, the ring) into a scratch worker
  // of its own, appended to workers_ for the measurement only, with a ring the real
  // workers never see: 256 batches of 32 events (a task_begin and task_end per task),
  // each batch timed with the clock, in a lap that fills the ring exactly after an
  // untimed lap whose pop evicted its lines (instrumentation/README.md); about a
  // millisecond.
  double measure_event_cost();

  std::vector<std::unique_ptr<PerWorker>> workers_;
  double ns_per_tick_;
  std::mutex interest_mutex_;      // serialises set_level
  std::uint64_t long_task_ticks_;  // 1 ms: measure off-CPU time from here, refresh readings this old
  std::atomic<int> time_tasks_;    // RecorderOptions::time_tasks (1) + time_tasks() - stop_timing_tasks()
  double event_cost_ns_ = 0;       // measure_event_cost, in the constructor
  DrainRequest drain_request_;
  alignas(64) std::atomic<std::uint8_t> level_;
};

}  // namespace lantern::instrumentation
