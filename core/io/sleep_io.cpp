// SPDX-License-Identifier: Apache-2.0
// sleep_io.cpp - the io_uring sleep strategy: a sleeper with IO in flight blocks in its own
// io_uring, where a futex wait on its slot's `blocked` word (completed by the waker's
// FUTEX_WAKE after it clears the word; on kernels without IORING_OP_FUTEX_WAIT a read of
// the worker's eventfd, which the waker writes) and its own IO completions all complete.
// Without IO in flight it waits on the word as the condvar strategy does. The protocol is
// the condvar strategy's (core/sleep/README.md), with one more way out: a worker woken
// by its own completion withdraws itself under the slot mutex. Details and the argument:
// README.md beside this file, "The io_uring strategy".
#include "lantern/detail/hot.hpp"
#include "lantern/detail/sleep.hpp"

namespace lantern::detail {

LANTERN_HOT void Sleep::sleep_io(IdleState& idle, Latch& latch, bool (*has_injected)(void*), void* ctx, SleepSink& sink,
                                 IoContext& io) {
  WorkerSlot& slot = slots_[idle.worker];
  // Everything up to `blocked = 1` is Sleep::sleep's (enter_sleep, under the slot mutex;
  // core/sleep/README.md), with our own ready completions as one more kind of work.
  struct Look {
    bool (*has_injected)(void*);
    void* ctx;
    IoContext* io;
  } look{has_injected, ctx, &io};
  std::unique_lock<FutexLock> lock(slot.mutex);
  if (!enter_sleep(
          idle, latch, lock, slot,
          [](void* p) {
            auto* l = static_cast<Look*>(p);
            return l->has_injected(l->ctx) || l->io->has_ready();
          },
          &look, sink)) {
    return;
  }

  // Nothing of ours in the ring can complete (no operation queued or in flight; only
  // workers submit, and only to their own ring) and no futex wait is left armed there:
  // block on the word as the condvar strategy does. That is the shortest wake path
  // (FUTEX_WAKE straight to this thread; a wake through the ring adds task work and a
  // return through io_uring_enter). The armed eventfd read can only bring a shutdown's
  // cancel request, which has nothing to cancel.
  if (io.in_flight() == 0 && !io.has_queued() && !io.futex_armed()) {
    while (slot.blocked.load(std::memory_order_acquire) != 0) futex_wait(slot.blocked, 1);
    woken_by_waker(idle, latch, sink, slot);
    return;
  }
  // Otherwise block in the ring until a waker clears `blocked` (its FUTEX_WAKE, or on an
  // older kernel its eventfd write, completes what is armed) or something of our own
  // completes. The word is the truth: a late doorbell only costs a re-check.
  bool withdrew = false;
  bool want_out = false;
  while (slot.blocked.load(std::memory_order_acquire) != 0) {
    if (want_out) {
      // Woken by an IO completion (or a shutdown's cancel request on the eventfd) while
      // still counted: withdraw under the mutex, so that no waker can claim us at the
      // same time. If a waker cleared the word first, we were woken by it after all.
      lock.lock();
      if (slot.blocked.load(std::memory_order_relaxed) != 0) {
        slot.blocked.store(0, std::memory_order_relaxed);
        counters_.sub_sleeping();
        withdrew = true;
      }
      lock.unlock();
      break;
    }
    io.arm_futex_wait(slot.blocked, 1);
    io.arm_wake_read();
    Reaped r;
    io.wait(r);  // submits the armed read (and anything queued) and blocks in one call
    if (r.ops > 0 || (r.targeted && slot.blocked.load(std::memory_order_acquire) != 0)) want_out = true;
  }
  if (withdrew) {
    // Our own completions woke us. WithdrawFence, as after the SleepFence: a poster that
    // read the sleeping count before our decrement wrote its job before that read, and
    // our search from here on sees it (or the poster saw us gone and woke someone).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    sink.was_woken(SleepSink::kOutside, static_cast<std::uint64_t>(WakeWhy::io), 0, idle.worker);
    leave_sleep(idle, latch, sink, StateReason::woken, 0);
    return;
  }
  woken_by_waker(idle, latch, sink, slot);
}

}  // namespace lantern::detail
