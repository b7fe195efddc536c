// SPDX-License-Identifier: Apache-2.0
// lane.hpp - a worker's timestamped FIFO lane, and the mirror of its head time.
//
// Each worker owns one lane for work that arrives from outside its own fork-join tree:
// tasks submitted by other threads and tasks woken by events. Every task is stamped
// when it enters; popping measures how long it waited and folds that into an
// exponential moving average. After each operation the lane writes its head's
// timestamp and the average into a LaneMirror, a slot of one dense array that every
// worker reads with relaxed loads to decide whether some lane needs help (the
// "redundant timestamps" of Cforall's scheduler: see core/lanes/README.md and
// core/helping/README.md).
//
// A lane is multi-producer, multi-consumer and short-critical-section, so it is a
// lock around an intrusive list: no allocation, and the lock is held for a few pointer
// writes. The lock spins briefly, then blocks in a futex (FutexLock, futex_lock.hpp).
#pragma once

#include <atomic>
#include <cstdint>

#include "lantern/detail/futex_lock.hpp"
#include "lantern/detail/job.hpp"

namespace lantern::detail {

// LaneMirror is read racily by every worker. head_ticks == 0 means "empty". Stale values
// are acceptable (core/lanes/README.md): they delay a help decision, never corrupt a queue.
struct LaneMirror {
  std::atomic<std::uint64_t> head_ticks{0};
  std::atomic<std::uint64_t> average_wait_ticks{0};
};

class Lane {
 public:
  // The moving average gives each new wait a weight of 1/8: short bursts (a cache
  // miss, a preemption) barely move it, a sustained change shows within ~16 pops.
  static constexpr unsigned kAverageShift = 3;

  explicit Lane(LaneMirror* mirror) noexcept : mirror_(mirror) {}

  // push appends a job stamped `now`. Returns the lane's size before the push.
  std::uint32_t push(Job* job, std::uint64_t now) noexcept {
    job->enqueued_ticks = now;
    job->next = nullptr;
    lock_.lock();
    if (tail_) {
      tail_->next = job;
    } else {
      head_ = job;
      // Mirror writes happen inside the critical section so that the mirror follows
      // the lane's own order; they are relaxed: readers only need eventual values.
      mirror_->head_ticks.store(now, std::memory_order_relaxed);
    }
    tail_ = job;
    const std::uint32_t before = size_.load(std::memory_order_relaxed);
    size_.store(before + 1, std::memory_order_release);
    lock_.unlock();
    return before;
  }

  // pop removes the oldest job, or returns nullptr. *waited receives its ready wait.
  Job* pop(std::uint64_t now, std::uint64_t* waited) noexcept {
    if (size_.load(std::memory_order_relaxed) == 0) return nullptr;  // cheap early out
    lock_.lock();
    Job* job = head_;
    if (job) {
      head_ = job->next;
      if (!head_) tail_ = nullptr;
      size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
      const std::uint64_t wait = now > job->enqueued_ticks ? now - job->enqueued_ticks : 0;
      average_wait_ = average_wait_ - (average_wait_ >> kAverageShift) + (wait >> kAverageShift);
      mirror_->head_ticks.store(head_ ? head_->enqueued_ticks : 0, std::memory_order_relaxed);
      mirror_->average_wait_ticks.store(average_wait_, std::memory_order_relaxed);
      if (waited) *waited = wait;
    }
    lock_.unlock();
    return job;
  }

  // size: exact count, readable from any thread (acquire pairs with push's release so
  // a reader that sees the count can find the job under the lock).
  std::uint32_t size() const noexcept { return size_.load(std::memory_order_acquire); }

 private:
  FutexLock lock_;
  Job* head_ = nullptr;
  Job* tail_ = nullptr;
  std::atomic<std::uint32_t> size_{0};
  std::uint64_t average_wait_ = 0;
  LaneMirror* const mirror_;
};

}  // namespace lantern::detail
