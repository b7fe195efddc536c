// SPDX-License-Identifier: Apache-2.0
// futex_lock.hpp - FutexLock, the short-section lock of the lanes and the sleep slots,
// and LANTERN_PAUSE, the spin-wait hint.
#pragma once

#include <atomic>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define LANTERN_PAUSE() _mm_pause()
#else
#define LANTERN_PAUSE() ((void)0)
#endif

namespace lantern::detail {

// FutexLock: a spin-then-futex lock (the three-state mutex of Drepper's "Futexes Are
// Tricky"). Uncontended it is one CAS to lock and one exchange to unlock, no system
// call. A waiter spins a bounded number of times (the critical section is a few
// pointer writes, so a running holder is out almost at once), then marks the lock
// contended and blocks in the kernel (std::atomic::wait, a futex on Linux) until the
// holder's unlock wakes it. So a holder preempted on an oversubscribed machine costs
// its waiters a sleep, not a time slice each of spinning; the unlock pays a system
// call only when someone blocked. The lock of every lane (lane.hpp) and of every sleep
// slot (sleep.hpp): both sections are short, and a waker takes a slot's lock on
// every wake, where the inline fast path keeps libc off the wake's path (hot.hpp).
// Design and rejected alternatives: core/lanes/README.md.
class FutexLock {
 public:
  static constexpr int kSpins = 128;
  void lock() noexcept {
    std::uint32_t expected = kFree;
    if (state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire, std::memory_order_relaxed)) return;
    lock_contended();
  }
  void unlock() noexcept {
    if (state_.exchange(kFree, std::memory_order_release) == kContended) state_.notify_one();
  }
  // contended: someone is (or was about to be) blocked waiting (tests).
  bool contended() const noexcept { return state_.load(std::memory_order_relaxed) == kContended; }

 private:
  enum : std::uint32_t { kFree = 0, kLocked = 1, kContended = 2 };
  [[gnu::noinline]] void lock_contended() noexcept {
    for (int i = 0; i < kSpins; ++i) {
      LANTERN_PAUSE();
      std::uint32_t expected = kFree;
      if (state_.load(std::memory_order_relaxed) == kFree &&
          state_.compare_exchange_weak(expected, kLocked, std::memory_order_acquire, std::memory_order_relaxed)) {
        return;
      }
    }
    // Take it as contended (an unlock will then wake someone), or block until woken.
    while (state_.exchange(kContended, std::memory_order_acquire) != kFree)
      state_.wait(kContended, std::memory_order_relaxed);
  }
  std::atomic<std::uint32_t> state_{kFree};
};

}  // namespace lantern::detail
