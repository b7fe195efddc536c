// SPDX-License-Identifier: Apache-2.0
// io_context.cpp - the io_uring behind IoContext (see io_context.hpp and README.md beside
// this file).
#include "lantern/detail/io_context.hpp"

#include <errno.h>
#include <liburing.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace lantern::detail {

namespace {

// user_data values that are not operations (operations use their address, which is
// never this small).
constexpr std::uint64_t kWakeTag = 2;
constexpr std::uint64_t kCancelTag = 3;
constexpr std::uint64_t kFutexTag = 4;

// IORING_OP_FUTEX_WAIT (Linux 6.7) and its futex2 flags, spelled out: Debian 12's liburing
// (2.3) predates them. The opcode follows IORING_OP_SENDMSG_ZC (48), READ_MULTISHOT (49)
// and WAITID (50) in the kernel's enum; create() probes for it.
constexpr int kOpFutexWait = 51;
constexpr std::uint32_t kFutex2SizeU32 = 0x02;
constexpr std::uint32_t kFutex2Private = 128;
constexpr std::uint64_t kFutexBitsetMatchAny = 0xffffffffu;

constexpr int kRequiredOps[] = {IORING_OP_READ,    IORING_OP_WRITE,   IORING_OP_SEND,        IORING_OP_ACCEPT,
                                IORING_OP_CONNECT, IORING_OP_TIMEOUT, IORING_OP_ASYNC_CANCEL};
constexpr const char* kRequiredOpNames[] = {"read", "write", "send", "accept", "connect", "timeout", "async_cancel"};

std::string errno_text(int err) { return std::strerror(err); }

std::atomic<bool> eventfd_doorbell_forced{false};

}  // namespace

void force_eventfd_doorbell(bool on) noexcept { eventfd_doorbell_forced.store(on); }

struct IoContext::Ring {
  io_uring ring{};
  bool initialised = false;
  bool futex_wait = false;  // the kernel has IORING_OP_FUTEX_WAIT
  ~Ring() {
    if (initialised) io_uring_queue_exit(&ring);
  }
  io_uring_sqe* sqe() {
    io_uring_sqe* s = io_uring_get_sqe(&ring);
    if (!s) {  // the submission queue is full: hand what is queued to the kernel
      io_uring_submit(&ring);
      s = io_uring_get_sqe(&ring);
    }
    return s;
  }
};

std::unique_ptr<IoContext> IoContext::create(unsigned depth, std::string* why) {
  auto ring = std::make_unique<Ring>();
  const int rc = io_uring_queue_init(depth == 0 ? 1 : depth, &ring->ring, 0);
  if (rc < 0) {
    if (why) *why = "io_uring_queue_init failed: " + errno_text(-rc);
    return nullptr;
  }
  ring->initialised = true;
  if (io_uring_probe* probe = io_uring_get_probe_ring(&ring->ring)) {
    const bool futex_wait = io_uring_opcode_supported(probe, kOpFutexWait);
    for (std::size_t i = 0; i < std::size(kRequiredOps); ++i) {
      if (!io_uring_opcode_supported(probe, kRequiredOps[i])) {
        io_uring_free_probe(probe);
        if (why) *why = std::string("the kernel's io_uring lacks the ") + kRequiredOpNames[i] + " operation";
        return nullptr;
      }
    }
    io_uring_free_probe(probe);
    ring->futex_wait = futex_wait;
  } else {
    if (why) *why = "the kernel's io_uring cannot be probed for its operations (kernel older than 5.6)";
    return nullptr;
  }
  const bool futex_wait = ring->futex_wait;
  std::unique_ptr<IoContext> ctx(new IoContext(std::move(ring)));
  ctx->futex_doorbell_ = futex_wait && !eventfd_doorbell_forced.load();
  ctx->wake_fd_ = eventfd(0, EFD_CLOEXEC);  // blocking: io_uring arms a poll for the read
  if (ctx->wake_fd_ < 0) {
    if (why) *why = "eventfd failed: " + errno_text(errno);
    return nullptr;
  }
  return ctx;
}

IoContext::IoContext(std::unique_ptr<Ring> ring) noexcept : ring_(std::move(ring)) {}

IoContext::~IoContext() {
  ring_.reset();  // tears down the ring first: nothing can complete into our buffers any more
  if (wake_fd_ >= 0) close(wake_fd_);
}

void IoContext::prepare(IoOp* op) {
  io_uring_sqe* sqe = ring_->sqe();
  // One operation moves at most 1 GiB (the kernel's own cap is just under 2 GiB); a
  // larger request is a short read or write, which callers handle anyway.
  const unsigned len = static_cast<unsigned>(std::min<std::size_t>(op->length, std::size_t{1} << 30));
  switch (op->kind) {
    case IoKind::read: io_uring_prep_read(sqe, op->fd, op->buffer, len, ~0ULL); break;
    case IoKind::write:
      // Sockets get send(MSG_NOSIGNAL): a peer that went away is an EPIPE result, not a
      // SIGPIPE that kills the process. Anything else answers ENOTSOCK and is retried
      // as a plain write (complete() below).
      if (op->plain_write) {
        io_uring_prep_write(sqe, op->fd, op->buffer, len, ~0ULL);
      } else {
        io_uring_prep_send(sqe, op->fd, op->buffer, len, MSG_NOSIGNAL);
      }
      break;
    case IoKind::accept: io_uring_prep_accept(sqe, op->fd, nullptr, nullptr, SOCK_CLOEXEC); break;
    case IoKind::connect:
      io_uring_prep_connect(sqe, op->fd, reinterpret_cast<sockaddr*>(&op->address), op->address_length);
      break;
    case IoKind::timeout: io_uring_prep_timeout(sqe, reinterpret_cast<__kernel_timespec*>(op->timeout), 0, 0); break;
  }
  io_uring_sqe_set_data(sqe, op);
  ++queued_;
}

void IoContext::start(IoOp* op) {
  prepare(op);
  op->prev_in_flight = nullptr;
  op->next_in_flight = in_flight_head_;
  if (in_flight_head_) in_flight_head_->prev_in_flight = op;
  in_flight_head_ = op;
  ++in_flight_ops_;
}

void IoContext::flush() {
  if (queued_ == 0) return;
  // A failed submit (EBUSY/EAGAIN: completion queue backed up) leaves the entries
  // queued; the next flush or wait retries after completions have been reaped.
  const int rc = io_uring_submit(&ring_->ring);
  if (rc >= 0) queued_ = 0;
}

void IoContext::arm_wake_read() {
  if (wake_armed_) return;
  io_uring_sqe* sqe = ring_->sqe();
  io_uring_prep_read(sqe, wake_fd_, &wake_buffer_, sizeof(wake_buffer_), ~0ULL);
  io_uring_sqe_set_data64(sqe, kWakeTag);
  ++queued_;
  wake_armed_ = true;
}

void IoContext::arm_futex_wait(const std::atomic<std::uint32_t>& word, std::uint32_t value) {
  if (futex_armed_ || !futex_doorbell_) return;
  io_uring_sqe* sqe = ring_->sqe();
  // Laid out as liburing's io_uring_prep_futex_wait does: fd = futex2 flags, addr = the
  // word, addr2 = the value it must hold, addr3 = the wake bitset; everything else zero.
  io_uring_prep_rw(kOpFutexWait, sqe, static_cast<int>(kFutex2SizeU32 | kFutex2Private),
                   const_cast<std::atomic<std::uint32_t>*>(&word), 0, value);
  sqe->addr3 = kFutexBitsetMatchAny;
  io_uring_sqe_set_data64(sqe, kFutexTag);
  ++queued_;
  futex_armed_ = true;
}

void IoContext::cancel_all() {
  for (IoOp* op = in_flight_head_; op; op = op->next_in_flight) {
    io_uring_sqe* sqe = ring_->sqe();
    io_uring_prep_cancel(sqe, op, 0);
    io_uring_sqe_set_data64(sqe, kCancelTag);
    ++queued_;
  }
  flush();
}

void IoContext::wait(Reaped& out) {
  for (;;) {
    io_uring_cqe* cqe = nullptr;
    // Submit what is queued and block for one completion in the same system call.
    const int rc = queued_ > 0 ? io_uring_submit_and_wait(&ring_->ring, 1) : io_uring_wait_cqe(&ring_->ring, &cqe);
    if (rc >= 0) {
      if (queued_ > 0) queued_ = 0;
      break;
    }
    if (rc == -EINTR) continue;
    // EBUSY/EAGAIN: too many completions pending; reap them, which is progress too.
    break;
  }
  reap(out);
}

void IoContext::block() noexcept {
  io_uring_cqe* cqe = nullptr;
  while (io_uring_wait_cqe(&ring_->ring, &cqe) == -EINTR) {
  }
}

void IoContext::poll(Reaped& out) { reap(out); }

void IoContext::reap(Reaped& out) {
  io_uring_cqe* cqe = nullptr;
  unsigned head = 0;
  unsigned seen = 0;
  bool retried = false;
  io_uring_for_each_cqe(&ring_->ring, head, cqe) {
    ++seen;
    const std::uint64_t tag = cqe->user_data;
    const std::int64_t res = cqe->res;
    if (tag == kWakeTag) {
      wake_armed_ = false;
      if (res > 0) out.targeted = true;
    } else if (tag == kFutexTag) {
      futex_armed_ = false;  // woken, or -EAGAIN (the word had changed): the caller re-checks it
    } else if (tag == kCancelTag) {
    } else {
      auto* op = reinterpret_cast<IoOp*>(static_cast<std::uintptr_t>(tag));
      if (op->kind == IoKind::write && res == -ENOTSOCK && !op->plain_write) {
        op->plain_write = true;
        prepare(op);  // same op, still in flight: retried as write(2)
        retried = true;
        continue;
      }
      complete(op, op->kind == IoKind::timeout && res == -ETIME ? 0 : res);
      ++out.ops;
    }
  }
  if (seen) io_uring_cq_advance(&ring_->ring, seen);
  if (retried) flush();  // nobody else may submit before the retry's completion is awaited
}

void IoContext::complete(IoOp* op, std::int64_t result) noexcept {
  op->result = result;
  if (op->prev_in_flight) {
    op->prev_in_flight->next_in_flight = op->next_in_flight;
  } else {
    in_flight_head_ = op->next_in_flight;
  }
  if (op->next_in_flight) op->next_in_flight->prev_in_flight = op->prev_in_flight;
  op->prev_in_flight = op->next_in_flight = nullptr;
  --in_flight_ops_;
  op->next = nullptr;
  if (ready_tail_) {
    ready_tail_->next = op;
  } else {
    ready_head_ = op;
  }
  ready_tail_ = op;
}

IoOp* IoContext::take_ready() noexcept {
  Job* job = ready_head_;
  if (!job) return nullptr;
  ready_head_ = job->next;
  if (!ready_head_) ready_tail_ = nullptr;
  job->next = nullptr;
  return static_cast<IoOp*>(job);
}

void IoContext::wake() noexcept {
  const std::uint64_t one = 1;
  // EAGAIN would mean the counter is at its maximum: the reader is woken anyway.
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

}  // namespace lantern::detail
