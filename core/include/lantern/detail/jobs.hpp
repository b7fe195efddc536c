// SPDX-License-Identifier: Apache-2.0
// jobs.hpp - the two concrete kinds of Job: on the stack (join, run) and on the heap
// (spawn, submit, task groups).
#pragma once

#include <exception>
#include <memory>
#include <type_traits>
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
      task_threw();
    }
    self->latch.set();  // last touch of *self by this thread
    return threw;
  }
  // run_inline: the owner popped its own job back; no latch needed.
  void run_inline() { (*fn)(); }
  void rethrow_if_failed() {
    if (error) std::rethrow_exception(error);
  }
  F* fn;
  std::exception_ptr error;
  Latch latch;
};

// HeapJob owns its callable and frees itself after running. Its frame comes from the
// creating worker's FramePool (frame_pool.hpp) when it fits (on an outside thread, from
// one of the registry's outside shards, Registry::outside_frame), else from operator new
// (`pool` is then null). Completion is reported to the registry (for draining); an
// exception goes to the registry's unhandled-exception handler. A heap job only ever
// runs on one of its registry's workers.
template <class F>
struct HeapJob final : Job {
  // poolable / size_class: whether the frame can come from a FramePool, and its class
  // (functions: the class is complete in their bodies).
  static constexpr bool poolable() noexcept {
    return sizeof(HeapJob) <= FramePool::kMaxFrame && alignof(HeapJob) <= 64;
  }
  static constexpr std::uint32_t size_class() noexcept { return FramePool::class_of(sizeof(HeapJob)); }
  template <class G>
  HeapJob(FramePool* pool, G&& fn) : Job(&HeapJob::run), pool(pool), fn(std::forward<G>(fn)) {}
  static bool run(Job* job) noexcept {
    auto* self = static_cast<HeapJob*>(job);
    Worker* const w = tls_worker;
    bool threw = false;
    try {
      if constexpr (std::is_same_v<decltype(self->fn()), Caught>) {
        threw = self->fn().threw;  // a library closure that caught it for its owner
      } else {
        self->fn();
      }
    } catch (...) {
      threw = true;
      task_threw();
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

// make_heap_job_on: a new job made on worker `w` (the calling thread's worker; the
// caller has checked that). The spawn fast path: the frame from w's FramePool, the job
// counted in w's own single-writer counter (Registry::begin_job's worker case, inline:
// no call, no shutdown check - workers may keep spawning while the pool drains).
// Nothing is counted if the allocation or the closure's copy throws.
template <class F>
HeapJob<std::decay_t<F>>* make_heap_job_on(Worker& w, F&& fn) {
  using J = HeapJob<std::decay_t<F>>;
  J* job;
  if constexpr (J::poolable()) {
    void* const mem = w.frames.allocate(J::size_class());
    try {
      job = new (mem) J(&w.frames, std::forward<F>(fn));
    } catch (...) {
      w.frames.free_local(mem, J::size_class());
      throw;
    }
  } else {
    job = new J(nullptr, std::forward<F>(fn));
  }
  w.jobs_created.store(w.jobs_created.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return job;
}

// make_outside_heap_job: a new job made on a thread that is not one of `registry`'s
// workers (the caller has checked that): counted on the registry, or ShutdownError when
// it is stopping; the frame from an outside shard, or operator new.
template <class F>
Job* make_outside_heap_job(Registry& registry, F&& fn) {
  using J = HeapJob<std::decay_t<F>>;
  registry.begin_job();  // an outside thread: counted, or ShutdownError
  try {
    if constexpr (J::poolable()) {
      if (const Registry::OutsideFrame frame = registry.outside_frame(J::size_class()); frame.memory) {
        try {
          return new (frame.memory) J(frame.pool, std::forward<F>(fn));
        } catch (...) {
          frame.pool->free_remote(frame.memory, J::size_class());
          throw;
        }
      }
    }
    return new J(nullptr, std::forward<F>(fn));
  } catch (...) {
    registry.cancel_job();
    throw;
  }
}

// spawn_heap_job: a new heap job for fn, queued where Scheduler::spawn puts it: on the
// calling worker's own deque when it is one of registry's workers (reporting the spawn
// event of `kind` when the observer wants it), else into a lane. The worker is looked up
// once, for the frame, the count and the push. Returns the job's task id (what its
// task_begin reports; the job itself may be gone already).
template <class F>
std::uint64_t spawn_heap_job(Registry& registry, F&& fn, SpawnKind kind) {
  if (Worker* const w = registry.current_worker()) [[likely]] {
    Job* const job = make_heap_job_on(*w, std::forward<F>(fn));
    w->push_spawn(job, kind, 0);
    return task_id(job);
  }
  Job* const job = make_outside_heap_job(registry, std::forward<F>(fn));
  registry.inject(job);
  return task_id(job);
}

// make_heap_job counts a new job and allocates it, on whatever thread calls it. Throws
// ShutdownError when the registry is stopping and the caller is not one of its workers.
template <class F>
Job* make_heap_job(Registry& registry, F&& fn) {
  if (Worker* const w = registry.current_worker()) [[likely]]
    return make_heap_job_on(*w, std::forward<F>(fn));
  return make_outside_heap_job(registry, std::forward<F>(fn));
}

}  // namespace lantern::detail
