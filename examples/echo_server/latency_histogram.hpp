// latency_histogram.hpp - the echo client's round-trip histogram, in the project's one
// latency bucket scheme (lantern/trace/latency_buckets.hpp): 512 buckets from 1 ns to
// 2^64 ns, each at most 1/8 of its lower bound wide, so a percentile is within 6.25 % at
// any scale. (It used to be 1 us buckets up to 100 ms plus one overflow bucket: with
// 1,000 connections it printed p50 = p99 = 100000.5 us while the slowest took 2.38 s.)
#pragma once

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdint>
#include <string>

#include "lantern/trace/latency_buckets.hpp"

namespace lantern::examples {

// Percentile: a value read from a histogram, in microseconds. beyond_top: it lies in the
// top bucket, which has no upper edge: the true value is at least `us` (printed "> us").
struct Percentile {
  double us = 0;
  bool beyond_top = false;
  std::string to_string() const;  // "123.4 us", or "> 1.8e+16 us (beyond the top bucket)"
};

class LatencyHistogram {
 public:
  using Buckets = trace::LatencyBuckets;
  // kTopBucket: the bucket of the largest value (2^64 - 1 ns); it has no upper edge.
  static constexpr int kTopBucket = Buckets::bucket_of(~std::uint64_t{0});

  void add_ns(std::uint64_t ns) {
    ++counts_[static_cast<std::size_t>(Buckets::bucket_of(ns))];
    ++total_;
    max_ns_ = std::max(max_ns_, ns);
  }
  std::uint64_t count() const noexcept { return total_; }
  double max_us() const noexcept { return static_cast<double>(max_ns_) / 1e3; }

  // percentile: q in [0, 1]. The midpoint of the bucket holding the q-th value (never more
  // than the largest value seen); in the top bucket, its lower edge and beyond_top.
  Percentile percentile(double q) const {
    if (total_ == 0) return {};
    const double rank = q * static_cast<double>(total_ - 1);
    std::uint64_t seen = 0;
    int bucket = kTopBucket;
    for (int i = 0; i < Buckets::kBuckets; ++i) {
      seen += counts_[static_cast<std::size_t>(i)];
      if (counts_[static_cast<std::size_t>(i)] && static_cast<double>(seen) > rank) {
        bucket = i;
        break;
      }
    }
    if (bucket >= kTopBucket) return {static_cast<double>(Buckets::lower_bound(bucket)) / 1e3, true};
    return {std::min(Buckets::midpoint(bucket), static_cast<double>(max_ns_)) / 1e3, false};
  }

 private:
  std::array<std::uint64_t, Buckets::kBuckets> counts_{};
  std::uint64_t total_ = 0;
  std::uint64_t max_ns_ = 0;
};

inline std::string Percentile::to_string() const {
  char text[96];
  if (beyond_top) {
    std::snprintf(text, sizeof text, "> %.1f us (beyond the histogram's top bucket)", us);
  } else {
    std::snprintf(text, sizeof text, "%.1f us", us);
  }
  return text;
}

}  // namespace lantern::examples
