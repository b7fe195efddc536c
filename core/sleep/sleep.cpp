// SPDX-License-Identifier: Apache-2.0
// sleep.cpp - the sleep protocol's slow paths. The protocol, its invariants and its
// proof sketch are in README.md beside this file.
#include "lantern/detail/sleep.hpp"

#include "lantern/detail/hot.hpp"
#include "lantern/detail/worker.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <type_traits>

namespace lantern::detail {

namespace {

// futex: the system call, made inline on x86-64 (the instruction, not libc's syscall()
// through the PLT: one code page less on a wake's path, hot.hpp).
// The result is not needed: every caller re-checks its word.
[[gnu::always_inline]] inline void futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value) noexcept {
  auto* addr = reinterpret_cast<std::uint32_t*>(&word);
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
  long ret = SYS_futex;
  register long timeout asm("r10") = 0;
  register long addr2 asm("r8") = 0;
  register long value3 asm("r9") = 0;
  asm volatile("syscall"
               : "+a"(ret)
               : "D"(addr), "S"(static_cast<long>(op)), "d"(static_cast<long>(value)), "r"(timeout), "r"(addr2),
                 "r"(value3)
               : "rcx", "r11", "memory");
  (void)ret;
#else
  syscall(SYS_futex, addr, op, value, nullptr, nullptr, 0);
#endif
}

}  // namespace

// A slot's futex word, private to this process. The word is the truth; a futex call only
// blocks or wakes, so a spurious or late wake costs a re-check, never correctness.
LANTERN_HOT void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
  futex(word, FUTEX_WAIT_PRIVATE, expected);
}
LANTERN_HOT void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept { futex(word, FUTEX_WAKE_PRIVATE, 1); }

void wake_latch_sleeper(Sleep* sleep, std::uint32_t worker) noexcept {
  if (!sleep || worker == Latch::kNoWorker) return;
  // The wake comes from the calling worker, if it belongs to this pool.
  Worker* me = tls_worker;
  sleep->wake_specific(worker, (me && &me->sleep() == sleep) ? me : nullptr, WakeWhy::latch);
}

void outside_enter(Sleep* sleep) noexcept { sleep->enter_outside(); }
void outside_leave(Sleep* sleep) noexcept { sleep->leave_outside(); }

void Sleep::wait_outside_done() const noexcept {
  // Outside threads stay inside for a few hundred nanoseconds (a push and a wake), so
  // yield first; a thread preempted inside can take a time slice, so then back off.
  for (int round = 0; outside_inside() != 0; ++round) {
    if (round < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

Sleep::Sleep(std::uint32_t workers, void* slot_storage)
    : workers_(workers), slots_(static_cast<WorkerSlot*>(slot_storage)) {
  // The slots need no destructor (the storage's owner frees it): they own nothing.
  static_assert(std::is_trivially_destructible_v<WorkerSlot>);
  static_assert(alignof(WorkerSlot) == kSlotAlign);
  std::uninitialized_default_construct_n(slots_, workers);
}

std::size_t Sleep::slot_bytes(std::uint32_t workers) noexcept { return sizeof(WorkerSlot) * workers; }

IdleState Sleep::start_looking(std::uint32_t worker) noexcept {
  counters_.add_inactive();
  IdleState idle;
  idle.worker = worker;
  idle.started_ticks = ticks_now();
  idle.decline_spin_until_ticks = idle.started_ticks + decline_spin_limit_ticks_;
  return idle;
}

LANTERN_HOT void Sleep::new_jobs(std::uint32_t n, bool queue_was_empty, SleepSink* sink, std::uint32_t where) noexcept {
  if (wake_for(n, queue_was_empty, sink, where, false) != 0 &&
      fan_out_credit_.load(std::memory_order_relaxed) != kFanOutCredit) {
    fan_out_credit_.store(kFanOutCredit, std::memory_order_relaxed);
  }
}

LANTERN_HOT void Sleep::new_posted_jobs(std::uint32_t n, bool queue_was_empty, SleepSink* sink,
                                        std::uint32_t lane) noexcept {
  wake_for(n, queue_was_empty, sink, lane, true);
}

LANTERN_HOT std::uint32_t Sleep::wake_for(std::uint32_t n, bool queue_was_empty, SleepSink* sink, std::uint32_t where,
                                          bool posted) noexcept {
  // Tell sleepy workers there is news (odd JEC). Cheap when nobody got sleepy since the
  // last post: the JEC is already odd and this is one load of a read-mostly line.
  const CounterValue c = counters_.bump_jec_if(CounterValue::jec_is_sleepy);
  const std::uint32_t sleepers = c.sleeping();
  if (sleepers == 0) return 0;
  n = std::min(n, sleepers);
  const std::uint32_t awake_idle = c.idle_awake();
  std::uint32_t wake = 0;
  if (!queue_was_empty) {
    // The queue already held work that the idle workers have not taken: they may be
    // about to sleep themselves, so do not count on them.
    wake = n;
  } else if (awake_idle < n) {
    // Idle workers are searching and will find the new job; wake only the shortfall.
    wake = n - awake_idle;
  }
  if (wake == 0) return 0;
  if (posted && wake < sleepers) {
    // Spend one fan-out credit (see kFanOutCredit): wake one more for the task's spawns.
    // A lost decrement between two racing posts only lets the credit last a post longer.
    if (const std::uint32_t credit = fan_out_credit_.load(std::memory_order_relaxed); credit != 0) {
      fan_out_credit_.store(credit - 1, std::memory_order_relaxed);
      ++wake;
    }
  }
  return wake_any(wake, sink, where);
}

bool Sleep::wake_specific(std::uint32_t worker, SleepSink* sink, WakeWhy why) noexcept {
  return wake_slot(worker, sink, static_cast<std::uint64_t>(why), SleepSink::kNowhere);
}

bool Sleep::wake_slot(std::uint32_t worker, SleepSink* sink, std::uint64_t why, std::uint32_t where) noexcept {
  if (!claim_slot(worker, sink, why, where)) return false;
  ring_slot(worker);
  return true;
}

// claim_slot: takes a blocked sleeper out of the sleeping count and clears its word;
// false if it was not blocked. The sleeper may already run from here on (it re-checks
// its word before every wait), but ring_slot is what wakes it from a wait.
LANTERN_HOT bool Sleep::claim_slot(std::uint32_t worker, SleepSink* sink, std::uint64_t why,
                                   std::uint32_t where) noexcept {
  WorkerSlot& slot = slots_[worker];
  std::lock_guard<FutexLock> lock(slot.mutex);
  if (slot.blocked.load(std::memory_order_relaxed) == 0) return false;
  slot.woken_by = sink ? sink->sink_index() : SleepSink::kOutside;
  slot.woken_why = why;
  slot.woken_at_ticks = ticks_now();
  slot.woken_where = where;
  // The waker, not the sleeper, decrements: posters see the new count without waiting
  // for the woken thread to be scheduled.
  counters_.sub_sleeping();
  slot.blocked.store(0, std::memory_order_release);
  return true;
}

// ring_slot: after claim_slot, without the mutex: the woken thread runs without queueing
// for the mutex we held (a condition variable notified under the mutex made it block a
// second time, on the mutex, until we let go). The slot outlives every waker (the
// destructor waits for outside threads and joins workers), and a wake that lands on a
// later sleep of the same worker is spurious: that sleep re-checks its word and blocks
// again. Wakes the sleeper's futex wait on the word: a plain one, or (io_uring strategy)
// the one armed in its ring - never both (Sleep::sleep_io). A ring without futex waits
// (before Linux 6.7) has the worker's eventfd as its doorbell instead (core/io/README.md).
LANTERN_HOT void Sleep::ring_slot(std::uint32_t worker) noexcept {
  WorkerSlot& slot = slots_[worker];
  futex_wake_one(slot.blocked);
  if (IoContext* io = slot.io.load(std::memory_order_relaxed); io && !io->futex_doorbell()) io->wake();
}

LANTERN_HOT std::uint32_t Sleep::wake_any(std::uint32_t n, SleepSink* sink, std::uint32_t where) noexcept {
  // Lowest index first. Rejected: starting at the worker whose queue got the work (its
  // own lane): the idle row (a task every 10 ms, round-robin lanes) then wakes a
  // different worker each tick and its idle CPU rises (lantern_bench --only idle).
  // Every sleeper of a batch is claimed before any is rung: a wake costs the waker a
  // syscall (up to ~17 us on a VM), and the first woken worker must not
  // find the others still counted as sleeping and wake them a second time itself.
  constexpr std::uint32_t kBatch = 8;
  std::uint32_t batch[kBatch];
  std::uint32_t woken = 0;
  std::uint32_t i = 0;
  while (i < workers_ && woken < n) {
    std::uint32_t claimed = 0;
    for (; i < workers_ && woken < n && claimed < kBatch; ++i) {
      if (claim_slot(i, sink, static_cast<std::uint64_t>(WakeWhy::work), where)) {
        batch[claimed++] = i;
        ++woken;
      }
    }
    for (std::uint32_t k = 0; k < claimed; ++k) ring_slot(batch[k]);
  }
  return woken;
}

// leave_sleep: the end of every sleep attempt, whatever the strategy: back to searching
// (rounds: how many fruitless rounds count as done), the latch released, idle reported.
LANTERN_HOT void Sleep::leave_sleep(IdleState& idle, Latch& latch, SleepSink& sink, StateReason why,
                                    std::uint32_t rounds) {
  idle.rounds = rounds;
  idle.sleepy = false;
  idle.started_ticks = ticks_now();
  if (why == StateReason::woken) {
    // A sleep happened: a new stretch of declines and back-offs (core/stealing/README.md,
    // "A lone task").
    idle.decline_spin_until_ticks = idle.started_ticks + decline_spin_limit_ticks_;
    idle.decline_gap_ticks = 0;
  }
  latch.wake_up();
  sink.sleep_state(WorkerState::idle, why);
}

// enter_sleep: the part of a sleep both strategies share, under the slot mutex (`lock`,
// held on entry): claim the latch, count ourselves as sleeping, SleepFence, a last look
// for work (`has_work`), then set `blocked` and release the mutex. false: work turned up
// and we are back to idle, the mutex still held (released by the caller's return).
// true: asleep and findable by wakers, the mutex released.
bool Sleep::enter_sleep(IdleState& idle, Latch& latch, std::unique_lock<FutexLock>& lock, WorkerSlot& slot,
                        bool (*has_work)(void*), void* ctx, SleepSink& sink) {
  // Claim the latch for sleeping (UNSET -> SLEEPY -> SLEEPING, both here, under the
  // slot mutex): a set() before this fails the claim; one after it sees SLEEPING and
  // wakes us through wake_specific, which must first take this mutex.
  if (!latch.get_sleepy(idle.worker) || !latch.fall_asleep()) {
    leave_sleep(idle, latch, sink, StateReason::found_work, 0);
    return false;
  }
  for (;;) {
    const CounterValue c = counters_.load();
    if (c.jec() != idle.jec_when_sleepy) {
      // Work was posted since we got sleepy: search again, and get sleepy again right
      // after one more fruitless round (not after the full count). The worker backs off
      // before that search (news_seen): when another worker keeps pushing and popping
      // its own tasks, every attempt fails this way, and each one makes that worker's
      // next push flip the JEC back, an RMW on the line we just wrote
      // (core/stealing/README.md, "A lone task").
      idle.news_seen = true;
      leave_sleep(idle, latch, sink, StateReason::new_work_seen, kRoundsUntilSleepy);
      return false;
    }
    if (counters_.try_add_sleeping(c)) break;
  }
  // SleepFence: pairs with the fence in new_injected_jobs (proof in README.md, "Why no
  // wakeup is lost").
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (has_work(ctx)) {
    counters_.sub_sleeping();
    leave_sleep(idle, latch, sink, StateReason::new_work_seen, kRoundsUntilSleepy);
    return false;
  }
  sink.sleep_state(WorkerState::sleeping, StateReason::fell_asleep);
  slot.blocked.store(1, std::memory_order_relaxed);
  lock.unlock();
  return true;
}

// woken_by_waker: the end of a sleep that a waker ended by clearing the word. Its fields
// were written before its release store of 0 (or under the mutex, if we saw the 0 there),
// and no other waker writes them until we set `blocked` again.
LANTERN_HOT void Sleep::woken_by_waker(IdleState& idle, Latch& latch, SleepSink& sink, WorkerSlot& slot) {
  const std::uint32_t woken_by = slot.woken_by;
  const std::uint64_t woken_why = slot.woken_why;
  const std::uint64_t woken_at = slot.woken_at_ticks;
  const std::uint32_t woken_where = slot.woken_where;
  const std::uint64_t now = ticks_now();
  sink.was_woken(woken_by, woken_why, now > woken_at ? now - woken_at : 0, woken_where);
  // A wake for work is a debt until this worker has searched (Worker::wait_until_cold).
  if (woken_why == static_cast<std::uint64_t>(WakeWhy::work)) idle.owes_search = true;
  leave_sleep(idle, latch, sink, StateReason::woken, 0);
}

LANTERN_HOT void Sleep::sleep(IdleState& idle, Latch& latch, bool (*has_injected)(void*), void* ctx, SleepSink& sink) {
  WorkerSlot& slot = slots_[idle.worker];
  // Hold the slot's mutex from before we count ourselves as sleeping until `blocked` is
  // set: a waker that saw our count blocks on the mutex until then, so it always finds
  // blocked == 1 (no "counted but not findable" window).
  std::unique_lock<FutexLock> lock(slot.mutex);
  if (!enter_sleep(idle, latch, lock, slot, has_injected, ctx, sink)) return;
  // Block on the word, not on a condition variable: the waker clears it and wakes us
  // after releasing the mutex, so nothing stands between the futex wake and our search.
  while (slot.blocked.load(std::memory_order_acquire) != 0) futex_wait(slot.blocked, 1);
  woken_by_waker(idle, latch, sink, slot);
}

}  // namespace lantern::detail
