// SPDX-License-Identifier: Apache-2.0
// model.cpp - apply(): each event into the analysis (the one fold), then the viewer's
// own time series from the facts the analysis stored.
#include "lantern/viewer/model.hpp"

#include <algorithm>
#include <limits>

namespace lantern::viewer {
namespace {
// Counter budget for the time series, in buckets summed over all series: 4M doubles x 4
// arrays = 128 MiB at most, whatever the trace's length (they coarsen instead).
constexpr std::size_t kSeriesCellBudget = std::size_t{4} << 20;
}  // namespace

Model::Model() = default;
Model::~Model() = default;

Tick Model::abs(double rel_ticks) const noexcept {
  if (rel_ticks <= 0) {
    const double back = -rel_ticks;
    return back >= static_cast<double>(origin_) ? 0 : origin_ - static_cast<Tick>(back);
  }
  const double max_forward = static_cast<double>(std::numeric_limits<Tick>::max() - origin_);
  return rel_ticks >= max_forward ? std::numeric_limits<Tick>::max() : origin_ + static_cast<Tick>(rel_ticks);
}

void Model::apply_header(const trace::TraceHeader& header, bool intact) {
  has_header_ = true;
  header_ok_ = intact;
  header_ = header;
  ns_per_tick_ = header.safe_ns_per_tick();
  analysis_.set_header(header, intact);
  ++generation_;
}

void Model::add_trace_problem(const trace::TraceError& problem) {
  // A stream that is damaged everywhere would otherwise grow this without bound.
  if (trace_problems_.size() < 10000) trace_problems_.push_back(problem);
  // Events were lost with a damaged or truncated chunk: the analysis ends the tasks open
  // now where each worker's record stops and unlinks waiting releases.
  if (!problem.warning()) analysis_.lose_record();
  ++generation_;
}

bool Model::has_trace_errors() const noexcept {
  return std::any_of(trace_problems_.begin(), trace_problems_.end(), [](const auto& p) { return !p.warning(); });
}

void Model::ensure_series(Tick first) {
  if (!series_) {
    series_workers_ = std::max<std::uint32_t>(worker_count(), 1);
    const int n = kSeriesFirstLane + static_cast<int>(series_workers_);
    series_ = std::make_unique<TimeSeries>(n, first, kSeriesCellBudget / static_cast<std::size_t>(n));
  }
  while (series_workers_ < worker_count()) series_->add_series(kSeriesFirstLane + static_cast<int>(series_workers_++));
}

void Model::apply(const trace::DecodedChunk& chunk) {
  ++chunks_;
  for (const auto& [id, name] : chunk.labels) analysis_.define_label(id, name);
  apply(std::span<const trace::Event>(chunk.events));
}

void Model::apply(std::span<const trace::Event> events) {
  if (events.empty()) return;
  if (analysis_.events() + events.size() > event_limit_) {
    // Keep what fits (exactly the limit, not the batches before the one that crosses it),
    // count the rest.
    const std::uint64_t room = event_limit_ > analysis_.events() ? event_limit_ - analysis_.events() : 0;
    if (discarded_ == 0) {
      status_.message = "memory limit reached after " + std::to_string(analysis_.events() + room) +
                        " events: later events are not kept (lantern-view --max-events)";
    }
    discarded_ += events.size() - room;
    events = events.first(static_cast<std::size_t>(room));
    if (events.empty()) {
      ++generation_;
      return;
    }
  }
  if (analysis_.empty()) {
    // Time zero is the earliest event of the first batch: later batches' events are
    // (nearly) all later, and anything earlier is shown at negative times.
    Tick lo = events.front().ticks;
    for (const auto& e : events) lo = std::min(lo, e.ticks);
    origin_ = first_tick_ = last_tick_ = lo;
  }
  for (const trace::Event& e : events) apply_one(e);
  analysis_.advance_health();
  ++generation_;
}

void Model::apply_one(const trace::Event& e) {
  if (!analysis_.add(e)) return;
  ensure_series(origin_);
  first_tick_ = std::min(first_tick_, e.ticks);
  last_tick_ = std::max(last_tick_, e.ticks);
  const std::uint32_t w = e.worker;
  const Tick t = analysis_.track(w).last_tick();  // the time the analysis filed it at
  switch (e.type) {
    case EventId::task_begin: series_->add_point(kSeriesTasks, t, 1.0); break;
    case EventId::io_submit: series_->add_point(kSeriesIoSubmits, t, 1.0); break;
    case EventId::io_complete: series_->add_point(kSeriesIoCompletions, t, 1.0); break;
    case EventId::not_ready: add_not_ready_sample(t); break;
    case EventId::release: series_->add_point(kSeriesReleases, t, 1.0); break;
    case EventId::steal: series_->add_point(kSeriesSteals, t, 1.0); break;
    case EventId::steal_round_failed: series_->add_point(kSeriesFailedRounds, t, 1.0); break;
    case EventId::help: series_->add_point(kSeriesHelps, t, 1.0); break;
    case EventId::wake: series_->add_point(kSeriesWakes, t, 1.0); break;
    case EventId::lane_pop: {
      // Queue depth from each pop's wait: the task sat in the lane from pop - wait to pop.
      const LanePop& pop = analysis_.pops(w).back();
      if (pop.lane < kMaxWorkerId) {
        const Tick pushed = pop.wait < pop.t ? pop.t - pop.wait : 0;
        series_->add_interval(kSeriesQueuedAll, pushed, pop.t, 1.0);
        series_->add_interval(kSeriesFirstLane + static_cast<int>(pop.lane), pushed, pop.t, 1.0);
      }
      break;
    }
    default: break;
  }
}

// add_not_ready_sample: the series of the pool-wide gauge, from the analysis' samples
// (time-ordered across workers; the one at t was just inserted, after any other at t).
// Each sample's value holds until the next sample in time, the last one's until a later
// sample arrives. Workers' batches interleave, so a sample may land between two others:
// the interval they made is split, which the series (a sum) takes as a change of value
// over [t, next).
void Model::add_not_ready_sample(Tick t) {
  const auto& samples = analysis_.not_ready_samples();
  const auto after = std::upper_bound(samples.begin(), samples.end(), t,
                                      [](Tick v, const std::pair<Tick, std::uint64_t>& s) { return v < s.first; });
  const auto at = after - 1;  // the new sample
  const double value = static_cast<double>(at->second);
  const bool has_previous = at != samples.begin(), has_next = after != samples.end();
  const double previous = has_previous ? static_cast<double>((at - 1)->second) : 0.0;
  if (has_next) {
    series_->add_interval(kSeriesNotReady, t, after->first, value - previous);
  } else if (has_previous) {
    series_->add_interval(kSeriesNotReady, (at - 1)->first, t, previous);
  }
}

const trace::CpuRow* Model::cpu_of(std::uint32_t w) const noexcept {
  if (!header_ok_ || header_.cpus.empty()) return nullptr;
  return &header_.cpus[w % header_.cpus.size()];
}

int Model::distance(std::uint32_t a, std::uint32_t b) const noexcept {
  const trace::CpuRow* x = cpu_of(a);
  const trace::CpuRow* y = cpu_of(b);
  if (x && y) {
    // The rule core's Topology::distance uses (distance_between), on the header's rows
    // (worker i runs on CPU i % cpu_count).
    return x == y ? static_cast<int>(StealDistance::smt) : static_cast<int>(distance_between(*x, *y));
  }
  return analysis_.seen_distance(a, b);
}

void Model::prepare_series() {
  if (series_) series_->prepare();
}

void Model::finish() {
  analysis_.finish();
  ++generation_;
}

void Model::recheck_health(const HealthThresholds& thresholds) {
  analysis_.recheck_health(thresholds);
  ++generation_;
}

}  // namespace lantern::viewer
