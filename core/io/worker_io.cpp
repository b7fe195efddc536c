// SPDX-License-Identifier: Apache-2.0
// worker_io.cpp - a worker reaps its own ring (README.md beside this file).
#include "lantern/detail/io_context.hpp"
#include "lantern/detail/registry.hpp"
#include "lantern/detail/worker.hpp"

namespace lantern::detail {

// poll_io: reap what completed (no system call) and make the waiting tasks ready on
// our own deque (their locality: the data they read is in our caches).
void Worker::poll_io() {
  if (io_cancel_requested_.load(std::memory_order_relaxed) && io_cancel_requested_.exchange(false)) io_->cancel_all();
  Reaped r;
  io_->poll(r);
  while (IoOp* op = io_->take_ready()) {
    registry_->not_ready_released(this);
    released_one();
    op->completion_reported = true;
    LANTERN_HOOK(*this, IoCompletePayload{task_id(op), op->result});
    push(op);
  }
}

}  // namespace lantern::detail
