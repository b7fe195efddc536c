// SPDX-License-Identifier: Apache-2.0
// percentile.hpp - the echo client's round-trip percentiles, read off the project's one
// histogram (trace::LatencyHistogram: 512 buckets from 1 ns to 2^64 ns, each at most 1/8
// of its lower bound wide, so a percentile is within 6.25 % at any scale).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "lantern/trace/latency_histogram.hpp"

namespace lantern::examples {

// Percentile: a value read from a histogram, in microseconds. beyond_top: it lies in the
// top bucket, which has no upper edge: the true value is at least `us` (printed "> us").
struct Percentile {
  double us = 0;
  bool beyond_top = false;
  std::string to_string() const;  // "123.4 us", or "> 1.8e+16 us (beyond the top bucket)"
};

// percentile: q in [0, 1]. The midpoint of the bucket holding the q-th round trip, kept
// within the largest one, which the client prints beside it (LatencyBuckets::quantile_ns;
// the client prints no smallest round trip, so none is passed); in the top bucket, its
// lower edge and beyond_top.
inline Percentile percentile(const trace::LatencyHistogram& h, double q) {
  using Buckets = trace::LatencyBuckets;
  constexpr int kTopBucket = Buckets::bucket_of(~std::uint64_t{0});  // the largest value's: no upper edge
  if (h.count() == 0) return {};
  // The q-th value lies in the top bucket when every value below that bucket ranks before it.
  const std::uint64_t below_top = h.count() - h.bucket(kTopBucket);
  if (h.bucket(kTopBucket) > 0 && static_cast<double>(below_top) <= q * static_cast<double>(h.count() - 1)) {
    return {static_cast<double>(Buckets::lower_bound(kTopBucket)) / 1e3, true};
  }
  return {Buckets::quantile_ns([&h](int i) { return h.bucket(i); }, q, 0, h.max_ns()) / 1e3, false};
}

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
