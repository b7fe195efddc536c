// SPDX-License-Identifier: Apache-2.0
// latch.hpp - one-shot completion flags that a worker can wait on without blocking
// the pool, and that an outside thread can block on.
//
// A worker waiting on a Latch keeps running other tasks (Worker::wait_until); when it
// runs out of work it may fall asleep *on the latch*: the latch moves UNSET -> SLEEPY
// -> SLEEPING, and set() seeing SLEEPING wakes that one worker directly. This is how
// join and task-group waits never tie up a worker and never spin forever.
//
// Lifetime: a latch often lives on the stack of the thread that waits for it, and that
// thread may return the instant it sees SET - even when set() displaced SLEEPING (the
// waiter may be between claiming the latch and blocking, and leave without blocking).
// So set() never touches the latch after its exchange: the sleeping worker's index is
// part of the state word itself (bits 2..31), and the exchange returns it together with
// the state it displaced.
//
// Lifetime of the pool: a set() from a thread that is not one of the pool's workers
// enters the pool's outside-entry count before the exchange and leaves it after its
// last touch of the sleep protocol, so the Scheduler's destructor cannot free the pool
// under it (core/sleep/README.md, "Outside threads and the destructor").
#pragma once

#include <atomic>
#include <cstdint>

namespace lantern::detail {

class Sleep;
void wake_latch_sleeper(Sleep* sleep, std::uint32_t worker) noexcept;  // sleep.cpp
// The Sleep of the pool the calling thread is a worker of (nullptr on other threads).
extern constinit thread_local Sleep* tls_pool_sleep;
// outside_enter/outside_leave: Sleep's outside-entry count (sleep.cpp).
void outside_enter(Sleep* sleep) noexcept;
void outside_leave(Sleep* sleep) noexcept;

class Latch {
 public:
  // The low two bits of the state word; a sleepy or sleeping state carries the worker's
  // index in the bits above.
  enum : std::uint32_t { unset = 0, sleepy = 1, sleeping = 2, set_state = 3 };
  static constexpr std::uint32_t kStateMask = 3;
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
    // A thread outside the pool: counted in before the waiter can see SET (after that,
    // the waiter's task may finish and the pool be destroyed), counted out after the wake.
    const bool outside = sleep != nullptr && sleep != tls_pool_sleep;
    if (outside) outside_enter(sleep);
    // seq_cst (free on x86, where any RMW is a full barrier): reset()'s seq_cst store
    // and this exchange are then ordered by the same total order as the waiter's count
    // checks (see TaskGroup::wait).
    const std::uint32_t old = state_.exchange(set_state, std::memory_order_seq_cst);
    // No access to *this from here on: the worker index came with the exchange.
    if ((old & kStateMask) == sleeping) wake_latch_sleeper(sleep, old >> 2);
    if (outside) outside_leave(sleep);
    if (external) state_.notify_all();  // only the address is used: no access after the exchange
  }

  // reset re-arms a latch no one is waiting on (task groups reuse theirs). seq_cst:
  // the caller re-checks its own condition right after, and that load must not be
  // reordered before this store (store-load order, which only seq_cst gives).
  void reset() noexcept { state_.store(unset, std::memory_order_seq_cst); }

  // --- the waiting worker's side (at most one worker sleeps on a latch at a time) ---
  bool get_sleepy(std::uint32_t worker) noexcept {
    std::uint32_t expected = unset;
    return state_.compare_exchange_strong(expected, (worker << 2) | sleepy, std::memory_order_acq_rel);
  }
  bool fall_asleep() noexcept {
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    if ((s & kStateMask) != sleepy) return false;
    return state_.compare_exchange_strong(s, (s & ~kStateMask) | sleeping, std::memory_order_acq_rel);
  }
  void wake_up() noexcept {  // back to UNSET unless set meanwhile
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    while (s != set_state && s != unset) {
      if (state_.compare_exchange_weak(s, unset, std::memory_order_acq_rel)) return;
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
  Sleep* const sleep_;
  const bool external_waiters_;
};

}  // namespace lantern::detail
