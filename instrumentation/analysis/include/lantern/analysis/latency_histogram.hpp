// latency_histogram.hpp - the viewer's histogram of durations (nanoseconds).
//
// Buckets are trace::LatencyBuckets, the scheme the recorder's exact histograms and the
// Prometheus exporter use, so the p50/p90/p99 the viewer shows for a trace and the ones
// the recorder gives for the same run agree (both clamped to the samples' min and max by
// LatencyBuckets::quantile_ns). A class of its own (not
// instrumentation's Histogram) because that one is built for one atomic writer, and the
// model library depends on the trace format only, not on the recorder.
#pragma once

#include <array>
#include <cstdint>

#include "lantern/trace/latency_buckets.hpp"

namespace lantern::analysis {

class LatencyHistogram {
 public:
  using Buckets = trace::LatencyBuckets;
  static constexpr int kSubBuckets = Buckets::kSubBuckets;
  static constexpr int kBuckets = Buckets::kBuckets;
  static constexpr int bucket_of(std::uint64_t ns) noexcept { return Buckets::bucket_of(ns); }
  static constexpr double lower_bound(int bucket) noexcept { return static_cast<double>(Buckets::lower_bound(bucket)); }
  static constexpr double upper_bound(int bucket) noexcept { return static_cast<double>(Buckets::upper_bound(bucket)); }

  // record: a sample (the analysis passes whole nanoseconds, as the Recorder records them).
  void record(double ns) noexcept {
    const std::uint64_t v = ns <= 0 ? 0 : static_cast<std::uint64_t>(ns);
    ++buckets_[static_cast<std::size_t>(bucket_of(v))];
    ++count_;
    sum_ns_ += ns > 0 ? ns : 0;
    if (ns > max_ns_) max_ns_ = ns;
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
  }
  void clear() noexcept { *this = LatencyHistogram(); }

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t bucket(int i) const noexcept { return buckets_[static_cast<std::size_t>(i)]; }
  double mean_ns() const noexcept { return count_ ? sum_ns_ / static_cast<double>(count_) : 0.0; }
  double max_ns() const noexcept { return max_ns_; }
  double min_ns() const noexcept { return count_ ? static_cast<double>(min_) : 0.0; }

  // quantile: the midpoint of the bucket holding the q-th value, clamped to the smallest
  // and largest sample (0 when empty): LatencyBuckets::quantile_ns, as the Recorder's.
  double quantile_ns(double q) const noexcept {
    return Buckets::quantile_ns([this](int i) { return buckets_[static_cast<std::size_t>(i)]; }, q, min_, max_);
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
  std::uint64_t min_ = ~std::uint64_t{0}, max_ = 0;  // of the recorded (whole) nanoseconds
};

}  // namespace lantern::analysis
