// SPDX-License-Identifier: Apache-2.0
// sleep_counters.hpp - the sleep protocol's one atomic word (core/sleep/README.md, "The
// counter word").
//
//   bits  0..15  sleeping workers (blocked, or about to block, on their slot)
//   bits 16..31  inactive workers (idle + sleepy + sleeping)
//   bits 32..63  jobs event counter (JEC): odd = work posted since the last worker got
//                sleepy, even = no news since then. It wraps; see the README for why a
//                wrap can only cost parallelism, never a lost external task.
//
// Packing all three into one word lets a poster read "how many sleep, how many idle,
// did anyone get sleepy" with a single load, and lets a sleeper check "no news" and
// register as sleeping with a single CAS.
#pragma once

#include <atomic>
#include <cstdint>

namespace lantern::detail {

struct CounterValue {
  std::uint64_t word;
  static constexpr std::uint64_t kOneSleeping = 1;
  static constexpr std::uint64_t kOneInactive = std::uint64_t{1} << 16;
  static constexpr std::uint64_t kOneJec = std::uint64_t{1} << 32;
  static constexpr std::uint32_t kMaxThreads = 0xFFFF;

  std::uint32_t sleeping() const noexcept { return static_cast<std::uint32_t>(word & 0xFFFF); }
  std::uint32_t inactive() const noexcept { return static_cast<std::uint32_t>((word >> 16) & 0xFFFF); }
  // idle_awake: inactive but not sleeping (idle or sleepy: still searching).
  std::uint32_t idle_awake() const noexcept { return inactive() - sleeping(); }
  std::uint32_t jec() const noexcept { return static_cast<std::uint32_t>(word >> 32); }
  static bool jec_is_sleepy(std::uint32_t jec) noexcept { return (jec & 1) == 0; }
};

// SleepCounters: every operation is seq_cst. The RMWs are full barriers on x86 anyway,
// and the protocol's proof (core/sleep/README.md) reasons about one total order of these operations
// together with the two seq_cst fences.
class SleepCounters {
 public:
  CounterValue load() const noexcept { return {word_.load(std::memory_order_seq_cst)}; }
  void add_inactive() noexcept { word_.fetch_add(CounterValue::kOneInactive, std::memory_order_seq_cst); }
  CounterValue sub_inactive() noexcept {
    return {word_.fetch_sub(CounterValue::kOneInactive, std::memory_order_seq_cst)};
  }
  // try_add_sleeping succeeds only if the word (and so the JEC) is still `seen`.
  bool try_add_sleeping(CounterValue seen) noexcept {
    return word_.compare_exchange_strong(seen.word, seen.word + CounterValue::kOneSleeping, std::memory_order_seq_cst);
  }
  void sub_sleeping() noexcept { word_.fetch_sub(CounterValue::kOneSleeping, std::memory_order_seq_cst); }
  // try_sub_sleeping takes up to n out of the sleeping count (none if it is 0); returns
  // how many. Used by the io_uring strategy, where the count is claimed, not found.
  std::uint32_t try_sub_sleeping(std::uint32_t n) noexcept {
    CounterValue v = load();
    for (;;) {
      const std::uint32_t k = v.sleeping() < n ? v.sleeping() : n;
      if (k == 0) return 0;
      if (word_.compare_exchange_weak(v.word, v.word - k * CounterValue::kOneSleeping, std::memory_order_seq_cst))
        return k;
    }
  }

  // bump_jec_if increments the JEC when `pred(jec)` holds; returns the
  // resulting value. Posting work uses "if even" (sleepy -> news); getting sleepy uses
  // "if odd" (news -> sleepy). Overflow out of bit 63 is the intended wrap.
  template <class Pred>
  CounterValue bump_jec_if(Pred pred) noexcept {
    CounterValue v = load();
    for (;;) {
      if (!pred(v.jec())) return v;
      CounterValue next{v.word + CounterValue::kOneJec};
      if (word_.compare_exchange_weak(v.word, next.word, std::memory_order_seq_cst)) return next;
    }
  }

 private:
  std::atomic<std::uint64_t> word_{0};
};

}  // namespace lantern::detail
