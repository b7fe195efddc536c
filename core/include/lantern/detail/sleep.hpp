// sleep.hpp - when workers fall asleep and who wakes them (protocol: core/src/SLEEP.md).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "lantern/clock.hpp"
#include "lantern/detail/counters.hpp"
#include "lantern/detail/latch.hpp"
#include "lantern/observer.hpp"

namespace lantern::detail {

// IdleState is the searching worker's own record of one idle period.
struct IdleState {
  std::uint32_t worker = 0;
  std::uint32_t rounds = 0;        // failed search rounds so far
  std::uint32_t jec_when_sleepy = 0;
  bool sleepy = false;
};

// SleepSink lets the protocol report state transitions without knowing the observer.
struct SleepSink {
  static constexpr std::uint32_t kOutside = 0xFFFFFFFF;  // a waker that is not a worker
  virtual void sleep_state(WorkerState s, StateReason why) noexcept = 0;
  // was_woken: this worker was woken by `waker` (a worker index, or kOutside) for `why`
  // (0: new work, 1: a latch it slept on was set); latency from the wake call to now.
  virtual void was_woken(std::uint32_t waker, std::uint64_t why, std::uint64_t latency_ticks) noexcept = 0;
  virtual std::uint32_t sink_index() const noexcept = 0;

 protected:
  ~SleepSink() = default;
};

class Sleep {
 public:
  // Rounds of searching before a worker announces it is sleepy. Each round probes every
  // victim once and yields the CPU, so 32 rounds is tens of microseconds: long enough
  // for fork-join bursts to refill queues, short enough that an idle pool costs ~0 CPU.
  static constexpr std::uint32_t kRoundsUntilSleepy = 32;

  explicit Sleep(std::uint32_t workers);
  Sleep(const Sleep&) = delete;
  Sleep& operator=(const Sleep&) = delete;

  // start_looking: the worker found no local work and starts searching (-> idle).
  IdleState start_looking(std::uint32_t worker) noexcept;
  // work_found: the worker leaves the idle period. If it took work from a queue that
  // still holds more (`more_left`) and nobody else is awake and idle, one sleeper is
  // woken so that the surplus gets a worker (a wake chain, one worker at a time).
  void work_found(bool more_left, SleepSink& sink) noexcept;
  // no_work_found: one more fruitless round. May yield, get sleepy, or block until woken.
  // has_injected_work is re-checked after registering as a sleeper (see SLEEP.md).
  template <class HasInjected>
  void no_work_found(IdleState& idle, Latch& latch, HasInjected&& has_injected_work, SleepSink& sink);

  // new_internal_jobs: a worker pushed n jobs onto its own deque.
  void new_internal_jobs(std::uint32_t n, bool queue_was_empty, SleepSink* sink) noexcept {
    new_jobs(n, queue_was_empty, sink);
  }
  // new_injected_jobs: jobs were pushed into a lane (from any thread). The fence pairs
  // with the one a worker executes after registering as a sleeper.
  void new_injected_jobs(std::uint32_t n, bool queue_was_empty, SleepSink* sink) noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    new_jobs(n, queue_was_empty, sink);
  }

  // wake_specific wakes `worker` if it is blocked; true if it was. `waker` is the waking
  // worker (nullptr for a thread outside the pool) and `why` the reason (0: new work,
  // 1: latch set); the woken worker reports both, with the latency, as it wakes.
  bool wake_specific(std::uint32_t worker, SleepSink* waker = nullptr, std::uint64_t why = 0) noexcept;
  // wake_any wakes up to n blocked workers; returns how many.
  std::uint32_t wake_any(std::uint32_t n, SleepSink* sink) noexcept;

  CounterValue counters() const noexcept { return counters_.load(); }
  std::uint32_t workers() const noexcept { return workers_; }

 private:
  void new_jobs(std::uint32_t n, bool queue_was_empty, SleepSink* sink) noexcept;
  void sleep(IdleState& idle, Latch& latch, bool (*has_injected)(void*), void* ctx, SleepSink& sink);

  struct alignas(64) WorkerSlot {
    std::mutex mutex;
    std::condition_variable condvar;
    bool is_blocked = false;  // guarded by mutex
    // Who woke the worker, why, and when (ticks): written by the waker, read by the
    // woken worker, both under mutex.
    std::uint32_t woken_by = SleepSink::kOutside;
    std::uint64_t woken_why = 0;
    std::uint64_t woken_at_ticks = 0;
  };

  SleepCounters counters_;
  const std::uint32_t workers_;
  std::unique_ptr<WorkerSlot[]> slots_;
};

template <class HasInjected>
void Sleep::no_work_found(IdleState& idle, Latch& latch, HasInjected&& has_injected_work, SleepSink& sink) {
  if (idle.rounds < kRoundsUntilSleepy) {
    ++idle.rounds;
    std::this_thread::yield();
    return;
  }
  if (!idle.sleepy) {
    // Announce: flip the JEC to even ("sleepy, no news") and remember it; then do one
    // more full search before actually sleeping. The latch is only touched inside
    // sleep(), so finding work now leaves nothing to undo.
    idle.jec_when_sleepy = counters_.bump_jec_if([](std::uint32_t j) { return !CounterValue::jec_is_sleepy(j); }).jec();
    idle.sleepy = true;
    sink.sleep_state(WorkerState::sleepy, StateReason::searched_enough);
    std::this_thread::yield();
    return;
  }
  auto thunk = [](void* ctx) -> bool { return (*static_cast<HasInjected*>(ctx))(); };
  sleep(idle, latch, thunk, &has_injected_work, sink);
}

}  // namespace lantern::detail
