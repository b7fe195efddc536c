// SPDX-License-Identifier: Apache-2.0
// io_context.hpp - one io_uring and the bookkeeping around it (core/io/README.md).
//
// Under the io_uring sleep strategy every worker owns one: the operations its tasks
// start, a futex wait on its sleep slot's word (any waker's FUTEX_WAKE; on kernels
// without IORING_OP_FUTEX_WAIT the read of its own eventfd is that doorbell) and the read
// of its eventfd (shutdown's cancel request) complete in it, so a sleeping worker waits
// for all of them with one io_uring_enter. Under the condvar strategy the pool has one
// shared context, reaped by a completer thread.
//
// Threading: a worker's context is used by that worker only, except wake() (any thread).
// The shared context is used under its owner's mutex (see SharedIo).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "lantern/detail/io_op.hpp"

namespace lantern::detail {

// Reaped: what one wait() or poll() found besides finished operations.
struct Reaped {
  bool targeted = false;  // the eventfd read completed: a waker (eventfd doorbell) or a cancel request
  std::uint32_t ops = 0;  // operations that completed (now in the ready list)
};

// force_eventfd_doorbell (tests): rings created after this call use the eventfd doorbell
// even where the kernel has IORING_OP_FUTEX_WAIT, the path kernels before 6.7 take.
void force_eventfd_doorbell(bool on) noexcept;

class IoContext {
 public:
  // create sets up an io_uring with `depth` submission entries. Returns nullptr and
  // fills *why when io_uring is unavailable or lacks an operation we need.
  static std::unique_ptr<IoContext> create(unsigned depth, std::string* why);
  ~IoContext();
  IoContext(const IoContext&) = delete;
  IoContext& operator=(const IoContext&) = delete;

  // start queues op's submission entry (flushed by flush(), wait() or poll()).
  void start(IoOp* op);
  // flush submits queued entries (one io_uring_enter), if any.
  void flush();
  // busy: anything queued or in flight that poll() should look at, or completions already
  // reaped that nobody has taken (a sleep's wait() can reap an operation's completion in
  // the same call as its waker's doorbell; the sleeper then leaves as woken, and if this
  // said "idle" nobody would take them: the sleeper's last look, has_ready(), would send
  // it back to searching for ever).
  bool busy() const noexcept {
    return queued_ > 0 || in_flight_ops_ > 0 || wake_armed_ || futex_armed_ || ready_head_ != nullptr;
  }
  bool has_queued() const noexcept { return queued_ > 0; }
  std::uint32_t in_flight() const noexcept { return in_flight_ops_; }

  // The sleeping worker's side.
  void arm_wake_read();  // no-op if already armed
  bool wake_armed() const noexcept { return wake_armed_; }
  // futex_doorbell: the kernel has IORING_OP_FUTEX_WAIT (Linux 6.7), so a sleeper waits
  // in its ring on its slot's futex word and a waker's plain FUTEX_WAKE completes it;
  // without it the doorbell is the eventfd (wake()).
  bool futex_doorbell() const noexcept { return futex_doorbell_; }
  // arm_futex_wait queues a wait on `word` while it holds `value` (no-op if one is armed
  // or there is no futex doorbell). It completes on a FUTEX_WAKE of the word, at once if
  // the word differs, or at teardown; the word must outlive the ring.
  void arm_futex_wait(const std::atomic<std::uint32_t>& word, std::uint32_t value);
  bool futex_armed() const noexcept { return futex_armed_; }

  // wait submits queued entries and blocks until at least one completion has arrived,
  // then reaps every completion available; poll only reaps (no system call).
  void wait(Reaped& out);
  void poll(Reaped& out);

  // take_ready pops a completed operation (oldest first), or nullptr.
  IoOp* take_ready() noexcept;
  bool has_ready() const noexcept { return ready_head_ != nullptr; }
  // block waits for a completion without submitting or reaping (the shared context's
  // completer thread, which reaps under the owner's mutex).
  void block() noexcept;
  // cancel_all queues a cancel for every operation in flight (they complete with
  // -ECANCELED, or with their result if they finished first).
  void cancel_all();

  // wake makes this context's armed eventfd read complete. Any thread; async-signal-safe.
  void wake() noexcept;

 private:
  struct Ring;
  explicit IoContext(std::unique_ptr<Ring> ring) noexcept;
  void reap(Reaped& out);
  void complete(IoOp* op, std::int64_t result) noexcept;
  void prepare(IoOp* op);

  std::unique_ptr<Ring> ring_;
  int wake_fd_ = -1;
  std::uint32_t queued_ = 0;
  std::uint32_t in_flight_ops_ = 0;
  bool wake_armed_ = false;
  bool futex_armed_ = false;
  bool futex_doorbell_ = false;
  std::uint64_t wake_buffer_ = 0;
  IoOp* in_flight_head_ = nullptr;
  Job* ready_head_ = nullptr;
  Job* ready_tail_ = nullptr;
};

}  // namespace lantern::detail
