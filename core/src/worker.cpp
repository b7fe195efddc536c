// SPDX-License-Identifier: Apache-2.0
// worker.cpp - a worker's loop: find work (help check, own deque, own lane, steal round),
// run it, and when there is none, go through idle -> sleepy -> sleeping
// (core/sleep/README.md). The help check is core/helping/helping.cpp, the steal round
// core/stealing/stealing.cpp, a lane's pop core/lanes/lanes.cpp, the deadlock check
// core/deadlock/deadlock.cpp, reaping the worker's own ring core/io/worker_io.cpp.
#include "lantern/detail/worker.hpp"

#include "lantern/detail/hot.hpp"

#include <string>
#include <utility>

#include "lantern/detail/registry.hpp"

namespace lantern::detail {

constinit thread_local Worker* tls_worker = nullptr;
constinit thread_local Sleep* tls_pool_sleep = nullptr;

Worker::Worker(Registry& registry, std::uint32_t idx, LaneMirror* mirror, Observer* obs)
    : index(idx),
      observer(obs),
      lane(mirror),
      terminate(&registry.sleep(), /*external_waiters=*/false),
      registry_(&registry),
      sleep_(&registry.sleep()),
      owner_(deque),
      rng_(0x9E3779B97F4A7C15ULL * (idx + 1)),
      task_counter_([&]() -> std::atomic<std::uint64_t>* {
        std::atomic<std::uint64_t>* c = obs ? obs->task_counter(idx) : nullptr;
        return c ? c : &own_task_count_;
      }()),
      task_count_base_(task_counter_->load(std::memory_order_relaxed)),
      max_wait_depth_(registry.options().max_wait_depth) {
#if LANTERN_OBSERVER
  if (obs) obs->interest.attach(&hooks_);
#endif
}

Worker::~Worker() {
#if LANTERN_OBSERVER
  if (observer) observer->interest.detach(&hooks_);
#endif
}

void Worker::throw_wait_depth() const {
  throw WaitDepthError("lantern: a wait on worker " + std::to_string(index) + " would nest " +
                       std::to_string(wait_depth_ + 1) + " waits deep, more than SchedulerOptions::max_wait_depth (" +
                       std::to_string(max_wait_depth_) +
                       "): each wait runs other tasks on the same stack, so a chain of tasks that each wait for the "
                       "next one would overflow it. Raise max_wait_depth (with a larger stack) or let the chain "
                       "continue without waiting (spawn_after, TaskGroup)");
}

void Worker::main() {
  tls_worker = this;
  tls_pool_sleep = sleep_;
  LANTERN_HOOK(*this, StatePayload{WorkerState::idle, WorkerState::idle, StateReason::started});
  wait_until(terminate);
  // stopping is the worker's last state event, reported even when the state does not
  // change (a pool shut down before this worker's first wait leaves it in the idle it
  // started in, and set_state reports changes only): observers end the worker's time
  // per state, and the analysis its span, here.
  LANTERN_HOOK(*this, StatePayload{state_, WorkerState::idle, StateReason::stopping});
  state_ = WorkerState::idle;
  published_state_.store(WorkerState::idle, std::memory_order_relaxed);
  tls_worker = nullptr;
  tls_pool_sleep = nullptr;
}

const char* wait_kind_name(WaitKind k) noexcept {
  switch (k) {
    case WaitKind::none: return "worker loop";
    case WaitKind::join: return "join";
    case WaitKind::task_group: return "TaskGroup::wait";
    case WaitKind::future: return "Future::get";
    case WaitKind::task_handle: return "TaskHandle::wait";
    case WaitKind::signal: return "Signal::wait";
    case WaitKind::graph: return "Graph::run";
  }
  return "?";
}

LANTERN_HOT void Worker::wait_until_cold(Latch& latch, WaitKind kind) {
  // Counted for max_wait_depth (tasks are noexcept: nothing unwinds through here).
  ++wait_depth_;
  const WaitKind outer_kind = wait_kind_.load(std::memory_order_relaxed);
  wait_kind_.store(kind, std::memory_order_relaxed);
  struct Leave {
    std::uint32_t& depth;
    std::atomic<WaitKind>& kind;
    WaitKind outer;
    ~Leave() {
      --depth;
      kind.store(outer, std::memory_order_relaxed);
    }
  } leave{wait_depth_, wait_kind_, outer_kind};
  // Nested: a wait inside a task (depth 1 is the worker's own loop, waiting for terminate).
  const bool nested = wait_depth_ > 1;
  TaskSource source = TaskSource::own_deque;
  bool more_left = false;
  while (!latch.probe()) {
    if (Job* job = find_work(&source, &more_left)) {
      execute(job, source);
      continue;
    }
    IdleState idle = sleep_->start_looking(index);
    set_state(WorkerState::idle, StateReason::out_of_work);
    Job* found = nullptr;
    // Out of work, for the deadlock check: blocked in a nested wait, or idle in the
    // top-level loop (a pool where one worker waits and the others idle with nothing
    // anywhere cannot progress either). A worker whose own ring has IO in flight is
    // neither: the IO will complete.
    const bool blocked = !(io_ && (io_->in_flight() > 0 || io_->has_queued()));
    if (blocked) {
      blocked_task_.store(nested ? task_id(current_task_) : 0, std::memory_order_relaxed);
      blocked_latch_.store(&latch, std::memory_order_relaxed);  // published by the flag's store
      out_of_work_.store(nested ? kBlockedInWait : kIdleInLoop, std::memory_order_seq_cst);
    }
    while (!latch.probe()) {
      if (blocked) bump_search_epoch();  // odd: searching (check_deadlock)
      found = find_work(&source, &more_left);
      // Searched since any wake for work - unless the search left a task to its owner:
      // the wake may have been for that task (core/stealing/README.md, "A lone task").
      const bool declined = declined_from_ != kNoVictim;
      if (!declined) idle.owes_search = false;
      if (found) break;
      if (declined) back_off(idle, latch);
      // Our search found nothing: if every worker is now out of work, some inside a wait,
      // the pool can only be rescued from outside (core/deadlock/README.md).
      if (blocked) {
        bump_search_epoch();  // even: between searches, holding nothing
        check_deadlock(latch);
      }
      // The last look before blocking (after the SleepFence) also checks the deque our
      // search left a lone task in: we never sleep on a task we declined
      // (core/stealing/README.md, "A lone task").
      sleep_->no_work_found(
          idle, latch, [this] { return registry_->has_injected_work() || declined_still_there(); }, *this);
      if (idle.news_seen) {
        // Our sleep attempt failed on news (the JEC moved) that our search had not found:
        // back off, but keep the count (sleepy again after one more fruitless round).
        idle.news_seen = false;
        back_off(idle, latch, /*restart_spin=*/false);
      }
    }
    if (blocked) {
      // The episode ends when any worker leaves its wait's idle section (work or latch).
      // Dekker pair with check_deadlock (both seq-cst): either we see the claim here and
      // end it, or the claimer's re-check sees our flag down and withdraws it.
      unblock();
      std::uint64_t e = registry_->deadlock_episode.load(std::memory_order_seq_cst);
      if ((e & 3) != Registry::kEpisodeNone) {
        // Only the episode we saw (a failed CAS: someone already ended it).
        registry_->deadlock_episode.compare_exchange_strong(e, (e | 3) + 1, std::memory_order_seq_cst);
      }
    }
    sleep_->work_found(
        found != nullptr, found && more_left, found_at_, [this] { return registry_->has_injected_work(); }, *this);
    // Leaving for our latch, not for work: a poster may have counted on us (woken us for
    // work we never searched for, or skipped a wake because we were idle and awake), and
    // the work is someone else's to find now - who may be asleep (core/sleep/README.md,
    // "A latch never swallows a wake for work").
    if (!found)
      sleep_->leave_for_latch(
          idle, [this] { return registry_->has_injected_work(); }, *this);
    if (found) execute(found, source);
  }
  // The latch is set: the caller resumes its own task.
  set_state(WorkerState::active, StateReason::found_work);
}

LANTERN_HOT Job* Worker::find_work(TaskSource* source, bool* more_left) {
  *more_left = false;
  found_at_ = index;
  if (io_) [[unlikely]] {
    if (io_->busy() || io_cancel_requested_.load(std::memory_order_relaxed)) poll_io();
  }
  if (++finds_since_help_check_ >= kHelpCheckInterval) {
    finds_since_help_check_ = 0;
    if (Job* job = try_help(source)) return job;
  }
  if (Job* job = owner_.pop()) {
    *source = TaskSource::own_deque;
    // Submissions queued by our tasks go to the kernel in one system call once our own
    // deque runs dry (the callbacks of one batch of completions submit together), and
    // every kIoFlushInterval finds at the latest, so a long run of local work cannot
    // hold them back.
    if (io_ && io_->has_queued() && ++finds_since_io_flush_ >= kIoFlushInterval) [[unlikely]] {
      finds_since_io_flush_ = 0;
      io_->flush();
    }
    return job;
  }
  if (io_ && io_->has_queued()) {
    finds_since_io_flush_ = 0;
    io_->flush();
  }
  if (Job* job = pop_lane(lane, index)) {
    *source = TaskSource::own_lane;
    *more_left = lane.size() > 0;
    return job;
  }
  return steal(source, more_left);
}

bool Worker::join_rest(Job* popped, Job* target, Latch& latch) {
  // Anything popped before `target` was pushed by the first half (a spawn): ours to run.
  // The join marker (Observer::kJoinTasks, push_observed) sits right above `target`:
  // then `target` runs here as a task (source inline_call), and join finds it done as
  // if a thief had run it (false).
  bool as_task = false;
  for (Job* job = popped; job; job = pop()) {
    if (job == target) {
      if (!as_task) return true;
      execute(target, TaskSource::inline_call);
      return false;
    }
    if (is_join_marker(job)) {
      as_task = true;
      continue;
    }
    execute(job, TaskSource::own_deque);
  }
  // Stolen: the task waits for it (also when it has already finished).
  const bool reported = report_wait_begin(WaitKind::join, task_id(target));
  wait_until(latch, WaitKind::join);
  report_wait_end(WaitKind::join, task_id(target), reported);
  return false;
}

void Worker::spill_to_lane(Job* job) noexcept { registry_->inject(job, static_cast<int>(index)); }

// report_push: a sampled push onto our own deque, with the deque's depth after it.
void Worker::report_push(Job* job, std::int64_t depth) noexcept {
  detail::emit_payload(observer, index, PushPayload::own_deque(task_id(job), static_cast<std::uint64_t>(depth)));
}

// The task graph's hooks (worker.hpp, "the task graph's events"). Reported only while a
// task runs: its parent, or the task that waits.
void Worker::push_observed(Job* job, PushAs mode, SpawnKind kind, std::uint64_t group) noexcept {
  const std::uint32_t hooks = hooks_.load(std::memory_order_relaxed);
  const bool report = (hooks & Observer::bit(EventId::spawn)) != 0;
  std::int64_t before;
  if (mode == PushAs::fork) {
    // The marker goes above the half (a thief takes the half first: it is older). Room
    // for both first: a fork reported is a half that runs as a task. If the deque cannot
    // grow (no memory), the half is pushed as without kJoinTasks and nothing is
    // reported for it.
    if (owner_.reserve(2)) {
      if (report) emit_spawn(task_id(job), SpawnKind::join, 0);
      before = owner_.push(job);
      owner_.push(&join_marker_);
    } else {
      before = owner_.push(job);
    }
  } else {
    if (report) emit_spawn(task_id(job), kind, group);
    before = owner_.push(job);
  }
  if (before < 0) {
    spill_to_lane(job);
    return;
  }
  if ((hooks & Observer::bit(EventId::push)) &&
      (++deque_pushes_ & observer->deque_push_sample_mask.load(std::memory_order_relaxed)) == 0) {
    report_push(job, before + 1);
  }
  sleep_->new_internal_jobs(1, before == 0, this);
}

void Worker::emit_spawn(std::uint64_t task, SpawnKind kind, std::uint64_t group) noexcept {
  if (current_task_ == nullptr) return;
  const PayloadWords w = SpawnPayload{task, kind, group}.encode();
  observer->on_event(index, SpawnPayload::kEvent, w.a, w.b);
}

bool Worker::emit_wait(EventId event, WaitKind kind, std::uint64_t on) noexcept {
  if (current_task_ == nullptr) return false;
  const PayloadWords w =
      event == EventId::wait_begin ? WaitBeginPayload{on, kind}.encode() : WaitEndPayload{on, kind}.encode();
  observer->on_event(index, event, w.a, w.b);
  return true;
}

void Worker::emit_signal_set(std::uint64_t signal) noexcept {
  if (current_task_ == nullptr) return;
  const PayloadWords w = SignalSetPayload{signal}.encode();
  observer->on_event(index, SignalSetPayload::kEvent, w.a, w.b);
}

// Constant-initialised: a join under kJoinTasks during another file's static
// initialisation finds it ready.
constinit Job Worker::join_marker_{&Worker::run_join_marker};

bool Worker::run_join_marker(Job*) noexcept {
  Worker* const w = tls_worker;
  // execute counted the marker: take it back (this worker is the count's only writer).
  w->task_counter_->store(w->task_counter_->load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  // The half below it (unless a thief took it): a task of its own, as its join would
  // have run it.
  if (Job* half = w->pop()) w->execute(half, TaskSource::inline_call);
  return false;
}

// report_task_begin / report_task_end: the task hooks, out of line (see execute). task_end
// is reported for a task that threw even when the observer does not want task_end, so
// that it can count failures at every level.
// (The interest test is made by the caller, so these call on_event directly.)
void Worker::run_observed(Job* job, TaskSource source, std::uint32_t hooks) noexcept {
  if (is_join_marker(job)) [[unlikely]] {  // not a task (run_join_marker)
    job->execute(job);
    return;
  }
  if (hooks & Observer::bit(EventId::task_begin)) report_task_begin(job, source);
  Job* const outer = observed_task_;  // run_observed nests as tasks do
  observed_task_ = job;
  const bool threw = job->execute(job);
  observed_task_ = outer;
  if (threw || (hooks & Observer::bit(EventId::task_end))) report_task_end(job, threw);
}

// task_threw: the catch site of every kind of job calls it (its task ended by throwing).
// A task run_observed runs is reported there, from execute's answer; any other task
// with an observer (no task hook wanted when it began) gets its task_end with threw
// here, so failures are counted at every level without a test per task in execute.
void task_threw() noexcept {
  Worker* const w = tls_worker;
  if (!w || w->hooks_.load(std::memory_order_relaxed) == 0) return;
  Job* const job = w->current_task_;
  if (job == nullptr || job == w->observed_task_) return;
  w->report_task_end(job, true);
}

void Worker::report_task_begin(Job* job, TaskSource source) noexcept {
  const PayloadWords w = TaskBeginPayload{task_id(job), source}.encode();
  observer->on_event(index, TaskBeginPayload::kEvent, w.a, w.b);
}
void Worker::report_task_end(Job* job, bool threw) noexcept {
  const PayloadWords w = TaskEndPayload{task_id(job), threw}.encode();
  observer->on_event(index, TaskEndPayload::kEvent, w.a, w.b);
}

// sample_not_ready: report the pool's not-ready count if it changed since the last report
// (O(workers) loads; only on idle transitions and every 64th release).
void Worker::sample_not_ready() noexcept {
  if (!(observer->interest.load(std::memory_order_relaxed) & Observer::bit(EventId::not_ready))) return;
  // A pool-wide gauge: report it when it differs from the last value any worker reported.
  const std::uint64_t n = registry_->not_ready_tasks();
  // Load before the exchange: the value is nearly always unchanged (no dependent tasks,
  // or none released since), and a load leaves the shared line shared, where an
  // exchange on every idle transition bounced it between the workers that go idle.
  if (registry_->last_not_ready_sample.load(std::memory_order_relaxed) == n) return;
  if (registry_->last_not_ready_sample.exchange(n, std::memory_order_relaxed) == n) return;
  LANTERN_HOOK(*this, NotReadyPayload{n});
}

}  // namespace lantern::detail
