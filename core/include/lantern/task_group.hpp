// SPDX-License-Identifier: Apache-2.0
// task_group.hpp - spawn any number of tasks, then wait for all of them.
//
//   lantern::TaskGroup group(pool);
//   for (auto& item : items) group.spawn([&item] { process(item); });
//   group.wait();   // rethrows the first exception a task threw
//
// wait() on a worker keeps that worker running other tasks; on any other thread it
// blocks. The destructor waits too (swallowing exceptions; call wait() to see them).
//
// Nesting (SchedulerOptions::max_wait_depth): a wait on a worker runs tasks on the
// waiting task's stack, so a chain of tasks that each make a group, spawn the next link
// into it and wait would grow the stack by one level per link. A wait (wait() or the
// destructor's) that would nest deeper than max_wait_depth therefore cancels the group:
// every task of it that has not started yet never runs its body (it counts as finished
// at once), and the group records WaitDepthError. wait() then throws WaitDepthError
// without running anything; the destructor - typically reached while that exception
// unwinds the task - runs the cancelled tasks, each returning at once, and waits for
// the tasks already running elsewhere (running other tasks meanwhile, as every wait on
// a worker does), then swallows the error. So a refused link stops the chain: its next
// link is cancelled, not run on the unwinding stack, and the error reaches the task
// that waited on the chain's first group (each link's wait rethrows it). A task that
// had started before the cancellation runs to completion. A later wait() of the group
// rethrows the recorded WaitDepthError once every task has finished, and the next round
// of spawns runs normally.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "lantern/scheduler.hpp"

namespace lantern {

class TaskGroup {
 public:
  explicit TaskGroup(Scheduler& scheduler) : TaskGroup(&scheduler.registry()) {}
  // TaskGroup() from inside a task: a group on the scheduler running it. Throws
  // std::logic_error on a thread that is not a worker.
  TaskGroup() : TaskGroup(current_registry()) {}
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;
  ~TaskGroup() {
    try {
      wait(/*may_refuse=*/false);  // the tasks refer to *this: always wait for them
    } catch (...) {
    }
  }

  // spawn queues fn() (on the calling worker's deque, or into a lane from any other
  // thread). Any thread may spawn, tasks of the group included, except while another
  // thread waits.
  template <class F>
  void spawn(F&& fn) {
    detail::Worker* const w = detail::tls_worker;
    if (w == owner_ && w != nullptr && !folded_) [[likely]] {
      // The owner's worker (the fast path): a frame from its pool, a plain count, a push
      // onto its own deque.
      ++local_;
      joined_.store(false, std::memory_order_relaxed);
      try {
        push_new(*w, std::forward<F>(fn));
      } catch (...) {  // never queued: nobody else saw it
        --local_;
        throw;
      }
      return;
    }
    spawn_other(w, std::forward<F>(fn));
  }

  // wait returns when every spawned task has finished; rethrows the first exception
  // (once). Only one thread may wait at a time, and no task may be spawned into the
  // group from another thread while it waits. A group made on a worker (inside a task)
  // must be waited for on that worker, i.e. by the task that made it (it counts that
  // worker's spawns without atomics); waiting elsewhere is reported and aborts.
  // On a worker, if the wait would nest deeper than SchedulerOptions::max_wait_depth, it
  // cancels the tasks that have not started and throws WaitDepthError without running
  // anything (see the top of this file); the destructor then finishes the group.
  void wait() { wait(/*may_refuse=*/true); }

 private:
  void wait(bool may_refuse) {
    detail::Worker* const w = detail::tls_worker;
    if (owner_ != nullptr && w != owner_) misuse();
    const bool on_pool = w != nullptr && &w->registry() == registry_;
    // WaitDepthError rather than a stack overflow, before anything runs on this stack:
    // the tasks not started are cancelled, so that the destructor below runs none of
    // their bodies on this stack either.
    if (on_pool && pending_unfolded() != 0 && w->wait_too_deep()) [[unlikely]]
      refuse(*w, may_refuse);
    // The task's wait (wait_begin / wait_end, a: id()), on the pool's workers, when
    // something was spawned into the group since its last wait. A wait with nothing
    // spawned since joins no task and finds nothing to do (the last wait finished every
    // task): its pair would add no edge and no time to the task graph, only two events
    // (most of the waits of a recursion whose leaves make empty groups, and the
    // destructor's after wait()).
    const bool report =
        on_pool && !joined_.load(std::memory_order_relaxed) && w->report_wait_begin(WaitKind::task_group, id());
    if (owner_ != nullptr) {
      // The owner's own tasks first, straight from its deque: they finish with a plain
      // decrement of local_ (finish_one on the owner while not folded). They run nested
      // on this stack, so they count as a wait for max_wait_depth.
      // They count towards the join path's help check too: a TaskGroup fork-join whose
      // tasks nobody steals never reaches find_work and its check (core/helping/README.md,
      // "On the join path"). The check costs one subtraction and one branch per wait, not
      // per task: while the countdown covers every task of ours at once (join_help_covers
      // takes them off it), the loop runs them without looking; a group too big for what
      // is left runs them in run_own_helping, which counts down per task.
      detail::Worker::WaitDepthScope nested(*w);
      if (w->join_help_covers(local_)) [[likely]] {
        while (pending_unfolded() != 0) {
          detail::Job* job = w->pop();
          if (!job) break;
          w->execute(job, TaskSource::own_deque);
        }
      } else {
        run_own_helping(*w);
      }
    }
    if (pending_unfolded() != 0) {
      // Fold: from here on every finish is atomic, and the one that takes remote_ to
      // zero sets done_. Returns only after seeing SET, so that task is done with us.
      folded_ = true;
      const std::int64_t left = remote_.fetch_add(local_ - kBias, std::memory_order_acq_rel) + local_ - kBias;
      local_ = 0;
      if (left != 0) {
        if (on_pool) {
          w->wait_until(done_, detail::WaitKind::task_group);
        } else {
          done_.wait_blocking();
        }
        done_.reset();  // the only setter has finished with it
      }
      folded_ = false;
    }
    // Every task has finished: re-arm for the next round (no other thread touches the
    // counts now).
    local_ = 0;
    remote_.store(kBias, std::memory_order_relaxed);
    joined_.store(true, std::memory_order_relaxed);
    if (report) w->report_wait_end(WaitKind::task_group, id(), true);
    if (has_error_.load(std::memory_order_acquire)) {
      std::exception_ptr error;
      {
        std::lock_guard<std::mutex> lock(error_mutex_);
        error = std::exchange(error_, nullptr);
        has_error_.store(false, std::memory_order_relaxed);
      }
      cancelled_.store(false, std::memory_order_relaxed);  // a cancellation records an error
      if (error) std::rethrow_exception(error);
    }
  }

  // run_own_helping: wait's own-deque loop with the help check per task run: every
  // kJoinHelpInterval tasks an overdue lane task runs here, and it may finish tasks of
  // ours, so the count is tested again after it. Out of line: only a wait whose group
  // outgrows the countdown comes here.
  [[gnu::noinline]] void run_own_helping(detail::Worker& w) {
    while (pending_unfolded() != 0) {
      if (w.join_help_due()) [[unlikely]] {
        w.help_from_join();
        continue;
      }
      detail::Job* job = w.pop();
      if (!job) break;
      w.execute(job, TaskSource::own_deque);
    }
  }
  // task: the job's closure: runs fn, records its exception, counts it finished; returns
  // detail::Caught, so the task still counts as one that threw (task_end's `threw`).
  template <class F>
  auto task(F&& fn) {
    return [this, f = std::forward<F>(fn)]() mutable noexcept -> detail::Caught {
      bool threw = false;
      // A refused wait cancelled the group (refuse): the body never runs. Relaxed: a
      // task that misses the store has started before it, as far as anyone can tell.
      if (!cancelled_.load(std::memory_order_relaxed)) [[likely]] {
        try {
          f();
        } catch (...) {
          record(std::current_exception());
          threw = true;
          detail::task_threw();
        }
      }
      finish_one();
      return {threw};
    };
  }
  // push_new: a job for fn made on worker `w` (this thread's) and pushed onto its deque.
  // make_heap_job_on throws before counting anything; the push never throws.
  template <class F>
  void push_new(detail::Worker& w, F&& fn) {
    w.push_spawn(detail::make_heap_job_on(w, task(std::forward<F>(fn))), SpawnKind::task_group, id());
  }
  // spawn_other: a spawn from any thread but the owner's worker (a thief running one of
  // our tasks, an outside thread, another pool's worker), or from the owner while wait()
  // has folded (a task of ours running inside the wait): counted atomically on remote_.
  template <class F>
  void spawn_other(detail::Worker* w, F&& fn) {
    remote_.fetch_add(1, std::memory_order_relaxed);
    joined_.store(false, std::memory_order_relaxed);
    try {
      if (w && &w->registry() == registry_) {
        push_new(*w, std::forward<F>(fn));
      } else {
        registry_->inject(detail::make_outside_heap_job(*registry_, task(std::forward<F>(fn))));
      }
    } catch (...) {
      // never queued: nobody else saw it
      remote_.fetch_sub(1, std::memory_order_relaxed);
      throw;
    }
  }

  // Counting (no read-modify-write per spawn on the owner's worker): unfinished tasks =
  // local_ + (remote_ - kBias). local_ is the owner worker's spawns less its finishes,
  // touched by that worker's thread only; every other spawn and finish is an atomic on
  // remote_, which starts at kBias so that it cannot reach zero before wait() folds
  // local_ into it. After the fold every finish is atomic and the one that brings
  // remote_ to zero sets done_.
  static constexpr std::int64_t kBias = std::int64_t{1} << 62;

  explicit TaskGroup(detail::Registry* registry)
      : registry_(registry), owner_(registry->current_worker()), done_(&registry->sleep(), /*external_waiters=*/true) {}
  static detail::Registry* current_registry() {
    detail::Worker* w = detail::tls_worker;
    if (!w) throw std::logic_error("lantern::TaskGroup() needs a worker thread; pass the Scheduler instead");
    return &w->registry();
  }
  // id: what the group's spawn events (group) and its waits (a) carry: its address.
  std::uint64_t id() const noexcept { return reinterpret_cast<std::uintptr_t>(this); }
  std::int64_t pending_unfolded() const noexcept { return local_ + (remote_.load(std::memory_order_acquire) - kBias); }
  [[noreturn]] static void misuse() noexcept {
    std::fputs(
        "lantern: a TaskGroup made inside a task was waited for on another thread; wait for it in the task that made "
        "it\n",
        stderr);
    std::abort();
  }
  void record(std::exception_ptr e) noexcept {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = std::move(e);
    has_error_.store(true, std::memory_order_release);
  }
  // refuse: a wait on `w` that would nest deeper than max_wait_depth. Cancels the tasks
  // that have not started (their bodies are skipped: `task`), records WaitDepthError,
  // and throws it if the caller may (wait(); the destructor may not, and finishes the
  // group instead: running the cancelled tasks takes no stack beyond this level).
  [[gnu::cold, gnu::noinline]] void refuse(detail::Worker& w, bool may_refuse) {
    std::exception_ptr error;
    try {
      w.check_wait_depth();  // throws: the same message as every other refused wait
    } catch (...) {
      error = std::current_exception();
    }
    cancelled_.store(true, std::memory_order_relaxed);
    record(error);
    if (may_refuse) std::rethrow_exception(error);
  }
  void finish_one() noexcept {
    if (detail::tls_worker == owner_ && !folded_) {
      --local_;  // the owner's worker, before wait() folded: only it touches local_
      return;
    }
    if (remote_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.set();
  }

  detail::Registry* const registry_;
  detail::Worker* const owner_;  // the worker that made the group; null: made outside the pool
  std::int64_t local_ = 0;       // owner-only
  bool folded_ = false;          // owner-only: wait() has moved local_ into remote_
  // No spawn since the last wait: a wait reports its events only if false.
  std::atomic<bool> joined_{true};
  // A wait past max_wait_depth cancelled the tasks not started yet (refuse); cleared when
  // a wait has seen every task finish. Set by the waiter, read by every task.
  std::atomic<bool> cancelled_{false};
  std::atomic<std::int64_t> remote_{kBias};
  detail::Latch done_;
  std::atomic<bool> has_error_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace lantern
