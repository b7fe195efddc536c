// sleep_io.cpp - the io_uring sleep strategy: sleepers wait in their own io_uring for a
// hint from the shared pipe, a targeted wake on their eventfd, or one of their own IO
// completions, all at once. Protocol, invariant and proof sketch: IO.md beside this file.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "lantern/detail/sleep.hpp"

namespace lantern::detail {

namespace {
// Hints are written in batches of at most PIPE_BUF bytes, each batch one atomic write,
// so two wakers' hints never interleave inside a 16-byte record.
constexpr std::uint32_t kHintsPerWrite = 4096 / sizeof(WakeHint);
}  // namespace

int Sleep::enable_hints(std::string* why) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    if (why) *why = std::string("pipe2 for the wake hints failed: ") + std::strerror(errno);
    return -1;
  }
  // The write end must never block a waker. It cannot fill: every hint in the pipe
  // stands for a sleeper taken out of the sleeping count, so there are never more than
  // `workers` of them (16 KiB at most), and a pipe holds 64 KiB. Non-blocking anyway, so
  // a broken invariant would show as a lost hint in the tests, never as a hang.
  if (fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0 ||
      fcntl(fds[1], F_GETPIPE_SZ) < static_cast<int>(workers_ * sizeof(WakeHint))) {
    if (fcntl(fds[1], F_SETPIPE_SZ, static_cast<int>(workers_ * sizeof(WakeHint))) < 0) {
      if (why) *why = std::string("cannot size the wake-hint pipe: ") + std::strerror(errno);
      close(fds[0]);
      close(fds[1]);
      return -1;
    }
  }
  hint_read_fd_ = fds[0];
  hint_write_fd_ = fds[1];
  return hint_read_fd_;
}

Sleep::~Sleep() { disable_hints(); }

void Sleep::disable_hints() noexcept {
  if (hint_read_fd_ >= 0) close(hint_read_fd_);
  if (hint_write_fd_ >= 0) close(hint_write_fd_);
  hint_read_fd_ = hint_write_fd_ = -1;
}

void Sleep::write_hints(const WakeHint* hints, std::uint32_t n) noexcept {
  while (n > 0) {
    const std::uint32_t batch = std::min(n, kHintsPerWrite);
    const ssize_t wrote = ::write(hint_write_fd_, hints, batch * sizeof(WakeHint));
    if (wrote < 0 && errno == EINTR) continue;
    // A short or failed write cannot happen while the invariant holds (see
    // enable_hints); if it did, a sleeper would miss its hint, which the lost-wakeup
    // tests would catch. There is no one to report it to on this path.
    if (wrote <= 0) return;
    hints += batch;
    n -= batch;
  }
}

std::uint32_t Sleep::wake_by_hints(std::uint32_t n, SleepSink* sink, std::uint32_t where) noexcept {
  // Claim first, then write: the count says how many sleepers are not yet spoken for, so
  // two wakers can never both claim the last sleeper and overfill the pipe (EMPER's note).
  const std::uint32_t claimed = counters_.try_sub_sleeping(n);
  if (claimed == 0) return 0;
  WakeHint batch[kHintsPerWrite];
  const WakeHint hint{sink ? sink->sink_index() : SleepSink::kOutside, where, ticks_now()};
  for (std::uint32_t left = claimed; left > 0;) {
    const std::uint32_t k = std::min(left, kHintsPerWrite);
    std::fill_n(batch, k, hint);
    write_hints(batch, k);
    left -= k;
  }
  return claimed;
}

bool Sleep::wake_specific_io(std::uint32_t worker, SleepSink* sink, std::uint64_t why) noexcept {
  WorkerSlot& slot = slots_[worker];
  bool expected = true;
  // Whoever clears the flag (this waker, or the worker leaving on its own) decides:
  // only a waker that cleared it writes the eventfd, so a worker is woken once.
  if (!slot.io_blocked.compare_exchange_strong(expected, false, std::memory_order_acq_rel)) return false;
  slot.io_woken_by.store(sink ? sink->sink_index() : SleepSink::kOutside, std::memory_order_relaxed);
  slot.io_woken_why.store(why, std::memory_order_relaxed);
  slot.io_woken_at_ticks.store(ticks_now(), std::memory_order_relaxed);
  if (IoContext* io = slot.io.load(std::memory_order_relaxed)) io->wake();
  return true;
}

void Sleep::sleep_io(IdleState& idle, Latch& latch, bool (*has_injected)(void*), void* ctx, SleepSink& sink,
                     IoContext& io) {
  WorkerSlot& slot = slots_[idle.worker];
  auto back_to_idle = [&](StateReason why, std::uint32_t rounds) { leave_sleep(idle, latch, sink, why, rounds); };
  // A targeted waker that cleared the flag first has written (or is writing) our
  // eventfd; that read then completes during a later sleep as one spurious wake.
  auto leave_blocked = [&] {
    bool expected = true;
    slot.io_blocked.compare_exchange_strong(expected, false, std::memory_order_acq_rel);
  };

  // A hint read left over from our last sleep (withdrawn, its cancel in flight) must be
  // finished before we count ourselves again: a hint it caught while we were not counted
  // belongs to a sleeper and must be forwarded, which we could no longer tell apart from
  // our own once counted (IO.md, "Withdrawing"). The cancel makes this wait short.
  while (io.hint_armed()) {
    io.cancel_hint_read();  // again if an earlier cancel came back without taking it
    Reaped r;
    io.wait(r);
    if (r.hint) forward_hint(r.hint_value);
    if (io.has_ready()) {  // completions arrived meanwhile: run them instead of sleeping
      back_to_idle(StateReason::found_work, 0);
      return;
    }
  }
  // Findable by targeted wakes before the latch claim: a set() that sees SLEEPING
  // happens after this store, so it finds the flag set.
  slot.io_blocked.store(true, std::memory_order_seq_cst);
  if (!latch.get_sleepy(idle.worker) || !latch.fall_asleep()) {
    leave_blocked();
    back_to_idle(StateReason::found_work, 0);
    return;
  }
  for (;;) {
    const CounterValue c = counters_.load();
    if (c.jec() != idle.jec_when_sleepy) {
      leave_blocked();
      back_to_idle(StateReason::new_work_seen, kRoundsUntilSleepy);
      return;
    }
    if (counters_.try_add_sleeping(c)) break;
  }
  // SleepFence: pairs with the fence in new_injected_jobs, exactly as in sleep().
  std::atomic_thread_fence(std::memory_order_seq_cst);

  bool counted = true;  // in the sleeping count, or claimed by a waker whose hint we owe a read
  bool want_out = has_injected(ctx) || io.has_ready();
  bool slept = false;
  // A hint was read: some waker claimed us for work (whatever else woke us too).
  bool work_hint = false;
  struct {
    std::uint32_t waker = SleepSink::kOutside;
    std::uint64_t why = static_cast<std::uint64_t>(WakeWhy::work);
    std::uint64_t at_ticks = 0;
    std::uint32_t where = SleepSink::kNowhere;
    bool known = false;
  } woken;
  while (counted) {
    if (want_out) {
      // Withdraw: take ourselves out of the count. If the count is 0, every counted
      // sleeper has been claimed, so a hint is on its way for each of them, us
      // included: stay and read ours (IO.md, "Withdrawing").
      if (counters_.try_sub_sleeping(1) == 1) {
        counted = false;
        io.cancel_hint_read();
        io.flush();
        break;
      }
    }
    io.arm_hint_read();
    io.arm_wake_read();
    if (!slept) {
      sink.sleep_state(WorkerState::sleeping, StateReason::fell_asleep);
      slept = true;
    }
    Reaped r;
    io.wait(r);
    if (r.hint) {
      // A hint read while counted is ours, whoever it was written for: the waker took
      // one sleeper out of the count, and we are that sleeper now.
      counted = false;
      work_hint = true;
      woken = {r.hint_value.waker, static_cast<std::uint64_t>(WakeWhy::work), r.hint_value.ticks, r.hint_value.where,
               true};
    }
    if (r.targeted) {
      want_out = true;
      if (!woken.known) {
        woken = {slot.io_woken_by.load(std::memory_order_relaxed), slot.io_woken_why.load(std::memory_order_relaxed),
                 slot.io_woken_at_ticks.load(std::memory_order_relaxed), SleepSink::kNowhere, true};
      }
    }
    if (r.ops > 0) {
      want_out = true;
      if (!woken.known) {
        woken = {SleepSink::kOutside, static_cast<std::uint64_t>(WakeWhy::io), 0, idle.worker, true};
      }
    }
  }
  leave_blocked();
  if (!slept) {
    back_to_idle(StateReason::new_work_seen, kRoundsUntilSleepy);
    return;
  }
  const std::uint64_t now = ticks_now();
  sink.was_woken(woken.waker, woken.why, woken.at_ticks && now > woken.at_ticks ? now - woken.at_ticks : 0,
                 woken.where);
  // A hint is a wake for work, even when a latch's targeted wake came first: the worker
  // owes it a search (Worker::wait_until_cold), or passes it on.
  if (work_hint) idle.owes_search = true;
  back_to_idle(StateReason::woken, 0);
}

}  // namespace lantern::detail
