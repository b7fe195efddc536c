// SPDX-License-Identifier: Apache-2.0
// io.hpp - asynchronous IO whose completion readies the task waiting for it.
//
//   lantern::Scheduler pool({.sleep_strategy = lantern::SleepStrategy::io_uring});
//   pool.io().accept(listen_fd, [](lantern::IoResult r) {       // runs as a task
//     if (!r.ok()) return;                                       // r.message() says why
//     int fd = r.fd();
//     lantern::io::read(fd, buf, sizeof buf, [=](lantern::IoResult n) { ... });  // inside tasks
//   });
//
// Each call starts one operation and returns at once. The callback is a task that is
// *not ready* until the kernel completes the operation (it sits in no queue, counts in
// Scheduler::not_ready_tasks(), no worker wakes or sleeps for it); the completion makes
// it ready and it runs with the result, exactly once, on a worker:
//  * io_uring strategy: on the worker that started the operation, which reaps its own
//    ring between tasks and while it sleeps (the completion is what wakes it);
//  * condvar strategy: a completer thread reaps one shared ring and submits the task into
//    a lane, like a task submitted from outside.
// Buffers must stay valid and untouched until the callback runs. The callback's
// exception goes to SchedulerOptions::on_unhandled_exception, like a spawned task's.
//
// Errors are results, never exceptions: IoResult::value < 0 is -errno. Two values are
// Lantern's own: -ECANCELED when the scheduler shut down before the operation finished
// (shutdown cancels every operation in flight and waits for the callbacks), -ENOSYS
// when io_uring cannot be set up here (IoResult::message() says so).
// Starting an operation after shutdown from outside the pool throws ShutdownError.
// Writes to sockets never raise SIGPIPE: a vanished peer is -EPIPE or -ECONNRESET.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#include "lantern/detail/io_op.hpp"
#include "lantern/detail/registry.hpp"

namespace lantern {

struct IoResult {
  std::int64_t value = 0;  // >= 0: bytes moved, the accepted fd, or 0; < 0: -errno
  bool ok() const noexcept { return value >= 0; }
  std::size_t bytes() const noexcept { return value > 0 ? static_cast<std::size_t>(value) : 0; }
  int fd() const noexcept { return static_cast<int>(value); }
  std::error_code error() const noexcept {
    return value < 0 ? std::error_code(static_cast<int>(-value), std::system_category()) : std::error_code{};
  }
  std::string message() const;
};

namespace detail {

template <class F>
struct IoTask final : IoOp {
  template <class G>
  IoTask(Registry& owner, G&& g) : IoOp(&IoTask::run, owner), fn(std::forward<G>(g)) {}
  static bool run(Job* job) noexcept {
    auto* self = static_cast<IoTask*>(job);
    if (!self->submitted) {  // handed to this worker to start on its own ring
      submit_io(self);
      return false;
    }
    std::unique_ptr<IoTask> owned(self);
    Registry* registry = self->registry;
    if (!self->completion_reported) {  // reaped off the pool (condvar strategy's completer)
      if (Worker* w = tls_worker) LANTERN_HOOK(*w, IoCompletePayload{task_id(self), self->result});
    }
    bool threw = false;
    try {
      self->fn(IoResult{self->result});
    } catch (...) {
      threw = true;
      task_threw();
      registry->report_unhandled(std::current_exception());
    }
    owned.reset();
    registry->end_job();
    return threw;
  }
  F fn;
};

template <class F>
IoOp* make_io_task(Registry& registry, F&& fn) {
  static_assert(std::is_invocable_v<std::decay_t<F>&, IoResult>, "an IO callback takes a lantern::IoResult");
  registry.begin_job();
  try {
    return new IoTask<std::decay_t<F>>(registry, std::forward<F>(fn));
  } catch (...) {
    registry.cancel_job();
    throw;
  }
}

}  // namespace detail

// Io starts operations on one scheduler. Cheap to copy; get it from Scheduler::io(), or
// use the free functions in lantern::io inside a task.
class Io {
 public:
  explicit Io(detail::Registry& registry) noexcept : registry_(&registry) {}

  // read up to len bytes from fd (a socket, pipe or file at its current position);
  // result: bytes read, 0 at end of file / peer closed.
  template <class F>
  void read(int fd, void* buffer, std::size_t len, F&& on_done) {
    start(IoKind::read, fd, buffer, len, std::forward<F>(on_done));
  }
  // write up to len bytes; result: bytes written (may be fewer than len: write the rest).
  template <class F>
  void write(int fd, const void* buffer, std::size_t len, F&& on_done) {
    start(IoKind::write, fd, const_cast<void*>(buffer), len, std::forward<F>(on_done));
  }
  // accept a connection on a listening socket; result: the new socket (close-on-exec).
  template <class F>
  void accept(int listen_fd, F&& on_done) {
    start(IoKind::accept, listen_fd, nullptr, 0, std::forward<F>(on_done));
  }
  // connect a socket to an address; result: 0 once connected.
  template <class F>
  void connect(int fd, const sockaddr* address, socklen_t length, F&& on_done) {
    if (length > sizeof(sockaddr_storage)) throw std::invalid_argument("lantern::Io::connect: address too long");
    detail::IoOp* op = detail::make_io_task(*registry_, std::forward<F>(on_done));
    op->kind = IoKind::connect;
    op->fd = fd;
    std::memcpy(&op->address, address, length);
    op->address_length = length;
    detail::submit_io(op);
  }
  // timeout: the callback runs after `delay` with result 0 (or -ECANCELED at shutdown).
  template <class F>
  void timeout(std::chrono::nanoseconds delay, F&& on_done) {
    detail::IoOp* op = detail::make_io_task(*registry_, std::forward<F>(on_done));
    op->kind = IoKind::timeout;
    const std::int64_t ns = delay.count() < 0 ? 0 : delay.count();
    op->timeout[0] = ns / 1'000'000'000;
    op->timeout[1] = ns % 1'000'000'000;
    detail::submit_io(op);
  }

 private:
  template <class F>
  void start(IoKind kind, int fd, void* buffer, std::size_t len, F&& on_done) {
    detail::IoOp* op = detail::make_io_task(*registry_, std::forward<F>(on_done));
    op->kind = kind;
    op->fd = fd;
    op->buffer = buffer;
    op->length = len;
    detail::submit_io(op);
  }
  detail::Registry* registry_;
};

namespace io {

// current: the Io of the scheduler running the calling task. Throws std::logic_error
// outside a worker.
inline Io current() {
  detail::Worker* w = detail::tls_worker;
  if (!w) throw std::logic_error("lantern::io functions are for tasks; outside one use Scheduler::io()");
  return Io(w->registry());
}
template <class F>
void read(int fd, void* buffer, std::size_t len, F&& on_done) {
  current().read(fd, buffer, len, std::forward<F>(on_done));
}
template <class F>
void write(int fd, const void* buffer, std::size_t len, F&& on_done) {
  current().write(fd, buffer, len, std::forward<F>(on_done));
}
template <class F>
void accept(int listen_fd, F&& on_done) {
  current().accept(listen_fd, std::forward<F>(on_done));
}
template <class F>
void connect(int fd, const sockaddr* address, socklen_t length, F&& on_done) {
  current().connect(fd, address, length, std::forward<F>(on_done));
}
template <class F>
void timeout(std::chrono::nanoseconds delay, F&& on_done) {
  current().timeout(delay, std::forward<F>(on_done));
}

}  // namespace io
}  // namespace lantern
