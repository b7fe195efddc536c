// SPDX-License-Identifier: Apache-2.0
// latency_histogram.hpp - a histogram of latencies (nanoseconds) as a plain value: record
// samples, merge histograms, read percentiles off it.
//
// The one histogram every figure is read from: the analysis folds a trace into it
// (lantern-trace stats and diff, the Chrome export, the viewer), the demo, the Prometheus
// exporter and the tests copy the Recorder's per-worker histograms into it and sum them
// (AtomicLatencyHistogram::snapshot, lantern/instrumentation/histogram.hpp), and the echo
// client counts its round trips in it. Buckets are trace::LatencyBuckets, percentiles
// LatencyBuckets::quantile_ns, so every place that prints a p99 for one run prints the
// same number.
//
// One owner, no synchronisation. The Recorder's workers count into
// instrumentation::AtomicLatencyHistogram instead: the same buckets as relaxed atomics,
// written by one worker while any thread reads them, which a plain value cannot offer and
// an offline fold does not need.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "lantern/trace/latency_buckets.hpp"

namespace lantern::trace {

class LatencyHistogram {
 public:
  using Buckets = LatencyBuckets;
  static constexpr int kBuckets = Buckets::kBuckets;

  // record: one sample, in whole nanoseconds (ticks converted as the Recorder converts them).
  void record(std::uint64_t ns) noexcept {
    ++buckets_[static_cast<std::size_t>(Buckets::bucket_of(ns))];
    ++count_;
    sum_ns_ += ns;
    min_ns_ = std::min(min_ns_, ns);
    max_ns_ = std::max(max_ns_, ns);
  }
  // merge: add counts kept elsewhere - `bucket(i)` for every bucket i, and their count,
  // sum, smallest and largest value as their keeper states them (the Recorder's atomic
  // histograms are read field by field, so their count may differ from their buckets' sum
  // by a sample in flight).
  template <class Get>
  void merge(Get bucket, std::uint64_t count, std::uint64_t sum_ns, std::uint64_t min_ns,
             std::uint64_t max_ns) noexcept {
    for (int i = 0; i < kBuckets; ++i) buckets_[static_cast<std::size_t>(i)] += bucket(i);
    count_ += count;
    sum_ns_ += sum_ns;
    min_ns_ = std::min(min_ns_, min_ns);
    max_ns_ = std::max(max_ns_, max_ns);
  }
  void merge(const LatencyHistogram& h) noexcept {
    merge([&h](int i) { return h.bucket(i); }, h.count_, h.sum_ns_, h.min_ns_, h.max_ns_);
  }
  void clear() noexcept { *this = LatencyHistogram(); }

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t bucket(int i) const noexcept { return buckets_[static_cast<std::size_t>(i)]; }
  std::uint64_t sum_ns() const noexcept { return sum_ns_; }
  // min_ns / max_ns: the smallest / largest sample (~0 / 0 while there is none).
  std::uint64_t min_ns() const noexcept { return min_ns_; }
  std::uint64_t max_ns() const noexcept { return max_ns_; }
  double mean_ns() const noexcept { return count_ ? static_cast<double>(sum_ns_) / static_cast<double>(count_) : 0.0; }

  // quantile_ns: q in [0, 1], the midpoint of the bucket holding the q-th sample, clamped
  // to [min_ns, max_ns] (0 when empty): LatencyBuckets::quantile_ns, which says why.
  double quantile_ns(double q) const noexcept {
    return Buckets::quantile_ns([this](int i) { return bucket(i); }, q, min_ns_, max_ns_);
  }
  // count_below: samples < ns, exact when ns is a bucket edge (any power of two is).
  std::uint64_t count_below(std::uint64_t ns) const noexcept {
    std::uint64_t c = 0;
    for (int i = 0; i < kBuckets && Buckets::upper_bound(i) <= ns; ++i) c += bucket(i);
    return c;
  }
  // first_used / last_used: the range of non-empty buckets (-1 when empty).
  int first_used() const noexcept {
    for (int i = 0; i < kBuckets; ++i)
      if (bucket(i)) return i;
    return -1;
  }
  int last_used() const noexcept {
    for (int i = kBuckets - 1; i >= 0; --i)
      if (bucket(i)) return i;
    return -1;
  }

 private:
  std::array<std::uint64_t, kBuckets> buckets_{};
  std::uint64_t count_ = 0;
  std::uint64_t sum_ns_ = 0;
  std::uint64_t min_ns_ = ~std::uint64_t{0};
  std::uint64_t max_ns_ = 0;
};

}  // namespace lantern::trace
