// jobs.hpp - the two concrete kinds of Job: on the stack (join, run) and on the heap
// (spawn, submit, task groups).
#pragma once

#include <exception>
#include <memory>
#include <utility>

#include "lantern/detail/frame_pool.hpp"
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

// HeapJob owns its callable and frees itself after running. Its frame comes from the
// creating worker's FramePool (frame_pool.hpp) when it fits, else from operator new
// (`pool` is then null). Completion is reported to the registry (for draining); an
// exception goes to the registry's unhandled-exception handler. A heap job only ever
// runs on one of its registry's workers.
template <class F>
struct HeapJob final : Job {
  // poolable / size_class: whether the frame can come from a FramePool, and its class
  // (functions: the class is complete in their bodies).
  static constexpr bool poolable() noexcept { return sizeof(HeapJob) <= FramePool::kMaxFrame && alignof(HeapJob) <= 64; }
  static constexpr std::uint32_t size_class() noexcept { return FramePool::class_of(sizeof(HeapJob)); }
  template <class G>
  HeapJob(FramePool* pool, G&& fn) : Job(&HeapJob::run), pool(pool), fn(std::forward<G>(fn)) {}
  static bool run(Job* job) noexcept {
    auto* self = static_cast<HeapJob*>(job);
    Worker* const w = tls_worker;
    bool threw = false;
    try {
      self->fn();
    } catch (...) {
      threw = true;
      w->registry().report_unhandled(std::current_exception());
    }
    // Destroy the captures before the job counts as done (drain waits for it).
    FramePool* const pool = self->pool;
    if constexpr (poolable()) {
      if (pool) {
        self->~HeapJob();
        if (pool == &w->frames) {
          pool->free_local(self, size_class());
        } else {
          pool->free_remote(self, size_class());
        }
      } else {
        delete self;
      }
    } else {
      delete self;
    }
    w->registry().end_job();
    return threw;
  }
  FramePool* pool;
  F fn;
};

// make_heap_job counts a new job and allocates it. Throws ShutdownError when the
// registry is stopping and the caller is not one of its workers.
template <class F>
Job* make_heap_job(Registry& registry, F&& fn) {
  using J = HeapJob<std::decay_t<F>>;
  registry.begin_job();
  Worker* const w = registry.current_worker();
  if constexpr (J::poolable()) {
    if (w) [[likely]] {
      void* mem = nullptr;
      try {
        mem = w->frames.allocate(J::size_class());
        return new (mem) J(&w->frames, std::forward<F>(fn));
      } catch (...) {
        if (mem) w->frames.free_local(mem, J::size_class());
        registry.cancel_job();
        throw;
      }
    }
  }
  try {
    return new J(nullptr, std::forward<F>(fn));
  } catch (...) {
    registry.cancel_job();
    throw;
  }
}

}  // namespace lantern::detail
