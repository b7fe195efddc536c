// SPDX-License-Identifier: Apache-2.0
// event_ring.hpp - a worker's bounded single-producer, single-consumer event ring.
//
// Why not Boost.Lockfree's spsc_queue: that queue reads the consumer's index on every
// push, so while the collector drains, each push can miss in cache on a line the other
// core just wrote. Here each side keeps a private copy of the other side's index and
// re-reads the shared one only when its copy says the ring is half full or full
// (producer) or empty (consumer) - at most twice per lap rather than once per event.
// `lantern_instr_bench --only ring` measures the two side by side.
//
// Memory orders: the producer writes the slot, then publishes tail with release; the
// consumer reads tail with acquire before reading slots (so it sees the slot writes),
// and publishes head with release after copying them out; the producer's acquire read
// of head then orders its reuse of those slots after the consumer's reads.
//
// The consumer evicts every cache line it has finished reading (clflush, x86-64's
// baseline). Reading a line leaves a copy in the consumer's cache; a lap later the
// producer's write to that line must first invalidate the copy on the other core, and on
// a machine whose cores are far apart that costs the producer more than the rest of
// recording an event (an AMD EPYC VM: 23 ns an event with a draining consumer against
// 11.5 ns with eviction; one rdtsc there is 11 ns). Evicted, the line is written to memory
// once and the producer's next write finds it in no other cache; sequential, its fetch
// is prefetched. It costs the consumer ~1 ns an event (`lantern_instr_bench --only ring`).
// clflush changes no data, only where it is cached: flushing a line the producer is
// writing at that moment is correct, merely slower, and the consumer never does it
// (pop leaves a half-written line alone). Other architectures skip the eviction.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>  // _mm_clflush (SSE2)
#endif

#include "lantern/trace/event_table.hpp"

namespace lantern::instrumentation {

class EventRing {
 public:
  explicit EventRing(std::size_t capacity) {
    std::size_t cap = 2;
    while (cap < capacity) cap <<= 1;
    mask_ = cap - 1;
    producer_check_at_ = cap / 2;
    slots_.reset(new (std::align_val_t{64}) trace::Event[cap]());
  }
  EventRing(const EventRing&) = delete;
  EventRing& operator=(const EventRing&) = delete;

  std::size_t capacity() const noexcept { return mask_ + 1; }
  // pushed: events pushed so far (any thread; acquire, like the consumer's read).
  std::uint64_t pushed() const noexcept { return tail_.load(std::memory_order_acquire); }
  static constexpr std::uint64_t kEventsPerLine = 64 / sizeof(trace::Event);

  // Pushed: what push did. `ok`: the event went in (false: the ring was full and the
  // caller counts the drop). `past_half`: the producer found the ring at least half full
  // just now - when the fill passes half, again where the ring would be full if it still
  // is, and on every push it finds full - the moments to ask the consumer to come now
  // (Recorder: DrainRequest).
  struct Pushed {
    bool ok;
    bool past_half;
    explicit operator bool() const noexcept { return ok; }
  };

  // push: producer only. The producer re-reads the consumer's index only when its copy
  // says the ring is half full (to see whether to report past_half) or full.
  Pushed push(const trace::Event& e) noexcept {
    const std::uint64_t t = tail_.load(std::memory_order_relaxed);
    bool past_half = false;
    if (t >= producer_check_at_) [[unlikely]] {
      producer_head_ = head_.load(std::memory_order_acquire);
      if (t - producer_head_ > mask_) return {false, true};  // full: the next push checks again
      past_half = t - producer_head_ > mask_ / 2;
      // Past half: the next look is when the ring would be full; otherwise when it would
      // be half full again.
      producer_check_at_ = producer_head_ + (past_half ? mask_ + 1 : (mask_ + 1) / 2);
    }
    slots_[t & mask_] = e;
    tail_.store(t + 1, std::memory_order_release);
    return {true, past_half};
  }

  // pop: consumer only. Copies up to `max` events into `out`; returns how many.
  // whole_lines: leave an event that shares its cache line with the slot the producer
  // writes next, so the consumer does not pull that line away mid-write (two events
  // per 64-byte line); it is taken on the next call. Pass false to take everything.
  std::size_t pop(trace::Event* out, std::size_t max, bool whole_lines = true) noexcept {
    const std::uint64_t h = head_.load(std::memory_order_relaxed);
    const std::uint64_t line_mask = whole_lines ? ~std::uint64_t{kEventsPerLine - 1} : ~std::uint64_t{0};
    std::uint64_t end = consumer_tail_ & line_mask;
    if (end <= h) {  // nothing known: look at the producer's index
      consumer_tail_ = tail_.load(std::memory_order_acquire);
      end = consumer_tail_ & line_mask;
      if (end <= h) return 0;
    }
    std::size_t n = static_cast<std::size_t>(end - h);
    if (n > max) n = max;
    for (std::size_t i = 0; i < n; ++i) out[i] = slots_[(h + i) & mask_];
    evict_lines(h, h + n);
    head_.store(h + n, std::memory_order_release);
    return n;
  }

  // empty: consumer only. True when every event pushed so far (as of this call) was popped.
  bool empty() noexcept {
    consumer_tail_ = tail_.load(std::memory_order_acquire);
    return consumer_tail_ == head_.load(std::memory_order_relaxed);
  }

 private:
  // evict_lines: consumer only. Evicts the lines whose every slot lies in [0, to) and
  // that hold a slot of [from, to): everything read up to `to`, including the end of a
  // line started by the previous pop. Slots are 64-byte aligned (trace::Event is 32
  // bytes, allocated 64-byte aligned), so a line never holds slots of two laps' ends.
  void evict_lines(std::uint64_t from, std::uint64_t to) noexcept {
#if defined(__x86_64__) || defined(__i386__)
    for (std::uint64_t i = from & ~(kEventsPerLine - 1); i + kEventsPerLine <= to; i += kEventsPerLine) {
      _mm_clflush(&slots_[i & mask_]);
    }
#else
    (void)from;
    (void)to;
#endif
  }

  // Producer's line: its index, its copy of the consumer's, and the index at which it
  // looks at the consumer's again.
  alignas(64) std::atomic<std::uint64_t> tail_{0};
  std::uint64_t producer_head_ = 0;
  std::uint64_t producer_check_at_ = 0;
  // Consumer's line.
  alignas(64) std::atomic<std::uint64_t> head_{0};
  std::uint64_t consumer_tail_ = 0;
  alignas(64) std::size_t mask_ = 0;
  struct AlignedDelete {
    void operator()(trace::Event* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::unique_ptr<trace::Event[], AlignedDelete> slots_;  // 64-byte aligned: two events a line
};

}  // namespace lantern::instrumentation
