// SPDX-License-Identifier: Apache-2.0
// signal.hpp - Signal: a one-shot event object that any thread can set, and that tasks
// and threads can wait for.
//
//   lantern::Signal read_done;
//   auto parse = pool.spawn_after({read_done}, [&] { parse(buffer); });  // not ready yet
//   io.on_complete([&] { read_done.set(); });  // any thread: an IO completion, a timer
//   parse.wait();
//
// A task waiting on a Signal is *not ready*: it sits in no queue, no worker is woken
// for it and none sleeps on it. set() makes every waiting task whose other dependencies
// are done ready: onto the setting worker's own deque when set() runs on one of the
// task's workers, into a lane otherwise (see core/dependencies/README.md).
//
// Semantics:
//  * set() before anyone waits: later waits return at once, and tasks spawned after
//    it are ready immediately.
//  * set() twice: the second call does nothing and returns false.
//  * A Signal must outlive every task and thread waiting on it. Destroying one that is
//    not set while something still waits is a bug that would hang those waiters: the
//    destructor prints why and aborts.
//  * A Signal never fails: it carries no exception (an IO error is the task's to check).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "lantern/detail/dep_node.hpp"

namespace lantern {

class Dependency;

class Signal {
 public:
  Signal() = default;
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;
  ~Signal() {
    if (waiters_.has_waiters()) {
      std::fputs(
          "lantern: a Signal was destroyed before set() while tasks or threads still wait on it; "
          "they would wait forever\n",
          stderr);
      std::abort();
    }
  }

  // set marks the signal as happened and releases everything waiting on it. Callable
  // from any thread, including one outside the pool; returns true if this call set it,
  // false if it was already set. Waiters are released in the calling thread; it does
  // not touch *this after the list is taken, so a waiter may destroy the Signal as soon
  // as it is released.
  // A call that finds it not yet set reports signal_set (a: id()) on a worker running a
  // task, before it closes the list: before any waiter can see it set and report its
  // wait_end, and before anyone's release. (Two setters racing may both report it; the
  // earlier event is the set.)
  bool set() noexcept {
    const std::uint64_t my_id = id();
    if (detail::Worker* w = detail::tls_worker; w && !waiters_.is_closed()) w->report_signal_set(my_id);
    detail::DepLink* list = waiters_.close();
    if (list == detail::DepList::closed_marker()) return false;
    detail::notify(list, my_id, /*failed=*/false, {});
    return true;
  }

  // is_set: whether set() has been called (acquire: what the setter did before set()
  // is visible after a true result).
  bool is_set() const noexcept { return waiters_.is_closed(); }

  // wait returns once the signal is set. On a worker it runs other tasks meanwhile
  // (and sleeps on a latch when there are none); on any other thread it blocks.
  void wait() { detail::wait_for_list(waiters_, detail::WaitKind::signal, id()); }

  // id: what release events report as the releaser (the Signal's address).
  std::uint64_t id() const noexcept { return reinterpret_cast<std::uintptr_t>(this); }

 private:
  friend class Dependency;
  detail::DepList waiters_;
};

}  // namespace lantern
