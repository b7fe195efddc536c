// SPDX-License-Identifier: Apache-2.0
// job.hpp - the type-erased unit of work every queue holds.
//
// A Job is a function pointer plus the two words a lane needs (link and enqueue time).
// It has no virtual table and no allocation of its own: join's jobs live on the
// caller's stack (StackJob), spawned and submitted jobs on the heap (HeapJob, in
// scheduler.hpp). The function pointer is the whole dispatch.
#pragma once

#include <cstdint>

namespace lantern::detail {

struct Job {
  // Execute runs the job and returns true if it threw (the exception itself is kept by
  // the job for whoever waits on it). It never lets an exception escape; where it
  // catches one it also calls task_threw().
  using Execute = bool (*)(Job*) noexcept;
  explicit constexpr Job(Execute fn) noexcept : execute(fn) {}
  Execute execute;
  Job* next = nullptr;               // lane link (intrusive FIFO)
  std::uint64_t enqueued_ticks = 0;  // set when the job enters a lane
};

// Caught: what a library closure returns when it catches its task's exception itself (a
// submit()'s Future, a TaskGroup; its catch calls task_threw): the task still ended by
// throwing, and HeapJob returns it so (task_end's `threw`, the Recorder's tasks_threw),
// without the unhandled-exception handler, since the exception has an owner. A user's
// closure cannot return this type.
struct Caught {
  bool threw;
};

// task_threw: called by a job's catch site, on the worker running it, when its task ended
// by throwing (worker.cpp: it reports task_end with threw to the observer, if any, for a
// task execute ran without task hooks). Cold; never throws.
[[gnu::cold]] void task_threw() noexcept;

// task_id is the id hooks report for a job: its address. Unique among live jobs; an
// address may be reused after its job ends, which trace readers handle by pairing each
// task_begin with the next task_end on the same worker.
inline std::uint64_t task_id(const Job* job) noexcept { return reinterpret_cast<std::uintptr_t>(job); }

}  // namespace lantern::detail
