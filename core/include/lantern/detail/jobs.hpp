// jobs.hpp - the two concrete kinds of Job: on the stack (join, run) and on the heap
// (spawn, submit, task groups).
#pragma once

#include <exception>
#include <memory>
#include <utility>

#include "lantern/detail/job.hpp"
#include "lantern/detail/latch.hpp"
#include "lantern/detail/registry.hpp"

namespace lantern::detail {

// StackJob runs a borrowed callable and records its exception; its latch is set when it
// finishes. It lives in the frame of the thread that waits for it, so no allocation.
template <class F>
struct StackJob final : Job {
  StackJob(F& fn, Sleep* sleep, bool external_waiter) noexcept
      : Job(&StackJob::run), fn(&fn), latch(sleep, external_waiter) {}
  static bool run(Job* job) noexcept {
    auto* self = static_cast<StackJob*>(job);
    bool threw = false;
    try {
      (*self->fn)();
    } catch (...) {
      self->error = std::current_exception();
      threw = true;
    }
    self->latch.set();  // last touch of *self by this thread
    return threw;
  }
  // run_inline: the owner popped its own job back; no latch needed.
  void run_inline() {
    (*fn)();
  }
  void rethrow_if_failed() {
    if (error) std::rethrow_exception(error);
  }
  F* fn;
  std::exception_ptr error;
  Latch latch;
};

// HeapJob owns its callable and deletes itself after running. Completion is reported to
// the registry (for draining); an exception goes to `on_error`, whose default is the
// registry's unhandled-exception handler.
template <class F>
struct HeapJob final : Job {
  template <class G>
  HeapJob(Registry& registry, G&& fn) : Job(&HeapJob::run), registry(&registry), fn(std::forward<G>(fn)) {}
  static bool run(Job* job) noexcept {
    std::unique_ptr<HeapJob> self(static_cast<HeapJob*>(job));
    Registry* registry = self->registry;
    bool threw = false;
    try {
      self->fn();
    } catch (...) {
      threw = true;
      registry->report_unhandled(std::current_exception());
    }
    self.reset();  // destroy captures before the job counts as done (drain waits for it)
    registry->end_job();
    return threw;
  }
  Registry* registry;
  F fn;
};

// make_heap_job counts a new job and allocates it. Throws ShutdownError when the
// registry is stopping and the caller is not one of its workers.
template <class F>
Job* make_heap_job(Registry& registry, F&& fn) {
  registry.begin_job();
  try {
    return new HeapJob<std::decay_t<F>>(registry, std::forward<F>(fn));
  } catch (...) {
    registry.cancel_job();
    throw;
  }
}

}  // namespace lantern::detail
