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
#include <utility>

#include "lantern/scheduler.hpp"

namespace lantern {

namespace detail {
// GroupState is shared by the group and every task it spawned: the task that finishes
// last still touches it (the latch) after the waiter may already have seen the count
// reach zero and destroyed the TaskGroup, so it must not live in the TaskGroup itself.
struct GroupState {
  explicit GroupState(Sleep* sleep) : done(sleep, /*external_waiters=*/true) {}
  void record(std::exception_ptr e) noexcept {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!error) error = std::move(e);
  }
  void finish_one() noexcept {
    if (pending.fetch_sub(1, std::memory_order_seq_cst) == 1) done.set();
  }
  std::atomic<std::uint64_t> pending{0};
  Latch done;
  std::mutex error_mutex;
  std::exception_ptr error;
};
}  // namespace detail

class TaskGroup {
 public:
  explicit TaskGroup(Scheduler& scheduler)
      : registry_(&scheduler.registry()), state_(std::make_shared<detail::GroupState>(&registry_->sleep())) {}
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;
  ~TaskGroup() {
    try {
      wait();
    } catch (...) {
    }
  }

  template <class F>
  void spawn(F&& fn) {
    state_->pending.fetch_add(1, std::memory_order_relaxed);
    try {
      registry_->push_or_inject(detail::make_heap_job(
          *registry_, [state = state_, f = std::forward<F>(fn)]() mutable noexcept {
            try {
              f();
            } catch (...) {
              state->record(std::current_exception());
            }
            state->finish_one();
          }));
    } catch (...) {
      state_->finish_one();
      throw;
    }
  }

  // wait returns when every spawned task has finished; rethrows the first exception
  // (once). Only one thread may wait at a time.
  void wait() {
    detail::GroupState& s = *state_;
    while (s.pending.load(std::memory_order_seq_cst) != 0) {
      s.done.reset();
      // All three (reset, this load, the finisher's decrement-then-set) are seq_cst: if
      // this load still sees a task pending, that task's set() comes after our reset in
      // the latch's order, so the wait below cannot miss it. A stale set from an earlier
      // round only costs one more trip round this loop.
      if (s.pending.load(std::memory_order_seq_cst) == 0) break;
      if (detail::Worker* w = registry_->current_worker()) {
        w->wait_until(s.done);
      } else {
        s.done.wait_blocking();
      }
    }
    std::exception_ptr error;
    {
      std::lock_guard<std::mutex> lock(s.error_mutex);
      error = std::exchange(s.error, nullptr);
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  detail::Registry* registry_;
  std::shared_ptr<detail::GroupState> state_;
};

}  // namespace lantern
