// SPDX-License-Identifier: Apache-2.0
// worker_track.cpp - appending a worker's events, and the range queries the views use.
#include "lantern/analysis/worker_track.hpp"

#include <algorithm>

#include "lantern/analysis/analysis.hpp"

namespace lantern::analysis {

Tick WorkerTrack::clamp(Tick t) noexcept {
  // A worker's events are in time order; anything else is damage or a clock glitch.
  // Clamping keeps every array sorted, which every query relies on.
  if (t < last_tick_) {
    ++out_of_order_;
    return last_tick_;
  }
  last_tick_ = t;
  return t;
}

void WorkerTrack::touch(Tick t) {
  const bool first = starts_.empty();
  t = clamp(t);
  if (first) {
    last_tick_ = t;
    add_interval(t, kUnknownState, 0);
  }
}

void WorkerTrack::add_interval(Tick t, int state, std::uint8_t reason) {
  if (!starts_.empty()) {
    const std::size_t last = starts_.size() - 1;
    if (starts_[last] == t) {
      // Zero-length interval: replace it rather than store an empty one.
      states_[last] = static_cast<std::uint8_t>(state);
      reasons_[last] = reason;
      return;
    }
    running_[states_[last]] += t - starts_[last];
  }
  if (starts_.size() % kCheckpointEvery == 0) checkpoints_.push_back(running_);
  starts_.push_back(t);
  states_.push_back(static_cast<std::uint8_t>(state));
  reasons_.push_back(reason);
}

void WorkerTrack::on_state(Tick t, int from, int to, std::uint8_t reason) {
  t = clamp(t);
  if (to < 0 || to >= trace::kStateCount) return;
  stopped_at_ = reason == static_cast<std::uint8_t>(StateReason::stopping) ? t : kOpenEnd;
  // The first state event tells what the worker was doing before it: fill in the
  // unknown interval a late-attached viewer started with.
  if (!states_.empty() && states_.back() == kUnknownState && from >= 0 && from < trace::kStateCount) {
    states_.back() = static_cast<std::uint8_t>(from);
  }
  if (!states_.empty() && states_.back() == to) return;  // "started" is idle -> idle
  add_interval(t, to, reason);
}

int WorkerTrack::on_task_begin(Tick t, std::uint64_t id, std::uint8_t source) {
  t = clamp(t);
  // A task runs only on an active worker (core sets active before task_begin).
  if (!states_.empty() && states_.back() == kUnknownState) states_.back() = state_slot(WorkerState::active);
  const int depth = static_cast<int>(open_.size());
  if (depth_overflow_ > 0 || depth >= kMaxDepth) {
    ++depth_overflow_;
    ++too_deep_;
    return -1;
  }
  if (static_cast<int>(slices_.size()) <= depth) slices_.resize(static_cast<std::size_t>(depth) + 1);
  TaskSlice s;
  s.start = t;
  s.id = id;
  s.source = source;
  if (from_lane(s.task_source()) && pending_ready_wait_) {
    const Tick wait = *pending_ready_wait_;
    if (wait < TaskSlice::kLongWait) {
      s.wait_ = static_cast<std::uint32_t>(wait);
    } else if (long_waits_.size() < TaskSlice::kNoWait - TaskSlice::kLongWait) {
      s.wait_ = TaskSlice::kLongWait + static_cast<std::uint32_t>(long_waits_.size());
      long_waits_.push_back(wait);
    }
  }
  if (stolen(s.task_source())) s.steal = pending_steal_;
  pending_ready_wait_.reset();
  pending_steal_ = -1;
  auto& row = slices_[static_cast<std::size_t>(depth)];
  row.push_back(s);
  open_.push_back(Open{depth, row.size() - 1});
  return depth;
}

std::optional<Tick> WorkerTrack::ready_wait(const TaskSlice& s) const noexcept {
  if (s.wait_ == TaskSlice::kNoWait) return std::nullopt;
  if (s.wait_ < TaskSlice::kLongWait) return s.wait_;
  const std::size_t i = s.wait_ - TaskSlice::kLongWait;
  if (i >= long_waits_.size()) return std::nullopt;  // a slice of another track
  return long_waits_[i];
}

Tick WorkerTrack::off_cpu(const TaskSlice& s) const noexcept {
  if (!(s.flags & kSliceOffCpu)) return 0;
  for (std::size_t d = 0; d < slices_.size(); ++d) {  // which row holds it
    const auto& row = slices_[d];
    if (row.empty() || &s < row.data() || &s >= row.data() + row.size()) continue;
    const auto it = off_cpu_.find({static_cast<int>(d), static_cast<std::size_t>(&s - row.data())});
    return it == off_cpu_.end() ? 0 : it->second;
  }
  return 0;
}

bool WorkerTrack::on_task_end(Tick t, std::uint64_t id, bool threw, const TaskSlice** closed, Tick off_cpu) {
  t = clamp(t);
  if (depth_overflow_ > 0) {
    --depth_overflow_;
    return false;
  }
  // Stack-match: join nests tasks on one worker, so an end closes the innermost open
  // task with its id. Tasks above it lost their end events (dropped): close them here.
  std::size_t k = open_.size();
  while (k > 0 && slices_[static_cast<std::size_t>(open_[k - 1].depth)][open_[k - 1].index].id != id) --k;
  if (k == 0) {
    ++unmatched_ends_;  // its begin was never seen (viewer attached late, or dropped)
    return false;
  }
  while (open_.size() > k) {
    TaskSlice& lost = slices_[static_cast<std::size_t>(open_.back().depth)][open_.back().index];
    lost.end = t;
    lost.flags |= kSliceEndLost;
    open_.pop_back();
  }
  TaskSlice& s = slices_[static_cast<std::size_t>(open_.back().depth)][open_.back().index];
  s.end = t;
  if (threw) s.flags |= kSliceThrew;
  if (off_cpu > 0) {
    s.flags |= kSliceOffCpu;
    off_cpu_[{open_.back().depth, open_.back().index}] = std::min(off_cpu, s.end - s.start);
  }
  open_.pop_back();
  if (closed) *closed = &s;
  return true;
}

bool WorkerTrack::on_task_label(std::uint64_t id, std::uint32_t label) {
  int depth;
  std::size_t index;
  if (!find_open(id, &depth, &index)) return false;
  slices_[static_cast<std::size_t>(depth)][index].label = label;
  return true;
}

std::size_t WorkerTrack::lose_open(Tick t) {
  const std::size_t closed = open_.size();
  while (!open_.empty()) {
    TaskSlice& lost = slices_[static_cast<std::size_t>(open_.back().depth)][open_.back().index];
    lost.end = std::max(t, lost.start);
    lost.flags |= kSliceEndLost;
    open_.pop_back();
  }
  depth_overflow_ = 0;
  return closed;
}

bool WorkerTrack::find_open(std::uint64_t id, int* depth, std::size_t* index) const noexcept {
  for (std::size_t k = open_.size(); k-- > 0;) {
    if (slices_[static_cast<std::size_t>(open_[k].depth)][open_[k].index].id == id) {
      *depth = open_[k].depth;
      *index = open_[k].index;
      return true;
    }
  }
  return false;
}

bool WorkerTrack::find_started(std::uint64_t id, Tick t, std::size_t scan, int* depth,
                               std::size_t* index) const noexcept {
  bool found = false;
  Tick best = kOpenEnd;
  for (int d = 0; d < depth_count(); ++d) {
    const auto& row = slices(d);
    const std::size_t first = first_slice_starting_at_or_after(d, t);
    for (std::size_t i = first; i < row.size() && i < first + scan; ++i) {
      if (row[i].id == id && row[i].start < best) {
        best = row[i].start;
        *depth = d;
        *index = i;
        found = true;
        break;
      }
    }
  }
  return found;
}

std::ptrdiff_t WorkerTrack::interval_at(Tick t) const noexcept {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), t);
  return (it - starts_.begin()) - 1;
}

Occupancy WorkerTrack::cumulative(Tick t, Tick open_end, std::ptrdiff_t* hint) const noexcept {
  Occupancy out{};
  if (starts_.empty() || t <= starts_.front()) return out;
  std::ptrdiff_t i;
  const auto n = static_cast<std::ptrdiff_t>(starts_.size());
  if (hint && *hint >= 0 && *hint < n && starts_[*hint] <= t) {
    // Sequential callers (one pixel after another) move a few intervals at a time:
    // gallop forward from the hint instead of searching the whole array.
    i = *hint;
    std::ptrdiff_t step = 1;
    while (i + step < n && starts_[i + step] <= t) {
      i += step;
      step *= 2;
    }
    const auto lo = starts_.begin() + i;
    const auto hi = starts_.begin() + std::min(n, i + step + 1);
    i = (std::upper_bound(lo, hi, t) - starts_.begin()) - 1;
  } else {
    i = interval_at(t);
  }
  if (hint) *hint = i;
  const std::size_t base = static_cast<std::size_t>(i) / kCheckpointEvery;
  const auto& cp = checkpoints_[base];
  for (int s = 0; s < kStateSlots; ++s) out[s] = static_cast<double>(cp[s]);
  for (std::size_t j = base * kCheckpointEvery; j < static_cast<std::size_t>(i); ++j) {
    out[states_[j]] += static_cast<double>(starts_[j + 1] - starts_[j]);
  }
  const Tick end = std::min(t, interval_end(static_cast<std::size_t>(i), open_end));
  if (end > starts_[i]) out[states_[i]] += static_cast<double>(end - starts_[i]);
  return out;
}

Occupancy WorkerTrack::occupancy(Tick a, Tick b, Tick open_end) const noexcept {
  Occupancy out{};
  if (b <= a) return out;
  std::ptrdiff_t hint = -1;
  const Occupancy lo = cumulative(a, open_end, &hint);
  const Occupancy hi = cumulative(b, open_end, &hint);
  for (int s = 0; s < kStateSlots; ++s) out[s] = hi[s] - lo[s];
  return out;
}

std::size_t WorkerTrack::first_slice_ending_after(int depth, Tick t) const noexcept {
  const auto& row = slices(depth);
  // Slices of one depth do not overlap, so ends are sorted like starts (open last).
  auto it = std::upper_bound(row.begin(), row.end(), t, [](Tick v, const TaskSlice& s) { return v < s.end; });
  return static_cast<std::size_t>(it - row.begin());
}

std::size_t WorkerTrack::first_slice_starting_at_or_after(int depth, Tick t) const noexcept {
  const auto& row = slices(depth);
  auto it = std::lower_bound(row.begin(), row.end(), t, [](const TaskSlice& s, Tick v) { return s.start < v; });
  return static_cast<std::size_t>(it - row.begin());
}

}  // namespace lantern::analysis
