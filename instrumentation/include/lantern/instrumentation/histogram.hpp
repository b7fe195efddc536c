// SPDX-License-Identifier: Apache-2.0
// histogram.hpp - the Recorder's latency histograms: one worker writes, any thread reads.
//
// Values are nanoseconds, in the 512 log-linear buckets of trace::LatencyBuckets (8 per
// power of two; every bucket bound the Prometheus exporter publishes is one of their
// edges, so its cumulative counts are exact). No allocation.
//
// Why not trace::LatencyHistogram, the plain histogram every figure is read from: a
// worker records into its own histograms on its hot path while exporters and the demo
// read them from other threads, so every field is a relaxed atomic with a single writer
// (a load and a store, no locked instruction). A plain value would be a data race; an
// atomic one would make the analysis' offline fold pay for atomics it does not need.
// Readers take a snapshot() - a trace::LatencyHistogram - and merge, sum over workers and
// read percentiles from that.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "lantern/trace/latency_buckets.hpp"
#include "lantern/trace/latency_histogram.hpp"

namespace lantern::instrumentation {

class AtomicLatencyHistogram {
 public:
  using Buckets = trace::LatencyBuckets;
  static constexpr int kBuckets = Buckets::kBuckets;

  // record: writer only (relaxed loads and stores, no locked instruction). The smallest
  // and largest value are kept so that a percentile is never outside them (see
  // LatencyBuckets::quantile_ns); a reader may see them a sample apart from the buckets.
  void record(std::uint64_t ns) noexcept {
    auto& b = buckets_[Buckets::bucket_of(ns)];
    b.store(b.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    count_.store(count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    sum_.store(sum_.load(std::memory_order_relaxed) + ns, std::memory_order_relaxed);
    if (ns < min_.load(std::memory_order_relaxed)) min_.store(ns, std::memory_order_relaxed);
    if (ns > max_.load(std::memory_order_relaxed)) max_.store(ns, std::memory_order_relaxed);
  }

  std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
  std::uint64_t sum_ns() const noexcept { return sum_.load(std::memory_order_relaxed); }
  std::uint64_t bucket(int i) const noexcept { return buckets_[i].load(std::memory_order_relaxed); }
  // min_ns / max_ns: the smallest / largest value recorded (~0 / 0 while none is).
  std::uint64_t min_ns() const noexcept { return min_.load(std::memory_order_relaxed); }
  std::uint64_t max_ns() const noexcept { return max_.load(std::memory_order_relaxed); }

  // snapshot: a plain copy, from any thread. Each field is read on its own, the buckets
  // first, so while the writer runs the count may differ from the buckets' sum by a sample.
  trace::LatencyHistogram snapshot() const noexcept {
    std::array<std::uint64_t, kBuckets> buckets;
    for (int i = 0; i < kBuckets; ++i) buckets[static_cast<std::size_t>(i)] = bucket(i);
    const std::uint64_t n = count(), sum = sum_ns(), lowest = min_ns(), highest = max_ns();
    trace::LatencyHistogram h;
    h.merge([&buckets](int i) { return buckets[static_cast<std::size_t>(i)]; }, n, sum, lowest, highest);
    return h;
  }

 private:
  std::array<std::atomic<std::uint64_t>, kBuckets> buckets_{};
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> sum_{0};
  std::atomic<std::uint64_t> min_{~std::uint64_t{0}};
  std::atomic<std::uint64_t> max_{0};
};

}  // namespace lantern::instrumentation
