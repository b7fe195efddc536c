// SPDX-License-Identifier: Apache-2.0
// sleep.hpp - when workers fall asleep and who wakes them (protocol: core/sleep/README.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "lantern/clock.hpp"
#include "lantern/detail/futex_lock.hpp"
#include "lantern/detail/io_context.hpp"
#include "lantern/detail/latch.hpp"
#include "lantern/detail/sleep_counters.hpp"
#include "lantern/observer.hpp"

namespace lantern::detail {

// futex_wait blocks while `word` holds `expected` (or returns spuriously); futex_wake_one
// wakes one thread (or io_uring futex wait) blocked on it. Private to the process.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept;
void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept;

// IdleState is the searching worker's own record of one idle period.
struct IdleState {
  std::uint32_t worker = 0;
  std::uint32_t rounds = 0;  // failed search rounds so far
  std::uint32_t jec_when_sleepy = 0;
  bool sleepy = false;
  std::uint64_t started_ticks = 0;  // when the search began (the spin phase's time bound)
  // Until when a declined task (declined_work) still restarts the spin phase: the end of
  // the period's kDeclineSpinLimitNs, counted from start_looking or the last sleep.
  std::uint64_t decline_spin_until_ticks = 0;
  std::uint64_t decline_gap_ticks = 0;  // the last back-off (declined_work); 0: none yet
  // The last sleep attempt failed because work was posted since this worker got sleepy
  // (the JEC moved): it backs off before its next search, as after a decline.
  bool news_seen = false;
  // A waker took this worker out of the sleeping count for new work (WakeWhy::work), and
  // the worker has not searched since: it owes that work a search. If it leaves its wait
  // without one (its latch was set meanwhile) it must pass the wake on
  // (Sleep::leave_for_latch).
  bool owes_search = false;
};

// SleepSink lets the protocol report state transitions without knowing the observer.
struct SleepSink {
  static constexpr std::uint32_t kOutside = kOutsideWaker;  // a waker that is not a worker
  virtual void sleep_state(WorkerState s, StateReason why) noexcept = 0;
  static constexpr std::uint32_t kNowhere = 0xFFFFFFFF;  // a wake that names no queue
  // was_woken: this worker was woken by `waker` (a worker index, or kOutside) for `why`
  // (WakeWhy); latency from the wake call to now; `where`: the worker whose deque or lane
  // got the work that caused the wake (kNowhere if none), where the search starts.
  virtual void was_woken(std::uint32_t waker, std::uint64_t why, std::uint64_t latency_ticks,
                         std::uint32_t where) noexcept = 0;
  virtual std::uint32_t sink_index() const noexcept = 0;
  // io_context: this worker's io_uring under the io_uring strategy, else nullptr.
  virtual IoContext* io_context() noexcept = 0;

 protected:
  ~SleepSink() = default;
};

class Sleep {
 public:
  // Rounds of searching before a worker announces it is sleepy. Each round probes every
  // victim once and yields the CPU (a system call). Where a system call costs ~0.5 us or
  // more the time bound below ends the search first (32 rounds take 16 us to 60 us); the
  // count bounds it where yields are cheaper.
  static constexpr std::uint32_t kRoundsUntilSleepy = 32;
  // ... or after this long, whichever comes first. Each round's yield is a system call,
  // whose cost depends on the host: where it is ~1 us, 32 rounds take 45-60 us, and a
  // pool woken by a task every 10 ms spends 0.5-0.96 % of a core searching; with this
  // bound, 0.20-0.27 % (lantern_bench --only idle). When every core is busy each yield
  // can cost a whole time slice, and 32 of them would keep a searching worker from
  // sleeping - and from blocking in io_uring for its own completions - for tens of
  // milliseconds. At least two rounds are always made (no_work_found).
  static constexpr double kSpinLimitNs = 10'000;
  // A worker that saw a deque's only task and left it to its owner (a thief takes such a
  // task on its second sighting, Worker::steal_from) has not run out of work: the pool is
  // producing it, one task at a time. These rules keep such a worker from slowing the
  // producer (a chain of spawns, each pushed and popped by its owner nanoseconds apart:
  // core/stealing/README.md, "A lone task"):
  // - it backs off: it probes no other deque for kDeclineGapMinNs, doubling with every
  //   back-off of the idle period up to kDeclineGapMaxNs (each probe reads the two cache
  //   lines the owner writes at every push and pop; a thief probing at yield speed makes
  //   the owner's chain 5 times slower). It still watches its latch and the lanes.
  // - the round restarts its spin phase, for at most kDeclineSpinLimitNs from the start
  //   of the idle period (or its last sleep): going to sleep would make the producer's
  //   next push into its empty deque wake it again, a system call on the producer's path.
  //   After that the worker goes sleepy as usual, but does not block while the deque it
  //   declined the task in still holds one (Worker::declined_still_there).
  // - a sleep attempt that failed on news it had not found (IdleState::news_seen) backs
  //   off too: the producer's next push would flip the JEC back at once.
  // A task left alone is taken on the second sighting: at most kDeclineGapMaxNs later.
  static constexpr double kDeclineGapMinNs = 1'000;
  static constexpr double kDeclineGapMaxNs = 16'000;
  static constexpr double kDeclineSpinLimitNs = 1'000'000;

  // slot_storage: room for slot_bytes(workers), 64-byte aligned, that outlives the Sleep
  // (the Registry's block, registry.hpp: the slots beside the state a wake touches).
  Sleep(std::uint32_t workers, void* slot_storage);
  static constexpr std::size_t kSlotAlign = 64;
  static std::size_t slot_bytes(std::uint32_t workers) noexcept;
  Sleep(const Sleep&) = delete;
  Sleep& operator=(const Sleep&) = delete;

  // use_rings switches to the io_uring strategy (core/io/README.md): every worker has a
  // ring (register_io) and sleeps in it. Call before any worker starts.
  void use_rings() noexcept { rings_ = true; }
  bool uses_rings() const noexcept { return rings_; }

  // start_looking: the worker found no local work and starts searching (-> idle).
  IdleState start_looking(std::uint32_t worker) noexcept;
  // work_found: the worker leaves the idle period (took_work: with a job, not for its
  // latch). If nobody else is awake and idle and somebody sleeps, one sleeper is woken
  // when work is left behind: the queue it took from still holds more (`more_left`, a
  // wake chain, one worker at a time), or a lane holds work that a poster may have
  // counted on this worker to take (core/sleep/README.md, "A worker counted on that
  // takes other work"). The lanes are read only in that case (a sleeper and no other searcher).
  template <class HasInjected>
  void work_found(bool took_work, bool more_left, std::uint32_t where, HasInjected&& has_injected_work,
                  SleepSink& sink) {
    const CounterValue before = counters_.sub_inactive();
    if (before.sleeping() == 0 || before.inactive() - 1 - before.sleeping() != 0) return;
    if (more_left) {
      wake_any(1, &sink, where);
      return;
    }
    if (!took_work) return;  // leave_for_latch decides for a worker leaving for its latch
    // Fence after the seq-cst RMW above, as leave_for_latch: either a poster that pushes
    // after our read sees us no longer idle (and wakes somebody itself) or we see its push.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (has_injected_work()) wake_any(1, &sink, SleepSink::kNowhere);
  }
  // declined_work: the search that just ended saw a deque's only task and left it to
  // its owner (Worker::steal_from). Within the period's kDeclineSpinLimitNs the spin phase
  // starts again (rounds and time); the answer is the tick until which the worker should
  // not probe other workers' deques (the back-off, kDeclineGapMinNs doubling up to
  // kDeclineGapMaxNs over the idle period's declines).
  std::uint64_t declined_work(IdleState& idle, bool restart_spin = true) const noexcept {
    const std::uint64_t now = ticks_now();
    if (restart_spin && now < idle.decline_spin_until_ticks) {
      idle.rounds = 0;
      idle.started_ticks = now;
    }
    idle.decline_gap_ticks = idle.decline_gap_ticks == 0 ? decline_gap_min_ticks_
                                                         : std::min(decline_gap_max_ticks_, idle.decline_gap_ticks * 2);
    return now + idle.decline_gap_ticks;
  }
  // no_work_found: one more fruitless round. May yield, get sleepy, or block until woken.
  // has_injected_work is re-checked after registering as a sleeper (the SleepFence).
  template <class HasInjected>
  void no_work_found(IdleState& idle, Latch& latch, HasInjected&& has_injected_work, SleepSink& sink);

  // leave_for_latch: the worker ends its idle period because its latch was set, not
  // because it found work (call after work_found). Posters may have counted on it: one
  // that woke it for work (idle.owes_search), or one that skipped a wake because it was
  // idle and awake. If it owes a search or a lane holds work, and somebody sleeps, it
  // wakes one sleeper in its place (core/sleep/README.md, "A latch never swallows a wake
  // for work").
  template <class HasInjected>
  void leave_for_latch(IdleState& idle, HasInjected&& has_injected_work, SleepSink& sink) {
    const bool owed = idle.owes_search;
    idle.owes_search = false;
    // seq_cst load after work_found's seq_cst RMW: a sleeper a poster relied on is seen.
    if (counters_.load().sleeping() == 0) return;
    // LeaveFence: pairs with new_injected_jobs' fence, as the SleepFence does: either the
    // poster saw us no longer idle (and woke somebody itself) or we see its lane push.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (owed || has_injected_work()) wake_any(1, &sink, SleepSink::kNowhere);
  }

  // new_internal_jobs: a worker pushed n jobs onto its own deque.
  // Inline, the case of every push while no worker is sleepy or asleep (new_jobs' first
  // test, on the same single load): no call on the spawn path.
  // A push that wakes a sleeper is a fan-out: it refills the fan-out credit (below).
  void new_internal_jobs(std::uint32_t n, bool queue_was_empty, SleepSink* sink) noexcept {
    const CounterValue c = counters_.load();
    if (!CounterValue::jec_is_sleepy(c.jec()) && c.sleeping() == 0) return;
    new_jobs(n, queue_was_empty, sink, sink->sink_index());
  }
  // new_injected_jobs: jobs were pushed into lane `lane` (from any thread). The fence
  // pairs with the one a worker executes after registering as a sleeper. A post that
  // wakes somebody wakes one worker more while the fan-out credit lasts (below).
  void new_injected_jobs(std::uint32_t n, bool queue_was_empty, SleepSink* sink, std::uint32_t lane) noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    new_posted_jobs(n, queue_was_empty, sink, lane);
  }

  // The fan-out credit. A worker's push that has to wake a sleeper pays for that wake
  // itself, on its task's path (a FUTEX_WAKE of a thread whose CPU is idle: up to ~17 us
  // of the pusher's time on a VM, as much as a thousand spawns). It
  // happens when a posted task fans out in a pool that was asleep. So such a push sets
  // the credit to kFanOutCredit, and each of the next posts that wakes a worker (while
  // the credit lasts and another worker sleeps) wakes one more, from the posting thread,
  // so that the posted task's spawns find that worker awake. Posts of tasks that do not
  // fan out never refill it (a wake-latency or idle-tick loop wakes one worker a post);
  // a post pattern that keeps fanning out refills it at least every kFanOutCredit posts.
  // Waking one more worker than needed is always safe (it searches and sleeps again).
  static constexpr std::uint32_t kFanOutCredit = 8;
  std::uint32_t fan_out_credit() const noexcept { return fan_out_credit_.load(std::memory_order_relaxed); }

  // wake_specific wakes `worker` if it is blocked; true if it was. `waker` is the waking
  // worker (nullptr for a thread outside the pool) and `why` the reason; the woken worker
  // reports both, with the latency, as it wakes.
  bool wake_specific(std::uint32_t worker, SleepSink* waker = nullptr, WakeWhy why = WakeWhy::work) noexcept;
  // wake_any wakes up to n sleeping workers and tells them the work is at `where`;
  // returns how many it took out of the sleeping count.
  std::uint32_t wake_any(std::uint32_t n, SleepSink* sink, std::uint32_t where) noexcept;

  CounterValue counters() const noexcept { return counters_.load(); }

  // --- outside threads and the destructor (README.md, "Outside threads and the destructor") ---
  // A thread that is not one of this pool's workers enters before it publishes anything
  // a worker can complete (a lane push, a latch's SET) and leaves after its last touch of
  // this object; the Registry's destructor waits until none is inside (wait_outside_done)
  // before anything is freed. Workers need no entry: the destructor joins them.
  void enter_outside() noexcept { outside_.fetch_add(1, std::memory_order_seq_cst); }
  void leave_outside() noexcept { outside_.fetch_sub(1, std::memory_order_release); }
  std::uint32_t outside_inside() const noexcept { return outside_.load(std::memory_order_acquire); }
  void wait_outside_done() const noexcept;
  std::uint32_t workers() const noexcept { return workers_; }

 private:
  // new_jobs: jobs pushed onto a worker's own deque (new_internal_jobs' slow path; a wake
  // refills the fan-out credit). new_posted_jobs: jobs pushed into a lane (a wake may
  // spend the credit). wake_for: the wake rule both use; returns how many it woke.
  void new_jobs(std::uint32_t n, bool queue_was_empty, SleepSink* sink, std::uint32_t where) noexcept;
  void new_posted_jobs(std::uint32_t n, bool queue_was_empty, SleepSink* sink, std::uint32_t lane) noexcept;
  std::uint32_t wake_for(std::uint32_t n, bool queue_was_empty, SleepSink* sink, std::uint32_t where,
                         bool posted) noexcept;
  void sleep(IdleState& idle, Latch& latch, bool (*has_injected)(void*), void* ctx, SleepSink& sink);
  // The io_uring strategy's halves (sleep_io.cpp).
  void sleep_io(IdleState& idle, Latch& latch, bool (*has_injected)(void*), void* ctx, SleepSink& sink, IoContext& io);
  void leave_sleep(IdleState& idle, Latch& latch, SleepSink& sink, StateReason why, std::uint32_t rounds);
  struct WorkerSlot;
  bool enter_sleep(IdleState& idle, Latch& latch, std::unique_lock<FutexLock>& lock, WorkerSlot& slot,
                   bool (*has_work)(void*), void* ctx, SleepSink& sink);
  void woken_by_waker(IdleState& idle, Latch& latch, SleepSink& sink, WorkerSlot& slot);
  bool wake_slot(std::uint32_t worker, SleepSink* sink, std::uint64_t why, std::uint32_t where) noexcept;
  bool claim_slot(std::uint32_t worker, SleepSink* sink, std::uint64_t why, std::uint32_t where) noexcept;
  void ring_slot(std::uint32_t worker) noexcept;

  struct alignas(64) WorkerSlot {
    // The sleeper holds `mutex` from before it counts itself as sleeping until it has
    // set `blocked`; a waker tests and clears `blocked` under it (README.md, "Falling
    // asleep").
    FutexLock mutex;
    // The futex word the sleeper blocks on: 1 while it is (about to be) blocked. Set by
    // the sleeper and cleared by a waker, both under `mutex`; the sleeper waits on it
    // without the mutex, so a woken thread never queues for the mutex its waker holds.
    // (io_uring strategy: with IO in flight the sleeper waits in its ring instead, where a
    // futex wait on this word is armed, or, on kernels without one, a read of `io`'s
    // eventfd, which the waker then writes; a sleeper woken by its own IO clears the word
    // itself, under `mutex`.)
    std::atomic<std::uint32_t> blocked{0};
    // Who woke the worker, why, and when (ticks): written by the waker under `mutex`
    // before its release store of blocked = 0, read by the woken worker after its
    // acquire load of 0.
    std::uint32_t woken_by = SleepSink::kOutside;
    std::uint64_t woken_why = 0;
    std::uint64_t woken_at_ticks = 0;
    std::uint32_t woken_where = SleepSink::kNowhere;
    // io_uring strategy: the worker's ring (its eventfd is the doorbell where the kernel
    // has no IORING_OP_FUTEX_WAIT).
    std::atomic<IoContext*> io{nullptr};
  };

  SleepCounters counters_;
  const std::uint64_t spin_limit_ticks_ = ns_to_ticks(kSpinLimitNs);
  const std::uint64_t decline_spin_limit_ticks_ = ns_to_ticks(kDeclineSpinLimitNs);
  const std::uint64_t decline_gap_min_ticks_ = ns_to_ticks(kDeclineGapMinNs);
  const std::uint64_t decline_gap_max_ticks_ = ns_to_ticks(kDeclineGapMaxNs);
  const std::uint32_t workers_;
  WorkerSlot* const slots_;                            // in the storage given to the constructor
  bool rings_ = false;                                 // io_uring strategy (use_rings)
  alignas(64) std::atomic<std::uint32_t> outside_{0};  // outside threads inside (see enter_outside)
  // Written only when a wake happens anyway (a syscall's worth of time): its own line
  // costs nothing on the paths that wake nobody.
  alignas(64) std::atomic<std::uint32_t> fan_out_credit_{0};

 public:
  // register_io: worker `worker`'s context, for targeted wakes (before workers start).
  void register_io(std::uint32_t worker, IoContext* io) noexcept {
    slots_[worker].io.store(io, std::memory_order_relaxed);
  }
};

template <class HasInjected>
void Sleep::no_work_found(IdleState& idle, Latch& latch, HasInjected&& has_injected_work, SleepSink& sink) {
  if (idle.rounds < kRoundsUntilSleepy && (idle.rounds < 2 || ticks_now() - idle.started_ticks < spin_limit_ticks_)) {
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
  if (IoContext* io = sink.io_context(); io && uses_rings()) {
    sleep_io(idle, latch, thunk, &has_injected_work, sink, *io);
  } else {
    sleep(idle, latch, thunk, &has_injected_work, sink);
  }
}

}  // namespace lantern::detail
