// SPDX-License-Identifier: Apache-2.0
// ws_deque.hpp - the Chase-Lev work-stealing deque, with the memory orderings of
// Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak
// Memory Models" (PPoPP 2013).
//
// The owner pushes and pops at the bottom (LIFO: the freshest, cache-hot work); thieves
// steal at the top (FIFO: the oldest, usually largest piece of work). The two sides are
// different types - DequeOwner (one, not copyable) and DequeThief (any number) - so a
// thief cannot call pop by mistake. "Empty" and "lost a race" are values, not exceptions.
//
// Departure from the paper, on purpose: push publishes `bottom` with a release store
// instead of a release fence followed by a relaxed store. On x86 both compile to a
// plain mov; the store form is what ThreadSanitizer understands (it ignores standalone
// fences), so the TSan build checks the real protocol rather than a weakened one.
//
// Second departure: pop takes the deque's last task the way a thief does (one CAS on
// top, no fence, bottom untouched) instead of decrementing bottom, fencing, then racing
// the thieves with the same CAS. The owner is then one more thief on its own top, which
// the paper's argument for steal covers. In a chain of spawns every pop is of the last
// task, and the fence would be half its cost (core/stealing/README.md, "The deque").
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace lantern::detail {

template <class T>
class WorkStealingDeque;

// StealStatus, the answer of a steal (Stolen<T>): success with a value, the deque looked
// empty, or another thief (or the owner) won the race for the same element - worth
// retrying; fresh: the deque held one task, not seen there before by this thief
// (steal's seen_top).
enum class StealStatus : std::uint8_t { success, empty, lost_race, fresh };

template <class T>
struct Stolen {
  T* value = nullptr;
  StealStatus status = StealStatus::empty;
};

template <class T>
class WorkStealingDeque {
  static_assert(sizeof(T*) == sizeof(std::uintptr_t));

 public:
  // push's answer when the deque is full and cannot grow.
  static constexpr std::int64_t kFull = -1;

 private:
  // Ring is a power-of-two circular array of atomic slots. Slots are atomics (relaxed)
  // because a thief may read a slot the owner is overwriting after a lost race; the
  // value read is then discarded by the failed CAS on top.
  struct Ring {
    explicit Ring(std::int64_t capacity) : mask(capacity - 1), slots(new std::atomic<T*>[capacity]) {}
    std::int64_t capacity() const noexcept { return mask + 1; }
    T* get(std::int64_t i) const noexcept { return slots[i & mask].load(std::memory_order_relaxed); }
    void put(std::int64_t i, T* v) noexcept { slots[i & mask].store(v, std::memory_order_relaxed); }
    std::int64_t mask;
    std::unique_ptr<std::atomic<T*>[]> slots;
  };

 public:
  explicit WorkStealingDeque(std::int64_t initial_capacity = 256) {
    std::int64_t cap = 16;
    while (cap < initial_capacity) cap <<= 1;
    rings_.push_back(std::make_unique<Ring>(cap));
    ring_.store(rings_.back().get(), std::memory_order_relaxed);
  }
  WorkStealingDeque(const WorkStealingDeque&) = delete;
  WorkStealingDeque& operator=(const WorkStealingDeque&) = delete;

  // size is a racy estimate (exact when only the owner is active).
  std::int64_t size() const noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const std::int64_t t = top_.load(std::memory_order_relaxed);
    return b > t ? b - t : 0;
  }

 private:
  template <class U>
  friend class DequeOwner;
  template <class U>
  friend class DequeThief;

  // push: owner only. Returns the size before the push (0 means the deque was empty,
  // which the sleep protocol uses to decide how many sleepers to wake), or kFull when the
  // deque was full and could not grow (no memory): then `value` was not pushed and the
  // caller keeps it (Worker::push puts it in the worker's lane, which never allocates).
  std::int64_t push(T* value) noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const std::int64_t t = top_.load(std::memory_order_acquire);
    Ring* ring = ring_.load(std::memory_order_relaxed);
    if (b - t > ring->capacity() - 1) [[unlikely]] {
      ring = grow(ring, b, t);
      if (!ring) return kFull;
    }
    ring->put(b, value);
    bottom_.store(b + 1, std::memory_order_release);
    return b - t;
  }

  // reserve: owner only. Makes room for `n` more pushes without growing (grows now if
  // needed); false when it cannot grow (no memory). Thieves only take, so the room stays.
  // A caller that reports something before its pushes (the task graph's spawn, which
  // must precede any thief's task_begin) uses it so that the report never promises a
  // push that then fails.
  bool reserve(std::int64_t n) noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const std::int64_t t = top_.load(std::memory_order_acquire);
    Ring* ring = ring_.load(std::memory_order_relaxed);
    while (b - t > ring->capacity() - n) {
      ring = grow(ring, b, t);
      if (!ring) return false;
    }
    return true;
  }

  // pop: owner only. nullptr when empty (including losing the last element to a thief).
  //
  // At most one task (by a possibly stale top, which only ever over-counts: top only
  // grows), the owner takes it as a thief would, with one CAS on top and no fence: the
  // CAS alone decides between it and the thieves, and bottom does not move. That is the
  // common case of a chain of spawns (each task spawns the next) and of a TaskGroup's
  // last child, where the fence and a second CAS would be the two costs of every pop.
  [[gnu::always_inline]] T* pop() noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    std::int64_t t = top_.load(std::memory_order_relaxed);
    Ring* ring = ring_.load(std::memory_order_relaxed);
    if (b - t <= 1) {
      if (b - t <= 0) return nullptr;
      T* value = ring->get(t);
      // Fails only if top moved: a thief took the task (or top was stale and the deque
      // was already empty).
      return top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed) ? value
                                                                                                          : nullptr;
    }
    // Two or more tasks by the stale top: claim the bottom one, then check against the
    // thieves. The store to bottom must be visible to them before we read top again:
    // this is the one full fence on the owner's path (store-load ordering, which
    // acquire/release cannot give).
    const std::int64_t last = b - 1;
    bottom_.store(last, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    t = top_.load(std::memory_order_relaxed);
    if (t > last) {  // empty: the thieves took the rest
      bottom_.store(b, std::memory_order_relaxed);
      return nullptr;
    }
    T* value = ring->get(last);
    if (t == last) {
      // Last element: race the thieves for it through top.
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) {
        value = nullptr;
      }
      bottom_.store(b, std::memory_order_relaxed);
    }
    return value;
  }

  // steal: any thread. With seen_top, a deque's only task is taken only if this thief saw
  // it there before (*seen_top == top); otherwise it remembers top and returns fresh. The
  // owner's pop of its last task moves top as a steal does, so an unchanged top with one
  // task is the same task, still waiting: not the next one of a chain of spawns that the
  // owner pushes and pops a few nanoseconds later (taking those makes the chain bounce
  // between workers: core/stealing/README.md, "A lone task").
  Stolen<T> steal(std::int64_t* seen_top = nullptr) noexcept {
    std::int64_t t = top_.load(std::memory_order_acquire);
    // Orders the read of top before the read of bottom against the owner's pop, which
    // writes bottom then reads top (the classic store-buffer pattern).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return {nullptr, StealStatus::empty};
    if (seen_top && b - t == 1 && *seen_top != t) {
      *seen_top = t;
      return {nullptr, StealStatus::fresh};
    }
    // acquire (the paper's consume): the ring pointer must be read after bottom, and its
    // contents after the pointer.
    Ring* ring = ring_.load(std::memory_order_acquire);
    T* value = ring->get(t);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) {
      return {nullptr, StealStatus::lost_race};
    }
    return {value, StealStatus::success};
  }

  // grow doubles the ring; nullptr (and the deque unchanged) when memory runs out. Old
  // rings are kept until the deque dies: a thief may still be reading one, and deques
  // only grow to the program's peak parallel depth, so the memory kept is at most the
  // size of the current ring. Cold and out of line: it runs a handful of times in a
  // deque's life, and inlined it made push too big to inline.
  [[gnu::cold, gnu::noinline]] Ring* grow(Ring* old, std::int64_t b, std::int64_t t) noexcept {
    try {
      rings_.reserve(rings_.size() + 1);  // so that the push_back below cannot throw
      auto bigger = std::make_unique<Ring>(old->capacity() * 2);
      for (std::int64_t i = t; i < b; ++i) bigger->put(i, old->get(i));
      Ring* raw = bigger.get();
      rings_.push_back(std::move(bigger));
      ring_.store(raw, std::memory_order_release);
      return raw;
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
  }

  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::atomic<Ring*> ring_{nullptr};
  std::vector<std::unique_ptr<Ring>> rings_;  // owner-only
};

// DequeOwner is the single handle that may push and pop. Move-only.
template <class T>
class DequeOwner {
 public:
  explicit DequeOwner(WorkStealingDeque<T>& deque) noexcept : deque_(&deque) {}
  DequeOwner(DequeOwner&&) noexcept = default;
  DequeOwner& operator=(DequeOwner&&) noexcept = default;
  DequeOwner(const DequeOwner&) = delete;
  DequeOwner& operator=(const DequeOwner&) = delete;

  // push: the size before the push, or WorkStealingDeque<T>::kFull (not pushed).
  std::int64_t push(T* value) noexcept { return deque_->push(value); }
  bool reserve(std::int64_t n) noexcept { return deque_->reserve(n); }
  [[gnu::always_inline]] T* pop() noexcept { return deque_->pop(); }
  std::int64_t size() const noexcept { return deque_->size(); }

 private:
  WorkStealingDeque<T>* deque_;
};

// DequeThief may only steal. Copyable: every other worker holds one.
template <class T>
class DequeThief {
 public:
  explicit DequeThief(WorkStealingDeque<T>& deque) noexcept : deque_(&deque) {}
  Stolen<T> steal(std::int64_t* seen_top = nullptr) noexcept { return deque_->steal(seen_top); }
  std::int64_t size() const noexcept { return deque_->size(); }

 private:
  WorkStealingDeque<T>* deque_;
};

}  // namespace lantern::detail
