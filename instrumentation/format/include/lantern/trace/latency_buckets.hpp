// SPDX-License-Identifier: Apache-2.0
// latency_buckets.hpp - the one bucket scheme for latencies (nanoseconds), shared by the
// Recorder's exact histograms (instrumentation::AtomicLatencyHistogram) and the plain one
// every figure is read from (trace::LatencyHistogram: the analysis, the Prometheus
// exporter, the demo, the viewer), and the one way to read a percentile off it
// (quantile_ns), so every place that shows a p99 for the same run shows the same number.
//
// Below 8 ns each value has its own bucket; above, every power of two is split into 8
// equal buckets, so a bucket's width is at most 1/8 of its lower bound (quantiles within
// 6.25% using the midpoint) at any scale, in 512 fixed buckets. Powers of two are bucket
// edges, so cumulative counts at 2^k ns are exact.
//
// It lives in the trace-format leaf library because that is the one library every
// consumer of Lantern's data (recorder, exporters, viewer, tools) already depends on.
#pragma once

#include <bit>
#include <cstdint>

namespace lantern::trace {

struct LatencyBuckets {
  static constexpr int kSubBuckets = 8;
  static constexpr int kBuckets = 512;

  static constexpr int bucket_of(std::uint64_t ns) noexcept {
    if (ns < kSubBuckets) return static_cast<int>(ns);
    const int e = 63 - std::countl_zero(ns);  // >= 3; at most 63, so the index is < 496
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
  // midpoint: what a quantile that falls in `bucket` reports.
  static constexpr double midpoint(int bucket) noexcept {
    if (bucket < kSubBuckets) return static_cast<double>(bucket);
    return (static_cast<double>(lower_bound(bucket)) + static_cast<double>(upper_bound(bucket))) / 2;
  }

  // quantile_ns: q in [0, 1] over kBuckets counts (any integer element type, read with
  // `get(i)`): the midpoint of the bucket holding the q-th value, clamped to [lowest,
  // highest], the smallest and largest value recorded (lowest > highest: not known, no
  // clamp); 0 if there are none. THE percentile of every view: LatencyHistogram's
  // quantile_ns calls it, so the demo, lantern-trace stats and diff and the viewer do.
  //
  // Why the clamp: a bucket's midpoint can lie beyond every value in it (a single task of
  // 2.90 ms sits in [2.88, 3.15) ms, whose midpoint is 3.01 ms), and a p50 printed above
  // the max printed beside it is a number nobody can trust. The q-th value lies in that
  // bucket and in [lowest, highest], so the clamped midpoint is still in the bucket:
  // within 6.25 % of the q-th value, as the midpoint is, and never outside the values seen.
  template <class Get>
  static double quantile_ns(Get get, double q, std::uint64_t lowest, std::uint64_t highest) noexcept {
    std::uint64_t total = 0;
    for (int i = 0; i < kBuckets; ++i) total += get(i);
    if (total == 0) return 0;
    const double rank = q * static_cast<double>(total - 1);
    std::uint64_t seen = 0;
    double value = midpoint(kBuckets - 1);
    for (int i = 0; i < kBuckets; ++i) {
      const std::uint64_t c = get(i);
      seen += c;
      if (c && static_cast<double>(seen) > rank) {
        value = midpoint(i);
        break;
      }
    }
    if (lowest <= highest) {  // else not known (counts filled in by hand): unclamped
      if (value > static_cast<double>(highest)) value = static_cast<double>(highest);
      if (value < static_cast<double>(lowest)) value = static_cast<double>(lowest);
    }
    return value;
  }
};

}  // namespace lantern::trace
