// io_context.hpp - one io_uring and the bookkeeping around it (core/src/IO.md).
//
// Under the io_uring sleep strategy every worker owns one: the operations its tasks
// start, the read of the shared wake-hint pipe it sleeps on, and the read of its own
// eventfd (targeted wakes, e.g. a latch it sleeps on) all complete in it, so a sleeping
// worker waits for all three with one io_uring_enter. Under the condvar strategy the
// pool has one shared context, reaped by a completer thread.
//
// Threading: a worker's context is used by that worker only, except wake() (any thread).
// The shared context is used under its owner's mutex (see IoService).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "lantern/detail/io_op.hpp"

namespace lantern::detail {

// WakeHint: what a waker writes into the hint pipe, one per worker to wake. 16 bytes:
// pipe writes of up to PIPE_BUF bytes are atomic and reads of 16 take exactly one.
struct WakeHint {
  std::uint32_t waker;  // worker index, or SleepSink::kOutside
  std::uint32_t where;  // the worker whose deque or lane got the work
  std::uint64_t ticks;  // when the waker wrote it (wake latency)
};
static_assert(sizeof(WakeHint) == 16);

// Reaped: what one wait() or poll() found besides finished operations.
struct Reaped {
  bool hint = false;       // the hint read completed with a hint (in hint_value)
  WakeHint hint_value{};
  bool targeted = false;   // the eventfd read completed: someone woke this worker
  std::uint32_t ops = 0;   // operations that completed (now in the ready list)
};

class IoContext {
 public:
  // create sets up an io_uring with `depth` submission entries. hint_fd is the read
  // end of the hint pipe (-1: this context never sleeps, e.g. the shared one). Returns
  // nullptr and fills *why when io_uring is unavailable or lacks an operation we need.
  static std::unique_ptr<IoContext> create(unsigned depth, int hint_fd, std::string* why);
  ~IoContext();
  IoContext(const IoContext&) = delete;
  IoContext& operator=(const IoContext&) = delete;

  // start queues op's submission entry (flushed by flush(), wait() or poll()).
  void start(IoOp* op);
  // flush submits queued entries (one io_uring_enter), if any.
  void flush();
  // busy: anything queued or in flight that poll() should look at.
  bool busy() const noexcept { return queued_ > 0 || in_flight_ops_ > 0 || hint_armed_ || wake_armed_; }
  bool has_queued() const noexcept { return queued_ > 0; }
  std::uint32_t in_flight() const noexcept { return in_flight_ops_; }

  // The sleeping worker's side.
  void arm_hint_read();     // no-op if already armed
  void arm_wake_read();     // no-op if already armed
  void cancel_hint_read();  // queue a cancel of the armed hint read, if armed
  bool hint_armed() const noexcept { return hint_armed_; }
  bool wake_armed() const noexcept { return wake_armed_; }

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
  explicit IoContext(std::unique_ptr<Ring> ring, int hint_fd) noexcept;
  void reap(Reaped& out);
  void complete(IoOp* op, std::int64_t result) noexcept;
  void prepare(IoOp* op);

  std::unique_ptr<Ring> ring_;
  const int hint_fd_;
  int wake_fd_ = -1;
  std::uint32_t queued_ = 0;
  std::uint32_t in_flight_ops_ = 0;
  bool hint_armed_ = false;
  bool wake_armed_ = false;
  bool cancel_pending_ = false;
  WakeHint hint_buffer_{};
  std::uint64_t wake_buffer_ = 0;
  IoOp* in_flight_head_ = nullptr;
  Job* ready_head_ = nullptr;
  Job* ready_tail_ = nullptr;
};

}  // namespace lantern::detail
