// SPDX-License-Identifier: Apache-2.0
// health.hpp - the warnings a user should not miss (health findings), derived from the
// Analysis (lantern/analysis/analysis.hpp): the viewer's Health panel, its badge, its
// stderr summary and lantern-trace stats all count them with warning_count().
//
// HealthChecker reads what the Analysis has stored (it never sees raw events) and keeps
// a cursor per worker, so each call to advance() examines only what arrived since the
// last; changing a threshold is a reset() and one full rescan. Each Problem carries a
// time range and a worker (or lane), which is how the health view links to the timeline.
//
// "All workers asleep while work waits" compares workers with each other, but a live
// stream delivers each worker's events in order, not all workers' events in time order.
// So that check sweeps the workers' state intervals in time order only up to a horizon
// every worker has reached (a sleeping worker counts as having reached any time: it will
// report nothing until it wakes).
#pragma once

#include <array>
#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "lantern/analysis/worker_track.hpp"

namespace lantern::analysis {

class Analysis;

enum class ProblemKind : std::uint8_t {
  long_task,            // a worker ran one task without a break for longer than the threshold
  lane_wait,            // a lane's head waited far longer than that lane's average
  queued_while_asleep,  // work waited in a lane while every worker slept
  spinning,        // a worker searched (idle or sleepy, flapping between them counts) for long without finding work
  events_dropped,  // the recorder's ring (or the live stream) lost events here
  deadlock,        // core reported every worker blocked in a wait or idle, nothing ready
};
inline constexpr int kProblemKindCount = 6;
const char* problem_kind_name(ProblemKind kind) noexcept;    // "long task", ...
const char* problem_kind_advice(ProblemKind kind) noexcept;  // one sentence: what it usually means

struct Problem {
  ProblemKind kind = ProblemKind::long_task;
  std::uint32_t worker = 0;  // the worker; for lane problems, the lane
  Tick start = 0;            // where on the timeline
  Tick end = 0;
  Tick value = 0;                 // ticks (durations, waits) or a count (events dropped)
  std::uint64_t detail = 0;       // long_task: the task id
  std::uint32_t occurrences = 1;  // nearby occurrences merged into this one
  // uncertain: events were lost (dropped) around it, so the model may be missing what
  // would explain it (a state change, a task end): shown, but marked as such.
  bool uncertain = false;
  // long_task: the whole task's length (value is its longest stretch without a nested
  // task), and how long of it the task's thread waited for a CPU (preempted; 0: none
  // recorded, see WorkerTrack::off_cpu).
  Tick task_ticks = 0;
  Tick off_cpu = 0;
};

// preempted: a long task whose thread waited for a CPU (was preempted by the kernel) for
// at least half of its length: the kernel, not the task's code, made it long.
bool preempted(const Problem& p) noexcept;
// problem_advice: what this finding usually means: problem_kind_advice, except for a
// preempted long task, where the advice is about the CPUs, not the code.
const char* problem_advice(const Problem& p) noexcept;

struct HealthThresholds {
  double long_task_ms = 10.0;           // one task without a break
  double lane_wait_factor = 10.0;       // head wait vs the lane's average so far ...
  double lane_wait_min_ms = 1.0;        // ... and at least this long
  double queued_asleep_min_us = 200.0;  // all asleep while work waits, at least this long
  double spin_ms = 5.0;                 // idle/sleepy without finding work
};

class HealthChecker {
 public:
  static constexpr std::size_t kMaxProblems = 20000;

  void set_thresholds(const HealthThresholds& t) noexcept { thresholds_ = t; }
  const HealthThresholds& thresholds() const noexcept { return thresholds_; }
  void reset();
  // advance examines what the model stored since the last call.
  void advance(const Analysis& model);
  // finish: no more events will come; checks everything up to the newest event.
  void finish(const Analysis& model);

  const std::vector<Problem>& problems() const noexcept { return problems_; }
  std::uint64_t count(ProblemKind kind) const noexcept { return counts_[static_cast<int>(kind)]; }
  std::uint64_t suppressed() const noexcept { return suppressed_; }
  // warning_count: THE number of warnings - every finding listed (problems()), those not
  // listed (suppressed()) and those happening at the newest time (ongoing()). The badge,
  // the Health panel, lantern-view's summary line and lantern-trace stats print it.
  std::uint64_t warning_count(const Analysis& model) const {
    return problems_.size() + suppressed_ + ongoing(model).size();
  }
  // ongoing: problems happening at time `at` (a task running too long then, a worker
  // searching for too long then): the replay's playhead, or the model's newest time
  // (live, or the whole trace). Each ends at `at`. Recomputed on each call.
  std::vector<Problem> ongoing(const Analysis& model, Tick at) const;
  std::vector<Problem> ongoing(const Analysis& model) const;
  // by_time: every listed warning, problems() and ongoing(model) together, in order of
  // start (ties in listing order): THE numbering of warnings ("warning 3 of 48"), which
  // `lantern-trace export --around-warning N` takes.
  std::vector<Problem> by_time(const Analysis& model) const;
  // As of time `at` (a replay's playhead): ended_by lists the findings of problems() that
  // had ended by then (merged findings: once the last of them has); warning_count(model,
  // at) counts those, ongoing(model, at), and the unlisted ones (suppressed(): their times
  // are not kept) once `at` reaches the newest event, so that at model.last_tick() it is
  // warning_count(model).
  std::vector<Problem> ended_by(Tick at) const;
  std::uint64_t warning_count(const Analysis& model, Tick at) const;

 private:
  struct Cursor {
    std::vector<std::size_t> slice;  // per depth: next slice to examine
    std::size_t interval = 0;
    std::size_t pop = 0;
    std::size_t drop = 0;
    std::size_t deadlock = 0;
    bool searching = false;  // inside a run of idle/sleepy intervals ...
    Tick search_start = 0;   // ... that began here
  };
  void report(const Analysis& m, Problem p, Tick merge_gap);
  void check_slices(const Analysis& m, std::uint32_t w, Cursor& c, Tick threshold);
  void check_intervals(const Analysis& m, std::uint32_t w, Cursor& c, Tick threshold);
  void check_pops(const Analysis& m, std::uint32_t w, Cursor& c);
  void sweep_asleep(const Analysis& m);
  void check_candidates(const Analysis& m);

  HealthThresholds thresholds_;
  std::vector<Cursor> cursors_;
  std::vector<Problem> problems_;
  std::array<std::uint64_t, kProblemKindCount> counts_{};
  std::uint64_t suppressed_ = 0;
  // Per lane: sum and count of waits so far (the "average" a head wait is compared with).
  std::vector<double> lane_wait_sum_;
  std::vector<std::uint64_t> lane_wait_count_;
  // The all-asleep sweep: per worker the next interval, a time-ordered queue of them.
  struct Next {
    Tick t;
    std::uint32_t worker;
    bool operator>(const Next& o) const noexcept { return t > o.t; }
  };
  std::vector<std::size_t> sweep_index_;
  std::vector<int> sweep_state_;
  std::priority_queue<Next, std::vector<Next>, std::greater<>> sweep_queue_;
  std::uint32_t sweep_workers_ = 0;
  int asleep_ = 0;
  Tick swept_to_ = 0;
  Tick asleep_since_ = 0;
  bool all_asleep_ = false;
  bool finished_ = false;
  std::vector<std::pair<Tick, Tick>> all_asleep_intervals_;  // closed, time-ordered
  struct Candidate {
    Tick t;
    Tick wait;
    std::uint32_t lane;
  };
  std::vector<Candidate> candidates_;  // lane pops waiting for the sweep to reach them
};

}  // namespace lantern::analysis
