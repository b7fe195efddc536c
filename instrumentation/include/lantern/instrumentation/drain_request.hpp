// SPDX-License-Identifier: Apache-2.0
// drain_request.hpp - how a worker whose event ring passes half full asks the Collector
// to drain now rather than at the end of its period.
//
// The Collector's period adapts to the rate it last saw and backs off to
// CollectorOptions::max_period (20 ms) while the program is quiet, so that an idle
// program costs few wake-ups. A burst after a quiet spell can then fill a ring before
// the period ends: at ~1.3M events a second per worker (the demo's flood, 40,000 tasks in
// 45 ms at level tasks, right after the bursts' idle gaps) a 32k ring fills in 25 ms, and
// without requests the demo loses ~17k events there. A ring that passes half full asks
// for a drain: the Collector wakes within a scheduling latency, while half a ring is
// still free.
//
// The worker's side is lock-free and never blocks: it sets a flag and notifies the
// condition variable without its mutex. A ring reports past half full when its fill
// passes half, again where it would be full if it still is, and on each push that finds
// it full (EventRing::push): twice a lap while the Collector keeps up, and on every
// dropped event while it does not. With no Collector waiting, a notify is a load of the
// condition variable's state. The Collector takes the request (clears the flag) before
// each pass and waits with the flag in its predicate. A notify that falls between the Collector's look at the flag
// and its going to sleep is missed; the ring's next report (at most half a lap later)
// notifies again, and the wait's own period bounds the rest. Rejected: the worker
// taking the mutex (no lost wake-up, but a worker that blocks, even for a moment,
// behind the Collector); notifying only on the flag's first setting (one missed notify
// would then silence the ring until the Collector's period ends); a futex of our own
// (Linux only, for the same result).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace lantern::instrumentation {

class DrainRequest {
 public:
  // request: any worker; lock-free. The flag's line is written only when it changes (a
  // ring that stays full asks on every push); the notify is a load when nobody waits.
  void request() noexcept {
    if (!requested_.load(std::memory_order_relaxed)) requested_.store(true, std::memory_order_relaxed);
    cv_.notify_one();
  }
  // take: the Collector, before a pass; true when a request was waiting.
  bool take() noexcept { return requested_.exchange(false, std::memory_order_relaxed); }
  bool requested() const noexcept { return requested_.load(std::memory_order_relaxed); }

  // The Collector's wait: until requested() or `stop()` (its own predicate, guarded by
  // mutex()), or `timeout`.
  std::mutex& mutex() noexcept { return mutex_; }
  template <class Stop>
  void wait_for(std::unique_lock<std::mutex>& lock, std::chrono::microseconds timeout, Stop stop) {
    cv_.wait_for(lock, timeout, [&] { return stop() || requested(); });
  }
  // wake: wakes a waiting Collector (its stop predicate changed under mutex()).
  void wake() noexcept { cv_.notify_all(); }

 private:
  std::atomic<bool> requested_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
};

}  // namespace lantern::instrumentation
