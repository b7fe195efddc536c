// SPDX-License-Identifier: Apache-2.0
// task_handle.hpp - dependencies declared while the pool runs: "run B after A and C".
//
//   auto load = pool.spawn_handle([&] { read(file); });
//   auto scan = pool.spawn_handle([&] { index(dir); });
//   auto both = pool.spawn_after({load, scan}, [&] { merge(); });  // after both
//   auto io   = pool.spawn_after({both, read_done}, [&] { ... });  // and a Signal
//   io.wait();   // rethrows the exception of io, or of a task it depended on
//
// A task spawned after dependencies is *not ready* until the last one completes: it is
// in no queue, so no worker wakes for it or sleeps on it. The thread completing the last
// dependency makes it ready (core/dependencies/README.md).
//
// Exceptions: a task's exception is kept in its handle (every wait() rethrows it), and
// its dependents do not run: they complete with the same exception, and so on down. If
// a failed task has neither a dependent, nor a waiter, nor a handle left when it
// completes, the exception goes to SchedulerOptions::on_unhandled_exception, like a
// spawned task's (a handle dropped at that very moment can make it go unreported).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>

#include "lantern/detail/dep_node.hpp"
#include "lantern/detail/registry.hpp"
#include "lantern/signal.hpp"

namespace lantern {

class TaskHandle;

namespace detail {

// TaskState is the type-independent part of a task spawned with a handle; HandleTask<F>
// adds the callable. One allocation holds both and the task's DepLinks (one per
// dependency), so declaring dependencies allocates nothing more.
struct TaskState : DepNode {
  using Destroy = void (*)(TaskState*) noexcept;
  TaskState(Execute fn, Destroy destroy_fn, Registry& owner) noexcept : DepNode(fn), destroy(destroy_fn) {
    registry = &owner;
  }

  // References: one for the pending execution (dropped when the task completes), one
  // per TaskHandle. acq_rel on the drop: the last owner sees every other owner's use.
  std::atomic<std::uint32_t> refs{1};
  DepList done;  // dependents and waiting threads; closed when the task completes
  Destroy destroy;
  DepLink* links = nullptr;  // this task's own links, one per dependency

  void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release_ref() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(this);
  }

  // finish: the body ran (or was skipped); release dependents and waiters.
  void finish() noexcept {
    Registry* owner = registry;
    const bool failed = error != nullptr;
    DepLink* list = done.close();
    // Nobody can ever see this exception: report it like a spawned task's.
    if (failed && list == nullptr && refs.load(std::memory_order_acquire) == 1) owner->report_unhandled(error);
    notify(list, task_id(this), failed, error);  // we still hold our reference: error stays alive
    owner->end_job();
    release_ref();
  }
};

template <class F>
struct HandleTask final : TaskState {
  template <class G>
  HandleTask(Registry& owner, G&& g)
      : TaskState(&HandleTask::run, &HandleTask::destroy_self, owner), fn(std::forward<G>(g)) {}

  static bool run(Job* job) noexcept {
    auto* self = static_cast<HandleTask*>(job);
    self->report_outside_release();
    bool threw = false;
    // relaxed: `pending` reaching zero (acquire) ordered every writer of `cancelled`.
    if (!self->cancelled.load(std::memory_order_relaxed)) {
      try {
        (*self->fn)();
      } catch (...) {
        self->error = std::current_exception();
        threw = true;
        task_threw();
      }
    }
    self->fn.reset();  // captures are destroyed before the task counts as done (as HeapJob's)
    self->finish();
    return threw;
  }

  // The links live right after the object, in the same allocation.
  static constexpr std::size_t kLinksOffset =
      (sizeof(HandleTask) + alignof(DepLink) - 1) / alignof(DepLink) * alignof(DepLink);
  static constexpr bool kOverAligned = alignof(HandleTask) > __STDCPP_DEFAULT_NEW_ALIGNMENT__;

  template <class G>
  static HandleTask* create(Registry& owner, G&& g, std::size_t link_count) {
    const std::size_t bytes = kLinksOffset + link_count * sizeof(DepLink);
    void* raw = kOverAligned ? ::operator new (bytes, std::align_val_t{alignof(HandleTask)}) : ::operator new(bytes);
    HandleTask* task;
    try {
      task = new (raw) HandleTask(owner, std::forward<G>(g));
    } catch (...) {
      deallocate(raw);
      throw;
    }
    auto* links = reinterpret_cast<DepLink*>(static_cast<char*>(raw) + kLinksOffset);
    for (std::size_t i = 0; i < link_count; ++i) new (links + i) DepLink{nullptr, task, nullptr};
    task->links = link_count ? links : nullptr;
    return task;
  }
  static void destroy_self(TaskState* state) noexcept {
    auto* self = static_cast<HandleTask*>(state);
    self->~HandleTask();  // DepLinks are trivially destructible
    deallocate(self);
  }
  static void deallocate(void* raw) noexcept {
    if constexpr (kOverAligned) {
      ::operator delete (raw, std::align_val_t{alignof(HandleTask)});
    } else {
      ::operator delete(raw);
    }
  }

  std::optional<F> fn;
};

template <class F>
TaskHandle spawn_task(Registry& registry, std::span<const Dependency> deps, F&& fn);

}  // namespace detail

// TaskHandle: shared ownership of a spawned task's completion. Copyable; the task runs
// whether or not handles remain. A handle may outlive the Scheduler (wait() then only
// works if the task completed).
class TaskHandle {
 public:
  TaskHandle() = default;
  TaskHandle(const TaskHandle& other) noexcept : state_(other.state_) {
    if (state_) state_->add_ref();
  }
  TaskHandle(TaskHandle&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  TaskHandle& operator=(TaskHandle other) noexcept {
    std::swap(state_, other.state_);
    return *this;
  }
  ~TaskHandle() {
    if (state_) state_->release_ref();
  }

  bool valid() const noexcept { return state_ != nullptr; }
  // done: the task completed (ran, threw, or was skipped because a dependency failed).
  bool done() const noexcept { return state_ && state_->done.is_closed(); }
  // wait returns when the task completed and rethrows its exception (or the one that
  // made it skip). On a worker it runs other tasks meanwhile; elsewhere it blocks. Any
  // number of threads may wait, and each rethrows. Throws std::logic_error if !valid().
  void wait() const {
    if (!state_) throw std::logic_error("lantern::TaskHandle::wait on an empty handle");
    detail::wait_for_list(state_->done, detail::WaitKind::task_handle, id());
    if (state_->error) std::rethrow_exception(state_->error);
  }
  // id: the task id that task_begin/task_end/release events report for this task.
  std::uint64_t id() const noexcept { return state_ ? detail::task_id(state_) : 0; }

 private:
  friend class Dependency;
  template <class F>
  friend TaskHandle detail::spawn_task(detail::Registry&, std::span<const Dependency>, F&&);
  explicit TaskHandle(detail::TaskState* state) noexcept : state_(state) {}
  detail::TaskState* state_ = nullptr;
};

// Dependency: something a task can be spawned after - a TaskHandle or a Signal. It
// refers to them; they must be alive while spawn_after runs (temporaries are fine).
class Dependency {
 public:
  Dependency(const TaskHandle& task) : list_(nullptr), task_(task.state_) {  // NOLINT: implicit on purpose
    if (!task_) throw std::invalid_argument("lantern: a task cannot depend on an empty TaskHandle");
    list_ = &task_->done;
    id_ = detail::task_id(task_);
  }
  Dependency(Signal& signal) noexcept : list_(&signal.waiters_), task_(nullptr), id_(signal.id()) {}  // NOLINT

 private:
  template <class F>
  friend TaskHandle detail::spawn_task(detail::Registry&, std::span<const Dependency>, F&&);
  detail::DepList* list_;
  detail::TaskState* task_;  // null for a Signal (which cannot fail)
  std::uint64_t id_ = 0;
};

namespace detail {

// spawn_task: the body of Scheduler::spawn_handle / spawn_after.
template <class F>
TaskHandle spawn_task(Registry& registry, std::span<const Dependency> deps, F&& fn) {
  registry.begin_job();  // counted until it completes, so shutdown waits for it
  TaskState* task;
  try {
    task = HandleTask<std::decay_t<F>>::create(registry, std::forward<F>(fn), deps.size());
  } catch (...) {
    registry.cancel_job();
    throw;
  }
  task->refs.store(2, std::memory_order_relaxed);  // the execution's + the handle we return
  TaskHandle handle(task);
  // The spawn (a running task's, on a worker) precedes anything that can make it ready.
  if (Worker* w = registry.current_worker()) w->report_spawn(task, SpawnKind::spawn_after, 0);
  if (deps.empty()) {
    registry.push_or_inject(task);
    return handle;
  }
  // One extra "guard" dependency, held by this thread while it registers the links:
  // no dependency can make the task ready half-registered, and if every dependency is
  // already complete, dropping the guard below makes it ready here.
  task->pending.store(static_cast<std::uint32_t>(deps.size() + 1), std::memory_order_relaxed);
  Worker* me = registry.current_worker();
  registry.not_ready_added(me, 1);  // before any link is visible (see not_ready_tasks)
  for (std::size_t i = 0; i < deps.size(); ++i) {
    const Dependency& dep = deps[i];
    if (!dep.list_->add(&task->links[i])) {
      // Already complete (add's acquire makes its error visible): count it off now.
      const bool failed = dep.task_ && dep.task_->error;
      satisfy(task, dep.id_, failed, failed ? dep.task_->error : std::exception_ptr{});
    }
  }
  if (task->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) make_ready(task, /*releaser_id=*/0);
  return handle;
}

}  // namespace detail
}  // namespace lantern
