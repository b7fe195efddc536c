// trace_stats.hpp - the numbers behind `lantern-trace stats`, computed in one streaming
// pass over the events (no sorting: every statistic is per worker, and each worker's
// events are already in time order in the file).
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "lantern/trace/trace_header.hpp"

namespace lantern::trace::cli {

struct WorkerSummary {
  // Ticks spent in each state, from the worker's first state event to the end of the
  // trace; index kStateCount collects state numbers outside the table.
  std::uint64_t state_ticks[kStateCount + 1] = {};
  std::uint64_t tasks = 0;  // task_begin events
  std::uint64_t steals = 0;
  std::uint64_t helps = 0;
  std::uint64_t wakes = 0;  // wakes this worker performed
  std::uint64_t total_state_ticks() const;
};

struct Percentiles {
  std::uint64_t count = 0;
  double p50_ns = 0, p90_ns = 0, p99_ns = 0, max_ns = 0;
};

struct TraceStats {
  std::map<std::uint32_t, WorkerSummary> workers;
  // Task duration by the label the task gave itself (task_label; the last one if it
  // named itself twice); key 0 collects the tasks that named themselves nothing.
  std::map<std::uint64_t, Percentiles> by_label;
  // IO operations: io_submit and io_complete events, and the time between them (matched
  // by operation id, whichever workers reported them).
  std::uint64_t io_submitted = 0, io_completed = 0, io_failed = 0;  // failed: result < 0
  Percentiles io_latency;
  std::uint64_t steals_by_distance[kDistanceCount + 1] = {};  // last: distance outside the table
  Percentiles ready_wait;     // lane_pop b
  Percentiles task_duration;  // task_begin..task_end, inclusive of nested tasks
  std::uint64_t unmatched_task_ends = 0;  // ends whose begin was not recorded (dropped, or before the trace)
  std::uint64_t unfinished_tasks = 0;     // begun but not ended by the end of the trace
};

class StatsBuilder {
 public:
  void add(const Event& event);
  // finish closes every worker's current state at `end_tick` and computes percentiles.
  TraceStats finish(const TraceHeader& header, std::uint64_t end_tick);

 private:
  struct OpenTask {
    std::uint64_t task;
    std::uint64_t begin;
    std::uint64_t label = 0;
  };
  struct WorkerState {
    int state = -1;  // -1: not known yet
    std::uint64_t since = 0;
    std::vector<OpenTask> open_tasks;
  };
  void close_state(WorkerSummary& summary, WorkerState& worker, std::uint64_t now);

  TraceStats stats_;
  std::map<std::uint32_t, WorkerState> state_;
  std::vector<std::uint64_t> ready_wait_ticks_;
  std::vector<std::uint64_t> task_ticks_;
  std::map<std::uint64_t, std::vector<std::uint64_t>> label_ticks_;
  // IO ops seen at one end only so far: a file interleaves workers, so a completion
  // reported by another worker can come before its submission.
  std::unordered_map<std::uint64_t, std::uint64_t> io_submitted_at_, io_completed_at_;
  std::vector<std::uint64_t> io_ticks_;
};

}  // namespace lantern::trace::cli
