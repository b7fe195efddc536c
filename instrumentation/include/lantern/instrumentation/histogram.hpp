// histogram.hpp - a log-linear latency histogram with one writer and any readers.
//
// Values are nanoseconds. Below 8 ns each value has its own bucket; above, every power
// of two is split into 8 equal buckets, so a bucket's width is at most 1/8 of its lower
// bound: quantiles are within 12.5% (6.25% using the midpoint) at any scale from
// nanoseconds to hours, in 512 fixed buckets and no allocation. Powers of two are bucket
// edges, so cumulative counts at 2^k ns (what the Prometheus exporter publishes) are
// exact.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>

namespace lantern::instrumentation {

class Histogram {
 public:
  static constexpr int kSubBuckets = 8;
  static constexpr int kBuckets = 512;

  static constexpr int bucket_of(std::uint64_t ns) noexcept {
    if (ns < kSubBuckets) return static_cast<int>(ns);
    const int e = 63 - std::countl_zero(ns);  // >= 3
    const int sub = static_cast<int>((ns >> (e - 3)) & (kSubBuckets - 1));
    return kSubBuckets + (e - 3) * kSubBuckets + sub;
  }
  static constexpr std::uint64_t lower_bound(int bucket) noexcept {
    if (bucket < kSubBuckets) return static_cast<std::uint64_t>(bucket);
    const int e = (bucket - kSubBuckets) / kSubBuckets + 3;
    const int sub = (bucket - kSubBuckets) % kSubBuckets;
    return static_cast<std::uint64_t>(kSubBuckets + sub) << (e - 3);
  }
  static constexpr std::uint64_t upper_bound(int bucket) noexcept {  // exclusive
    return bucket + 1 < kBuckets ? lower_bound(bucket + 1) : ~std::uint64_t{0};
  }

  // record: writer only (relaxed load + store, no locked instruction).
  void record(std::uint64_t ns) noexcept {
    auto& b = buckets_[bucket_of(ns)];
    b.store(b.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    count_.store(count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    sum_.store(sum_.load(std::memory_order_relaxed) + ns, std::memory_order_relaxed);
  }

  std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
  std::uint64_t sum_ns() const noexcept { return sum_.load(std::memory_order_relaxed); }
  std::uint64_t bucket(int i) const noexcept { return buckets_[i].load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<std::uint64_t>, kBuckets> buckets_{};
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> sum_{0};
};

// HistogramSnapshot: a plain, mergeable copy (e.g. summed over workers).
struct HistogramSnapshot {
  std::array<std::uint64_t, Histogram::kBuckets> buckets{};
  std::uint64_t count = 0;
  std::uint64_t sum_ns = 0;

  void add(const Histogram& h) noexcept {
    for (int i = 0; i < Histogram::kBuckets; ++i) buckets[i] += h.bucket(i);
    count += h.count();
    sum_ns += h.sum_ns();
  }
  // quantile q in [0, 1]: the midpoint of the bucket holding the q-th value (0 if empty).
  double quantile_ns(double q) const noexcept {
    std::uint64_t total = 0;
    for (auto b : buckets) total += b;
    if (total == 0) return 0;
    const double rank = q * static_cast<double>(total - 1);
    std::uint64_t seen = 0;
    for (int i = 0; i < Histogram::kBuckets; ++i) {
      seen += buckets[i];
      if (buckets[i] && static_cast<double>(seen) > rank) {
        if (i < Histogram::kSubBuckets) return static_cast<double>(i);
        return (static_cast<double>(Histogram::lower_bound(i)) + static_cast<double>(Histogram::upper_bound(i))) / 2;
      }
    }
    return static_cast<double>(Histogram::lower_bound(Histogram::kBuckets - 1));
  }
  // count_below: values < ns, exact when ns is a bucket edge (any power of two is).
  std::uint64_t count_below(std::uint64_t ns) const noexcept {
    std::uint64_t c = 0;
    for (int i = 0; i < Histogram::kBuckets && Histogram::upper_bound(i) <= ns; ++i) c += buckets[i];
    return c;
  }
};

}  // namespace lantern::instrumentation
