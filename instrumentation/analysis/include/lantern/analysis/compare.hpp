// SPDX-License-Identifier: Apache-2.0
// compare.hpp - the comparison of two runs: what `lantern-view A --compare B` highlights
// and what `lantern-trace diff A B` prints (as a table, or JSON). Both call compare() on
// the two traces' analyses (lantern::analysis, the one fold: the viewer passes its
// Model's analysis()); neither computes a difference of its own.
//
// What is compared (B against A):
//   - work, span and parallelism (scalability.hpp), each run's own;
//   - per-worker state shares: Analysis::state_shares, the shares lantern-trace stats
//     prints (of the worker's whole span; an "unknown" row when either run has time
//     whose state is unknown, see analysis.hpp), percentage points apart;
//   - per label: the tasks begun (Analysis::tasks_by_label, what stats and the Chrome
//     export count) and the durations of those that ended (count, mean, p50, p90, max;
//     B/A of the mean);
//   - the steal matrix, cell by cell, and steals by topology distance;
//   - the latency histograms (ready wait, task duration, wake latency, IO latency):
//     count and percentiles, B/A; an empty one says why (Analysis::no_samples_reason);
//   - every count lantern-trace stats prints (Summary): events by type, tasks, steals,
//     helps, wakes (by cause: work, latch, IO), wakes by a worker of the pool, sleeps, lane
//     pops, releases, IO submitted/completed/failed/unpaired, events dropped (by reason),
//     unfinished tasks, warnings (by kind), and per worker its tasks, steals, helps, wakes
//     and sleeps (Comparison::counts).
// A count a run's recording level does not record (tasks and steals at level states:
// Analysis::counted) is nullopt, printed as not recorded, never as 0.
// A row is `notable` when the difference is one a reader should look at: a state share
// 5 percentage points or more apart; a duration or latency figure (with at least 10
// samples on each side) 1.25x or more apart either way; a steal count that changed by
// half or more and by at least 10 steals; any other count that changed by half or more and
// by at least 10 (helps 137 -> 1,013; wakes 148 -> 46; IO wakes 72 -> 0).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "lantern/analysis/analysis.hpp"

namespace lantern::analysis {

struct SideFigures {  // one side of a row
  std::uint64_t count = 0;
  double mean_ns = 0, p50_ns = 0, p90_ns = 0, p99_ns = 0, max_ns = 0;
  std::string no_samples;  // count 0 (latency rows): why, Analysis::no_samples_reason
};

// Count: a count of events, nullopt when the run's level does not record them.
using Count = std::optional<std::uint64_t>;

struct Comparison {
  struct Run {
    std::string name;
    std::uint32_t workers = 0;
    std::uint64_t events = 0;
    double duration_ns = 0;
    Count tasks;  // task_begin events
    Count steals;
    std::string tasks_not_recorded, steals_not_recorded;  // why nullopt (no_samples_reason)
    // Work T1, span and parallelism: scalability() of the run (scalability.hpp), the
    // figures lantern-trace scale prints; nullopt when not computed, and then
    // graph_not_computed holds scalability()'s reasons ("; " between them).
    std::optional<double> work_ns, span_ns, parallelism;
    std::string graph_not_computed;
  } a, b;
  struct StateShare {  // worker w's share of its time in `state`, in [0, 1]
    std::uint32_t worker;
    int state;  // a state, or kUnknownState (state_slot_name names both)
    double a, b;
    bool notable;
    bool in_a = true, in_b = true;  // false: that run has no worker w (its share, 0, is printed '-')
  };
  std::vector<StateShare> state_shares;  // by worker, then state
  struct LabelDurations {
    std::uint32_t label;  // 0: tasks without a label
    std::string name;
    Count tasks_a, tasks_b;  // tasks begun (Analysis::tasks_by_label)
    SideFigures a, b;        // durations of those that ended
    double ratio;            // b.mean / a.mean (0 when either side has none)
    bool notable;
  };
  std::vector<LabelDurations> durations;  // by label name
  struct StealCell {
    std::uint32_t thief, victim;
    Count a, b;  // nullopt: that run does not record steals (Run::steals_not_recorded)
    bool notable;
  };
  std::vector<StealCell> steal_cells;  // every cell with a steal on either side
  struct DistanceSteals {
    int distance;
    Count a, b;
    bool notable;
  };
  std::vector<DistanceSteals> steals_by_distance;
  struct Latency {
    std::string what;  // "ready wait", "task duration", "wake latency"
    SideFigures a, b;
    double ratio;  // b.p50 / a.p50
    bool notable;
  };
  std::vector<Latency> latencies;
  struct CountRow {    // one count stats prints, both runs
    std::string what;  // "helps", "wakes (io)", "worker 1: sleeps", "warnings (long task)"...
    Count a, b;        // nullopt: that run's level does not record it
    bool notable;
  };
  std::vector<CountRow> counts;  // run-wide counts first, then per worker
  struct GraphFigure {           // work, span or parallelism (Run's), both runs
    std::string what;            // "work", "span", "parallelism"
    std::optional<double> a, b;  // nullopt: not computed (Run::graph_not_computed)
    bool notable;                // both computed, and one 1.25 times the other or more
    // text: a side's value as diff and the viewer print it: "-" when not computed, a
    // duration for work and span, two decimals for parallelism.
    std::string text(const std::optional<double>& v) const;
  };
  std::vector<GraphFigure> graph;
  std::size_t notable_count() const;
};

// compare: B against A. Both analyses must be complete (their streams finished).
Comparison compare(const Analysis& a, const std::string& a_name, const Analysis& b, const std::string& b_name);

// The two renderings of one Comparison. `notable_only` keeps the rows marked notable.
// write_json writes through JsonOut (json_out.hpp), so a label that is not UTF-8 still
// makes valid JSON.
void write_table(std::FILE* out, const Comparison& c, bool notable_only = false);
void write_json(std::FILE* out, const Comparison& c);

}  // namespace lantern::analysis
