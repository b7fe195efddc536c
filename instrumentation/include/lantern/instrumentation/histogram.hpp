// histogram.hpp - a log-linear latency histogram with one writer and any readers.
//
// Values are nanoseconds, in the 512 log-linear buckets of trace::LatencyBuckets (8 per
// power of two; powers of two are edges, so the cumulative counts at 2^k ns that the
// Prometheus exporter publishes are exact). No allocation; one writer, relaxed readers.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>

#include "lantern/trace/latency_buckets.hpp"

namespace lantern::instrumentation {

class Histogram {
 public:
  // The bucket scheme is trace::LatencyBuckets (shared with the viewer and exporters).
  using Buckets = trace::LatencyBuckets;
  static constexpr int kSubBuckets = Buckets::kSubBuckets;
  static constexpr int kBuckets = Buckets::kBuckets;
  static constexpr int bucket_of(std::uint64_t ns) noexcept { return Buckets::bucket_of(ns); }
  static constexpr std::uint64_t lower_bound(int bucket) noexcept { return Buckets::lower_bound(bucket); }
  static constexpr std::uint64_t upper_bound(int bucket) noexcept { return Buckets::upper_bound(bucket); }

  // record: writer only (relaxed loads and stores, no locked instruction). The smallest
  // and largest value are kept so that a percentile is never outside them (see
  // LatencyBuckets::quantile_ns); a reader may see them a sample apart from the buckets.
  void record(std::uint64_t ns) noexcept {
    auto& b = buckets_[bucket_of(ns)];
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

 private:
  std::array<std::atomic<std::uint64_t>, kBuckets> buckets_{};
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> sum_{0};
  std::atomic<std::uint64_t> min_{~std::uint64_t{0}};
  std::atomic<std::uint64_t> max_{0};
};

// HistogramSnapshot: a plain, mergeable copy (e.g. summed over workers).
struct HistogramSnapshot {
  std::array<std::uint64_t, Histogram::kBuckets> buckets{};
  std::uint64_t count = 0;
  std::uint64_t sum_ns = 0;
  std::uint64_t min_ns = ~std::uint64_t{0};  // the smallest value recorded (~0 while none is)
  std::uint64_t max_ns = 0;                  // the largest

  void add(const Histogram& h) noexcept {
    for (int i = 0; i < Histogram::kBuckets; ++i) buckets[i] += h.bucket(i);
    count += h.count();
    sum_ns += h.sum_ns();
    min_ns = std::min(min_ns, h.min_ns());
    max_ns = std::max(max_ns, h.max_ns());
  }
  // quantile q in [0, 1]: the midpoint of the bucket holding the q-th value, clamped to
  // [min_ns, max_ns] (0 if empty): LatencyBuckets::quantile_ns, the analysis' too.
  double quantile_ns(double q) const noexcept {
    return trace::LatencyBuckets::quantile_ns([this](int i) { return buckets[i]; }, q, min_ns, max_ns);
  }
  // count_below: values < ns, exact when ns is a bucket edge (any power of two is).
  std::uint64_t count_below(std::uint64_t ns) const noexcept {
    std::uint64_t c = 0;
    for (int i = 0; i < Histogram::kBuckets && Histogram::upper_bound(i) <= ns; ++i) c += buckets[i];
    return c;
  }
};

}  // namespace lantern::instrumentation
