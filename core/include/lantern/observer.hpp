// SPDX-License-Identifier: Apache-2.0
// observer.hpp - the one narrow hook through which the scheduler reports what it does.
//
// Every worker state transition, task begin/end, push, steal, failed steal round, help,
// wake, lane pop and dependency release, and the task graph's events (spawn, wait_begin,
// wait_end, signal_set: core/README.md, "The task graph") call Observer::on_event on the
// worker that did it, from that worker's thread. With no observer attached a hook costs one load and a
// predictable branch, and its call is out of line so that it does not change what the
// compiler inlines; configured with -DLANTERN_OBSERVER=OFF every hook compiles to
// nothing.
//
// What core reports and what its two payload words mean is lantern/vocabulary.hpp's
// event table and payload codecs, which the trace format reads too.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "lantern/vocabulary.hpp"

#ifndef LANTERN_OBSERVER
#define LANTERN_OBSERVER 1
#endif

namespace lantern {

// The vocabulary (states, reasons, sources, distances, IO kinds, wake causes, event ids
// and the payload codecs) is lantern/vocabulary.hpp, shared with the trace format. A
// hook IS an event: every hook reports an EventId with a typed payload
// (StatePayload, StealPayload, ...), never hand-packed words.
const char* state_name(WorkerState s) noexcept;
const char* reason_name(StateReason r) noexcept;
const char* source_name(TaskSource s) noexcept;

// event_name: an event's name, or "unknown" for a value outside the table.
const char* event_name(EventId e) noexcept;
// Earlier spellings of the one event enum, kept so that observers written against them
// still compile (with a warning that names the replacement).
using Hook [[deprecated("lantern::Hook is lantern::EventId")]] = EventId;
[[deprecated("lantern::kHookCount is lantern::kEventCount")]] inline constexpr int kHookCount = kEventCount;

// Observer receives hooks. on_event runs on the worker's own thread, on the hot path:
// it must not block, allocate in the common case, or throw. It must outlive the
// Scheduler it is given to.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_event(std::uint32_t worker, EventId hook, std::uint64_t a, std::uint64_t b) noexcept = 0;

  // interest: bit (1 << hook) set means "call on_event for this hook", so a hook nobody
  // wants costs a load and a branch, not a virtual call. All hooks by default; kJoinTasks
  // (below) is not a hook and is off by default. It reads
  // and writes like an atomic word (interest.load(), interest.store(mask)) and may change
  // at any time, in the constructor or while a Scheduler uses the observer. Each worker
  // keeps its own copy (so that on the hot path it tests a word of its own, at the cost
  // of the no-observer test); a store updates the word and every attached worker's copy
  // together (under a mutex: not for the hot path), so every hook sees the same interest.
  // - task_begin, task_end: the copy is read once per task, at its begin. task_end is
  //   called for a task exactly when that read wanted it, or when the task threw (even
  //   if unwanted, so failures can be counted at every level); a change while a task
  //   runs takes effect from the next task and never splits a task's begin and end. A
  //   task neither hook is wanted for makes no call at all (unless it threw).
  // - push (own deque): the copy is read at each push (once per join and per spawn).
  // - every other hook: the word is read with a relaxed load before each call.
  class Interest {
   public:
    std::uint32_t load(std::memory_order order = std::memory_order_seq_cst) const noexcept { return word_.load(order); }
    void store(std::uint32_t mask, std::memory_order order = std::memory_order_seq_cst) noexcept;
    operator std::uint32_t() const noexcept { return load(); }
    Interest& operator=(std::uint32_t mask) noexcept {
      store(mask);
      return *this;
    }
    // exchange / fetch_or / fetch_and: read-modify-write like std::atomic's, updating the
    // workers' copies too; each returns the previous interest.
    std::uint32_t exchange(std::uint32_t mask, std::memory_order order = std::memory_order_seq_cst) noexcept;
    std::uint32_t fetch_or(std::uint32_t bits, std::memory_order order = std::memory_order_seq_cst) noexcept;
    std::uint32_t fetch_and(std::uint32_t bits, std::memory_order order = std::memory_order_seq_cst) noexcept;

    // attach / detach: called by core for each worker of a Scheduler using the observer
    // (its constructor / destructor): `copy` is the worker's copy, set here to
    // copy_of(interest) and kept up to date by store until detached.
    void attach(std::atomic<std::uint32_t>* copy);
    void detach(std::atomic<std::uint32_t>* copy) noexcept;

   private:
    std::uint32_t update(std::uint32_t (*f)(std::uint32_t, std::uint32_t), std::uint32_t arg,
                         std::memory_order order) noexcept;
    std::atomic<std::uint32_t> word_{~kJoinTasks};
    std::mutex mutex_;
    std::vector<std::atomic<std::uint32_t>*> copies_;  // attached workers' copies
  };
  Interest interest;
  static constexpr std::uint32_t bit(EventId h) noexcept { return 1u << static_cast<unsigned>(h); }
  // set_interest(mask): the same as interest.store(mask).
  void set_interest(std::uint32_t mask) noexcept { interest.store(mask); }
  // A worker's copy of the interest: the hooks' bits, kAttached (so it is never 0 while
  // attached) and, in the sign bit, whether task_begin or task_end is wanted (so a task
  // tests both questions with one load and one test). No hook uses bits 30 and 31.
  // kTaskHooks: bit(task_begin) | bit(task_end), spelled out (bit() is not usable here yet).
  static constexpr std::uint32_t kTaskHooks =
      (1u << static_cast<unsigned>(EventId::task_begin)) | (1u << static_cast<unsigned>(EventId::task_end));
  static constexpr std::uint32_t kAttached = 1u << 30;
  static constexpr std::uint32_t kTaskHooksWanted = 1u << 31;
  static constexpr std::uint32_t copy_of(std::uint32_t mask) noexcept {
    return (mask & ~kTaskHooksWanted) | kAttached | ((mask & kTaskHooks) != 0 ? kTaskHooksWanted : 0u);
  }
  // kJoinTasks: not a hook but a request (the Recorder's level graph): every join reports
  // its fork (spawn, kind join, a: its second half's id) and, when its own worker runs
  // that half, runs it as a task (task_begin with source inline_call, task_end), so that
  // the whole task graph of fork-join code is in the events. Without it a join reports
  // only what a thief makes visible (the stolen half as a task, the wait for it). It costs
  // about what recording a task costs, per join. Join tests it inside the push hook's
  // inline test (Worker::push_fork), so without it a join costs what it costs without
  // an observer. Off in the default interest.
  static constexpr std::uint32_t kJoinTasks = 1u << 29;
  static_assert(kEventCount <= 29, "bits 29 to 31 of a worker's copy are not hooks");

  // deque_push_sample_mask: a worker reports the push of a task onto its *own deque* only
  // when its count of such pushes ANDed with this mask is 0 (0: every push; 63: one in
  // 64), carrying the deque's depth. Fork-join pushes once per join, and a join costs
  // about as much as recording an event, so recording all of them would double the cost
  // of fork-join code; lane pushes are always reported. May change at any time.
  std::atomic<std::uint32_t> deque_push_sample_mask{0};

  // task_counter: where worker `worker` counts the tasks it runs (the ones task_begin
  // reports), or nullptr (the worker then counts into a counter of its own). Asked once
  // per worker before its thread starts; the worker is then the only writer (one
  // increment per task, no call: count_task), so an observer can keep an exact task
  // count without wanting task_begin at all. Scheduler::tasks_run reads the same count,
  // less what it held when the scheduler started.
  virtual std::atomic<std::uint64_t>* task_counter(std::uint32_t worker) noexcept {
    (void)worker;
    return nullptr;
  }
};

}  // namespace lantern

namespace lantern::detail {
// emit_hook: the out-of-line half of LANTERN_HOOK (core/src/observer.cpp): checks the
// observer's interest and makes the virtual call.
[[gnu::noinline]] void emit_hook(Observer* observer, std::uint32_t worker, EventId hook, std::uint64_t a,
                                 std::uint64_t b) noexcept;
}  // namespace lantern::detail

// LANTERN_HOOK(worker, payload): report a typed payload (lantern/vocabulary.hpp, e.g.
// StatePayload{from, to, reason}) for `worker` (anything with `observer` and `index`
// members); the payload's type names the event. Inline it is one load and a branch; the
// payload is built, encoded and the call made only when an observer is attached. The
// call is out of line on purpose: written inline (interest test and virtual call with
// four arguments at every site) the hooks make the scheduler's inline code - join,
// execute - large enough that g++ makes different inlining decisions in user code than
// with the hooks compiled out, which costs
// fork-join benchmarks 4-19 % with no observer attached (lantern_instr_bench). The push hook,
// which runs once per join and once per spawn, keeps its interest test inline
// (Worker::push, against the worker's own copy of the interest, which is 0 without an
// observer) so that an observer that does not want pushes costs nothing per push over no
// observer.
namespace lantern::detail {
template <class Payload>
inline void emit_payload(Observer* observer, std::uint32_t worker, const Payload& p) noexcept {
  const PayloadWords words = p.encode();
  emit_hook(observer, worker, Payload::kEvent, words.a, words.b);
}
}  // namespace lantern::detail

#if LANTERN_OBSERVER
#define LANTERN_HOOK(worker, ...)                                                 \
  do {                                                                            \
    if (::lantern::Observer* lantern_obs_ = (worker).observer) [[unlikely]] {     \
      ::lantern::detail::emit_payload(lantern_obs_, (worker).index, __VA_ARGS__); \
    }                                                                             \
  } while (0)
#else
#define LANTERN_HOOK(worker, ...) \
  do {                            \
  } while (0)
#endif
