// SPDX-License-Identifier: Apache-2.0
// io.cpp - routing an IO operation to the ring that will complete it, and the condvar
// strategy's shared ring with its completer thread (README.md beside this file).
#include <errno.h>

#include <cstring>
#include <vector>

#include "lantern/detail/io_op.hpp"
#include "lantern/detail/registry.hpp"
#include "lantern/detail/shared_io.hpp"
#include "lantern/io.hpp"
#include "lantern/thread_signals.hpp"

namespace lantern {

const char* io_kind_name(IoKind k) noexcept { return valid(k) ? name_of(k).data() : "unknown"; }

std::string IoResult::message() const {
  if (value >= 0) return "ok";
  if (value == -ENOSYS) return "asynchronous IO is unavailable here: io_uring could not be set up";
  if (value == -ECANCELED) return "cancelled: the scheduler is shutting down";
  return std::strerror(static_cast<int>(-value));
}

namespace detail {

namespace {

// complete_now: the op never reaches a ring; its task runs at once with `err`.
void complete_now(IoOp* op, int err) {
  op->result = -err;
  op->submitted = true;
  op->completion_reported = true;  // never submitted, so no io_submit/io_complete pair
  op->registry->push_or_inject(op);
}

}  // namespace

void submit_io(IoOp* op) {
  Registry& registry = *op->registry;
  Worker* me = registry.current_worker();
  if (registry.stopping()) {
    if (op->counted_not_ready) registry.not_ready_released(me);
    return complete_now(op, ECANCELED);
  }
  if (!me) {
    // Only workers submit: io_uring ties a request to the thread that submitted it and
    // cancels it when that thread exits, and an application thread may exit long before
    // its operation completes. Hand the op to a worker; running it submits it. It counts
    // as not ready from now: it waits for its IO, not for a worker.
    op->submitted = false;
    op->counted_not_ready = true;
    registry.not_ready_added(nullptr, 1);
    registry.inject(op);
    return;
  }
  op->submitted = true;
  if (!op->counted_not_ready) registry.not_ready_added(me, 1);
  op->counted_not_ready = true;
  LANTERN_HOOK(*me, IoSubmitPayload{task_id(op), op->kind, op->fd});
  if (registry.sleep().uses_rings()) {
    me->io_context()->start(op);  // this worker's own ring; submitted when it next looks for work
    return;
  }
  int err = 0;
  if (!registry.shared_io().start(op, &err)) {
    registry.not_ready_released(me);
    complete_now(op, err);
  }
}

bool SharedIo::start(IoOp* op, int* err) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Checked under the mutex: cancel_all takes it after shutdown set the flag, so an op
  // is either refused here or in flight when cancel_all looks.
  if (registry_.stopping()) {
    *err = ECANCELED;
    return false;
  }
  if (!tried_) {
    tried_ = true;
    ctx_ = IoContext::create(depth_, &why_);
    if (ctx_) completer_ = start_thread("lantern-io", [this] { completer_main(); });
  }
  if (!ctx_) {
    *err = ENOSYS;
    return false;
  }
  in_flight_.fetch_add(1, std::memory_order_seq_cst);  // before the kernel can complete it
  ctx_->start(op);
  ctx_->flush();
  return true;
}

void SharedIo::cancel_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ctx_) ctx_->cancel_all();
}

void SharedIo::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!ctx_ || stop_.load(std::memory_order_relaxed)) return;
    stop_.store(true, std::memory_order_relaxed);
    ctx_->wake();
  }
  if (completer_.joinable()) completer_.join();
}

std::string SharedIo::unavailable_reason() {
  std::lock_guard<std::mutex> lock(mutex_);
  return why_;
}

// The completer arms its wake read itself: io_uring ties a request to the thread that
// submitted it (its retries run as that thread's task work, and a thread's requests are
// cancelled when it exits), so a read armed by a worker would die with the worker.
void SharedIo::completer_main() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ctx_->arm_wake_read();
    ctx_->flush();
  }
  std::vector<IoOp*> ready;
  for (;;) {
    ctx_->block();  // ctx_ is set before this thread starts and reset only after it ends
    bool stopping = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Reaped r;
      ctx_->poll(r);
      while (IoOp* op = ctx_->take_ready()) ready.push_back(op);
      if (r.targeted) stopping = stop_.load(std::memory_order_relaxed);
      if (!ctx_->wake_armed() && !stopping) {
        ctx_->arm_wake_read();
        ctx_->flush();
      }
    }
    for (IoOp* op : ready) {
      registry_.not_ready_released(nullptr);
      registry_.inject(op);
      in_flight_.fetch_sub(1, std::memory_order_seq_cst);  // after the push: busy()
    }
    ready.clear();
    if (stopping) return;
  }
}

}  // namespace detail
}  // namespace lantern
