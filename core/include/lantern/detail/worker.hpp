// SPDX-License-Identifier: Apache-2.0
// worker.hpp - one worker thread's queues and its scheduling loop.
//
// A worker's hot path is plain: push and pop on its own deque, one relaxed load of the
// sleep counters per push, no lock, no allocation, no virtual call (hooks aside, which
// are one predictable branch when no observer is attached).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "lantern/clock.hpp"
#include "lantern/detail/frame_pool.hpp"
#include "lantern/detail/job.hpp"
#include "lantern/detail/lane.hpp"
#include "lantern/detail/latch.hpp"
#include "lantern/detail/sleep.hpp"
#include "lantern/detail/ws_deque.hpp"
#include "lantern/observer.hpp"
#include "lantern/topology.hpp"

namespace lantern::detail {

class Registry;

// WaitKind: which wait a worker is in (innermost), for describe_state's deadlock report.
// Passed to wait_until and stored only on its cold path (nothing on join's fast path).
using WaitKind = ::lantern::WaitKind;  // the vocabulary's table (wait_begin / wait_end report it)
const char* wait_kind_name(WaitKind k) noexcept;

class alignas(64) Worker final : public SleepSink {
 public:
  // Every this many find_work calls the worker checks one lane's mirrored head time
  // (round robin, its own included) and helps it if it waited too long. 16 keeps the
  // check (one rdtsc, two relaxed loads) under ~5% of a minimal task's cost.
  static constexpr std::uint32_t kHelpCheckInterval = 16;
  // ... and every this many joins, since a fork-join computation whose halves are never
  // stolen never calls find_work (core/helping/README.md, "On the join path"). Compile with
  // -DLANTERN_JOIN_HELP_INTERVAL=0 to leave the check out (the benchmark's baseline).
#ifndef LANTERN_JOIN_HELP_INTERVAL
#define LANTERN_JOIN_HELP_INTERVAL 1024
#endif
  static constexpr std::uint32_t kJoinHelpInterval = LANTERN_JOIN_HELP_INTERVAL;
  // A lane is helped when its head waited more than kHelpBias times the helper's own
  // average wait: short bursts (a preempted worker) do not trigger migrations.
  static constexpr std::uint64_t kHelpBias = 4;
  // Every this many steal rounds, one randomly chosen victim of the farthest distance
  // level is probed first, so work on a remote socket is never ignored forever.
  static constexpr std::uint32_t kFarProbeInterval = 8;
  // IO submissions queued by tasks are flushed when the worker's deque runs dry, and
  // at least every this many tasks taken from it.
  static constexpr std::uint32_t kIoFlushInterval = 32;

  Worker(Registry& registry, std::uint32_t index, LaneMirror* mirror, Observer* observer);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // --- hot path, called on this worker's thread only ---
  //
  // push runs once per join, so it must stay small enough for the compiler to inline
  // into fork-join code: the hook's test is inline (one load of hooks_, the worker's copy
  // of the observer's interest, and a branch, with or without an observer: an observer
  // that does not want pushes costs no second load and test per push), the report - a
  // virtual call with its arguments - is out of line in report_push. Written inline, the
  // report makes g++ stop inlining push: a call and six register saves per join, fib(32)
  // +4..9 % with no observer attached at all (lantern_instr_bench). Rejected: a countdown
  // in the worker to the next sampled push, which costs more than the load and test (a
  // memory read-modify-write per push).
  //
  // join and a TaskGroup spawn call push_inline, which always inlines the same body. Left
  // to itself g++ 12 makes one out-of-line clone of push and calls it: at -O2 (CMake's
  // RelWithDebInfo, most distributions' packages) in every translation unit, and at -O3
  // in one with many spawn and join sites. That call costs fib by join 6-10 % at -O2;
  // inlined, fib by join costs the same at -O3 and skynet by join 1-2 % more there (a
  // bigger join). Measured with bench/ab/ab.py (bench/RESULTS.md, "Against an older
  // commit").
  //
  // push never throws and never loses the job: a deque that is full and cannot grow
  // (no memory) leaves it to spill_to_lane, and the job waits in this worker's lane
  // (an intrusive list: no allocation) where this worker and thieves find it.
  void push(Job* job) noexcept { push_inline(job); }
  [[gnu::always_inline]] void push_inline(Job* job) noexcept { push_as<PushAs::plain>(job, SpawnKind{}, 0); }
  // push_spawn: push a task the running task made (a TaskGroup's spawn, spawn(),
  // submit()), reporting the spawn event (a: task_id(job), kind, group) first when the
  // observer wants it. push_fork: push join's second half; with Observer::kJoinTasks it
  // reports the fork (spawn, kind join) and marks the half so that join runs it as a
  // task (join_rest). Both test the same word as push_inline, once: the mask differs.
  [[gnu::always_inline]] void push_spawn(Job* job, SpawnKind kind, std::uint64_t group) noexcept {
    push_as<PushAs::spawn>(job, kind, group);
  }
  [[gnu::always_inline]] void push_fork(Job* job) noexcept { push_as<PushAs::fork>(job, SpawnKind::join, 0); }
  Job* pop() noexcept { return owner_.pop(); }
  // spill_to_lane: a job push could not keep (the deque could not grow) goes into this
  // worker's lane instead, with the same wake rule as any lane push.
  [[gnu::cold, gnu::noinline]] void spill_to_lane(Job* job) noexcept;
  // join_help_due: join's countdown to its next help check (one decrement per join).
  bool join_help_due() noexcept {
    if constexpr (kJoinHelpInterval == 0) {
      return false;
    } else {
      return --join_help_countdown_ == 0;
    }
  }
  // join_help_covers: whether the countdown covers `tasks` more tasks before its next
  // help check; if so it takes them off it (one subtraction and one branch for a whole
  // TaskGroup wait). A negative count (a group whose owner finished others' spawns) is
  // never covered.
  bool join_help_covers(std::int64_t tasks) noexcept {
    if constexpr (kJoinHelpInterval == 0) {
      return true;
    } else {
      if (static_cast<std::uint64_t>(tasks) >= join_help_countdown_) return false;
      join_help_countdown_ -= static_cast<std::uint32_t>(tasks);
      return true;
    }
  }
  // help_from_join: the help check on the join path; runs an overdue lane task here.
  [[gnu::noinline]] void help_from_join();
  void execute(Job* job, TaskSource source) noexcept {
    set_state(WorkerState::active, StateReason::found_work);
    Job* const outer = current_task_;  // tasks nest: a join runs others while it waits
    for (;;) {
      current_task_ = job;
      // Every task is counted, observed or not (count_task: into the counter the
      // observer handed out, or into own_task_count_; Scheduler::tasks_run), so a task
      // no task hook is wanted for (no observer, or a Recorder at levels off and states)
      // runs the same instructions either way: the count, one load of hooks_ and a sign
      // test (lantern_instr_bench). hooks_ is the worker's
      // copy of the observer's interest (Observer::copy_of: every change of
      // Observer::interest updates it), 0 without an observer and negative when a task
      // hook is wanted. A task that throws reports task_end with threw from the job's
      // catch site (task_threw), so failures are counted at every level. When a task hook
      // is wanted, run_observed makes both decisions from this one read: task_end is
      // reported for a task exactly when the interest read at its begin asked for it (or
      // it threw), so a level change while the task runs never leaves a task_end without
      // its task_begin.
      count_task();
#if LANTERN_OBSERVER
      if (const std::uint32_t hooks = hooks_.load(std::memory_order_relaxed); static_cast<std::int32_t>(hooks) < 0)
          [[unlikely]] {
        run_observed(job, source, hooks);
      } else {
        job->execute(job);
      }
#else
      job->execute(job);
#endif
      (void)source;
      // A continuation kept by the task that just ended runs now, before this worker
      // looks anywhere else, so it can never be stranded in the slot.
      job = continuation_;
      if (!job) {
        current_task_ = outer;
        return;
      }
      continuation_ = nullptr;
      source = TaskSource::own_deque;
    }
  }
  // push_continuation: called as the very last thing a task does: `job` runs on this
  // worker right after the current task, without entering the deque (no thief can take
  // it in between, nobody is woken for it: this worker is about to be free). A second
  // job, or every kMaxContinuations-th one (so lanes still get their help checks),
  // goes through push() instead.
  void push_continuation(Job* job) {
    if (continuation_ || ++continuations_ % kMaxContinuations == 0) {
      push(job);
    } else {
      continuation_ = job;
    }
  }
  static constexpr std::uint32_t kMaxContinuations = 64;
  // join_rest: join's slow path. `popped` is what join popped after running its first
  // half (not `target`, its second half): run it and whatever else comes off the deque
  // until `target` comes back (true: the caller runs it inline) or the deque is empty
  // (target was stolen: wait until its `latch` is set, running other work; false).
  [[gnu::noinline]] bool join_rest(Job* popped, Job* target, Latch& latch);
  // back_off: after a search that left a lone task to its owner (restart_spin), or a
  // sleep attempt that failed on news it had not found: probe no deque for a while.
  void back_off(IdleState& idle, const Latch& latch, bool restart_spin = true);
  // wait_until runs other tasks until `latch` is set, sleeping on it when there are none.
  // `kind` names the wait for the deadlock report (core/deadlock/README.md); it is read
  // only on the cold path.
  void wait_until(Latch& latch, WaitKind kind = WaitKind::none) {
    if (!latch.probe()) wait_until_cold(latch, kind);
  }
  // --- suspected deadlock (core/deadlock/README.md, deadlock.cpp) ---
  // out_of_work: this worker is searching / sleeping with no IO of its own queued or in
  // flight, either inside a nested wait (kBlockedInWait) or in its top-level loop
  // (kIdleInLoop); kWorking otherwise. blocked_in_wait: the former. wait_kind /
  // blocked_task: that wait's kind and the task waiting. Read by other threads
  // (check_deadlock, describe_state).
  static constexpr std::uint8_t kWorking = 0, kIdleInLoop = 1, kBlockedInWait = 2;
  std::uint8_t out_of_work() const noexcept { return out_of_work_.load(std::memory_order_seq_cst); }
  bool blocked_in_wait() const noexcept { return out_of_work() == kBlockedInWait; }
  // still_blocked: out of work, and the latch of its wait (terminate, in the top-level
  // loop) is not set yet. Called by
  // another worker's check_deadlock: a flag alone is not enough, because a worker whose
  // latch was just set keeps its flag up until its own next probe, and a finished
  // join or TaskGroup would then look like a deadlock. The latch lives on the waiter's
  // stack: the caller counts itself in `inspectors_` before it reads the flag, and a
  // waiter that lowers its flag does not return while anyone is counted in (Dekker pair,
  // seq-cst both sides), so the latch read here is alive.
  bool still_blocked() const noexcept;
  WaitKind wait_kind() const noexcept { return wait_kind_.load(std::memory_order_relaxed); }
  std::uint64_t blocked_task() const noexcept { return blocked_task_.load(std::memory_order_relaxed); }
  // check_wait_depth: called by a wait that may throw (Future, TaskHandle, Signal,
  // TaskGroup) before it starts waiting; throws WaitDepthError if the wait would nest
  // deeper than SchedulerOptions::max_wait_depth.
  void check_wait_depth() const {
    if (wait_too_deep()) [[unlikely]]
      throw_wait_depth();
  }
  // wait_too_deep: a wait here would nest deeper than max_wait_depth (check_wait_depth
  // would throw). TaskGroup's destructor, which cannot throw, cancels instead.
  bool wait_too_deep() const noexcept { return wait_depth_ >= max_wait_depth_; }
  // wait_depth: how many waits are nested on this worker's stack right now.
  std::uint32_t wait_depth() const noexcept { return wait_depth_; }
  // WaitDepthScope counts a wait that runs tasks on this stack without wait_until
  // (TaskGroup::wait's own-deque loop), so nesting through it is limited too.
  class WaitDepthScope {
   public:
    explicit WaitDepthScope(Worker& w) noexcept : w_(w) { ++w_.wait_depth_; }
    ~WaitDepthScope() { --w_.wait_depth_; }
    WaitDepthScope(const WaitDepthScope&) = delete;
    WaitDepthScope& operator=(const WaitDepthScope&) = delete;

   private:
    Worker& w_;
  };

  Registry& registry() const noexcept { return *registry_; }
  // current_task: the job this worker is running (or ran last); its task_id is what
  // the hooks report, e.g. for a task naming itself (lantern/label.hpp).
  Job* current_task() const noexcept { return current_task_; }
  Sleep& sleep() const noexcept { return *sleep_; }

  // --- visible to the scheduler and other workers ---
  const std::uint32_t index;
  // pinned_cpu: the OS CPU this worker's thread was pinned to (SchedulerOptions::
  // pin_workers), or -1. Written by the Registry's constructor, before it returns.
  int pinned_cpu = -1;
  Observer* const observer;
  Lane lane;
  WorkStealingDeque<Job> deque;
  Latch terminate;
  std::thread thread;
  // Heap jobs this worker created / finished (single writer: this worker; see
  // Registry::live_jobs for the readers' side).
  std::atomic<std::uint64_t> jobs_created{0};
  std::atomic<std::uint64_t> jobs_finished{0};
  // tasks_run: the tasks this worker has run since it was made (Scheduler::tasks_run).
  std::uint64_t tasks_run() const noexcept { return task_counter_->load(std::memory_order_relaxed) - task_count_base_; }
  // frames: where this worker's heap jobs are allocated (frame_pool.hpp); other workers
  // only ever call free_remote on it.
  FramePool frames;

  // published_state: the worker's state for readers on other threads (watchdogs,
  // describe_state); a relaxed store on each transition, never read on the hot path.
  WorkerState published_state() const noexcept { return published_state_.load(std::memory_order_relaxed); }

  void set_steal_order(std::vector<Victim> victims);
  void main();

  // SleepSink
  void sleep_state(WorkerState s, StateReason why) noexcept override { set_state(s, why); }
  void was_woken(std::uint32_t waker, std::uint64_t why, std::uint64_t latency_ticks,
                 std::uint32_t where) noexcept override {
    LANTERN_HOOK(*this, WakePayload{waker, static_cast<WakeCause>(why), latency_ticks});
    (void)waker;
    (void)why;
    (void)latency_ticks;
    steal_hint_ = where;
  }
  std::uint32_t sink_index() const noexcept override { return index; }
  IoContext* io_context() noexcept override { return io_.get(); }

  // released_one: this worker made a not-ready task ready; every 64th time it samples
  // the pool's not-ready count for the observer (the not_ready hook).
  void released_one() noexcept {
#if LANTERN_OBSERVER
    if (observer && ++releases_since_sample_ >= 64) [[unlikely]] {
      releases_since_sample_ = 0;
      sample_not_ready();
    }
#endif
  }

  // --- IO (core/io/README.md) ---
  // set_io gives the worker its own ring (io_uring strategy), before its thread starts.
  void set_io(std::unique_ptr<IoContext> io) noexcept { io_ = std::move(io); }
  // request_io_cancel: any thread (shutdown). The worker cancels everything in flight on
  // its ring the next time it looks for work; the wake gets it there if it sleeps.
  void request_io_cancel() noexcept {
    io_cancel_requested_.store(true, std::memory_order_seq_cst);
    if (io_) io_->wake();
  }

  friend void task_threw() noexcept;  // reads current_task_, observed_task_, hooks_

  // --- the task graph's events (core/README.md, "The task graph") ---
  // Each is one load of hooks_ (this worker's copy of the interest, 0 without an
  // observer) and a branch inline; the report is out of line, and made only while this
  // worker runs a task (the parent, or the waiting task, is that task: a spawn or wait
  // from the worker's own loop has none).
  bool wants(EventId e) const noexcept {
#if LANTERN_OBSERVER
    return (hooks_.load(std::memory_order_relaxed) & Observer::bit(e)) != 0;
#else
    (void)e;
    return false;
#endif
  }
  // report_spawn: the running task made `job` (a task not pushed through push_spawn:
  // spawn_after, a TaskGraph's nodes, submit_to_lane). group: what its wait names (a
  // TaskGroup's or a TaskGraph's id; 0: the task itself).
  void report_spawn(const Job* job, SpawnKind kind, std::uint64_t group) noexcept {
    if (wants(EventId::spawn)) [[unlikely]]
      emit_spawn(task_id(job), kind, group);
  }
  // report_wait_begin / report_wait_end: around every wait of a running task, also one
  // that finds its work done (lantern/vocabulary.hpp, WaitBeginPayload). on: what it
  // waits for (WaitKind's table). report_wait_begin returns whether it reported;
  // report_wait_end reports exactly then (`begun`), whatever the interest became while
  // the task waited: like a task's begin and end, a wait's pair is never split.
  bool report_wait_begin(WaitKind kind, std::uint64_t on) noexcept {
    if (wants(EventId::wait_begin)) [[unlikely]]
      return emit_wait(EventId::wait_begin, kind, on);
    return false;
  }
  void report_wait_end(WaitKind kind, std::uint64_t on, bool begun) noexcept {
    if (begun) [[unlikely]]
      emit_wait(EventId::wait_end, kind, on);
  }
  // report_signal_set: the running task set Signal `signal`.
  void report_signal_set(std::uint64_t signal) noexcept {
    if (wants(EventId::signal_set)) [[unlikely]]
      emit_signal_set(signal);
  }
  // is_join_marker: the job push_fork puts above a join's half under
  // Observer::kJoinTasks (run_join_marker). Never a task: thieves drop it, the task hooks
  // skip it and the task count takes it back.
  static bool is_join_marker(const Job* job) noexcept { return job->execute == &run_join_marker; }

 private:
  enum class PushAs : std::uint8_t { plain, spawn, fork };
  // push_as: the one body of push_inline, push_spawn and push_fork: one load of hooks_,
  // the deque push, the sleep protocol's news. A spawn or a fork under kJoinTasks that
  // an observer wants goes to push_observed, out of line, before anything is pushed; a
  // push alone is sampled inline (so level full does not pay a call per join).
  static constexpr std::uint32_t graph_hook_mask(PushAs mode) noexcept {
    return mode == PushAs::spawn ? Observer::bit(EventId::spawn) : mode == PushAs::fork ? Observer::kJoinTasks : 0u;
  }
  template <PushAs kMode>
  [[gnu::always_inline]] void push_as(Job* job, SpawnKind kind, std::uint64_t group) noexcept {
#if LANTERN_OBSERVER
    // hooks_ is 0 without an observer: the same one load either way, and a branch on it
    // before the push (a spawn or a fork an observer wants: reported first, out of line)
    // and after it (the sampled push report).
    const std::uint32_t hooks = hooks_.load(std::memory_order_relaxed);
    if constexpr (kMode != PushAs::plain) {
      if ((hooks & graph_hook_mask(kMode)) != 0) [[unlikely]] {
        push_observed(job, kMode, kind, group);
        return;
      }
    }
#endif
    (void)kind;
    (void)group;
    const std::int64_t before = owner_.push(job);
    if (before < 0) [[unlikely]] {
      spill_to_lane(job);
      return;
    }
#if LANTERN_OBSERVER
    if ((hooks & Observer::bit(EventId::push)) != 0) [[unlikely]] {
      if ((++deque_pushes_ & observer->deque_push_sample_mask.load(std::memory_order_relaxed)) == 0) [[unlikely]]
        report_push(job, before + 1);
    }
#endif
    sleep_->new_internal_jobs(1, before == 0, this);
  }
  // push_observed: push_as's whole push of `job` for an observer that wants the spawn
  // (spawn mode) or every join (fork mode, kJoinTasks): the spawn report first, then the
  // push (and, fork mode, the join marker above the half), the sampled push report and
  // the sleep protocol's news. Reported before the push, the spawn precedes any thief's
  // task_begin of the child in every order: the observer's, the recorder's clock.
  [[gnu::noinline]] void push_observed(Job* job, PushAs mode, SpawnKind kind, std::uint64_t group) noexcept;
  [[gnu::noinline]] void emit_spawn(std::uint64_t task, SpawnKind kind, std::uint64_t group) noexcept;
  [[gnu::noinline]] bool emit_wait(EventId event, WaitKind kind, std::uint64_t on) noexcept;
  [[gnu::noinline]] void emit_signal_set(std::uint64_t signal) noexcept;
  // run_join_marker: the marker's execute function. A pop site that is not the join's
  // own (a nested wait's search, a TaskGroup's loop) ran it: the join's half lies right
  // below it (or was stolen); run it here, as a task, so that the fork reported for it
  // is followed by its task. The marker itself is not a task: its count is taken back.
  static bool run_join_marker(Job* marker) noexcept;
  static Job join_marker_;
  void set_state(WorkerState s, StateReason why) noexcept {
    if (state_ == s) return;
    LANTERN_HOOK(*this, StatePayload{state_, s, why});
#if LANTERN_OBSERVER
    if (s == WorkerState::idle && observer) [[unlikely]]
      sample_not_ready();
#endif
    state_ = s;
    published_state_.store(s, std::memory_order_relaxed);
    (void)why;
  }
  void wait_until_cold(Latch& latch, WaitKind kind);
  // check_deadlock: every worker out of work (blocked in a nested wait or idle in its
  // loop), at least one of them in a wait, and nothing ready, no IO in flight -> report
  // once per episode (the deadlock hook; Registry::deadlock_episode for describe_state).
  [[gnu::noinline]] void check_deadlock(const Latch& own) noexcept;
  // unblock: lower out_of_work_ and wait until no check_deadlock reads our latch.
  void unblock() noexcept;
  [[noreturn, gnu::noinline]] void throw_wait_depth() const;
  // report_push: the push hook for a sampled own-deque push (depth: the deque's depth
  // after it). Out of line so that push() stays inlinable.
  [[gnu::noinline]] void report_push(Job* job, std::int64_t depth) noexcept;
  // count_task: one more task in the count (the observer's, or own_task_count_). The
  // worker is the count's only writer and readers load the whole word, so on x86-64 one
  // unlocked `inc` of it is enough: an aligned 8-byte store is never seen torn, and no
  // other writer can lose an update (Linux's per-CPU counters, this_cpu_inc, rest on the
  // same two facts). One instruction instead of a load, an add and a store, on every
  // task. Elsewhere, and under ThreadSanitizer (which
  // does not see into asm, and must see the store), the relaxed load and store.
  void count_task() noexcept {
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
    static_assert(sizeof(std::atomic<std::uint64_t>) == sizeof(std::uint64_t));
    // Both assembler dialects: this header is compiled into the user's code, which may
    // use -masm=intel.
    asm volatile("{incq %0|inc %0}" : "+m"(*reinterpret_cast<std::uint64_t*>(task_counter_)));
#else
    task_counter_->store(task_counter_->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
#endif
  }
  // run_observed: runs `job` (execute has counted it) reporting the task hooks `hooks`
  // (the interest read at its begin) asks for; task_end also when it threw.
  // observed_task_ is the job it runs, for task_threw.
  [[gnu::noinline]] void run_observed(Job* job, TaskSource source, std::uint32_t hooks) noexcept;
  [[gnu::noinline]] void report_task_begin(Job* job, TaskSource source) noexcept;
  [[gnu::noinline]] void report_task_end(Job* job, bool threw) noexcept;
  void sample_not_ready() noexcept;
  Job* find_work(TaskSource* source, bool* more_left);
  void poll_io();
  Job* try_help(TaskSource* source);
  Job* steal(TaskSource* source, bool* more_left);
  Job* steal_from(const Victim& victim, std::uint64_t* lost_races, TaskSource* source, bool* more_left);
  Job* pop_lane(Lane& from, std::uint32_t lane_index);
  std::uint64_t next_random() noexcept {  // xorshift64*: cheap and good enough for victim picks
    rng_ ^= rng_ >> 12;
    rng_ ^= rng_ << 25;
    rng_ ^= rng_ >> 27;
    return rng_ * 0x2545F4914F6CDD1DULL;
  }

  Registry* const registry_;
  Sleep* const sleep_;
  DequeOwner<Job> owner_;
  WorkerState state_ = WorkerState::idle;
  std::atomic<WorkerState> published_state_{WorkerState::idle};
  std::uint32_t finds_since_help_check_ = 0;
  std::uint32_t help_cursor_ = 0;
  std::uint32_t steal_rounds_ = 0;
  std::uint64_t rng_;
  std::vector<Victim> victims_;
  // lone_seen_[v]: the top of victim v's deque when this worker last saw exactly one task
  // there (DequeThief::steal's seen_top); -1: none. take_lone_: take such a task at first
  // sight (a search a wake pointed at).
  std::vector<std::int64_t> lone_seen_;
  bool take_lone_ = false;
  // The worker whose deque the last steal round left a lone task (fresh) in, to its
  // owner; kNoVictim if it left none. Reset by steal(), the end of every fruitless search.
  static constexpr std::uint32_t kNoVictim = 0xFFFFFFFF;
  std::uint32_t declined_from_ = kNoVictim;
  // declined_still_there: that deque still holds a task (the last look before sleeping).
  bool declined_still_there() const noexcept;
  std::size_t far_begin_ = 0;  // victims_[far_begin_..] are the farthest level
  Job* continuation_ = nullptr;
  Job* current_task_ = nullptr;
  Job* observed_task_ = nullptr;    // the job run_observed runs (innermost), if any
  std::uint32_t deque_pushes_ = 0;  // own-deque pushes, for sampling the push hook
  // hooks_: this worker's copy of the observer's interest (Observer::copy_of), kept
  // current by Observer::Interest (attached in the constructor, detached in the
  // destructor); 0 without an observer. Read by the push and task hooks.
  std::atomic<std::uint32_t> hooks_{0};
  std::uint32_t releases_since_sample_ = 0;
  std::uint32_t finds_since_io_flush_ = 0;
  // The worker named by the wake hint that woke us: searched first, once.
  std::uint32_t steal_hint_ = SleepSink::kNowhere;
  // The worker whose queue the last found job came from (for work_found's wake hint).
  std::uint32_t found_at_ = 0;
  std::unique_ptr<IoContext> io_;
  std::atomic<bool> io_cancel_requested_{false};
  std::uint32_t continuations_ = 0;
  // The observer's count of tasks run by this worker (Observer::task_counter), or
  // &own_task_count_ when it keeps none (never null: no test per task). Every task is
  // counted, observed or not (execute).
  std::atomic<std::uint64_t> own_task_count_{0};
  std::atomic<std::uint64_t>* const task_counter_;
  // *task_counter_ when this worker was made: an observer's count may hold an earlier
  // scheduler's tasks (a Recorder attached to one Scheduler after another).
  const std::uint64_t task_count_base_;
  std::uint32_t join_help_countdown_ = kJoinHelpInterval;
  std::uint32_t wait_depth_ = 0;  // waits nested on this thread's stack (wait_until_cold)
  std::uint32_t max_wait_depth_;  // SchedulerOptions::max_wait_depth
  // What check_deadlock reads of this worker, on a cache line of its own: idle workers
  // read it while this one runs tasks, and the owner's per-join and per-task fields above
  // must not share their line.
  alignas(64) std::atomic<WaitKind> wait_kind_{WaitKind::none};  // innermost wait (set on the cold path)
  std::atomic<std::uint64_t> blocked_task_{0};                   // task_id of the task blocked in it
  std::atomic<std::uint8_t> out_of_work_{kWorking};              // out_of_work(): the flag check_deadlock reads
  std::atomic<const Latch*> blocked_latch_{nullptr};             // the latch of that wait (set before the flag)
  mutable std::atomic<std::uint32_t> inspectors_{0};             // check_deadlock readers of blocked_latch_
  // Odd while this worker, out of work (flag up), searches (and may be holding a task
  // it took but has not yet left the wait with); even between searches. Only this
  // worker writes it. check_deadlock requires every epoch even and unchanged across its
  // look at the queues (core/deadlock/README.md).
  std::atomic<std::uint64_t> search_epoch_{0};
  void bump_search_epoch() noexcept {
    search_epoch_.store(search_epoch_.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
  }
};

// The worker running on this thread, or nullptr. constinit: no TLS wrapper call.
extern constinit thread_local Worker* tls_worker;

}  // namespace lantern::detail
