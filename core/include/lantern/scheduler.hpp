// SPDX-License-Identifier: Apache-2.0
// scheduler.hpp - the Scheduler: a pool of workers, and the ways to give it work.
//
//   lantern::Scheduler pool;                       // one worker per hardware thread
//   pool.spawn([] { ... });                        // detached
//   auto f = pool.submit([] { return 42; });       // from any thread; f.get() == 42
//   pool.run([] { lantern::join(a, b); });         // run on a worker and wait
//   auto h = pool.spawn_handle(fa);                // dependencies (task_handle.hpp):
//   pool.spawn_after({h, signal}, fb);             // fb after fa and a lantern::Signal
//
// Inside tasks use the free functions of join.hpp and task_group.hpp.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lantern/detail/jobs.hpp"
#include "lantern/detail/registry.hpp"
#include "lantern/future.hpp"
#include "lantern/io.hpp"
#include "lantern/options.hpp"
#include "lantern/task_handle.hpp"
#include "lantern/topology.hpp"

namespace lantern {

class Scheduler {
 public:
  // Starts the workers. Throws std::invalid_argument for a bad worker count or topology.
  explicit Scheduler(SchedulerOptions options = {});
  // Drains: waits for every spawned and submitted task (and what they spawn) to finish,
  // then stops the workers. Must not be called from one of this scheduler's tasks.
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  std::uint32_t worker_count() const noexcept { return registry_->worker_count(); }
  // observer: the one given in SchedulerOptions::observer (fixed for the scheduler's life:
  // workers read it on every hook without a lock), or nullptr.
  Observer* observer() const noexcept { return registry_->options().observer; }
  const Topology& topology() const noexcept { return registry_->topology(); }
  // topology_warnings: lines describing what hwloc could not tell about this machine and
  // what was assumed instead (empty for a spec topology or a fully known machine).
  const std::vector<std::string>& topology_warnings() const noexcept { return registry_->topology_warnings(); }
  // worker_cpu: the OS CPU worker i (< worker_count()) is pinned to, or -1 when it is not:
  // pin_workers off, a spec topology, a CPU the constructing thread may not run on, or
  // a pin the kernel refused. Known when the constructor returns.
  int worker_cpu(std::uint32_t i) const noexcept { return registry_->worker(i).pinned_cpu; }

  // spawn runs fn() some time later, detached. From one of this scheduler's workers the
  // task goes on that worker's deque; from any other thread into a lane. Its exception
  // goes to SchedulerOptions::on_unhandled_exception. Throws ShutdownError after shutdown.
  template <class F>
  void spawn(F&& fn) {
    detail::spawn_heap_job(*registry_, std::forward<F>(fn), SpawnKind::detached);
  }

  // submit runs fn() and returns a Future for its result or exception.
  template <class F>
  auto submit(F&& fn) -> Future<std::invoke_result_t<std::decay_t<F>&>> {
    return submit_impl(std::forward<F>(fn), -1);
  }
  // submit_to_lane puts the task into worker `lane`'s lane (lane < worker_count()).
  template <class F>
  auto submit_to_lane(std::uint32_t lane, F&& fn) -> Future<std::invoke_result_t<std::decay_t<F>&>> {
    return submit_impl(std::forward<F>(fn), static_cast<int>(lane % worker_count()));
  }

  // spawn_handle: spawn, and return a handle to wait on or to spawn other tasks after.
  // spawn_after: fn() becomes ready only when every dependency (TaskHandles, Signals)
  // has completed; until then it is in no queue and wakes no worker. If a dependency
  // threw, fn() does not run and the returned handle rethrows that exception.
  // See task_handle.hpp and core/dependencies/README.md. Throw ShutdownError after shutdown.
  template <class F>
  [[nodiscard]] TaskHandle spawn_handle(F&& fn) {
    return detail::spawn_task(*registry_, {}, std::forward<F>(fn));
  }
  template <class F>
  TaskHandle spawn_after(std::initializer_list<Dependency> deps, F&& fn) {
    return detail::spawn_task(*registry_, std::span<const Dependency>(deps.begin(), deps.size()), std::forward<F>(fn));
  }
  template <class F>
  TaskHandle spawn_after(std::span<const Dependency> deps, F&& fn) {
    return detail::spawn_task(*registry_, deps, std::forward<F>(fn));
  }

  // run executes fn() on a worker and returns its result (rethrowing its exception).
  // Called from one of this scheduler's workers it simply calls fn().
  template <class F>
  auto run(F&& fn) -> std::invoke_result_t<F&> {
    if (registry_->current_worker()) return fn();
    return submit(std::forward<F>(fn)).get();
  }

  // shutdown: as the destructor, but callable early; later spawn/submit throw
  // ShutdownError. Idempotent. Several threads may call it at once, and one call may
  // race the destructor if it began first: each returns only after every task has run
  // and the workers have stopped, and the destructor waits for such a call to return.
  void shutdown() { registry_->shutdown_call(); }

  // io: start asynchronous IO operations (lantern/io.hpp) from any thread.
  Io io() noexcept { return Io(*registry_); }
  // sleep_strategy: the strategy in use; io_uring may have fallen back to condvar, and
  // then strategy_note() is the line that was logged about it (else "").
  SleepStrategy sleep_strategy() const noexcept { return registry_->strategy(); }
  const std::string& strategy_note() const noexcept { return registry_->strategy_note(); }

  // unhandled_exceptions: how many times an exception went to on_unhandled_exception:
  // once per spawned task (or IO callback) that threw, and once per task with
  // dependencies or handles that completed failed, with its own exception or one it
  // inherited, and that nobody can observe (task_handle.hpp): a failure inherited by
  // three such dependents counts three times.
  std::uint64_t unhandled_exceptions() const noexcept { return registry_->unhandled_exceptions(); }
  // sleep_snapshot: a snapshot of the sleep protocol's counters (for tests, watchdogs).
  struct SleepSnapshot {
    std::uint32_t inactive, sleeping, jobs_event_counter;
  };
  SleepSnapshot sleep_snapshot() const noexcept;
  // lane_size: tasks waiting in worker i's lane.
  std::uint32_t lane_size(std::uint32_t i) const noexcept { return registry_->worker(i).lane.size(); }
  // deque_size: tasks in worker i's deque (racy estimate).
  std::int64_t deque_size(std::uint32_t i) const noexcept { return registry_->worker(i).deque.size(); }

  // tasks_spawned(i): tasks (spawn, submit, task-group spawns) created on worker i; join's
  // stack jobs are not counted. tasks_submitted_from_outside(): created by other threads.
  // Exact, published by the creating thread; readable from any thread.
  std::uint64_t tasks_spawned(std::uint32_t i) const noexcept {
    return registry_->worker(i).jobs_created.load(std::memory_order_relaxed);
  }
  std::uint64_t tasks_submitted_from_outside() const noexcept { return registry_->external_jobs_created(); }
  // tasks_run(i): tasks worker i has run since this scheduler started: every task it took
  // from a deque or a lane (spawns, submits, TaskGroup spawns, dependency and graph
  // tasks, IO completions, and the halves of joins that other workers stole), which are
  // the tasks an observer's task_begin reports. That includes the jobs that carry work
  // from outside threads onto a worker: a TaskGraph run started outside the pool adds
  // its starter, and an IO operation started outside the pool adds the job that submits
  // it, besides its completion. A join half that its own worker pops back and runs
  // inline is not a task, except while the observer asks for every join
  // (Observer::kJoinTasks: the half then runs as a task, source inline_call).
  // Counted by the worker itself, observed or not (one increment a task); with an
  // observer that keeps the count (Observer::task_counter, as a Recorder does) this is
  // that count, less what it held when this scheduler started. Readable from any
  // thread; exact once the tasks are done.
  std::uint64_t tasks_run(std::uint32_t i) const noexcept { return registry_->worker(i).tasks_run(); }
  // not_ready_tasks: tasks waiting for dependencies (spawn_after tasks, TaskGraph nodes
  // of a running graph whose predecessors have not all finished). Exact: per-worker
  // single-writer counters, read as live_jobs reads the job counts.
  std::uint64_t not_ready_tasks() const noexcept { return registry_->not_ready_tasks(); }

  // worker_state: worker i's current state as last published by it.
  WorkerState worker_state(std::uint32_t i) const noexcept { return registry_->worker(i).published_state(); }
  // describe_state: a multi-line dump of every worker's state and queue sizes and of the
  // sleep counters; what watchdogs print when something hangs.
  std::string describe_state() const;

  detail::Registry& registry() noexcept { return *registry_; }

 private:
  template <class F>
  auto submit_impl(F&& fn, int lane) -> Future<std::invoke_result_t<std::decay_t<F>&>> {
    using T = std::invoke_result_t<std::decay_t<F>&>;
    auto state = std::make_shared<detail::FutureState<T>>(&registry_->sleep());
    // Returns detail::Caught: the exception goes to the Future, and the task still
    // counts as one that threw (task_end's `threw`).
    auto task = [state, f = std::forward<F>(fn)]() mutable noexcept -> detail::Caught {
      bool threw = false;
      try {
        if constexpr (std::is_void_v<T>) {
          f();
        } else {
          state->value.emplace(f());
        }
      } catch (...) {
        state->error = std::current_exception();
        threw = true;
        detail::task_threw();
      }
      state->done.set();
      return {threw};
    };
    if (lane >= 0) {
      detail::Job* const job = detail::make_heap_job(*registry_, std::move(task));
      state->task = detail::task_id(job);
      if (detail::Worker* w = registry_->current_worker()) w->report_spawn(job, SpawnKind::submit, 0);
      registry_->inject(job, lane);
    } else {
      state->task = detail::spawn_heap_job(*registry_, std::move(task), SpawnKind::submit);
    }
    return Future<T>(std::move(state), registry_.get());
  }

  std::unique_ptr<detail::Registry> registry_;
};

// spawn (free function): from inside a task, spawn onto the scheduler running it. Throws
// std::logic_error on a thread that is not a worker (use Scheduler::spawn there).
template <class F>
void spawn(F&& fn) {
  detail::Worker* w = detail::tls_worker;
  if (!w) throw std::logic_error("lantern::spawn called outside a worker thread; use Scheduler::spawn");
  w->push_spawn(detail::make_heap_job_on(*w, std::forward<F>(fn)), SpawnKind::detached, 0);
}

}  // namespace lantern
