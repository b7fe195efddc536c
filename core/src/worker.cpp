// worker.cpp - a worker's loop: find work (help, own deque, own lane, steal), run it,
// and when there is none, go through idle -> sleepy -> sleeping (SLEEP.md).
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

void Worker::set_steal_order(std::vector<Victim> victims) {
  victims_ = std::move(victims);
  lone_seen_.assign(registry_->worker_count(), -1);
  far_begin_ = victims_.size();
  if (!victims_.empty() && victims_.front().distance != victims_.back().distance) {
    const Distance farthest = victims_.back().distance;
    while (far_begin_ > 0 && victims_[far_begin_ - 1].distance == farthest) --far_begin_;
  }
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
    // A worker whose own ring has IO in flight is not blocked: the IO will complete.
    const bool blocked = nested && !(io_ && (io_->in_flight() > 0 || io_->has_queued()));
    if (blocked) {
      blocked_task_.store(task_id(current_task_), std::memory_order_relaxed);
      blocked_latch_.store(&latch, std::memory_order_relaxed);  // published by the flag's store
      blocked_in_wait_.store(true, std::memory_order_seq_cst);
    }
    while (!latch.probe()) {
      if (blocked) bump_search_epoch();  // odd: searching (check_deadlock)
      found = find_work(&source, &more_left);
      // Searched since any wake for work - unless the search left a task to its owner:
      // the wake may have been for that task (SLEEP.md, "A lone task").
      const bool declined = declined_from_ != kNoVictim;
      if (!declined) idle.owes_search = false;
      if (found) break;
      if (declined) back_off(idle, latch);
      // Our search found nothing: if every worker is now out of work inside a wait, the
      // pool can only be rescued from outside (core/README.md, "Waits").
      if (blocked) {
        bump_search_epoch();  // even: between searches, holding nothing
        check_deadlock(latch);
      }
      // The last look before blocking (after the SleepFence) also checks the deque our
      // search left a lone task in: we never sleep on a task we declined (SLEEP.md).
      sleep_->no_work_found(idle, latch, [this] { return registry_->has_injected_work() || declined_still_there(); }, *this);
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
    sleep_->work_found(found != nullptr, found && more_left, found_at_, [this] { return registry_->has_injected_work(); },
                       *this);
    // Leaving for our latch, not for work: a poster may have counted on us (woken us for
    // work we never searched for, or skipped a wake because we were idle and awake), and
    // the work is someone else's to find now - who may be asleep (SLEEP.md).
    if (!found) sleep_->leave_for_latch(idle, [this] { return registry_->has_injected_work(); }, *this);
    if (found) execute(found, source);
  }
  // The latch is set: the caller resumes its own task.
  set_state(WorkerState::active, StateReason::found_work);
}

// back_off: our search left a deque's only task to its owner (steal_from): probe no
// deque for a while (Sleep::kDeclineGapMinNs), still watching our latch, the lanes and
// our own IO.
void Worker::back_off(IdleState& idle, const Latch& latch, bool restart_spin) {
  const std::uint64_t until = sleep_->declined_work(idle, restart_spin);
  if (io_ && io_->in_flight() > 0) return;
  while (ticks_now() < until && !latch.probe() && !registry_->has_injected_work()) std::this_thread::yield();
}

bool Worker::declined_still_there() const noexcept {
  return declined_from_ != kNoVictim && registry_->worker(declined_from_).deque.size() > 0;
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

void Worker::unblock() noexcept {
  blocked_in_wait_.store(false, std::memory_order_seq_cst);
  // We leave with what our last search found: the epoch is odd; even again for the next
  // blocked period.
  if (search_epoch_.load(std::memory_order_relaxed) & 1) bump_search_epoch();
  // Dekker pair with still_blocked (both seq-cst): either its reader sees the flag down
  // and never touches our latch, or we see it counted in and wait until it is done: the
  // latch is on our caller's stack, gone once we return. A reader holds the count for a
  // flag load and a latch load; spin briefly, then yield (it may have been preempted).
  for (std::uint32_t spins = 0; inspectors_.load(std::memory_order_seq_cst) != 0; ++spins) {
    if (spins < 64) {
      LANTERN_PAUSE();
    } else {
      std::this_thread::yield();
    }
  }
}

bool Worker::still_blocked() const noexcept {
  inspectors_.fetch_add(1, std::memory_order_seq_cst);
  bool blocked = blocked_in_wait_.load(std::memory_order_seq_cst);
  // The flag's seq-cst store published the pointer; the waiter cannot leave this wait
  // (unblock) until we count ourselves out.
  if (blocked) blocked = !blocked_latch_.load(std::memory_order_relaxed)->probe();
  inspectors_.fetch_sub(1, std::memory_order_release);
  return blocked;
}

void Worker::check_deadlock(const Latch& own) noexcept {
  Registry& r = *registry_;
  const std::uint32_t n = r.worker_count();
  // Every worker blocked in a wait whose latch is not set. A flag is not enough: after a
  // worker sets another's latch (the stolen half of a join, a TaskGroup's last task) and
  // goes back to its own wait, the other's flag is still up until it probes its latch,
  // and ordinary fork-join looked like a deadlock (hundreds of reports in 200 fib(20)).
  // First the flags alone (plain loads, as cheap as before): some worker is nearly
  // always active, and then no other worker's latch is touched. Only when every flag is
  // up does the checker count itself in (an RMW on each waiter's `inspectors_`), so
  // checkers never pile onto a waiter's count while it works, and a waiter leaving its
  // wait lowers its flag first: the checks that follow stop at the flags and its count
  // drains.
  auto all_blocked = [this, &r, n, &own] {
    for (std::uint32_t i = 0; i < n; ++i) {
      if (!r.worker(i).blocked_in_wait()) return false;
    }
    if (own.probe()) return false;
    for (std::uint32_t i = 0; i < n; ++i) {
      const Worker& w = r.worker(i);
      if (&w != this && !w.still_blocked()) return false;
    }
    return true;
  };
  // The sum of the workers' search epochs, or ~0 when one is odd (a worker searching may
  // hold a task it took - popped, stolen, from a lane - while its flag is still up, and
  // the queues then look empty: a false report in ordinary fork-join, 36 of 600 runs of
  // OrdinaryNestedForkJoinIsNeverReportedAsADeadlock). Epochs only grow, so an equal
  // sum before and after the look at the queues means nobody searched meanwhile.
  auto epochs = [&r, n]() -> std::uint64_t {
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint64_t e = r.worker(i).search_epoch_.load(std::memory_order_seq_cst);
      if (e & 1) return ~std::uint64_t{0};
      sum += e;
    }
    return sum;
  };
  for (;;) {
    // seq-cst flag stores and loads: of the workers blocking last, at least one sees all flags.
    if (!all_blocked()) return;
    const std::uint64_t before = epochs();
    if (before == ~std::uint64_t{0}) return;
    for (std::uint32_t i = 0; i < n; ++i) {
      if (r.worker(i).deque.size() > 0 || r.worker(i).lane.size() > 0) return;
    }
    if (r.has_injected_work()) return;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (epochs() != before) return;  // somebody searched while we looked: it may hold the work
    std::uint64_t e = r.deadlock_episode.load(std::memory_order_seq_cst);
    // Claimed or reported: its claimer re-checks (and retries if it must withdraw).
    if ((e & 3) != Registry::kEpisodeNone) return;
    if (!r.deadlock_episode.compare_exchange_strong(e, e | Registry::kEpisodeClaimed, std::memory_order_seq_cst)) {
      continue;  // another claim or end came first: look again
    }
    const std::uint64_t claimed = e | Registry::kEpisodeClaimed;
    // Re-check after the claim: a worker that left before seeing it has its flag down
    // now (Dekker with the leaver's store-then-load), so no stale claim survives.
    if (all_blocked()) {
      // The hook first, then "reported": describe_state's line implies the hook fired.
      LANTERN_HOOK(*this, DeadlockPayload{n, r.live_jobs()});
      std::uint64_t c = claimed;
      // Fails only if a worker left meanwhile and ended the episode: it re-checks itself
      // when it blocks again.
      r.deadlock_episode.compare_exchange_strong(c, (claimed & ~std::uint64_t{3}) | Registry::kEpisodeReported,
                                                 std::memory_order_seq_cst);
      return;
    }
    // Withdraw our own claim only (a leaver may have ended it already), then look again:
    // a worker that blocked again meanwhile may have seen our claim and stood down.
    std::uint64_t c = claimed;
    r.deadlock_episode.compare_exchange_strong(c, (claimed | 3) + 1, std::memory_order_seq_cst);
  }
}

void Worker::help_from_join() {
  join_help_countdown_ = kJoinHelpInterval;
  // Every lane once (a lane task due on any of them starts within one interval of joins);
  // try_help keeps its own round robin, so this is n ordinary help checks.
  const std::uint32_t n = registry_->worker_count();
  for (std::uint32_t i = 0; i < n; ++i) {
    TaskSource source;
    if (Job* job = try_help(&source)) {
      execute(job, source);
      return;
    }
  }
}

bool Worker::join_rest(Job* popped, Job* target, Latch& latch) {
  // Anything popped before `target` was pushed by the first half (a spawn): ours to run.
  for (Job* job = popped; job; job = pop()) {
    if (job == target) return true;
    execute(job, TaskSource::own_deque);
  }
  wait_until(latch, WaitKind::join);
  return false;
}

void Worker::spill_to_lane(Job* job) noexcept { registry_->inject(job, static_cast<int>(index)); }

// report_push: a sampled push onto our own deque, with the deque's depth after it.
void Worker::report_push(Job* job, std::int64_t depth) noexcept {
  detail::emit_payload(observer, index, PushPayload::own_deque(task_id(job), static_cast<std::uint64_t>(depth)));
}

// report_task_begin / report_task_end: the task hooks, out of line (see execute). task_end
// is reported for a task that threw even when the observer does not want task_end, so
// that it can count failures at every level.
// (The interest test is made by the caller, so these call on_event directly.)
void Worker::run_observed(Job* job, TaskSource source, std::uint32_t hooks) noexcept {
  if (hooks & Observer::bit(Hook::task_begin)) report_task_begin(job, source);
  Job* const outer = observed_task_;  // run_observed nests as tasks do
  observed_task_ = job;
  const bool threw = job->execute(job);
  observed_task_ = outer;
  if (threw || (hooks & Observer::bit(Hook::task_end))) report_task_end(job, threw);
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
  if (!(observer->interest.load(std::memory_order_relaxed) & Observer::bit(Hook::not_ready))) return;
  // A pool-wide gauge: report it when it differs from the last value any worker reported.
  const std::uint64_t n = registry_->not_ready_tasks();
  // Load before the exchange: the value is nearly always unchanged (no dependent tasks,
  // or none released since), and a load leaves the shared line shared, where an
  // exchange on every idle transition bounced it between the workers that go idle.
  if (registry_->last_not_ready_sample.load(std::memory_order_relaxed) == n) return;
  if (registry_->last_not_ready_sample.exchange(n, std::memory_order_relaxed) == n) return;
  LANTERN_HOOK(*this, NotReadyPayload{n});
}

// poll_io: reap what completed (no system call) and make the waiting tasks ready on
// our own deque (their locality: the data they read is in our caches).
void Worker::poll_io() {
  if (io_cancel_requested_.load(std::memory_order_relaxed) && io_cancel_requested_.exchange(false)) io_->cancel_all();
  Reaped r;
  io_->poll(r);
  while (IoOp* op = io_->take_ready()) {
    registry_->not_ready_released(this);
    released_one();
    op->completion_reported = true;
    LANTERN_HOOK(*this, IoCompletePayload{task_id(op), op->result});
    push(op);
  }
}

LANTERN_HOT Job* Worker::pop_lane(Lane& from, std::uint32_t lane_index) {
  if (from.size() == 0) return nullptr;
  std::uint64_t waited = 0;
  Job* job = from.pop(ticks_now(), &waited);
  if (job) LANTERN_HOOK(*this, LanePopPayload{lane_index, waited});
  (void)lane_index;
  return job;
}

// try_help: the fairness rule (HELPING.md). One lane per call, round robin over all
// lanes including our own: if its head has waited far longer than our own lane's tasks
// usually wait, take it before any local work.
Job* Worker::try_help(TaskSource* source) {
  if (!registry_->options().helping) return nullptr;
  const std::uint32_t n = registry_->worker_count();
  const std::uint32_t target = help_cursor_;
  help_cursor_ = help_cursor_ + 1 == n ? 0 : help_cursor_ + 1;
  const std::uint64_t head = registry_->mirror(target).head_ticks.load(std::memory_order_relaxed);
  if (head == 0) return nullptr;
  const std::uint64_t now = ticks_now();
  if (now <= head) return nullptr;
  const std::uint64_t age = now - head;
  const std::uint64_t own_average = registry_->mirror(index).average_wait_ticks.load(std::memory_order_relaxed);
  // A remote lane is compared with our own lane's usual wait (kHelpBias); our own lane
  // only with the minimum, since comparing a lane with its own average would raise the
  // bar exactly as fast as its tasks wait longer.
  const std::uint64_t threshold =
      target == index ? registry_->help_min_wait_ticks() : std::max(registry_->help_min_wait_ticks(), own_average * kHelpBias);
  if (age < threshold) return nullptr;
  Job* job = pop_lane(registry_->worker(target).lane, target);
  if (!job) return nullptr;  // someone else took it: the mirror was stale, which is fine
  LANTERN_HOOK(*this, HelpPayload{target, age});
  found_at_ = target;
  *source = target == index ? TaskSource::own_lane : TaskSource::help;
  return job;
}

Job* Worker::steal_from(const Victim& victim, std::uint64_t* lost_races, TaskSource* source, bool* more_left) {
  Worker& other = registry_->worker(victim.worker);
  found_at_ = victim.worker;
  Stolen<Job> stolen = DequeThief<Job>(other.deque).steal(take_lone_ ? nullptr : &lone_seen_[victim.worker]);
  if (stolen.status == StealStatus::success) {
    *source = TaskSource::stolen_deque;
    *more_left = other.deque.size() > 0;
    LANTERN_HOOK(*this, StealPayload{victim.worker, victim.distance, TaskSource::stolen_deque});
    return stolen.value;
  }
  if (stolen.status == StealStatus::lost_race) ++*lost_races;
  if (stolen.status == StealStatus::fresh) declined_from_ = victim.worker;
  if (Job* job = pop_lane(other.lane, victim.worker)) {
    *source = TaskSource::stolen_lane;
    *more_left = other.lane.size() > 0;
    LANTERN_HOOK(*this, StealPayload{victim.worker, victim.distance, TaskSource::stolen_lane});
    return job;
  }
  return nullptr;
}

// steal: one round over the victims, nearest first. A round that lost races is retried
// (the work is there, someone was faster); a round that took nothing (every queue empty,
// or a deque's only task left to its owner: steal_from) is a failed round, reported once.
LANTERN_HOT Job* Worker::steal(TaskSource* source, bool* more_left) {
  // Every search that finds nothing ends here (find_work), so this is where its record of
  // a declined lone task starts, off the own-deque path.
  declined_from_ = kNoVictim;
  const std::size_t n = victims_.size();
  if (n == 0) return nullptr;
  std::uint64_t lost = 0;
  std::uint64_t probed = 0;
  if (steal_hint_ != SleepSink::kNowhere) {
    // Woken with a hint: the work is there, look there first.
    const std::uint32_t hinted = steal_hint_;
    steal_hint_ = SleepSink::kNowhere;
    for (const Victim& victim : victims_) {
      if (victim.worker != hinted) continue;
      ++probed;
      // We were woken for work there: take it even if it is the deque's only task.
      const bool take_lone = std::exchange(take_lone_, true);
      Job* job = steal_from(victim, &lost, source, more_left);
      take_lone_ = take_lone;
      if (job) return job;
      break;
    }
  }
  if (far_begin_ < n && ++steal_rounds_ % kFarProbeInterval == 0) {
    const Victim& far = victims_[far_begin_ + next_random() % (n - far_begin_)];
    ++probed;
    if (Job* job = steal_from(far, &lost, source, more_left)) return job;
  }
  for (int attempt = 0; attempt < 4; ++attempt) {
    lost = 0;
    for (const Victim& victim : victims_) {
      ++probed;
      if (Job* job = steal_from(victim, &lost, source, more_left)) return job;
    }
    if (lost == 0) break;
  }
  LANTERN_HOOK(*this, StealRoundFailedPayload{probed, lost});
  return nullptr;
}

}  // namespace lantern::detail
