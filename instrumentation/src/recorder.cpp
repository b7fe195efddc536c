// SPDX-License-Identifier: Apache-2.0
// recorder.cpp - hook -> counters + ring.
#include "lantern/instrumentation/recorder.hpp"

#include "lantern/clock.hpp"
#include "lantern/io.hpp"
#include "lantern/topology.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <type_traits>

namespace lantern::instrumentation {

namespace {
// kHookLevel[h]: the lowest level that records hook h, from the event table.
constexpr std::uint8_t hook_level(int h) { return static_cast<std::uint8_t>(trace::kEventInfo[h].level); }
}  // namespace

WorkerCountersSnapshot snapshot(const WorkerCounters& c, std::uint64_t now_ticks) noexcept {
  WorkerCountersSnapshot s{};
  s.tasks = c.tasks.get();
  s.tasks_threw = c.tasks_threw.get();
  for (int i = 0; i < trace::kDistanceCount; ++i) s.steals[i] = c.steals[i].get();
  s.steal_rounds_failed = c.steal_rounds_failed.get();
  s.helps = c.helps.get();
  s.lane_pops = c.lane_pops.get();
  s.sleeps = c.sleeps.get();
  s.wakes_received = c.wakes_received.get();
  s.releases = c.releases.get();
  s.io_submitted = c.io_submitted.get();
  s.io_completed = c.io_completed.get();
  s.io_wakes = c.io_wakes.get();
  s.deadlocks = c.deadlocks.get();
  for (int i = 0; i < trace::kStateCount; ++i) s.state_ticks[i] = c.state_ticks[i].get();
  s.state = static_cast<std::uint32_t>(c.state.get());
  const std::uint64_t since = c.state_since.get();
  // The open interval: racy against the worker's next transition by at most one
  // interval, which a reader sampling every second cannot tell apart from timing noise.
  if (s.state < static_cast<std::uint32_t>(trace::kStateCount) && now_ticks > since) {
    s.state_ticks[s.state] += now_ticks - since;
  }
  s.events_recorded = 0;  // filled in by Recorder::snapshot, from the ring
  s.events_dropped = c.events_dropped.get();
  s.events_produced = s.events_recorded + s.events_dropped;
  s.drop_markers = c.drop_markers.get();
  return s;
}

Recorder::Recorder(std::uint32_t workers, RecorderOptions options)
    : ns_per_tick_(calibration().ns_per_tick),
      long_task_ticks_(ns_to_ticks(1e6)),
      time_tasks_(options.time_tasks ? 1 : 0),
      level_(static_cast<std::uint8_t>(options.level)) {
  set_level(options.level);
  std::uint32_t sample = 1;
  while (sample < options.deque_push_sample && sample < (1u << 30)) sample <<= 1;
  deque_push_sample_mask.store(sample - 1, std::memory_order_relaxed);
  workers_.reserve(workers);
  for (std::uint32_t i = 0; i < workers; ++i) {
    workers_.push_back(std::make_unique<PerWorker>(options.ring_capacity < 2 ? 2 : options.ring_capacity));
    // No state until the worker's thread reports `started`: time per state begins there
    // (counters.hpp, "Time per state").
    workers_.back()->counters.state.set(kNoState);
  }
  event_cost_ns_ = measure_event_cost();
  drain_request_.take();  // the measurement's lap filled a ring of its own: no drain is wanted
}

double Recorder::measure_event_cost() {
  // One lap over a ring that holds every event of it, as a recording writes: each event
  // into a line the consumer evicted a lap before (event_ring.hpp), sequentially. An
  // untimed lap first faults the ring in and leaves its lines evicted; the timed lap then
  // pops nothing until it is over. (Popping a small ring between batches would time a
  // rewrite of each line right after its eviction, which no recording does: 2-3x the
  // cost of an event in a run.)
  constexpr int kBatches = 256, kPairs = 16, kEvents = 2 * kBatches * kPairs;
  // Exactly a lap (a power of two): the timed lap rewrites the lines the untimed lap's
  // pop evicted, and cannot drop (after that pop the ring is empty).
  static_assert((kEvents & (kEvents - 1)) == 0);
  workers_.push_back(std::make_unique<PerWorker>(kEvents));
  PerWorker& scratch = *workers_.back();
  scratch.schedstat_fd = -1;  // no system call: the real path reads it once per ms at most
  const auto worker = static_cast<std::uint32_t>(workers_.size() - 1);
  // Every event is recorded while measuring (nothing is attached yet: no hook runs).
  const std::uint8_t level = level_.load(std::memory_order_relaxed);
  level_.store(static_cast<std::uint8_t>(trace::Level::graph), std::memory_order_relaxed);
  // Through the virtual call, as core calls it (the volatile keeps it from being
  // resolved at compile time).
  Observer* volatile self = this;
  std::vector<std::uint64_t> batch(kBatches);
  std::vector<trace::Event> out(1024);  // popped in pieces
  const TaskBeginPayload begin{0x1000, TaskSource::own_deque};
  for (int lap = 0; lap < 2; ++lap) {
    for (int i = 0; i < kBatches; ++i) {
      const std::uint64_t t0 = ticks_now();
      for (int k = 0; k < kPairs; ++k) {
        const PayloadWords b = TaskBeginPayload{begin.task + static_cast<std::uint64_t>(k), begin.source}.encode();
        self->on_event(worker, EventId::task_begin, b.a, b.b);
        const PayloadWords e = TaskEndPayload{begin.task + static_cast<std::uint64_t>(k), false}.encode();
        self->on_event(worker, EventId::task_end, e.a, e.b);
      }
      batch[static_cast<std::size_t>(i)] = ticks_now() - t0;
    }
    while (scratch.ring.pop(out.data(), out.size(), false) != 0) {
    }
  }
  level_.store(level, std::memory_order_relaxed);
  workers_.pop_back();
  std::nth_element(batch.begin(), batch.begin() + kBatches / 2, batch.end());
  return static_cast<double>(batch[kBatches / 2]) * ns_per_tick_ / (2.0 * kPairs);
}

std::atomic<std::uint64_t>* Recorder::task_counter(std::uint32_t worker) noexcept {
  if (worker >= workers_.size()) return nullptr;
  workers_[worker]->core_counts_tasks = true;
  return &workers_[worker]->counters.tasks.word();
}

void Recorder::on_event(std::uint32_t worker, EventId hook, std::uint64_t a, std::uint64_t b) noexcept {
  if (worker >= workers_.size()) [[unlikely]]
    return;
  PerWorker& p = *workers_[worker];
  const int h = static_cast<int>(hook);
  bool record_it = hook_level(h) <= level_.load(std::memory_order_relaxed);
  // A task's end is recorded exactly when its begin was, whatever the level is now: a
  // level switched while the task ran must not leave half a pair in the trace.
  if (hook == EventId::task_begin) {
    if (p.depth < PerWorker::kMaxDepth) p.begin_recorded[p.depth] = record_it;
  } else if (hook == EventId::task_end && p.depth > 0 && p.depth <= PerWorker::kMaxDepth) {
    record_it = p.begin_recorded[p.depth - 1];
  }
  // The clock is the largest part of a hook's cost: read it only for an event that is
  // recorded or a counter that needs it (time per state, task durations).
  const bool needs_clock =
      record_it || hook == EventId::state || hook == EventId::task_begin || hook == EventId::task_end;
  const std::uint64_t now = needs_clock ? ticks_now() : 0;
  const StateReason reason = hook == EventId::state ? StatePayload::decode(a, b).reason : StateReason{};
  // A new thread of this worker: drops its previous one handed off unmarked are marked
  // here, before its `started`, unless the consumer marked them already. Its schedstat
  // is its own: a previous thread that ended without `stopping` left its file open.
  if (hook == EventId::state && reason == StateReason::started) {
    take_back(p);
    close_sched(p);
  }
  if (record_it && hook == EventId::task_begin && p.depth < PerWorker::kMaxDepth) {
    // The reading this task starts with: refreshed when older than 1 ms (off-CPU time above).
    if (now - p.sched.ticks > long_task_ticks_) read_sched(p, now);
    p.begin_sched[p.depth] = p.sched;
  } else if (record_it && hook == EventId::task_end && p.depth > 0 && p.depth <= PerWorker::kMaxDepth) {
    const std::uint64_t begin = p.task_begin_ticks[p.depth - 1];
    if (now - begin >= long_task_ticks_) [[unlikely]] {
      TaskEndPayload end = TaskEndPayload::decode(a, b);
      end.off_cpu_ticks = off_cpu_ticks(p, begin, now);
      b = end.encode().b;
    }
  }
  count(p, hook, a, b, now);
  if (record_it) record(p, trace::Event{now, worker, static_cast<EventId>(h), {0, 0, 0}, a, b});
  // The thread's last event: its schedstat file closes, and drops still unmarked (its
  // ring was full to the end) go to the consumer, which marks them (drain).
  if (hook == EventId::state && reason == StateReason::stopping) [[unlikely]] {
    close_sched(p);
    if (p.pending_dropped != 0) hand_off(p, now);
  }
}

bool Recorder::read_sched(PerWorker& p, std::uint64_t now) noexcept {
  if (p.schedstat_fd == -2) p.schedstat_fd = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (p.schedstat_fd < 0) return false;
  // "exec_runtime_ns run_delay_ns timeslices\n"
  char buf[96];
  const ssize_t n = ::pread(p.schedstat_fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return sched_unavailable(p);
  buf[n] = '\0';
  char* end = nullptr;
  std::strtoull(buf, &end, 10);
  char* delay_end = nullptr;
  const unsigned long long delay = std::strtoull(end, &delay_end, 10);
  if (delay_end == end) return sched_unavailable(p);
  p.sched = {now, delay};
  return true;
}

std::uint64_t Recorder::off_cpu_ticks(PerWorker& p, std::uint64_t begin, std::uint64_t now) noexcept {
  const PerWorker::SchedReading start = p.begin_sched[p.depth - 1];
  if (start.ticks == 0 || !read_sched(p, now) || p.sched.delay_ns < start.delay_ns) return 0;
  const double delay_ns = static_cast<double>(p.sched.delay_ns - start.delay_ns);
  // The delay since the reading, less the time from the reading to the task's begin (it
  // may have been spent waiting too): a lower bound, never more than the task's length.
  const double lead_ns = static_cast<double>(begin > start.ticks ? begin - start.ticks : 0) * ns_per_tick_;
  const double off_ns = std::min(delay_ns - lead_ns, static_cast<double>(now - begin) * ns_per_tick_);
  return off_ns > 0 ? static_cast<std::uint64_t>(off_ns / ns_per_tick_) : 0;
}

Recorder::PerWorker::~PerWorker() {
  if (schedstat_fd >= 0) ::close(schedstat_fd);
}

bool Recorder::sched_unavailable(PerWorker& p) noexcept {
  // A file that cannot be read or parsed is not tried again by this thread: a failed
  // read must not cost a system call per task.
  close_sched(p);
  p.schedstat_fd = -1;
  return false;
}

void Recorder::close_sched(PerWorker& p) noexcept {
  if (p.schedstat_fd >= 0) ::close(p.schedstat_fd);
  p.schedstat_fd = -2;
  p.sched = {};
}

void Recorder::hand_off(PerWorker& p, std::uint64_t now) noexcept {
  std::lock_guard<std::mutex> lock(p.handoff_mutex);
  p.handoff_count += p.pending_dropped;
  p.handoff_ticks = now;
  p.pending_dropped = 0;
  p.handed_off.store(true, std::memory_order_release);
}

void Recorder::take_back(PerWorker& p) noexcept {
  if (!p.handed_off.load(std::memory_order_acquire)) return;  // none, or drain marked it
  std::lock_guard<std::mutex> lock(p.handoff_mutex);
  p.pending_dropped += p.handoff_count;  // marked by record(), before this thread's first event
  p.handoff_count = 0;
  p.handed_off.store(false, std::memory_order_relaxed);
}

void Recorder::count(PerWorker& p, EventId hook, std::uint64_t a, std::uint64_t b, std::uint64_t now) noexcept {
  WorkerCounters& c = p.counters;
  auto to_ns = [this](std::uint64_t ticks) {
    return static_cast<std::uint64_t>(static_cast<double>(ticks) * ns_per_tick_);
  };
  switch (hook) {
    case EventId::state: {
      const StatePayload s = StatePayload::decode(a, b);
      const std::uint64_t current = c.state.get();
      if (current < static_cast<std::uint64_t>(trace::kStateCount)) {
        c.state_ticks[current].add(now - c.state_since.get());
      }
      // `stopping` is the worker's last transition (its thread ends): its time ends here,
      // where the trace's analysis ends it too, not when someone reads the counters.
      c.state.set(s.reason == StateReason::stopping ? kNoState : static_cast<std::uint64_t>(s.to));
      c.state_since.set(now);
      if (s.to == WorkerState::sleeping) c.sleeps.add();
      if (s.from == WorkerState::sleeping) c.wakes_received.add();
      break;
    }
    case EventId::task_begin:
      if (!p.core_counts_tasks) c.tasks.add();  // an observer in front of us (a forwarder)
      if (p.depth < PerWorker::kMaxDepth) p.task_begin_ticks[p.depth] = now;
      ++p.depth;
      break;
    case EventId::task_end:
      if (TaskEndPayload::decode(a, b).threw) c.tasks_threw.add();
      if (p.depth > 0) {
        --p.depth;
        if (p.depth < PerWorker::kMaxDepth) c.task_duration.record(to_ns(now - p.task_begin_ticks[p.depth]));
      }
      break;
    case EventId::push:
      break;  // not counted (core counts spawned tasks): recorded at level full only
    // The task graph's events: not counted (the trace keeps them for the scalability
    // analysis in lantern::analysis).
    case EventId::spawn:
    case EventId::wait_begin:
    case EventId::wait_end:
    case EventId::signal_set:
    case EventId::satisfy: break;
    case EventId::steal: {
      const StealPayload s = StealPayload::decode(a, b);
      if (valid(s.distance)) c.steals[static_cast<std::size_t>(s.distance)].add();
      break;
    }
    case EventId::steal_round_failed: c.steal_rounds_failed.add(); break;
    case EventId::help: c.helps.add(); break;
    case EventId::wake: {
      // An IO completion's wake has no waker to time it from (its latency is 0): kept out
      // of the wake-latency histogram, which is about wakers (vocabulary: has_latency).
      const WakePayload w = WakePayload::decode(a, b);
      if (has_latency(w.why))
        c.wake_latency.record(to_ns(w.latency_ticks));
      else
        c.io_wakes.add();
      break;
    }
    case EventId::lane_pop:
      c.lane_pops.add();
      c.ready_wait.record(to_ns(LanePopPayload::decode(a, b).wait_ticks));
      break;
    case EventId::release: c.releases.add(); break;
    case EventId::task_label: break;  // nothing to count: recorded at level tasks (the trace names the task)
    case EventId::io_submit: c.io_submitted.add(); break;
    case EventId::io_complete: c.io_completed.add(); break;
    case EventId::not_ready: break;  // a sample of a pool-wide gauge: recorded, not counted
    case EventId::deadlock: c.deadlocks.add(); break;
    case EventId::dropped: break;  // written by the recorder itself (record), never reported by core
  }
}

void Recorder::record(PerWorker& p, const trace::Event& e) noexcept {
  WorkerCounters& c = p.counters;
  if (p.pending_dropped != 0) [[unlikely]] {
    // Room again? First the marker saying how many were lost here, then the event.
    const trace::Event marker =
        trace::make_event(e.ticks, e.worker, DroppedPayload{p.pending_dropped, DropReason::ring_full});
    const EventRing::Pushed pushed = p.ring.push(marker);
    if (pushed.past_half) drain_request_.request();
    if (!pushed) {
      c.events_dropped.add();
      ++p.pending_dropped;
      return;
    }
    p.pending_dropped = 0;
    c.drop_markers.add();
  }
  const EventRing::Pushed pushed = p.ring.push(e);
  if (pushed.past_half) [[unlikely]]
    drain_request_.request();
  if (!pushed) {
    c.events_dropped.add();
    ++p.pending_dropped;
  }
}

std::size_t Recorder::drain(std::uint32_t worker, trace::Event* out, std::size_t max, bool everything) noexcept {
  PerWorker& p = *workers_[worker];
  // A count handed off: its thread is gone, so take everything (leaving a half-written
  // line is for a producer that writes it), then mark the count.
  const bool handed = p.handed_off.load(std::memory_order_acquire);
  std::size_t n = p.ring.pop(out, max, !(everything || handed));
  if (handed && n < max) {
    std::lock_guard<std::mutex> lock(p.handoff_mutex);
    // Empty: every event the stopped thread recorded has been taken, so the marker comes
    // after them. A new thread of this worker records nothing before take_back, which
    // waits for this lock or sees the flag cleared here: none of its events come before.
    if (p.handoff_count != 0 && p.ring.empty()) {
      out[n++] = trace::make_event(p.handoff_ticks, worker, DroppedPayload{p.handoff_count, DropReason::ring_full});
      p.consumer_markers.store(p.consumer_markers.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      p.handoff_count = 0;
      p.handed_off.store(false, std::memory_order_release);
    }
  }
  return n;
}

WorkerCountersSnapshot Recorder::snapshot(std::uint32_t worker) const noexcept {
  const PerWorker& p = *workers_[worker];
  // Markers first, then the ring's count: a marker is counted after its push, so
  // events_produced never goes below the events the level selected (a marker being
  // written may count as one of them for a moment).
  const std::uint64_t markers = p.counters.drop_markers.get();
  const std::uint64_t consumer_markers = p.consumer_markers.load(std::memory_order_relaxed);
  const std::uint64_t pushed = p.ring.pushed();
  WorkerCountersSnapshot s = instrumentation::snapshot(p.counters, ticks_now());
  s.events_recorded = pushed + consumer_markers;
  s.drop_markers = markers + consumer_markers;
  s.events_produced = (pushed >= markers ? pushed - markers : 0) + s.events_dropped;
  return s;
}

}  // namespace lantern::instrumentation
