// SPDX-License-Identifier: Apache-2.0
// analysis.cpp - the fold: one event at a time into per-worker arrays, pairs and histograms.
#include "lantern/analysis/analysis.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace lantern::analysis {

// begun_bucket: a task id's bucket in begun_ (ids are addresses: mix the bits).
std::size_t Analysis::begun_bucket(std::uint64_t id) noexcept {
  id ^= id >> 29;
  id *= 0xbf58476d1ce4e5b9ull;
  id ^= id >> 32;
  return static_cast<std::size_t>(id) & (kBegunBuckets - 1);
}

Percentiles percentiles(const LatencyHistogram& h) {
  Percentiles p;
  p.count = h.count();
  if (p.count == 0) return p;
  p.p50_ns = h.quantile_ns(0.50);
  p.p90_ns = h.quantile_ns(0.90);
  p.p99_ns = h.quantile_ns(0.99);
  p.max_ns = static_cast<double>(h.max_ns());
  return p;
}

double parse_duration_ns(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(v)) return std::numeric_limits<double>::quiet_NaN();
  const std::string unit(end);
  if (unit.empty() || unit == "ns") return v;
  if (unit == "us") return v * 1e3;
  if (unit == "ms") return v * 1e6;
  if (unit == "s") return v * 1e9;
  return std::numeric_limits<double>::quiet_NaN();
}

std::string format_duration_ns(double ns) {
  char buf[64];
  const double v = std::fabs(ns);
  if (v < 1e3)
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (v < 1e6)
    std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else if (v < 1e9)
    std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  return buf;
}

std::string format_percentiles(const Percentiles& p) {
  if (p.count == 0) return p.no_samples.empty() ? "no samples" : "no samples: " + p.no_samples;
  return std::to_string(p.count) + " samples, p50 " + format_duration_ns(p.p50_ns) + ", p90 " +
         format_duration_ns(p.p90_ns) + ", p99 " + format_duration_ns(p.p99_ns) + ", max " +
         format_duration_ns(p.max_ns);
}

StateShares state_shares(const std::array<std::uint64_t, kStateSlots>& ticks) noexcept {
  StateShares shares{};
  std::uint64_t span = 0;
  for (const std::uint64_t t : ticks) span += t;
  if (span == 0) return shares;
  for (std::size_t k = 0; k < ticks.size(); ++k) shares[k] = static_cast<double>(ticks[k]) / static_cast<double>(span);
  return shares;
}

std::string_view state_slot_name(int slot) noexcept {
  if (slot >= 0 && slot < trace::kStateCount) return trace::kStateNames[slot];
  return slot == kUnknownState ? "unknown" : "?";
}

Analysis::Analysis() = default;
Analysis::~Analysis() = default;

void Analysis::set_header(const trace::TraceHeader& header, bool intact) {
  ns_per_tick_ = header.safe_ns_per_tick();
  level_ = header.level;
  format_version_ = header.version;
  cpus_ = header.cpus;
  event_cost_ns_ = header.event_cost_ns;
  if (event_cost_ns_ && !(std::isfinite(*event_cost_ns_) && *event_cost_ns_ >= 0)) event_cost_ns_.reset();
  if (intact && header.workers > 0 && header.workers <= kMaxWorkerId) ensure_worker(header.workers - 1);
}

void Analysis::ensure_worker(std::uint32_t w) {
  if (w < tracks_.size()) return;
  const std::size_t n = static_cast<std::size_t>(w) + 1;
  // Amortised: a trace naming its workers in rising order grows these geometrically.
  if (n > tracks_.capacity()) tracks_.reserve(std::max(n, tracks_.capacity() * 2));
  if (n > per_worker_.capacity()) per_worker_.reserve(std::max(n, per_worker_.capacity() * 2));
  while (tracks_.size() < n) tracks_.push_back(std::make_unique<WorkerTrack>());
  per_worker_.resize(n);
  if (n > leaves_) {
    // A power of two of leaves (amortised: doubling).
    leaves_ = std::bit_ceil(std::max<std::size_t>(n, leaves_ * 2));
    rebuild_progress();
  }
}

void Analysis::rebuild_progress() {
  reported_.assign(2 * leaves_, ~Tick{0});  // leaves past the workers: never the minimum
  for (std::uint32_t k = 0; k < tracks_.size(); ++k) {
    reported_[leaves_ + k] = tracks_[k]->stopped_at() != kOpenEnd ? ~Tick{0} : tracks_[k]->last_tick();
  }
  for (std::size_t i = leaves_ - 1; i >= 1; --i) reported_[i] = std::min(reported_[2 * i], reported_[2 * i + 1]);
}

void Analysis::report_progress(std::uint32_t w) {
  const WorkerTrack& t = *tracks_[w];
  std::size_t i = leaves_ + w;
  const Tick value = t.stopped_at() != kOpenEnd ? ~Tick{0} : t.last_tick();
  if (reported_[i] == value) return;
  reported_[i] = value;
  for (i /= 2; i >= 1; i /= 2) {
    const Tick m = std::min(reported_[2 * i], reported_[2 * i + 1]);
    if (reported_[i] == m) break;  // nothing above changes
    reported_[i] = m;
  }
}

void Analysis::add(const trace::DecodedChunk& chunk) {
  for (const auto& [id, name] : chunk.labels) labels_.define(id, name);
  add(std::span<const trace::Event>(chunk.events));
}

void Analysis::add(std::span<const trace::Event> events) {
  for (const trace::Event& e : events) add(e);
}

bool Analysis::add(const trace::Event& e) {
  // Damage is rejected before anything counts it (rejected_events, not events).
  if (e.worker >= kMaxWorkerId || !trace::valid_type(static_cast<std::uint32_t>(e.type)) ||
      (e.type == EventId::state && !valid(trace::payload<StatePayload>(e).to))) {
    ++rejected_;
    return false;
  }
  const std::uint32_t w = e.worker;
  if (w >= tracks_.size()) ensure_worker(w);
  if (events_ == 0) first_tick_ = last_tick_ = e.ticks;
  ++events_;
  ++by_type_[static_cast<int>(e.type)];
  first_tick_ = std::min(first_tick_, e.ticks);
  last_tick_ = std::max(last_tick_, e.ticks);
  WorkerTrack& track = *tracks_[w];
  PerWorker& pw = per_worker_[w];
  const Tick previous = track.seen() ? track.last_tick() : e.ticks;  // a drop's gap starts here
  const Tick last_before = track.last_tick();                        // 0: the worker's first event
  track.touch(e.ticks);
  const Tick t = std::max(e.ticks, track.last_tick());  // the track clamps disorder; follow it
  switch (e.type) {
    case EventId::state: {
      const auto p = trace::payload<StatePayload>(e);  // p.to is valid: checked above
      track.on_state(t, valid(p.from) ? static_cast<int>(p.from) : -1, static_cast<int>(p.to),
                     static_cast<std::uint8_t>(p.reason));
      break;
    }
    case EventId::task_begin: {
      const auto p = trace::payload<TaskBeginPayload>(e);
      const int depth = track.on_task_begin(t, p.task, static_cast<std::uint8_t>(p.source));
      if (depth >= 0) {
        remember_begin(w, depth, t, p.task);
        if (!waiting_releases_.empty()) on_task_begun(w, depth, t, p.task);
      }
      break;
    }
    case EventId::task_label: {
      const auto p = trace::payload<TaskLabelPayload>(e);
      track.on_task_label(p.task, p.label);
      if (p.label != 0) ++label_uses_[p.label];
      break;
    }
    case EventId::io_submit:
      on_io(w, t, e);
      on_graph_event(w, t, e.type, trace::payload<IoSubmitPayload>(e).op, 0, 0);
      break;
    case EventId::io_complete: on_io(w, t, e); break;
    case EventId::task_end: {
      const auto p = trace::payload<TaskEndPayload>(e);
      const TaskSlice* closed = nullptr;
      if (track.on_task_end(t, p.task, p.threw, &closed, p.off_cpu_ticks) && closed) {
        if (closed->flags & kSliceOffCpu) ++off_cpu_tasks_;
        const std::uint64_t ns = to_ns(closed->end - closed->start);
        task_duration_.record(ns);
        duration_by_label_[closed->label].record(ns);
      }
      break;
    }
    case EventId::push: break;  // counted by type; queue depth comes from lane pops
    case EventId::not_ready: {
      // In time order across workers: a worker's batch may hold samples older than those
      // of another worker's batch added before it. After every sample at the same time.
      const auto at = std::upper_bound(not_ready_.begin(), not_ready_.end(), t,
                                       [](Tick v, const std::pair<Tick, std::uint64_t>& s) { return v < s.first; });
      not_ready_.emplace(at, t, trace::payload<NotReadyPayload>(e).tasks);
      break;
    }
    case EventId::steal_round_failed: ++pw.failed_rounds; break;
    case EventId::release: on_release(w, t, trace::payload<ReleasePayload>(e)); break;
    case EventId::steal: {
      const auto p = trace::payload<StealPayload>(e);
      const auto victim = std::min<std::uint32_t>(p.victim, kMaxWorkerId);
      const auto distance = static_cast<std::uint8_t>(p.distance);
      pw.steals.push_back(Steal{t, victim, distance, static_cast<std::uint8_t>(p.source)});
      track.set_pending_steal(static_cast<std::int32_t>(std::min<std::size_t>(pw.steals.size() - 1, INT32_MAX)));
      if (valid(p.distance))
        ++by_distance_[distance];
      else
        ++steals_outside_table_;
      if (victim < kMaxWorkerId) {
        ensure_worker(victim);
        StealCell& cell = steal_cells_[steal_key(w, victim)];
        max_steal_count_ = std::max(max_steal_count_, ++cell.count);
        if (valid(p.distance)) cell.distance = static_cast<std::int8_t>(distance);
      }
      break;
    }
    case EventId::help: {
      const auto p = trace::payload<HelpPayload>(e);
      pw.helps.push_back(Help{t, std::min<std::uint32_t>(p.lane, kMaxWorkerId), p.head_age_ticks});
      break;
    }
    case EventId::wake: {
      const auto p = trace::payload<WakePayload>(e);
      const Wake wake{t, p.waker, static_cast<std::uint32_t>(p.why), p.latency_ticks};
      pw.wakes.push_back(wake);
      if (wake.timed())
        wake_latency_.record(to_ns(p.latency_ticks));
      else
        ++io_wakes_;
      break;
    }
    case EventId::lane_pop: {
      const auto p = trace::payload<LanePopPayload>(e);
      const auto lane = std::min<std::uint32_t>(p.lane, kMaxWorkerId);
      pw.pops.push_back(LanePop{t, lane, p.wait_ticks});
      ready_wait_.record(to_ns(p.wait_ticks));
      track.set_pending_ready_wait(p.wait_ticks);
      if (lane < kMaxWorkerId) ensure_worker(lane);
      break;
    }
    case EventId::dropped: {
      const auto p = trace::payload<DroppedPayload>(e);
      pw.drops.push_back(Drop{t, p.count, std::min(previous, t), p.reason});
      pw.dropped += p.count;
      dropped_ += p.count;
      if (valid(p.reason)) dropped_by_reason_[static_cast<std::size_t>(p.reason)] += p.count;
      break;
    }
    case EventId::deadlock: {
      const auto p = trace::payload<DeadlockPayload>(e);
      pw.deadlocks.push_back(Deadlock{t, p.blocked_workers, p.unfinished_tasks});
      break;
    }
    // The task graph's events: kept per worker with the task that reported them; the
    // scalability analysis (scalability.hpp) builds the graph from them.
    case EventId::spawn: {
      const auto p = trace::payload<SpawnPayload>(e);
      on_graph_event(w, t, e.type, p.task, p.group, static_cast<std::uint8_t>(p.kind));
      break;
    }
    case EventId::wait_begin: {
      const auto p = trace::payload<WaitBeginPayload>(e);
      on_graph_event(w, t, e.type, p.on, 0, static_cast<std::uint8_t>(p.kind));
      break;
    }
    case EventId::wait_end: {
      const auto p = trace::payload<WaitEndPayload>(e);
      on_graph_event(w, t, e.type, p.on, 0, static_cast<std::uint8_t>(p.kind));
      break;
    }
    case EventId::signal_set: on_graph_event(w, t, e.type, trace::payload<SignalSetPayload>(e).signal, 0, 0); break;
    case EventId::satisfy: {
      const auto p = trace::payload<SatisfyPayload>(e);
      on_graph_event(w, t, e.type, p.task, p.by, 0);
      break;
    }
  }
  if (!io_waiting_.empty()) report_progress(w);  // kept only while it is read (on_io rebuilds it)
  // IO events wait in time order until no worker can still report an earlier one (on_io).
  if (!io_waiting_.empty() && io_waiting_.front().t > io_watermark_ &&
      (last_before <= io_watermark_ || track.stopped_at() != kOpenEnd)) {
    io_watermark_ = io_watermark();
  }
  if (!io_waiting_.empty() && io_waiting_.front().t <= io_watermark_) pair_io(io_watermark_);
  return true;
}

// on_io files an IO event on its worker and keeps it for pairing. Operations are paired
// by id in time order: a file interleaves workers' batches, so a completion reported by
// another worker can come before its submission, and ids are addresses, reused once an
// operation is done - paired in the order the events arrive, one completion read ahead
// of its submission paired every later operation at that address with the wrong one
// (half the pairs of a 2-worker echo server ended before they began). In time order an
// id's events alternate: submitted, completed, submitted again (the address reused)...
// So each event waits (io_waiting_, earliest first) until every worker still running
// has reported an event as late as it (io_watermark: a worker's own events come in its
// order), and then pair_io matches it; finish() pairs whatever still waits.
void Analysis::on_io(std::uint32_t w, Tick t, const trace::Event& e) {
  auto& io = per_worker_[w].io;
  if (e.type == EventId::io_submit) {
    const auto p = trace::payload<IoSubmitPayload>(e);
    io.push_back(IoEvent{t, p.op, false, p.kind, p.fd});
  } else {
    const auto p = trace::payload<IoCompletePayload>(e);
    ++io_completed_;
    if (p.failed()) ++io_failed_;
    io.push_back(IoEvent{t, p.op, true, IoKind{}, p.result});  // its kind: from its submission (pair_io)
  }
  // The tree of last ticks is kept up to date only while IO events wait: rebuilt here when
  // the first one comes (an update per event would cost every trace, IO or not).
  if (io_waiting_.empty()) rebuild_progress();
  io_waiting_.push_back(WaitingIo{t, io_sequence_++, w, io.size() - 1});
  std::push_heap(io_waiting_.begin(), io_waiting_.end(), WaitingIo::later);
}

// io_watermark: the tick up to which every worker has reported: the earliest last event
// among the workers that have not stopped (0 while one has reported nothing yet). No
// event at or before it can still arrive.
Tick Analysis::io_watermark() const noexcept { return reported_.size() > 1 ? reported_[1] : ~Tick{0}; }

// pair_io: matches the waiting IO events at or before `up_to`, earliest first.
void Analysis::pair_io(Tick up_to) {
  while (!io_waiting_.empty() && io_waiting_.front().t <= up_to) {
    std::pop_heap(io_waiting_.begin(), io_waiting_.end(), WaitingIo::later);
    const WaitingIo w = io_waiting_.back();
    io_waiting_.pop_back();
    IoEvent& e = per_worker_[w.worker].io[w.index];  // the event as on_io filed it
    if (!e.completed) {
      IoOp op;
      op.op = e.op;
      op.kind = e.kind;
      op.fd = e.value;
      op.submitted = e.t;
      op.submit_worker = w.worker;
      op.has_submit = true;
      // A submission still open at this id lost its completion (dropped events).
      if (auto [it, added] = in_flight_.try_emplace(e.op, op); !added) {
        ++io_unpaired_;
        it->second = op;
      }
      continue;
    }
    auto it = in_flight_.find(e.op);
    if (it == in_flight_.end()) {  // its submission was lost, or came before the stream began
      ++io_unpaired_;
      continue;
    }
    IoOp op = it->second;
    in_flight_.erase(it);
    e.kind = op.kind;
    op.completed = e.t;
    op.complete_worker = w.worker;
    op.result = e.value;
    op.done = true;
    io_latency_.record(to_ns(op.completed - op.submitted));
    io_pairs_.push_back(op);
  }
}

// on_release links a release to the releasing task's slice (open on this worker: core
// reports the release from inside the task that completed) and to the released task's
// slice: already begun on some worker, or when its task_begin arrives (on_task_begun).
void Analysis::on_release(std::uint32_t w, Tick t, const ReleasePayload& p) {
  Release r{t, p.released, p.releaser, {}, {}};
  int depth;
  std::size_t index;
  if (tracks_[w]->find_open(p.releaser, &depth, &index)) r.from = SliceRef{static_cast<std::int32_t>(w), depth, index};
  // Already begun (at or after the release): the earliest such begin the cache holds.
  if (!begun_.empty()) {
    const Begun* bucket = &begun_[begun_bucket(p.released) * kBegunWays];
    Tick best = kOpenEnd;
    for (std::size_t k = 0; k < kBegunWays; ++k) {
      const Begun& b = bucket[k];
      if (b.slice.valid() && b.id == p.released && b.start >= t && b.start < best) best = b.start, r.to = b.slice;
    }
  }
  auto& releases = per_worker_[w].releases;
  releases.push_back(r);
  if (!r.to.valid()) {
    // Bounded: releases whose task never shows up (dropped events) must not pile up.
    if (waiting_releases_.size() >= (1u << 20)) waiting_releases_.clear();
    waiting_releases_[p.released] = {w, releases.size() - 1};
  }
}

// on_graph_event files a task-graph event with the task running on w when it came: the
// innermost open slice (the last at its depth), none while the worker runs no task or
// nests deeper than the track stores.
void Analysis::on_graph_event(std::uint32_t w, Tick t, EventId type, std::uint64_t on, std::uint64_t group,
                              std::uint8_t kind) {
  const WorkerTrack& track = *tracks_[w];
  SliceRef owner;
  if (const int depth = track.open_depth() - 1; depth >= 0 && track.tasks_too_deep() == 0) {
    owner = SliceRef{static_cast<std::int32_t>(w), depth, track.slices(depth).size() - 1};
  }
  per_worker_[w].graph.push_back(GraphEvent{t, on, group, type, kind, owner});
}

void Analysis::remember_begin(std::uint32_t w, int depth, Tick t, std::uint64_t id) {
  if (begun_.empty()) begun_.resize(kBegunBuckets * kBegunWays), begun_next_.resize(kBegunBuckets);
  const std::size_t b = begun_bucket(id);
  std::uint8_t& next = begun_next_[b];  // a ring per bucket: the oldest entry goes
  begun_[b * kBegunWays + next] =
      Begun{id, t, SliceRef{static_cast<std::int32_t>(w), depth, tracks_[w]->slices(depth).size() - 1}};
  next = static_cast<std::uint8_t>((next + 1) % kBegunWays);
}

void Analysis::on_task_begun(std::uint32_t w, int depth, Tick t, std::uint64_t id) {
  auto it = waiting_releases_.find(id);
  if (it == waiting_releases_.end()) return;
  Release& r = per_worker_[it->second.first].releases[it->second.second];
  if (t >= r.t) {
    r.to = SliceRef{static_cast<std::int32_t>(w), depth, tracks_[w]->slices(depth).size() - 1};
    waiting_releases_.erase(it);
  }
}

std::string Analysis::no_samples_reason(EventId source) const {
  const trace::EventInfo& info = trace::info(source);
  const std::string name(info.name);
  const std::string needed(trace::kLevelNames[static_cast<int>(info.level)]);
  if (const std::uint64_t seen = events_of(source); seen > 0) {
    return "none of the trace's " + std::to_string(seen) + " " + name + " events gives one";
  }
  if (!level_) {
    return "no " + name + " events in the trace; they are recorded at level " + needed +
           " and above, and the trace's header does not say its level (written before traces said it)";
  }
  const std::string level(trace::kLevelNames[static_cast<int>(*level_)]);
  if (!*recorded_at_level(source)) {
    return "not recorded at level " + level + ": " + name + " events are recorded at level " + needed +
           " and above (record at level " + needed + ": LANTERN_LEVEL=" + needed + ", lantern_demo --level " + needed +
           ", RecorderOptions::level)";
  }
  return "none happened (the trace was recorded at level " + level + ", which records " + name + " events)";
}

Tick Analysis::span_end(std::uint32_t w) const noexcept {
  const Tick stopped = track(w).stopped_at();
  return stopped != kOpenEnd ? stopped : last_tick_;
}

Occupancy Analysis::state_time(std::uint32_t w) const noexcept {
  const WorkerTrack& t = track(w);
  if (!t.seen()) return Occupancy{};
  const Tick end = span_end(w);
  return t.occupancy(t.first_tick(), end, end);
}

std::array<std::uint64_t, kStateSlots> Analysis::state_ticks(std::uint32_t w) const noexcept {
  std::array<std::uint64_t, kStateSlots> ticks{};
  const Occupancy o = state_time(w);  // sums of tick differences: whole numbers
  for (int k = 0; k < kStateSlots; ++k) ticks[static_cast<std::size_t>(k)] = static_cast<std::uint64_t>(o[k]);
  return ticks;
}

StateShares Analysis::state_shares(std::uint32_t w) const noexcept { return analysis::state_shares(state_ticks(w)); }

bool Analysis::in_gap(int w, Tick a, Tick b) const noexcept {
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

std::uint64_t Analysis::steal_count(std::uint32_t thief, std::uint32_t victim) const noexcept {
  const auto it = steal_cells_.find(steal_key(thief, victim));
  return it == steal_cells_.end() ? 0 : it->second.count;
}

int Analysis::seen_distance(std::uint32_t thief, std::uint32_t victim) const noexcept {
  const auto it = steal_cells_.find(steal_key(thief, victim));
  return it == steal_cells_.end() ? -1 : it->second.distance;
}

void Analysis::lose_record() {
  for (auto& track : tracks_) {
    if (track->open_depth() > 0) ends_lost_ += track->lose_open(track->last_tick());
  }
  waiting_releases_.clear();
}

void Analysis::advance_health() { health_.advance(*this); }

void Analysis::finish() {
  pair_io(~Tick{0});  // the stream ended: nothing earlier can arrive
  finished_ = true;
  health_.finish(*this);
}

void Analysis::recheck_health(const HealthThresholds& thresholds) {
  health_.set_thresholds(thresholds);
  health_.reset();
  if (finished_)
    health_.finish(*this);
  else
    health_.advance(*this);
}

std::map<std::uint32_t, std::uint64_t> Analysis::tasks_by_label() const {
  std::map<std::uint32_t, std::uint64_t> by_label;
  for (const auto& t : tracks_) {
    for (int d = 0; d < t->depth_count(); ++d) {
      for (const TaskSlice& slice : t->slices(d)) ++by_label[slice.label];
    }
  }
  return by_label;
}

Summary Analysis::summary() const {
  Summary s;
  s.events = events_;
  s.events_by_type = by_type_;
  s.rejected_events = rejected_;
  for (int t = 0; t < kEventCount; ++t) s.counted[static_cast<std::size_t>(t)] = counted(static_cast<EventId>(t));
  s.tasks_by_label = tasks_by_label();
  s.workers.resize(worker_count());
  for (std::uint32_t w = 0; w < worker_count(); ++w) {
    const WorkerTrack& t = track(w);
    WorkerFigures& f = s.workers[w];
    f.state_ticks = state_ticks(w);
    for (int d = 0; d < t.depth_count(); ++d) {
      for (const TaskSlice& slice : t.slices(d)) {
        ++f.tasks;
        if (slice.open()) ++s.unfinished_tasks;
      }
    }
    f.tasks += t.tasks_too_deep();
    s.tasks += f.tasks;
    s.unmatched_task_ends += t.unmatched_ends();
    f.steals = steals(w).size();
    f.helps = helps(w).size();
    f.wakes = wakes(w).size();
    for (std::size_t i = 0; i < t.interval_count(); ++i)
      f.sleeps += t.interval_state(i) == state_slot(WorkerState::sleeping);
    s.sleeps += f.sleeps;
    f.dropped = dropped(w);
    for (const Wake& k : wakes(w)) {
      ++s.wakes_by_cause[std::min<std::size_t>(k.why, kWakeCauseCount)];
      if (k.by_worker(worker_count())) {
        ++s.workers[k.waker].wakes_performed;
        ++s.wake_arrows;
      }
    }
    s.wakes += wakes(w).size();
    s.lane_pops += pops(w).size();
    s.releases += releases(w).size();
    s.drop_markers += drops(w).size();
    s.deadlocks += deadlocks(w).size();
  }
  for (int d = 0; d < kStealDistanceCount; ++d)
    s.steals_by_distance[static_cast<std::size_t>(d)] = by_distance_[static_cast<std::size_t>(d)];
  s.steals_by_distance[kStealDistanceCount] = steals_outside_table_;
  s.io_wakes = io_wakes_;
  s.io_submitted = by_type_[static_cast<int>(EventId::io_submit)];
  s.io_completed = io_completed_;
  s.unfinished_tasks += ends_lost_;  // open when a chunk was skipped: they never ended either
  s.io_failed = io_failed_;
  s.io_unpaired = io_unpaired_;
  s.dropped_events = dropped_;
  for (int r = 0; r < kDropReasonCount; ++r) s.dropped_by_reason[r] = dropped_by_reason_[r];
  s.level = level_;
  s.ready_wait = percentiles(ready_wait_);
  s.task_duration = percentiles(task_duration_);
  s.wake_latency = percentiles(wake_latency_);
  s.io_latency = percentiles(io_latency_);
  // Each empty figure says why, named by the events it is built from.
  if (s.ready_wait.count == 0) s.ready_wait.no_samples = no_samples_reason(EventId::lane_pop);
  if (s.task_duration.count == 0) s.task_duration.no_samples = no_samples_reason(EventId::task_end);
  if (s.wake_latency.count == 0) s.wake_latency.no_samples = no_samples_reason(EventId::wake);
  if (s.io_latency.count == 0) s.io_latency.no_samples = no_samples_reason(EventId::io_complete);
  for (const auto& [label, h] : duration_by_label_) s.duration_by_label[label] = percentiles(h);
  s.warnings = health_.warning_count(*this);
  for (int k = 0; k < kProblemKindCount; ++k)
    s.warnings_by_kind[static_cast<std::size_t>(k)] = health_.count(static_cast<ProblemKind>(k));
  return s;
}

}  // namespace lantern::analysis
