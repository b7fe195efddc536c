// latency_histogram.hpp - the viewer's log-linear histogram of durations (nanoseconds).
//
// The same bucket scheme as instrumentation's Histogram (8 sub-buckets per power of two,
// powers of two are edges), so the p50/p90/p99 a viewer shows for a trace and the ones
// the recorder's exact histograms give for the same run agree to the bucket. Kept here
// rather than reused because that one is built for one atomic writer, and the model
// library should not depend on the recorder.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace lantern::viewer {

class LatencyHistogram {
 public:
  static constexpr int kSubBuckets = 8;
  static constexpr int kBuckets = 512;

  static constexpr int bucket_of(std::uint64_t ns) noexcept {
    if (ns < kSubBuckets) return static_cast<int>(ns);
    const int e = 63 - std::countl_zero(ns);
    const int sub = static_cast<int>((ns >> (e - 3)) & (kSubBuckets - 1));
    const int b = kSubBuckets + (e - 3) * kSubBuckets + sub;
    return b < kBuckets ? b : kBuckets - 1;
  }
  static constexpr double lower_bound(int bucket) noexcept {
    if (bucket < kSubBuckets) return bucket;
    const int e = (bucket - kSubBuckets) / kSubBuckets + 3;
    const int sub = (bucket - kSubBuckets) % kSubBuckets;
    return static_cast<double>(static_cast<std::uint64_t>(kSubBuckets + sub) << (e - 3));
  }
  static constexpr double upper_bound(int bucket) noexcept {
    return bucket + 1 < kBuckets ? lower_bound(bucket + 1) : lower_bound(bucket) * 2;
  }

  void record(double ns) noexcept {
    const std::uint64_t v = ns <= 0 ? 0 : static_cast<std::uint64_t>(ns);
    ++buckets_[static_cast<std::size_t>(bucket_of(v))];
    ++count_;
    sum_ns_ += ns > 0 ? ns : 0;
    if (ns > max_ns_) max_ns_ = ns;
  }
  void clear() noexcept { *this = LatencyHistogram(); }

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t bucket(int i) const noexcept { return buckets_[static_cast<std::size_t>(i)]; }
  double mean_ns() const noexcept { return count_ ? sum_ns_ / static_cast<double>(count_) : 0.0; }
  double max_ns() const noexcept { return max_ns_; }

  // quantile: the midpoint of the bucket holding the q-th value (0 when empty).
  double quantile_ns(double q) const noexcept {
    if (count_ == 0) return 0;
    const double rank = q * static_cast<double>(count_ - 1);
    std::uint64_t seen = 0;
    for (int i = 0; i < kBuckets; ++i) {
      seen += buckets_[static_cast<std::size_t>(i)];
      if (buckets_[static_cast<std::size_t>(i)] && static_cast<double>(seen) > rank) {
        if (i < kSubBuckets) return i;
        return (lower_bound(i) + upper_bound(i)) / 2;
      }
    }
    return max_ns_;
  }
  // first_used / last_used: the range of non-empty buckets (-1 when empty).
  int first_used() const noexcept {
    for (int i = 0; i < kBuckets; ++i)
      if (buckets_[static_cast<std::size_t>(i)]) return i;
    return -1;
  }
  int last_used() const noexcept {
    for (int i = kBuckets - 1; i >= 0; --i)
      if (buckets_[static_cast<std::size_t>(i)]) return i;
    return -1;
  }

 private:
  std::array<std::uint64_t, kBuckets> buckets_{};
  std::uint64_t count_ = 0;
  double sum_ns_ = 0;
  double max_ns_ = 0;
};

}  // namespace lantern::viewer
