// SPDX-License-Identifier: Apache-2.0
// frame_pool.hpp - a worker's allocator for task frames (heap jobs and their closures).
//
// Every spawn allocates one frame, and most frames are freed by the worker that
// allocated them a few nanoseconds later. A FramePool serves that case with no atomic
// instruction and no lock: three size classes (64, 128, 256 bytes), each a singly linked
// free list owned by the worker, refilled from 16 KiB chunks carved on demand.
//
// A frame freed by another worker (a stolen task) goes back to its owner: it is pushed
// onto the owner's per-class "remote" stack with one CAS; the owner takes the whole
// stack with one exchange when its own list runs dry. The stack is only ever pushed one
// node at a time and emptied whole, so there is no ABA problem.
//
// Frames larger than 256 bytes or over-aligned use operator new; the job's pool pointer
// (null) remembers which. Frames made on threads that are not workers come from the
// registry's outside shards: FramePools like this one, each allocated from by one thread
// at a time (Registry::outside_frame), whose frames always come back by free_remote.
//
// Lifetime: chunks go back to the system when the pool is destroyed, with its worker,
// after the registry has drained (every job finished, so no frame is outstanding).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "lantern/detail/hot.hpp"

namespace lantern::detail {

class FramePool {
 public:
  static constexpr std::size_t kClasses = 3;
  static constexpr std::size_t kMaxFrame = 256;
  static constexpr std::size_t kChunkBytes = 16 * 1024;

  // class_of: the size class for a frame of `bytes` (bytes <= kMaxFrame): 64, 128, 256.
  static constexpr std::uint32_t class_of(std::size_t bytes) noexcept { return bytes <= 64 ? 0 : bytes <= 128 ? 1 : 2; }
  static constexpr std::size_t class_bytes(std::uint32_t cls) noexcept { return std::size_t{64} << cls; }

  FramePool() = default;
  FramePool(const FramePool&) = delete;
  FramePool& operator=(const FramePool&) = delete;
  ~FramePool() {
    for (void* chunk : chunks_) ::operator delete (chunk, std::align_val_t{64});
  }

  // allocate: owner thread only. Throws std::bad_alloc like operator new.
  void* allocate(std::uint32_t cls) {
    Node* n = local_[cls];
    if (n) [[likely]] {
      local_[cls] = n->next;
      return n;
    }
    return refill(cls);
  }
  // free_local: owner thread only.
  void free_local(void* p, std::uint32_t cls) noexcept {
    Node* n = static_cast<Node*>(p);
    n->next = local_[cls];
    local_[cls] = n;
  }
  // free_remote: any other thread.
  void free_remote(void* p, std::uint32_t cls) noexcept {
    Node* n = static_cast<Node*>(p);
    std::atomic<Node*>& head = remote_[cls].head;
    Node* old = head.load(std::memory_order_relaxed);
    do {
      n->next = old;
    } while (!head.compare_exchange_weak(old, n, std::memory_order_release, std::memory_order_relaxed));
  }

  // chunk_count: chunks taken from the system so far (tests: memory is reused).
  std::size_t chunk_count() const noexcept { return chunks_.size(); }

 private:
  struct Node {
    Node* next;
  };
  [[gnu::noinline]] LANTERN_HOT void* refill(std::uint32_t cls) {
    // Frames other workers gave back first: the whole stack in one exchange.
    std::atomic<Node*>& head = remote_[cls].head;
    if (head.load(std::memory_order_relaxed)) {
      if (Node* n = head.exchange(nullptr, std::memory_order_acquire)) {
        local_[cls] = n->next;
        return n;
      }
    }
    const std::size_t size = class_bytes(cls);
    if (bump_left_[cls] < size) {
      void* chunk = ::operator new (kChunkBytes, std::align_val_t{64});
      try {
        chunks_.push_back(chunk);
      } catch (...) {
        ::operator delete (chunk, std::align_val_t{64});
        throw;
      }
      bump_[cls] = static_cast<char*>(chunk);
      bump_left_[cls] = kChunkBytes;
    }
    void* p = bump_[cls];
    bump_[cls] += size;
    bump_left_[cls] -= size;
    return p;
  }

  Node* local_[kClasses] = {};
  char* bump_[kClasses] = {};
  std::size_t bump_left_[kClasses] = {};
  std::vector<void*> chunks_;
  struct alignas(64) Remote {
    std::atomic<Node*> head{nullptr};
  };
  Remote remote_[kClasses];
};

}  // namespace lantern::detail
