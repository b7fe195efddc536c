// SPDX-License-Identifier: Apache-2.0
// time_series.cpp - bucketed counters with O(1) range sums and adaptive resolution.
#include "lantern/viewer/time_series.hpp"

#include <algorithm>
#include <cmath>

namespace lantern::viewer {

TimeSeries::TimeSeries(int series, std::uint64_t origin, std::size_t max_buckets, int initial_shift)
    : series_(0), origin_(origin), max_buckets_(std::max<std::size_t>(max_buckets, 64)), shift_(initial_shift) {
  add_series(series);
}

void TimeSeries::add_series(int count) {
  if (count <= series_) return;
  series_ = count;
  direct_.resize(static_cast<std::size_t>(count));
  slope_.resize(static_cast<std::size_t>(count));
  cov_.resize(static_cast<std::size_t>(count));
  cum_.resize(static_cast<std::size_t>(count));
  dirty_.resize(static_cast<std::size_t>(count), 0);
  for (int s = 0; s < count; ++s) {
    const auto i = static_cast<std::size_t>(s);
    direct_[i].resize(buckets_, 0.0);
    slope_[i].resize(buckets_, 0.0);
    cov_[i].resize(buckets_, 0.0);
    cum_[i].resize(buckets_ + 1, 0.0);
  }
}

void TimeSeries::reach(std::uint64_t t) {
  if (t < origin_) return;
  std::uint64_t k = (t - origin_) >> shift_;
  while (k >= max_buckets_) {
    coarsen();
    k = (t - origin_) >> shift_;
  }
  if (k < buckets_) return;
  // Grow geometrically so a steadily advancing live trace reallocates rarely.
  const std::size_t want = static_cast<std::size_t>(k) + 1;
  for (int s = 0; s < series_; ++s) {
    const auto i = static_cast<std::size_t>(s);
    for (auto* v : {&direct_[i], &slope_[i], &cov_[i]}) {
      if (v->capacity() < want) v->reserve(std::min(max_buckets_, std::max(want, v->capacity() * 2)));
      v->resize(want, 0.0);
    }
    // The new buckets are empty: their prefix sums equal the old total.
    const double total = cum_[i].empty() ? 0.0 : cum_[i].back();
    if (cum_[i].capacity() < want + 1)
      cum_[i].reserve(std::min(max_buckets_ + 1, std::max(want + 1, cum_[i].capacity() * 2)));
    cum_[i].resize(want + 1, total);
    // cov_ continues the last covered count: an interval spanning the growth is added
    // after reach(), so the slope entries it writes mark these buckets dirty anyway.
    dirty_[i] = std::min(dirty_[i], buckets_);
  }
  buckets_ = want;
}

void TimeSeries::coarsen() {
  prepare();
  const double width = std::ldexp(1.0, shift_);
  const std::size_t half = (buckets_ + 1) / 2;
  for (int s = 0; s < series_; ++s) {
    const auto i = static_cast<std::size_t>(s);
    auto& d = direct_[i];
    for (std::size_t j = 0; j < half; ++j) {
      double v = 0;
      for (std::size_t k = 2 * j; k < std::min(buckets_, 2 * j + 2); ++k) v += d[k] + cov_[i][k] * width;
      d[j] = v;
    }
    d.resize(half);
    slope_[i].assign(half, 0.0);
    cov_[i].assign(half, 0.0);
    cum_[i].assign(half + 1, 0.0);
    dirty_[i] = 0;
  }
  buckets_ = half;
  ++shift_;
}

void TimeSeries::add_point(int series, std::uint64_t t, double value) {
  if (series < 0 || series >= series_) return;
  if (t < origin_) t = origin_;
  reach(t);
  const std::size_t k = static_cast<std::size_t>((t - origin_) >> shift_);
  const auto i = static_cast<std::size_t>(series);
  direct_[i][k] += value;
  dirty_[i] = std::min(dirty_[i], k);
}

void TimeSeries::add_interval(int series, std::uint64_t a, std::uint64_t b, double value) {
  if (series < 0 || series >= series_) return;
  if (a < origin_) a = origin_;
  if (b <= a) return;
  reach(b);
  const auto i = static_cast<std::size_t>(series);
  const std::size_t ka = static_cast<std::size_t>((a - origin_) >> shift_);
  std::size_t kb = static_cast<std::size_t>((b - origin_) >> shift_);
  if (kb >= buckets_) kb = buckets_ - 1;
  const std::uint64_t width = std::uint64_t{1} << shift_;
  if (ka == kb) {
    direct_[i][ka] += value * static_cast<double>(b - a);
  } else {
    const std::uint64_t edge_a = origin_ + (static_cast<std::uint64_t>(ka) + 1) * width;
    const std::uint64_t edge_b = origin_ + static_cast<std::uint64_t>(kb) * width;
    direct_[i][ka] += value * static_cast<double>(edge_a - a);
    direct_[i][kb] += value * static_cast<double>(b - edge_b);
    if (ka + 1 < kb) {
      slope_[i][ka + 1] += value;
      slope_[i][kb] -= value;
    }
  }
  dirty_[i] = std::min(dirty_[i], ka);
}

void TimeSeries::materialise(int s, std::size_t from) {
  const auto i = static_cast<std::size_t>(s);
  const double width = std::ldexp(1.0, shift_);
  double covered = from > 0 ? cov_[i][from - 1] : 0.0;
  for (std::size_t k = from; k < buckets_; ++k) {
    covered += slope_[i][k];
    cov_[i][k] = covered;
    cum_[i][k + 1] = cum_[i][k] + direct_[i][k] + covered * width;
  }
  dirty_[i] = buckets_;
}

void TimeSeries::prepare() {
  for (int s = 0; s < series_; ++s) {
    if (dirty_[static_cast<std::size_t>(s)] < buckets_) materialise(s, dirty_[static_cast<std::size_t>(s)]);
  }
}

double TimeSeries::cum_at(int s, double position) const noexcept {
  const auto& c = cum_[static_cast<std::size_t>(s)];
  if (position <= 0 || buckets_ == 0) return 0.0;
  if (position >= static_cast<double>(buckets_)) return c[buckets_];
  const auto k = static_cast<std::size_t>(position);
  // Within a bucket the density is taken as uniform.
  return c[k] + (position - static_cast<double>(k)) * (c[k + 1] - c[k]);
}

double TimeSeries::sum(int series, double a, double b) const noexcept {
  if (series < 0 || series >= series_ || b <= a) return 0.0;
  const double inv = std::ldexp(1.0, -shift_);
  return cum_at(series, b * inv) - cum_at(series, a * inv);
}

}  // namespace lantern::viewer
