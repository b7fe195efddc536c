// SPDX-License-Identifier: Apache-2.0
// deadlock.cpp - the suspected-deadlock check (README.md beside this file).
#include <thread>

#include "lantern/detail/registry.hpp"
#include "lantern/detail/worker.hpp"

namespace lantern::detail {

void Worker::unblock() noexcept {
  out_of_work_.store(kWorking, std::memory_order_seq_cst);
  // We leave with what our last search found: the epoch is odd; even again for the next
  // blocked period.
  if (search_epoch_.load(std::memory_order_relaxed) & 1) bump_search_epoch();
  // Dekker pair with still_blocked (both seq-cst): either its reader sees the flag down
  // and never touches our latch, or we see it counted in and wait until it is done: the
  // latch is on our caller's stack, gone once we return. A reader holds the count for a
  // flag load and a latch load; spin briefly, then yield (it may have been preempted).
  for (std::uint32_t spins = 0; inspectors_.load(std::memory_order_seq_cst) != 0; ++spins) {
    if (spins < 64) {
      LANTERN_PAUSE();
    } else {
      std::this_thread::yield();
    }
  }
}

bool Worker::still_blocked() const noexcept {
  inspectors_.fetch_add(1, std::memory_order_seq_cst);
  bool blocked = out_of_work_.load(std::memory_order_seq_cst) != kWorking;
  // The flag's seq-cst store published the pointer; the waiter cannot leave this wait
  // (unblock) until we count ourselves out.
  if (blocked) blocked = !blocked_latch_.load(std::memory_order_relaxed)->probe();
  inspectors_.fetch_sub(1, std::memory_order_release);
  return blocked;
}

void Worker::check_deadlock(const Latch& own) noexcept {
  Registry& r = *registry_;
  const std::uint32_t n = r.worker_count();
  // Every worker blocked in a wait whose latch is not set. A flag is not enough: after a
  // worker sets another's latch (the stolen half of a join, a TaskGroup's last task) and
  // goes back to its own wait, the other's flag is still up until it probes its latch,
  // and ordinary fork-join would look like a deadlock (hundreds of reports in 200
  // fib(20)). First the flags alone (plain loads): some worker is nearly always active,
  // and then no other worker's latch is touched. Only when every flag is
  // up does the checker count itself in (an RMW on each waiter's `inspectors_`), so
  // checkers never pile onto a waiter's count while it works, and a waiter leaving its
  // wait lowers its flag first: the checks that follow stop at the flags and its count
  // drains.
  // Workers idle in their top-level loop count as out of work too (their latch,
  // terminate, is set only at shutdown), but some worker must be blocked in a wait: a
  // pool merely idle is no deadlock. `waiting` counts those (the hook's blocked workers).
  std::uint32_t waiting = 0;
  auto all_blocked = [this, &r, n, &own, &waiting] {
    waiting = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint8_t s = r.worker(i).out_of_work();
      if (s == kWorking) return false;
      waiting += s == kBlockedInWait;
    }
    if (waiting == 0 || own.probe()) return false;
    for (std::uint32_t i = 0; i < n; ++i) {
      const Worker& w = r.worker(i);
      if (&w != this && !w.still_blocked()) return false;
    }
    return true;
  };
  // The sum of the workers' search epochs, or ~0 when one is odd (a worker searching may
  // hold a task it took - popped, stolen, from a lane - while its flag is still up, and
  // the queues then look empty: a false report in ordinary fork-join, 36 of 600 runs of
  // OrdinaryNestedForkJoinIsNeverReportedAsADeadlock). Epochs only grow, so an equal
  // sum before and after the look at the queues means nobody searched meanwhile.
  auto epochs = [&r, n]() -> std::uint64_t {
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint64_t e = r.worker(i).search_epoch_.load(std::memory_order_seq_cst);
      if (e & 1) return ~std::uint64_t{0};
      sum += e;
    }
    return sum;
  };
  for (;;) {
    // seq-cst flag stores and loads: of the workers blocking last, at least one sees all flags.
    if (!all_blocked()) return;
    const std::uint64_t before = epochs();
    if (before == ~std::uint64_t{0}) return;
    // IO on the shared ring (the condvar strategy) completes into a lane: in flight, it is
    // progress to come. Read before the queues: its count drops after the lane push.
    if (r.shared_io().busy()) return;
    for (std::uint32_t i = 0; i < n; ++i) {
      if (r.worker(i).deque.size() > 0 || r.worker(i).lane.size() > 0) return;
    }
    if (r.has_injected_work()) return;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (epochs() != before) return;  // somebody searched while we looked: it may hold the work
    std::uint64_t e = r.deadlock_episode.load(std::memory_order_seq_cst);
    // Claimed or reported: its claimer re-checks (and retries if it must withdraw).
    if ((e & 3) != Registry::kEpisodeNone) return;
    if (!r.deadlock_episode.compare_exchange_strong(e, e | Registry::kEpisodeClaimed, std::memory_order_seq_cst)) {
      continue;  // another claim or end came first: look again
    }
    const std::uint64_t claimed = e | Registry::kEpisodeClaimed;
    // Re-check after the claim: a worker that left before seeing it has its flag down
    // now (Dekker with the leaver's store-then-load), so no stale claim survives.
    if (all_blocked()) {
      // The hook first, then "reported": describe_state's line implies the hook fired.
      LANTERN_HOOK(*this, DeadlockPayload{waiting, r.live_jobs()});
      std::uint64_t c = claimed;
      // Fails only if a worker left meanwhile and ended the episode: it re-checks itself
      // when it blocks again.
      r.deadlock_episode.compare_exchange_strong(c, (claimed & ~std::uint64_t{3}) | Registry::kEpisodeReported,
                                                 std::memory_order_seq_cst);
      return;
    }
    // Withdraw our own claim only (a leaver may have ended it already), then look again:
    // a worker that blocked again meanwhile may have seen our claim and stood down.
    std::uint64_t c = claimed;
    r.deadlock_episode.compare_exchange_strong(c, (claimed | 3) + 1, std::memory_order_seq_cst);
  }
}

}  // namespace lantern::detail
