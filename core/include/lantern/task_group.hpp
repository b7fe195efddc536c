// task_group.hpp - spawn any number of tasks, then wait for all of them.
//
//   lantern::TaskGroup group(pool);
//   for (auto& item : items) group.spawn([&item] { process(item); });
//   group.wait();   // rethrows the first exception a task threw
//
// wait() on a worker keeps that worker running other tasks; on any other thread it
// blocks. The destructor waits too (swallowing exceptions; call wait() to see them).
#pragma once

#include <atomic>
#include <cstdint>
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

  template <class F>
  void spawn(F&& fn) {
    pending_.fetch_add(1, std::memory_order_relaxed);
    try {
      registry_->push_or_inject(detail::make_heap_job(*registry_, [this, f = std::forward<F>(fn)]() mutable noexcept {
        try {
          f();
        } catch (...) {
          record(std::current_exception());
        }
        finish_one();
      }));
    } catch (...) {
      pending_.fetch_sub(1, std::memory_order_relaxed);  // never queued: nobody else saw it
      throw;
    }
  }

  // wait returns when every spawned task has finished; rethrows the first exception
  // (once). Only one thread may wait at a time, and no task may be spawned into the
  // group from another thread while it waits.
  // On a worker, throws WaitDepthError (without waiting) if the wait would nest deeper
  // than SchedulerOptions::max_wait_depth; the destructor still waits.
  void wait() { wait(/*may_refuse=*/true); }

 private:
  void wait(bool may_refuse) {
    // pending_ counts unfinished tasks plus one reference held by the waiter, so it
    // reaches zero exactly once per wait, in the task that finishes last - or here, if
    // none is left. That task's set() is then the only one, and it happens while we
    // wait for it: we return only after seeing SET, so the task is done touching us.
    if (pending_.load(std::memory_order_acquire) != 1) {
      // WaitDepthError rather than a stack overflow; before the waiter's reference is
      // dropped, so a throw leaves the group as it was.
      if (detail::Worker* w = registry_->current_worker(); w && may_refuse) w->check_wait_depth();
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) != 1) {
        if (detail::Worker* w = registry_->current_worker()) {
          w->wait_until(done_);
        } else {
          done_.wait_blocking();
        }
        done_.reset();  // the only setter has finished with it
      }
      pending_.store(1, std::memory_order_relaxed);  // re-arm the waiter's reference
    }
    std::exception_ptr error;
    {
      std::lock_guard<std::mutex> lock(error_mutex_);
      error = std::exchange(error_, nullptr);
    }
    if (error) std::rethrow_exception(error);
  }

  explicit TaskGroup(detail::Registry* registry) : registry_(registry), done_(&registry->sleep(), /*external_waiters=*/true) {}
  static detail::Registry* current_registry() {
    detail::Worker* w = detail::tls_worker;
    if (!w) throw std::logic_error("lantern::TaskGroup() needs a worker thread; pass the Scheduler instead");
    return &w->registry();
  }
  void record(std::exception_ptr e) noexcept {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = std::move(e);
  }
  void finish_one() noexcept {
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.set();
  }

  detail::Registry* registry_;
  std::atomic<std::uint64_t> pending_{1};  // unfinished tasks + the waiter's reference
  detail::Latch done_;
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace lantern
