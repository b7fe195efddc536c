// SPDX-License-Identifier: Apache-2.0
// worker_track.hpp - one worker's history: state intervals and task slices, indexed by time.
//
// Events of one worker arrive in that worker's time order (its ring is FIFO), so every
// array here is appended at the back and stays sorted; queries are binary searches.
//
// Level of detail. A 10M-event trace holds millions of intervals per worker, and the
// timeline must cost O(pixels), not O(events), at any zoom. Two structures make that so:
//   - state intervals carry cumulative occupancy checkpoints (time spent in each state
//     before every kCheckpointEvery-th interval). Time per state over ANY range [a, b) is
//     then cum(b) - cum(a), two binary searches and at most kCheckpointEvery steps, so
//     a pixel's dominant state is exact at every zoom and alignment. This is the limit of
//     a power-of-two pyramid of per-bucket occupancy (what was first planned): the same
//     answer without a resolution floor, with 1/16 of the memory, and appending is O(1).
//   - task slices are kept per nesting depth; slices of one depth never overlap, so the
//     array is sorted by start AND by end, and a drawer can jump over everything that
//     falls inside one pixel with one binary search (see TimelineView).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "lantern/trace/event_table.hpp"

namespace lantern::analysis {

using Tick = std::uint64_t;

// kUnknownState: before a worker's first state event nobody knows its state (a live
// viewer that attached late). It is a fifth slot in occupancy arrays, never drawn.
inline constexpr int kUnknownState = trace::kStateCount;
inline constexpr int kStateSlots = trace::kStateCount + 1;
using Occupancy = std::array<double, kStateSlots>;  // ticks spent in each state

inline constexpr Tick kOpenEnd = std::numeric_limits<Tick>::max();

// state_slot: a state's slot in interval_state() and Occupancy (kUnknownState: none).
constexpr int state_slot(WorkerState s) noexcept { return static_cast<int>(s); }

// TaskSlice is one run of a task on a worker: task_begin .. task_end. A 10M-event trace
// holds millions, so it stays 40 bytes: the ready wait is 32 bits here, and the rare wait
// that does not fit is kept whole in its track (WorkerTrack::ready_wait reads both).
struct TaskSlice {
  Tick start = 0;
  Tick end = kOpenEnd;      // kOpenEnd while the task runs (or its end was never seen)
  std::uint64_t id = 0;     // the task id the scheduler reported (its job's address)
  std::int32_t steal = -1;  // index into Analysis::steals(worker) of the steal that brought it
  std::uint32_t label = 0;  // the label the task gave itself (task_label; the last one), 0: none
  std::uint8_t source = 0;  // a TaskSource: read it as task_source()
  std::uint8_t flags = 0;   // kSliceThrew | kSliceEndLost
  bool open() const noexcept { return end == kOpenEnd; }
  // task_source: where the task was found; a value outside the table (damaged data)
  // stays as it is, so name_of() gives "" and valid() false for it.
  TaskSource task_source() const noexcept { return static_cast<TaskSource>(source); }

 private:
  friend class WorkerTrack;
  // The ready wait: ticks below kLongWait; kLongWait + i: WorkerTrack's long_waits_[i];
  // kNoWait: none (not from a lane, or its lane pop was not recorded).
  static constexpr std::uint32_t kLongWait = 0x8000'0000u;
  static constexpr std::uint32_t kNoWait = 0xFFFF'FFFFu;
  std::uint32_t wait_ = kNoWait;
};
static_assert(sizeof(TaskSlice) == 40, "a trace holds millions of slices: keep them small");
inline constexpr std::uint8_t kSliceThrew = 1;
inline constexpr std::uint8_t kSliceEndLost = 2;  // its end was lost: an outer task ended first, or a chunk was skipped
inline constexpr std::uint8_t kSliceOffCpu = 4;   // its thread waited for a CPU while it ran: WorkerTrack::off_cpu

class WorkerTrack {
 public:
  static constexpr std::size_t kCheckpointEvery = 16;
  static constexpr int kMaxDepth = 256;  // deeper nesting is counted, not stored

  // --- building (Analysis::apply) ---
  // touch: any event of this worker at `t`; opens the unknown-state interval on the first.
  void touch(Tick t);
  void on_state(Tick t, int from, int to, std::uint8_t reason);
  // on_task_begin / on_task_end return the slice's depth, or -1 when nothing was stored.
  int on_task_begin(Tick t, std::uint64_t id, std::uint8_t source);
  // on_task_end: stack-matches `id` against the open tasks; *closed gets the slice.
  // off_cpu: ticks its thread waited for a CPU meanwhile (task_end's off_cpu_ticks; 0: none).
  bool on_task_end(Tick t, std::uint64_t id, bool threw, const TaskSlice** closed, Tick off_cpu = 0);
  // lose_open: the record of this worker has a hole (the reader skipped a damaged chunk):
  // every open task is closed at `t`, its last event before the hole, and marked
  // kSliceEndLost, so it is not drawn across the rest of the trace.
  // Returns how many slices it closed.
  std::size_t lose_open(Tick t);
  // on_task_label: the innermost open task with this id names itself; false if none is open.
  bool on_task_label(std::uint64_t id, std::uint32_t label);
  // What the next task_begin inherits: a lane pop's wait, a steal's index.
  void set_pending_ready_wait(Tick wait) noexcept { pending_ready_wait_ = wait; }
  void set_pending_steal(std::int32_t index) noexcept { pending_steal_ = index; }

  // --- queries ---
  bool seen() const noexcept { return !starts_.empty(); }
  Tick first_tick() const noexcept { return seen() ? starts_.front() : 0; }
  Tick last_tick() const noexcept { return last_tick_; }
  std::size_t interval_count() const noexcept { return starts_.size(); }
  Tick interval_start(std::size_t i) const noexcept { return starts_[i]; }
  // interval_end: the next interval's start; the last one is open and ends at `open_end`
  // (the stream's newest event, a playhead), or at the worker's stop if that comes first
  // (stopped_at: its thread ended there). Every view reads a worker's time through here,
  // so none can run a stopped worker on past its stop: the timeline, the plots, the Chrome
  // export and Analysis::state_time (the summary) end it at the same tick.
  Tick interval_end(std::size_t i, Tick open_end) const noexcept {
    return i + 1 < starts_.size() ? starts_[i + 1] : std::min(open_end, stopped_at_);
  }
  int interval_state(std::size_t i) const noexcept { return states_[i]; }
  StateReason interval_reason(std::size_t i) const noexcept { return static_cast<StateReason>(reasons_[i]); }
  int current_state() const noexcept { return states_.empty() ? kUnknownState : states_.back(); }
  // stopped_at: the tick of this worker's `stopping` state event (the scheduler shut it
  // down: its thread ends there), or kOpenEnd while none has come (a later state event
  // clears it: the worker runs again). The open interval ends here (interval_end).
  Tick stopped_at() const noexcept { return stopped_at_; }
  // interval_at: index of the interval containing t, or -1 before the first.
  std::ptrdiff_t interval_at(Tick t) const noexcept;
  // occupancy: ticks per state in [a, b), the open interval ending at `open_end` (or at
  // the worker's stop: interval_end).
  Occupancy occupancy(Tick a, Tick b, Tick open_end) const noexcept;
  // cumulative: ticks per state in [first_tick, t); `hint` speeds up sequential calls.
  Occupancy cumulative(Tick t, Tick open_end, std::ptrdiff_t* hint = nullptr) const noexcept;

  int depth_count() const noexcept { return static_cast<int>(slices_.size()); }
  const std::vector<TaskSlice>& slices(int depth) const noexcept { return slices_[static_cast<std::size_t>(depth)]; }
  // ready_wait: how long a slice of this track waited in a lane before it ran, in ticks
  // (exact, however long), or nullopt when it did not come from a lane or its lane pop
  // was not recorded.
  std::optional<Tick> ready_wait(const TaskSlice& s) const noexcept;
  // off_cpu: how long the slice's thread waited for a CPU (preempted) while it ran, in
  // ticks, as its task_end said (the recorder measures tasks of 1 ms or more); 0 when
  // none was recorded.
  Tick off_cpu(const TaskSlice& s) const noexcept;
  // first_slice_ending_after: index of the first slice at `depth` whose end is > t.
  std::size_t first_slice_ending_after(int depth, Tick t) const noexcept;
  // first_slice_starting_at_or_after: index of the first slice at `depth` with start >= t.
  std::size_t first_slice_starting_at_or_after(int depth, Tick t) const noexcept;
  int open_depth() const noexcept { return static_cast<int>(open_.size()); }
  // find_open: the innermost open slice with this id (its depth and index), if any.
  bool find_open(std::uint64_t id, int* depth, std::size_t* index) const noexcept;
  // find_started: a slice with this id starting at or after t, looking at the first
  // `scan` slices from t at each depth (a task released at t starts soon after).
  bool find_started(std::uint64_t id, Tick t, std::size_t scan, int* depth, std::size_t* index) const noexcept;
  std::uint64_t tasks_too_deep() const noexcept { return too_deep_; }
  std::uint64_t unmatched_ends() const noexcept { return unmatched_ends_; }
  std::uint64_t out_of_order() const noexcept { return out_of_order_; }

 private:
  void add_interval(Tick t, int state, std::uint8_t reason);
  Tick clamp(Tick t) noexcept;

  std::vector<Tick> starts_;
  std::vector<std::uint8_t> states_;
  std::vector<std::uint8_t> reasons_;
  // checkpoints_[k]: occupancy of intervals [0, k * kCheckpointEvery) (all closed).
  std::vector<std::array<Tick, kStateSlots>> checkpoints_;
  std::array<Tick, kStateSlots> running_{};  // occupancy of every closed interval
  Tick last_tick_ = 0;
  Tick stopped_at_ = kOpenEnd;

  std::vector<std::vector<TaskSlice>> slices_;  // by depth
  struct Open {
    int depth;
    std::size_t index;  // into slices_[depth]
  };
  std::vector<Open> open_;  // innermost last
  int depth_overflow_ = 0;  // open tasks deeper than kMaxDepth
  std::optional<Tick> pending_ready_wait_;
  std::vector<Tick> long_waits_;  // ready waits of TaskSlice::kLongWait ticks or more
  // Off-CPU time of the (rare, long) slices that have any, by depth and index.
  std::map<std::pair<int, std::size_t>, Tick> off_cpu_;
  std::int32_t pending_steal_ = -1;
  std::uint64_t too_deep_ = 0;
  std::uint64_t unmatched_ends_ = 0;
  std::uint64_t out_of_order_ = 0;
};

}  // namespace lantern::analysis
