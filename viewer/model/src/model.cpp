// model.cpp - apply(): one event at a time into per-worker arrays, series and histograms.
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
  if (intact && header.workers > 0 && header.workers <= kMaxWorkerId) ensure_worker(header.workers - 1);
  ++generation_;
}

void Model::add_trace_problem(const trace::TraceError& problem) {
  // A stream that is damaged everywhere would otherwise grow this without bound.
  if (trace_problems_.size() < 10000) trace_problems_.push_back(problem);
  // Events were lost with a damaged or truncated chunk: tasks open now may have ended in
  // it. They end, open-ended, where each worker's record stops.
  if (!problem.warning()) {
    for (auto& track : tracks_) {
      if (track->open_depth() > 0) track->lose_open(track->last_tick());
    }
    // A release still waiting for its task's begin may have lost it in the skipped
    // bytes: linking it to a later task that reuses the id (a job's address) would draw
    // an arrow across the timeline. Those releases stay unlinked.
    waiting_releases_.clear();
  }
  ++generation_;
}

bool Model::has_trace_errors() const noexcept {
  return std::any_of(trace_problems_.begin(), trace_problems_.end(), [](const auto& p) { return !p.warning(); });
}

void Model::ensure_worker(std::uint32_t w) {
  if (w < tracks_.size()) return;
  const std::size_t n = static_cast<std::size_t>(w) + 1;
  while (tracks_.size() < n) tracks_.push_back(std::make_unique<WorkerTrack>());
  per_worker_.resize(n);
  // Re-lay the matrix out for the new side (rare: the header normally says how many).
  const auto side = static_cast<std::uint32_t>(n);
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(side) * side, 0);
  std::vector<std::int8_t> dist(static_cast<std::size_t>(side) * side, -1);
  for (std::uint32_t a = 0; a < matrix_side_; ++a) {
    for (std::uint32_t b = 0; b < matrix_side_; ++b) {
      counts[static_cast<std::size_t>(a) * side + b] = steal_matrix_[static_cast<std::size_t>(a) * matrix_side_ + b];
      dist[static_cast<std::size_t>(a) * side + b] = seen_distance_[static_cast<std::size_t>(a) * matrix_side_ + b];
    }
  }
  steal_matrix_ = std::move(counts);
  seen_distance_ = std::move(dist);
  matrix_side_ = side;
  if (series_) series_->add_series(kSeriesFirstLane + static_cast<int>(side));
}

void Model::ensure_series(Tick first) {
  if (series_) return;
  const int n = kSeriesFirstLane + static_cast<int>(std::max<std::size_t>(tracks_.size(), 1));
  series_ = std::make_unique<TimeSeries>(n, first, kSeriesCellBudget / static_cast<std::size_t>(n));
}

void Model::apply(const trace::DecodedChunk& chunk) {
  ++chunks_;
  for (const auto& [id, name] : chunk.labels) labels_.define(id, name);
  apply(std::span<const trace::Event>(chunk.events));
}

void Model::apply(std::span<const trace::Event> events) {
  if (events.empty()) return;
  if (events_ + events.size() > event_limit_) {
    if (discarded_ == 0) {
      status_.message = "memory limit reached after " + std::to_string(events_) +
                        " events: later events are not kept (lantern-view --max-events)";
    }
    discarded_ += events.size();
    ++generation_;
    return;
  }
  if (events_ == 0) {
    // Time zero is the earliest event of the first batch: later batches' events are
    // (nearly) all later, and anything earlier is shown at negative times.
    Tick lo = events.front().ticks;
    for (const auto& e : events) lo = std::min(lo, e.ticks);
    origin_ = first_tick_ = last_tick_ = lo;
  }
  for (const trace::Event& e : events) apply_one(e);
  health_.advance(*this);
  ++generation_;
}

void Model::apply_one(const trace::Event& e) {
  if (e.worker >= kMaxWorkerId || !trace::valid_type(static_cast<std::uint32_t>(e.type))) {
    ++rejected_;
    return;
  }
  const std::uint32_t w = e.worker;
  ensure_worker(w);
  ensure_series(origin_);
  ++events_;
  ++by_type_[static_cast<int>(e.type)];
  first_tick_ = std::min(first_tick_, e.ticks);
  last_tick_ = std::max(last_tick_, e.ticks);
  WorkerTrack& track = *tracks_[w];
  PerWorker& pw = per_worker_[w];
  const Tick previous = track.seen() ? track.last_tick() : e.ticks;  // a drop's gap starts here
  track.touch(e.ticks);
  const Tick t = std::max(e.ticks, track.last_tick());  // the track clamps disorder; follow it
  using trace::EventType;
  switch (e.type) {
    case EventType::state: {
      const int from = static_cast<int>((e.a >> 8) & 0xFF), to = static_cast<int>(e.a & 0xFF);
      if (to >= trace::kStateCount) {
        ++rejected_;
        break;
      }
      track.on_state(t, from, to, static_cast<std::uint8_t>(std::min<std::uint64_t>(e.b, 255)));
      break;
    }
    case EventType::task_begin: {
      const int depth = track.on_task_begin(t, e.a, static_cast<std::uint8_t>(std::min<std::uint64_t>(e.b, 255)));
      series_->add_point(kSeriesTasks, t, 1.0);
      if (depth >= 0 && !waiting_releases_.empty()) on_task_begun(w, depth, t, e.a);
      break;
    }
    case EventType::task_label: {
      const auto label = static_cast<std::uint32_t>(std::min<std::uint64_t>(e.b, 0xFFFF'FFFFu));
      track.on_task_label(e.a, label);
      if (label != 0) ++label_uses_[label];
      break;
    }
    case EventType::io_submit:
    case EventType::io_complete: {
      const bool completed = e.type == EventType::io_complete;
      pw.io.push_back(IoEvent{t, e.a, e.b, completed});
      series_->add_point(completed ? kSeriesIoCompletions : kSeriesIoSubmits, t, 1.0);
      break;
    }
    case EventType::task_end: {
      const TaskSlice* closed = nullptr;
      if (track.on_task_end(t, e.a, e.b != 0, &closed) && closed) {
        task_duration_.record(ticks_to_ns(static_cast<double>(closed->end - closed->start)));
      }
      break;
    }
    case EventType::push:
      break;  // counted in by_type_; queue depth comes from lane pops (see header)
    case EventType::not_ready:
      // A pool-wide gauge sampled by whichever worker: the previous sample's value holds
      // until this one.
      if (not_ready_value_ >= 0 && t > not_ready_since_) {
        series_->add_interval(kSeriesNotReady, not_ready_since_, t, not_ready_value_);
      }
      not_ready_since_ = t;
      not_ready_value_ = static_cast<double>(e.a);
      break;
    case EventType::release:
      on_release(w, t, e);
      series_->add_point(kSeriesReleases, t, 1.0);
      break;
    case EventType::steal: {
      const auto victim = static_cast<std::uint32_t>(std::min<std::uint64_t>(e.a, kMaxWorkerId));
      const auto distance = static_cast<std::uint8_t>(e.b & 0xFF);
      const auto source = static_cast<std::uint8_t>((e.b >> 8) & 0xFF);
      pw.steals.push_back(Steal{t, victim, distance, source});
      track.set_pending_steal(static_cast<std::int32_t>(std::min<std::size_t>(pw.steals.size() - 1, INT32_MAX)));
      series_->add_point(kSeriesSteals, t, 1.0);
      if (distance < trace::kDistanceCount) ++by_distance_[distance];
      if (victim < kMaxWorkerId) {
        ensure_worker(victim);
        const std::size_t cell = static_cast<std::size_t>(w) * matrix_side_ + victim;
        max_steal_count_ = std::max(max_steal_count_, ++steal_matrix_[cell]);
        if (distance < trace::kDistanceCount) seen_distance_[cell] = static_cast<std::int8_t>(distance);
      }
      break;
    }
    case EventType::steal_round_failed:
      ++pw.failed_rounds;
      series_->add_point(kSeriesFailedRounds, t, 1.0);
      break;
    case EventType::help:
      pw.helps.push_back(Help{t, static_cast<std::uint32_t>(std::min<std::uint64_t>(e.a, kMaxWorkerId)), e.b});
      series_->add_point(kSeriesHelps, t, 1.0);
      break;
    case EventType::wake: {
      const auto waker = static_cast<std::uint32_t>(e.a & 0xffffffffu);
      pw.wakes.push_back(Wake{t, waker, static_cast<std::uint32_t>(e.a >> 32), e.b});
      wake_latency_.record(ticks_to_ns(static_cast<double>(e.b)));
      series_->add_point(kSeriesWakes, t, 1.0);
      break;
    }
    case EventType::lane_pop: {
      const auto lane = static_cast<std::uint32_t>(std::min<std::uint64_t>(e.a, kMaxWorkerId));
      pw.pops.push_back(LanePop{t, lane, e.b});
      ready_wait_.record(ticks_to_ns(static_cast<double>(e.b)));
      track.set_pending_ready_wait(e.b);
      if (lane < kMaxWorkerId) {
        ensure_worker(lane);
        const Tick pushed = e.b < t ? t - e.b : 0;
        series_->add_interval(kSeriesQueuedAll, pushed, t, 1.0);
        series_->add_interval(kSeriesFirstLane + static_cast<int>(lane), pushed, t, 1.0);
      }
      break;
    }
    case EventType::dropped:
      pw.drops.push_back(Drop{t, e.a, std::min(previous, t)});
      pw.dropped += e.a;
      dropped_ += e.a;
      break;
  }
}

// on_release links a release to the releasing task's slice (open on this worker: core
// reports the release from inside the task that completed) and to the released task's
// slice: already begun on some worker (a file interleaves workers' batches, so its begin
// may have come first), or when its task_begin arrives (on_task_begun).
void Model::on_release(std::uint32_t w, Tick t, const trace::Event& e) {
  Release r{t, e.a, e.b, {}, {}};
  int depth;
  std::size_t index;
  if (tracks_[w]->find_open(e.b, &depth, &index)) r.from = SliceRef{static_cast<std::int32_t>(w), depth, index};
  for (std::uint32_t k = 0; k < worker_count() && !r.to.valid(); ++k) {
    if (tracks_[k]->find_started(e.a, t, 16, &depth, &index)) r.to = SliceRef{static_cast<std::int32_t>(k), depth, index};
  }
  auto& releases = per_worker_[w].releases;
  releases.push_back(r);
  if (!r.to.valid()) {
    // Bounded: releases whose task never shows up (dropped events) must not pile up.
    if (waiting_releases_.size() >= (1u << 20)) waiting_releases_.clear();
    waiting_releases_[e.a] = {w, releases.size() - 1};
  }
}

void Model::on_task_begun(std::uint32_t w, int depth, Tick t, std::uint64_t id) {
  auto it = waiting_releases_.find(id);
  if (it == waiting_releases_.end()) return;
  Release& r = per_worker_[it->second.first].releases[it->second.second];
  if (t >= r.t) {
    r.to = SliceRef{static_cast<std::int32_t>(w), depth, tracks_[w]->slices(depth).size() - 1};
    waiting_releases_.erase(it);
  }
}

bool Model::in_gap(int w, Tick a, Tick b) const noexcept {
  const std::uint32_t first = w < 0 ? 0 : static_cast<std::uint32_t>(w);
  const std::uint32_t last = w < 0 ? worker_count() : std::min(worker_count(), first + 1);
  for (std::uint32_t k = first; k < last; ++k) {
    const auto& d = per_worker_[k].drops;
    // Gaps of one worker are disjoint and time-ordered: the first ending at or after a.
    auto it = std::lower_bound(d.begin(), d.end(), a, [](const Drop& x, Tick v) { return x.t < v; });
    if (it != d.end() && it->gap_start <= b) return true;
  }
  return false;
}

std::uint64_t Model::steal_count(std::uint32_t thief, std::uint32_t victim) const noexcept {
  if (thief >= matrix_side_ || victim >= matrix_side_) return 0;
  return steal_matrix_[static_cast<std::size_t>(thief) * matrix_side_ + victim];
}

const trace::CpuRow* Model::cpu_of(std::uint32_t w) const noexcept {
  if (!header_ok_ || header_.cpus.empty()) return nullptr;
  return &header_.cpus[w % header_.cpus.size()];
}

int Model::distance(std::uint32_t a, std::uint32_t b) const noexcept {
  const trace::CpuRow* x = cpu_of(a);
  const trace::CpuRow* y = cpu_of(b);
  if (x && y) {
    // The same rule as core's Topology::distance (worker i runs on CPU i % cpu_count).
    if (x == y || x->core == y->core) return 0;
    if (x->l2 == y->l2) return 1;
    if (x->llc == y->llc) return 2;
    if (x->numa_node == y->numa_node) return 3;
    return 4;
  }
  if (a < matrix_side_ && b < matrix_side_) return seen_distance_[static_cast<std::size_t>(a) * matrix_side_ + b];
  return -1;
}

void Model::prepare_series() {
  if (series_) series_->prepare();
}

void Model::finish() {
  finished_ = true;
  health_.finish(*this);
  ++generation_;
}

void Model::recheck_health(const HealthThresholds& thresholds) {
  health_.set_thresholds(thresholds);
  health_.reset();
  if (finished_) {
    health_.finish(*this);
  } else {
    health_.advance(*this);
  }
  ++generation_;
}

}  // namespace lantern::viewer
