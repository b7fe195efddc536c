// SPDX-License-Identifier: Apache-2.0
// dep_node.hpp - the machinery under task dependencies (core/dependencies/README.md):
//
//   DepNode  a Job that is not ready until `pending` dependencies have completed. It
//            sits in no queue meanwhile: nothing wakes for it, nothing sleeps on it.
//   DepList  the "who waits for me" list of a task handle or a Signal: a lock-free
//            stack of DepLinks that completion closes once, and then walks.
//   DepLink  one entry: a DepNode to count down, or a Latch a thread sleeps on.
//
// Releasing is the hot path: one acq_rel decrement per dependency; the decrement that
// reaches zero puts the task on the releasing worker's own deque (Worker::push, which
// wakes others only through the sleep protocol), or into a lane when the releaser is
// not one of the task's workers (a Signal set by an IO thread). No lock, no allocation.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>

#include "lantern/detail/job.hpp"
#include "lantern/detail/latch.hpp"
#include "lantern/detail/registry.hpp"
#include "lantern/detail/worker.hpp"
#include "lantern/observer.hpp"

namespace lantern::detail {

struct DepNode;

// DepLink is embedded in whatever waits (a dependent task's allocation, a waiting
// thread's stack frame), so registering a dependency allocates nothing.
struct DepLink {
  DepLink* next = nullptr;
  DepNode* node = nullptr;  // a task to count down, or
  Latch* latch = nullptr;   // a thread to wake
};

// DepList: completion closes the list by swapping in a sentinel; an add that finds the
// sentinel learns the source has already completed. Links are only ever pushed one at a
// time and taken all at once, so the CAS loop has no ABA problem.
class DepList {
 public:
  DepList() = default;
  DepList(const DepList&) = delete;
  DepList& operator=(const DepList&) = delete;

  static DepLink* closed_marker() noexcept {
    static DepLink marker;
    return &marker;
  }

  // add registers `link`; false if the list is already closed (the source completed;
  // acquire: the caller then sees everything the completer did before closing).
  bool add(DepLink* link) noexcept {
    DepLink* head = head_.load(std::memory_order_acquire);
    do {
      if (head == closed_marker()) return false;
      link->next = head;
      // release: the completer that takes the list must see link's fields.
    } while (!head_.compare_exchange_weak(head, link, std::memory_order_release, std::memory_order_acquire));
    return true;
  }

  // close takes every registered link and marks the list complete. Returns
  // closed_marker() if it was already closed. acq_rel: acquire the links' contents,
  // release the completer's work (its result, its exception) to later adds and probes.
  DepLink* close() noexcept { return head_.exchange(closed_marker(), std::memory_order_acq_rel); }

  bool is_closed() const noexcept { return head_.load(std::memory_order_acquire) == closed_marker(); }
  // has_waiters: links are registered and the list is still open (a racy snapshot).
  bool has_waiters() const noexcept {
    DepLink* head = head_.load(std::memory_order_relaxed);
    return head != nullptr && head != closed_marker();
  }

 private:
  std::atomic<DepLink*> head_{nullptr};
};

// DepNode: a Job with a dependency count. `pending` reaches zero exactly once per
// launch, in the thread that completes the last dependency, which makes it ready.
struct DepNode : Job {
  explicit DepNode(Execute fn) noexcept : Job(fn) {}

  // Dependencies not yet complete. Every decrement is acq_rel: the thread that brings it
  // to zero acquires, through the RMW chain, everything every predecessor did first.
  std::atomic<std::uint32_t> pending{0};
  // What make_ready resets `pending` to: a graph node's predecessor count (so the next
  // run needs no reset pass over the graph); 0 for one-shot tasks.
  std::uint32_t reset_pending = 0;
  // Set when a dependency failed: the task completes without running its body. Written
  // before the decrement that publishes it; read only once `pending` is zero.
  std::atomic<bool> cancelled{false};
  std::exception_ptr error;      // a one-shot task's own or inherited exception
  Registry* registry = nullptr;  // the pool it runs on
  // Set when a thread outside the pool released the task (a Signal set by an IO thread):
  // the release hook is then reported by the worker that runs it (hooks run on workers).
  std::uint64_t outside_releaser = 0;

  // report_outside_release: called first thing in the task's execute function.
  void report_outside_release() noexcept {
    if (outside_releaser != 0) [[unlikely]] {
      [[maybe_unused]] Worker* me = tls_worker;
      LANTERN_HOOK(*me, ReleasePayload{task_id(this), outside_releaser});
      outside_releaser = 0;
    }
  }
};

// make_ready: `node`'s last dependency completed on this thread (`releaser_id`: the task
// or signal that completed it; 0: the spawning thread itself dropped its guard).
inline void make_ready(DepNode* node, std::uint64_t releaser_id, bool at_task_end = false) {
  node->pending.store(node->reset_pending, std::memory_order_relaxed);  // we own it until it runs
  Registry* registry = node->registry;
  Worker* me = registry->current_worker();
  registry->not_ready_released(me);
  if (me) {
    // Locality: the data the releaser just produced is in this core's cache.
    if (releaser_id != 0) LANTERN_HOOK(*me, ReleasePayload{task_id(node), releaser_id});
    me->released_one();
    if (at_task_end) {
      me->push_continuation(node);
    } else {
      me->push(node);
    }
  } else {
    node->outside_releaser = releaser_id;  // published by the lane push
    registry->inject(node);
  }
}

// report_satisfy: the task graph's record of one dependency of `node` completing on a
// worker of its pool. Reported before the count drops, so before the task can run (its
// task_begin follows in every order); left out when the count says this is the last
// dependency (make_ready's release reports that one; a count read stale only repeats
// it). A dependency completed by a thread outside the pool is not reported.
inline void report_satisfy([[maybe_unused]] DepNode* node, [[maybe_unused]] std::uint64_t by) noexcept {
#if LANTERN_OBSERVER
  Worker* const me = tls_worker;
  if (me && me->wants(EventId::satisfy)) [[unlikely]] {
    // Like every task-graph event, only while a task runs (its completing task, or the
    // spawning one for a dependency complete when spawn_after registered it).
    if (&me->registry() == node->registry && me->current_task() != nullptr &&
        node->pending.load(std::memory_order_relaxed) > 1)
      LANTERN_HOOK(*me, SatisfyPayload{task_id(node), by});
  }
#endif
}

// satisfy: one of `node`'s dependencies completed (`failed`: with an exception, which a
// one-shot dependent inherits; `error` may be null for graph nodes, whose graph keeps it).
inline void satisfy(DepNode* node, std::uint64_t releaser_id, bool failed, const std::exception_ptr& error,
                    bool at_task_end = false) {
  if (failed && !node->cancelled.exchange(true, std::memory_order_relaxed)) {
    node->error = error;  // first failure wins; published by the decrement below
  }
  if (releaser_id != 0) report_satisfy(node, releaser_id);
  if (node->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) make_ready(node, releaser_id, at_task_end);
}

// notify walks a closed list. A link must not be touched after it is acted on: its
// owner (a dependent that may run at once, a waiter that may return) can free it.
inline void notify(DepLink* list, std::uint64_t releaser_id, bool failed, const std::exception_ptr& error) {
  while (list) {
    DepLink* next = list->next;
    if (list->node) {
      satisfy(list->node, releaser_id, failed, error);
    } else {
      list->latch->set();
    }
    list = next;
  }
}

// wait_for_list returns once `list` is closed. On a worker (of any pool) it runs that
// pool's other tasks meanwhile and sleeps on a latch when there are none, and reports
// the wait (wait_begin / wait_end with `on`, also when the list is closed already); any
// other thread blocks on the latch's futex. Any number of threads may wait at once.
inline void wait_for_list(DepList& list, WaitKind kind, std::uint64_t on) {
  Worker* w = tls_worker;
  if (!w) {
    if (list.is_closed()) return;
    Latch latch(nullptr, /*external_waiters=*/true);
    DepLink link;
    link.latch = &latch;
    if (list.add(&link)) latch.wait_blocking();
    return;
  }
  const bool closed = list.is_closed();
  if (!closed) w->check_wait_depth();  // before the link is registered: nothing to undo
  const bool reported = w->report_wait_begin(kind, on);
  if (!closed) {
    Latch latch(&w->sleep(), /*external_waiters=*/false);
    DepLink link;
    link.latch = &latch;
    if (list.add(&link)) w->wait_until(latch, kind);
  }
  w->report_wait_end(kind, on, reported);
}

}  // namespace lantern::detail
