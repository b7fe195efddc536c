// SPDX-License-Identifier: Apache-2.0
// time_series.hpp - counters over time (tasks started, steals, helps, queue depth per lane),
// bucketed so a plot reads any time range in O(1).
//
// Each series is a density over time kept in power-of-two-wide buckets from `origin`.
// Two kinds of input:
//   add_point(t, v)        an event worth v at t (a task started: 1);
//   add_interval(a, b, v)  v for every tick of [a, b) (a task waiting in a lane from its
//                          push to its pop: queue depth is the sum of such intervals).
// Intervals arrive after the fact (a lane pop reports how long the task waited), so they
// update the past; a difference array makes each one O(1) whatever its length, and a
// lazily rebuilt prefix sum (from the oldest bucket touched) answers range sums.
//
// The bucket width adapts: the series starts fine and, when the trace outgrows the bucket
// budget, merges neighbouring buckets in pairs. A live viewer left running for hours
// therefore keeps bounded memory and loses only the finest resolution of plots (the
// timeline reads events, not these buckets).
#pragma once

#include <cstdint>
#include <vector>

namespace lantern::viewer {

class TimeSeries {
 public:
  // `series` counters sharing one time axis; at most `max_buckets` buckets each.
  TimeSeries(int series, std::uint64_t origin, std::size_t max_buckets, int initial_shift = 10);

  int series_count() const noexcept { return series_; }
  void add_series(int count);  // grows the set (a lane seen for the first time)
  std::uint64_t origin() const noexcept { return origin_; }
  int shift() const noexcept { return shift_; }  // bucket width is 1 << shift ticks
  std::size_t bucket_count() const noexcept { return buckets_; }

  void add_point(int series, std::uint64_t t, double value);
  void add_interval(int series, std::uint64_t a, std::uint64_t b, double value);

  // sum: the integral of series over [a, b), in ticks relative to origin() (a count for
  // points, value x ticks for intervals). Call prepare() after adding, before summing.
  double sum(int series, double a, double b) const noexcept;
  void prepare();

 private:
  void reach(std::uint64_t t);  // grows (or coarsens) so that t has a bucket
  void coarsen();               // halve the resolution: merge bucket pairs
  void materialise(int s, std::size_t from);
  double cum_at(int s, double bucket_position) const noexcept;

  int series_;
  std::uint64_t origin_;
  std::size_t max_buckets_;
  int shift_;
  std::size_t buckets_ = 0;
  // Per series: direct_ holds values that fall wholly inside a bucket (points, the
  // partial ends of intervals); slope_ is the difference array of "this many intervals
  // cover the whole bucket"; cov_ its running sum; cum_[k] the integral over buckets
  // [0, k), rebuilt from dirty_ (the first stale bucket) by prepare().
  std::vector<std::vector<double>> direct_;
  std::vector<std::vector<double>> slope_;
  std::vector<std::vector<double>> cov_;
  std::vector<std::vector<double>> cum_;
  std::vector<std::size_t> dirty_;
};

}  // namespace lantern::viewer
