// SPDX-License-Identifier: Apache-2.0
// join.hpp - fork-join: join(a, b) and parallel_for.
//
// join(a, b) runs a and b potentially in parallel and returns when both are done, also
// when a throws: b still runs to completion, then join rethrows a's exception (b's own
// exception is then dropped; if only b threw, join rethrows b's). b is
// offered to thieves on the calling worker's deque as a job that lives on this stack
// frame: when no one steals it (the common case) it costs a push and a pop and no
// allocation. If b was stolen, the caller runs other tasks until b finishes: a worker
// never blocks waiting for a task (and reports the wait: wait_begin / wait_end, kind
// join, with b's task id).
//
// Called outside any worker thread, join runs a then b on the calling thread (b also
// when a threw, as above), and parallel_for runs serially, splitting its range as it
// would on a worker (so a throwing body skips the same indices); use Scheduler::run to
// enter the pool.
#pragma once

#include <cstddef>
#include <exception>
#include <type_traits>
#include <utility>

#include "lantern/detail/jobs.hpp"
#include "lantern/detail/worker.hpp"

namespace lantern {

namespace detail {
// run_then_rethrow: join's second half after its first half threw: run b to completion
// (its own exception, if any, is dropped: a's is the one join reports), then rethrow a's.
template <class B>
[[noreturn, gnu::noinline]] void run_then_rethrow(B& b, std::exception_ptr error_a) {
  try {
    b();
  } catch (...) {
  }
  std::rethrow_exception(error_a);
}
}  // namespace detail

template <class A, class B>
void join(A&& a, B&& b) {
  detail::Worker* worker = detail::tls_worker;
  if (!worker) [[unlikely]] {
    // Off the pool, serially, with the same promise: b runs even if a threw.
    try {
      a();
    } catch (...) {
      detail::run_then_rethrow(b, std::current_exception());
    }
    b();
    return;
  }
  detail::StackJob<std::remove_reference_t<B>> job_b(b, &worker->sleep(), /*external_waiter=*/false);
  // push_fork: the same push and hook test as any push; under Observer::kJoinTasks (the
  // Recorder's level graph) it reports the fork and marks job_b, so that the pop below
  // does not find job_b and join_rest runs it as a task (core/README.md, "The task graph").
  worker->push_fork(&job_b);
  // Helping on the join path: a computation whose halves are never stolen never reaches
  // find_work's help check, so every kJoinHelpInterval joins this one serves a lane task
  // that waited too long (core/helping/README.md, "On the join path"); job_b stays
  // stealable.
  if (worker->join_help_due()) [[unlikely]]
    worker->help_from_join();

  std::exception_ptr error_a;
  try {
    a();
  } catch (...) {
    error_a = std::current_exception();
  }

  // The fast path, inline: job_b is popped straight back (nobody stole it) and runs here.
  // Anything else - jobs a pushed and left behind, or job_b stolen - is Worker::join_rest,
  // out of line, so that join stays small enough to inline into user code and looks the
  // same whether or not the observer hooks are compiled in (lantern_instr_bench).
  detail::Job* popped = worker->pop();
  if (popped == &job_b || worker->join_rest(popped, &job_b, job_b.latch)) {
    // b runs even if a threw (as in rayon): join returns only when both halves are done.
    if (error_a) [[unlikely]]
      detail::run_then_rethrow(b, error_a);
    job_b.run_inline();
    return;
  }
  // b was stolen and has finished. a's exception wins over b's.
  if (error_a) std::rethrow_exception(error_a);
  job_b.rethrow_if_failed();
}

namespace detail {
template <class F>
void parallel_for_split(std::size_t begin, std::size_t end, std::size_t grain, F& body) {
  while (end - begin > grain) {
    const std::size_t mid = begin + (end - begin) / 2;
    // Recurse on the right half in a stealable job, keep splitting the left half here.
    join([&] { parallel_for_split(begin, mid, grain, body); }, [&] { parallel_for_split(mid, end, grain, body); });
    return;
  }
  if constexpr (std::is_invocable_v<F&, std::size_t, std::size_t>) {
    body(begin, end);
  } else {
    for (std::size_t i = begin; i < end; ++i) body(i);
  }
}
}  // namespace detail

// parallel_for calls body(i) for every i in [begin, end), or body(b, e) for chunks of at
// most `grain` indices when body takes two arguments. grain 0 is treated as 1.
template <class F>
void parallel_for(std::size_t begin, std::size_t end, std::size_t grain, F&& body) {
  if (begin >= end) return;
  if (grain == 0) grain = 1;
  detail::parallel_for_split(begin, end, grain, body);
}

}  // namespace lantern
