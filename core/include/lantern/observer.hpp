// observer.hpp - the one narrow hook through which the scheduler reports what it does.
//
// Every worker state transition, task begin/end, push, steal, failed steal round, help,
// wake, lane pop and dependency release calls Observer::on_event on the worker that did
// it, from that worker's thread. With no observer attached a hook costs one load and a
// predictable branch, and its call is out of line so that it does not change what the
// compiler inlines; configured with -DLANTERN_OBSERVER=OFF every hook compiles to
// nothing.
//
// The hook table below (LANTERN_CORE_HOOKS) is the single list of what core reports and
// what its two payload words mean; instrumentation's event table is built from it.
#pragma once

#include <atomic>
#include <cstdint>

#ifndef LANTERN_OBSERVER
#define LANTERN_OBSERVER 1
#endif

namespace lantern {

// The four worker states (see core/src/SLEEP.md).
#define LANTERN_WORKER_STATES(X) \
  X(active)                      \
  X(idle)                        \
  X(sleepy)                      \
  X(sleeping)

enum class WorkerState : std::uint8_t {
#define LANTERN_X(name) name,
  LANTERN_WORKER_STATES(LANTERN_X)
#undef LANTERN_X
};
inline constexpr int kWorkerStateCount = 4;
const char* state_name(WorkerState s) noexcept;

// Why a worker changed state.
#define LANTERN_STATE_REASONS(X)                                                    \
  X(started, "the worker thread started")                                          \
  X(found_work, "found a task")                                                    \
  X(out_of_work, "no task in its own queues or any victim's")                      \
  X(searched_enough, "searched for several rounds without success: announces sleep") \
  X(fell_asleep, "blocked until woken")                                            \
  X(new_work_seen, "work was posted while it was sleepy: searches again")          \
  X(woken, "woken by another thread")                                              \
  X(stopping, "the scheduler is shutting down")

enum class StateReason : std::uint8_t {
#define LANTERN_X(name, text) name,
  LANTERN_STATE_REASONS(LANTERN_X)
#undef LANTERN_X
};
const char* reason_name(StateReason r) noexcept;

// Why a sleeping worker woke (the wake hook's `why`).
enum class WakeWhy : std::uint8_t { work = 0, latch = 1, io = 2 };

// Where a task was found (task_begin's b payload, steal's source).
enum class TaskSource : std::uint8_t { own_deque = 0, own_lane = 1, stolen_deque = 2, stolen_lane = 3, help = 4, inline_call = 5 };
const char* source_name(TaskSource s) noexcept;

// X(name, meaning of a, meaning of b)
#define LANTERN_CORE_HOOKS(X)                                                                        \
  X(state, "from_state << 8 | to_state", "StateReason")                                             \
  X(task_begin, "task id", "TaskSource")                                                            \
  X(task_end, "task id", "1 if the task threw")                                                     \
  X(push, "task id", "0: own deque, lane index + 1: a lane; own deque: depth after << 32")          \
  X(steal, "victim worker", "distance level | TaskSource << 8")                                     \
  X(steal_round_failed, "victims probed", "lost races")                                             \
  X(help, "helped lane", "head's age in ticks")                                                     \
  X(wake, "waker | why << 32 (waker 0xffffffff: outside the pool; why: WakeWhy)", "latency ticks")  \
  X(lane_pop, "lane", "ready wait in ticks")                                                        \
  X(release, "released task id", "releasing task id, signal id or IO op id (core/src/DEPENDENCIES.md)") \
  X(task_label, "task id", "label id (lantern/label.hpp)")                                           \
  X(io_submit, "IO op id", "IoKind | fd << 8 (core/src/IO.md)")                                     \
  X(io_complete, "IO op id", "result: bytes, fd or -errno, as int64")                               \
  X(not_ready, "not-ready tasks in the pool (sampled: as a worker goes idle, every 64th release)", "0")

enum class Hook : std::uint8_t {
#define LANTERN_X(name, a, b) name,
  LANTERN_CORE_HOOKS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr int kHookCount = 0
#define LANTERN_X(name, a, b) +1
    LANTERN_CORE_HOOKS(LANTERN_X)
#undef LANTERN_X
    ;
const char* hook_name(Hook h) noexcept;

// Observer receives hooks. on_event runs on the worker's own thread, on the hot path:
// it must not block, allocate in the common case, or throw. It must outlive the
// Scheduler it is given to.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_event(std::uint32_t worker, Hook hook, std::uint64_t a, std::uint64_t b) noexcept = 0;

  // interest: bit (1 << hook) set means "call on_event for this hook". Workers read it
  // with a relaxed load before each hook, so a hook nobody wants costs a load and a
  // branch, not a virtual call: the fork-join push hook fires once per join, and an
  // observer recording only states should not pay for it. May change at any time.
  std::atomic<std::uint32_t> interest{~0u};
  static constexpr std::uint32_t bit(Hook h) noexcept { return 1u << static_cast<unsigned>(h); }

  // deque_push_sample_mask: a worker reports the push of a task onto its *own deque* only
  // when its count of such pushes ANDed with this mask is 0 (0: every push; 63: one in
  // 64), carrying the deque's depth. Fork-join pushes once per join, and a join costs
  // about as much as recording an event, so recording all of them would double the cost
  // of fork-join code; lane pushes are always reported. May change at any time.
  std::atomic<std::uint32_t> deque_push_sample_mask{0};

  // task_counter: where worker `worker` counts the tasks it runs (the ones task_begin
  // reports), or nullptr. Asked once per worker before its thread starts; the worker is
  // then the only writer (a relaxed load and store per task, no call), so an observer
  // can keep an exact task count without wanting task_begin at all.
  virtual std::atomic<std::uint64_t>* task_counter(std::uint32_t worker) noexcept {
    (void)worker;
    return nullptr;
  }
};

}  // namespace lantern

namespace lantern::detail {
// emit_hook: the out-of-line half of LANTERN_HOOK (core/src/observer.cpp): checks the
// observer's interest and makes the virtual call.
[[gnu::noinline]] void emit_hook(Observer* observer, std::uint32_t worker, Hook hook, std::uint64_t a,
                                 std::uint64_t b) noexcept;
}  // namespace lantern::detail

// LANTERN_HOOK(worker, hook, a, b): report `hook` for `worker` (anything with `observer`
// and `index` members). Inline it is one load and a branch; the payload is computed and
// the call made only when an observer is attached. The call is out of line on purpose:
// written inline (interest test and virtual call with four arguments at every site) the
// hooks made the scheduler's inline code - join, execute - large enough that g++ made
// different inlining decisions in user code than with the hooks compiled out, which cost
// fork-join benchmarks 4-19 % with no observer attached (bench/RESULTS.md). The push hook,
// which runs once per join, keeps its interest test inline (Worker::push) so that an
// observer that does not want pushes costs no call per join.
#if LANTERN_OBSERVER
#define LANTERN_HOOK(worker, hook, a, b)                                                                   \
  do {                                                                                                     \
    if (::lantern::Observer* lantern_obs_ = (worker).observer) [[unlikely]] {                             \
      ::lantern::detail::emit_hook(lantern_obs_, (worker).index, ::lantern::Hook::hook,                    \
                                   static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(b));          \
    }                                                                                                      \
  } while (0)
#else
#define LANTERN_HOOK(worker, hook, a, b) \
  do {                                   \
  } while (0)
#endif
