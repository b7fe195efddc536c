// SPDX-License-Identifier: Apache-2.0
// shared_io.hpp - asynchronous IO under the condvar sleep strategy: one io_uring shared
// by the pool, submitted to under a mutex, reaped by a completer thread that hands each
// finished operation to the pool like a task submitted from outside (core/io/README.md).
//
// This is the baseline the io_uring strategy is measured against: every completion costs
// a thread hop (completer -> lane -> a woken worker) that the io_uring strategy avoids.
// The ring and the thread are created on the first operation, so a pool that never does
// IO pays nothing.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "lantern/detail/io_context.hpp"

namespace lantern::detail {

class Registry;

class SharedIo {
 public:
  SharedIo(Registry& registry, unsigned depth) noexcept : registry_(registry), depth_(depth) {}
  ~SharedIo() { stop(); }
  SharedIo(const SharedIo&) = delete;
  SharedIo& operator=(const SharedIo&) = delete;

  // start submits op (any thread). Returns false if the pool is stopping (*err =
  // ECANCELED) or io_uring is unavailable (*err = ENOSYS; see unavailable_reason()).
  bool start(IoOp* op, int* err);
  // cancel_all: every operation in flight completes soon, with -ECANCELED if it had not
  // finished. Called once shutdown has begun.
  void cancel_all();
  // stop ends the completer thread (after the pool has drained). Idempotent.
  void stop();
  // busy: some operation is in flight (started and not yet handed to the pool). Read by
  // the deadlock check before it looks at the lanes: the count drops after the
  // completion's lane push (seq-cst both), so a zero here means that push is visible.
  bool busy() const noexcept { return in_flight_.load(std::memory_order_seq_cst) != 0; }
  // unavailable_reason: why the shared ring could not be set up ("" if it could, or if
  // no operation was tried yet).
  std::string unavailable_reason();

 private:
  void completer_main();

  Registry& registry_;
  const unsigned depth_;
  std::mutex mutex_;
  std::unique_ptr<IoContext> ctx_;  // guarded by mutex_, except block() in the completer
  bool tried_ = false;              // guarded by mutex_
  std::string why_;                 // guarded by mutex_
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> in_flight_{0};  // started, not yet handed to the pool (busy)
  std::thread completer_;
};

}  // namespace lantern::detail
