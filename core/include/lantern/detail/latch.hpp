// latch.hpp - one-shot completion flags that a worker can wait on without blocking
// the pool, and that an outside thread can block on.
//
// A worker waiting on a Latch keeps running other tasks (Worker::wait_until); when it
// runs out of work it may fall asleep *on the latch*: the latch moves UNSET -> SLEEPY
// -> SLEEPING, and set() seeing SLEEPING wakes that one worker directly. This is how
// join and task-group waits never tie up a worker and never spin forever.
//
// Lifetime: a latch often lives on the stack of the thread that waits for it, and that
// thread may return the instant it sees SET. So set() reads everything it needs before
// the exchange, except in the SLEEPING case, where the waiter is blocked until set()
// itself wakes it, so the latch is still alive.
#pragma once

#include <atomic>
#include <cstdint>

namespace lantern::detail {

class Sleep;
void wake_latch_sleeper(Sleep* sleep, std::uint32_t worker) noexcept;  // sleep.cpp

class Latch {
 public:
  enum : std::uint32_t { unset = 0, sleepy = 1, sleeping = 2, set_state = 3 };
  static constexpr std::uint32_t kNoWorker = ~0u;

  // external_waiters: true when a non-worker thread may block in wait_blocking(); only
  // then does set() issue a futex wake.
  Latch(Sleep* sleep, bool external_waiters) noexcept : sleep_(sleep), external_waiters_(external_waiters) {}
  Latch(const Latch&) = delete;
  Latch& operator=(const Latch&) = delete;

  bool probe() const noexcept { return state_.load(std::memory_order_acquire) == set_state; }

  // set marks the latch complete (release: everything the setter did happens-before a
  // waiter's successful probe) and wakes a worker sleeping on it.
  void set() noexcept {
    Sleep* sleep = sleep_;
    const bool external = external_waiters_;
    // seq_cst (free on x86, where any RMW is a full barrier): reset()'s seq_cst store
    // and this exchange are then ordered by the same total order as the waiter's count
    // checks (see TaskGroup::wait).
    const std::uint32_t old = state_.exchange(set_state, std::memory_order_seq_cst);
    if (old == sleeping) wake_latch_sleeper(sleep, sleeper_.load(std::memory_order_relaxed));
    if (external) state_.notify_all();  // only the address is used: no access after the exchange
  }

  // reset re-arms a latch no one is waiting on (task groups reuse theirs). seq_cst:
  // the caller re-checks its own condition right after, and that load must not be
  // reordered before this store (store-load order, which only seq_cst gives).
  void reset() noexcept { state_.store(unset, std::memory_order_seq_cst); }

  // --- the waiting worker's side (at most one worker sleeps on a latch at a time) ---
  bool get_sleepy(std::uint32_t worker) noexcept {
    std::uint32_t expected = unset;
    if (!state_.compare_exchange_strong(expected, sleepy, std::memory_order_acq_rel)) return false;
    sleeper_.store(worker, std::memory_order_relaxed);  // read by set() only after it sees SLEEPING
    return true;
  }
  bool fall_asleep() noexcept {
    std::uint32_t expected = sleepy;
    return state_.compare_exchange_strong(expected, sleeping, std::memory_order_acq_rel);
  }
  void wake_up() noexcept {  // back to UNSET unless set meanwhile
    std::uint32_t expected = sleeping;
    if (!state_.compare_exchange_strong(expected, unset, std::memory_order_acq_rel)) {
      expected = sleepy;
      state_.compare_exchange_strong(expected, unset, std::memory_order_acq_rel);
    }
  }

  // wait_blocking blocks a non-worker thread (futex) until set.
  void wait_blocking() const noexcept {
    for (;;) {
      const std::uint32_t s = state_.load(std::memory_order_acquire);
      if (s == set_state) return;
      state_.wait(s, std::memory_order_acquire);
    }
  }

 private:
  std::atomic<std::uint32_t> state_{unset};
  std::atomic<std::uint32_t> sleeper_{kNoWorker};
  Sleep* const sleep_;
  const bool external_waiters_;
};

}  // namespace lantern::detail
