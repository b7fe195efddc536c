// SPDX-License-Identifier: Apache-2.0
// future.hpp - the handle submit() returns: wait for a task's result from any thread.
#pragma once

#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "lantern/detail/latch.hpp"
#include "lantern/detail/registry.hpp"

namespace lantern {

namespace detail {
template <class T>
struct FutureState {
  explicit FutureState(Sleep* sleep) : done(sleep, /*external_waiters=*/true) {}
  Latch done;
  std::uint64_t task = 0;  // the submitted task's id (its task_begin's; a wait's `a`)
  std::conditional_t<std::is_void_v<T>, bool, std::optional<T>> value{};
  std::exception_ptr error;
};
}  // namespace detail

// Future<T>: get() waits and returns the task's result or rethrows its exception. Waiting
// on a worker thread of the same scheduler runs other tasks meanwhile; on any other
// thread (a worker of another scheduler too) it blocks. get() may be called once: it
// moves the result out and leaves the Future without a task (valid() false), as
// std::future does. wait() or get() on a Future without a task (default-constructed,
// or after get()) throws std::logic_error.
template <class T>
class Future {
 public:
  Future() = default;
  bool valid() const noexcept { return state_ != nullptr; }
  bool ready() const noexcept { return state_ && state_->done.probe(); }
  void wait() const {
    if (!state_)
      throw std::logic_error(
          "lantern: Future::wait() or get() on a Future without a task (default-constructed, or its result already "
          "taken by get())");
    if (detail::Worker* w = detail::tls_worker; w && &w->registry() == registry_) {
      const bool done = state_->done.probe();
      if (!done) w->check_wait_depth();  // WaitDepthError rather than a stack overflow
      // Every wait of a task reports its pair, also one that finds the task done.
      const bool reported = w->report_wait_begin(detail::WaitKind::future, state_->task);
      if (!done) w->wait_until(state_->done, detail::WaitKind::future);
      w->report_wait_end(detail::WaitKind::future, state_->task, reported);
    } else {
      state_->done.wait_blocking();
    }
  }
  T get() {
    wait();
    const std::shared_ptr<detail::FutureState<T>> state = std::move(state_);
    if (state->error) std::rethrow_exception(state->error);
    if constexpr (!std::is_void_v<T>) return std::move(*state->value);
  }

 private:
  template <class>
  friend class FutureTask;
  friend class Scheduler;
  Future(std::shared_ptr<detail::FutureState<T>> state, detail::Registry* registry)
      : state_(std::move(state)), registry_(registry) {}
  std::shared_ptr<detail::FutureState<T>> state_;
  detail::Registry* registry_ = nullptr;
};

}  // namespace lantern
