// SPDX-License-Identifier: Apache-2.0
// scalability.hpp - what limits a run's parallelism, from one recorded run: the task
// graph rebuilt from the trace (spawn, wait_begin/wait_end, release, signal_set, IO),
// its work T1 and span T-infinity, the critical path, the greedy bounds, a work-stealing
// simulation on P workers, and what-if figures per task label. `lantern-trace scale`,
// `lantern-trace diff`, the viewer's Scalability view and the demo all print what
// scalability() returns; none of them walks the graph itself.
//
// Definitions (instrumentation/README.md, "Scalability analysis", has the details):
//   - A task's own time is its slice's time less the tasks nested in it and less its
//     waits (wait_begin .. wait_end): what the worker ran for that task alone. The
//     recording's own cost (RunCosts::event_ns for the event that opens each stretch) is
//     taken off, so figures describe the program, not the program being recorded.
//   - A task is a chain of stretches cut at each spawn, each wait, each signal set and
//     IO submission, and each task nested in it outside a wait (a call); edges run from a
//     stretch to the next (continuation), from the spawning stretch to the child's first
//     (spawn), from a joined task's last stretch to the stretch after the wait (join),
//     from a releasing task to the released one (release: spawn_after, TaskGraph), from
//     a signal_set to the stretch after a Signal::wait (signal), and from an IO
//     submission to the task its completion woke (io: the operation's latency is the
//     edge's weight).
//   - Work T1: the sum of own time. Span: the heaviest path. Parallelism: T1 / span.
//   - Burdened span: the heaviest path when every spawn edge (its child taken by
//     another worker) costs this run's measured cost of a steal, and every release,
//     signal and IO edge (a wake) its measured wake latency (Cilkscale's burdened span,
//     with costs measured instead of assumed).
//   - Bounds on T_P: max(T1/P, span) <= T_P <= T1/P + span (greedy scheduling).
//   - Simulated T_P: the graph replayed on P virtual workers (each a deque; LIFO own
//     work, FIFO steals from a random victim, victims ordered by the topology's
//     distance; a steal costs the run's measured steal cost for that distance, a wake
//     the measured wake latency, a spawn the measured spawn cost).
//   - What-if: the simulated T_P with every task of one label running x % faster
//     (its own time times 1 - x/100): Coz's virtual speedup, on the task graph.
// Honesty: a figure the trace cannot support is nullopt, with a sentence in
// not_computed saying which and why (a version-3/4 trace has no graph; events dropped
// inside the graph; a flight-recorder window that cut tasks off; fork-join recorded
// below level graph, where a join shows only once its half was stolen, so the span of
// unstolen joins is folded into their parent: that case is computed and says so in
// notes).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lantern/analysis/analysis.hpp"

namespace lantern::analysis {

class JsonOut;

// --- the kinds of edge of the task graph ---
#define LANTERN_EDGE_KINDS(X)                                                         \
  X(continuation, "the same task, after a spawn or a wait")                           \
  X(spawn, "a task made it (join's half, TaskGroup::spawn, spawn, submit)")           \
  X(join, "a task it waited for ended (join, TaskGroup::wait, Future::get, handles)") \
  X(release, "its last dependency completed (spawn_after, TaskGraph)")                \
  X(signal, "a Signal it waited on was set")                                          \
  X(io, "an IO operation completed")

enum class EdgeKind : std::uint8_t {
#define LANTERN_X(name, text) name,
  LANTERN_EDGE_KINDS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr std::string_view kEdgeKindNames[] = {
#define LANTERN_X(name, text) #name,
    LANTERN_EDGE_KINDS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr int kEdgeKindCount = static_cast<int>(std::size(kEdgeKindNames));

// TopologySpec: the machine the simulator places its workers on.
struct TopologySpec {
  std::uint32_t sockets = 1;
  std::uint32_t cores_per_socket = 1;
  std::uint32_t threads_per_core = 1;
  std::uint32_t cpus() const noexcept { return sockets * cores_per_socket * threads_per_core; }
  // describe: "2 sockets x 32 cores x 2 threads" (what parse_topology reads back).
  std::string describe() const;
  friend bool operator==(const TopologySpec&, const TopologySpec&) = default;
};
// parse_topology: "2 sockets x 32 cores x 2 threads", "64 cores", "1 socket x 16 cores"
// (singular or plural; "x" between parts; missing parts are 1). nullopt, with *error
// saying what is wrong, for anything else.
std::optional<TopologySpec> parse_topology(std::string_view text, std::string* error);
// topology_of: the trace header's machine (its CPU rows), or nullopt when it has none.
std::optional<TopologySpec> topology_of(const trace::TraceHeader& header);

// WhatIf: every task labelled `label` runs `percent` % faster (0 < percent <= 100).
struct WhatIf {
  std::string label;
  double percent = 0;
};
// parse_what_if: "LABEL=PCT" (PCT in (0, 100], "%" allowed): nullopt and *error otherwise.
std::optional<WhatIf> parse_what_if(std::string_view text, std::string* error);

struct ScaleOptions {
  // Worker counts for the curve; empty: 1, 2, 4, ..., 1024 and the run's own count.
  std::vector<std::uint32_t> workers;
  // The simulated machine; nullopt: the trace's own (topology_of), else one socket.
  std::optional<TopologySpec> topology;
  // Extra what-ifs to evaluate (each label by name), besides the top labels' own.
  std::vector<WhatIf> what_if;
  // The top labels by span share each get a what-if at this speedup.
  std::size_t top_labels = 5;
  double top_label_percent = 50;
  // Worker counts at which each what-if is simulated; empty: the curve's largest and
  // the run's own count.
  std::vector<std::uint32_t> what_if_workers;
  std::uint64_t seed = 1;  // the simulator's victim choices (same seed: same figures)
};

// RunCosts: what this run paid, measured from its own events (each a median with its
// sample count; nullopt when the run has no sample, and then the simulator uses 0 and
// says so in notes).
struct RunCosts {
  std::optional<double> spawn_ns;  // spawn to the child's begin on the same worker, from when it was free
  std::optional<double> steal_ns;  // a thief's steal to its task's begin
  std::array<std::optional<double>, kStealDistanceCount> steal_by_distance_ns;
  std::optional<double> wake_ns;  // wake latency (IO wakes left out)
  std::uint64_t spawn_samples = 0, steal_samples = 0, wake_samples = 0;
  double event_ns = 0;  // the recording's cost per event (trace header), taken off own time
  // recording_share: of the stretches' recorded time, the part taken off as event_ns
  // (0 to 1). Where it is large the tasks are about as short as an event, and how much
  // recording cost each is uncertain: the absolute figures are, the speedups less so.
  double recording_share = 0;
};

// PathStretch: one stretch of the critical path, in path order: a task's own time
// between two edges, where it ran in the recording, and the edge that led to it.
struct PathStretch {
  std::uint64_t task = 0;  // its id (an address; reused after the task ended)
  SliceRef slice;          // the task's slice in the Analysis (the viewer outlines it)
  std::uint32_t worker = 0;
  Tick begin = 0, end = 0;  // the stretch in the recording
  double own_ns = 0;        // its own time (what it adds to the span)
  std::uint32_t label = 0;  // 0: none
  EdgeKind entered_by = EdgeKind::continuation;
  double edge_ns = 0;  // the edge's own weight (an IO operation's latency; else 0)
};

// LabelFigure: one task label's part in the run, ranked by span share.
struct LabelFigure {
  std::uint32_t label = 0;  // 0: tasks without a label
  std::string name;
  std::uint64_t tasks = 0;
  double work_ns = 0;             // own time of its tasks
  double span_ns = 0;             // own time of its stretches on the critical path
  double span_share = 0;          // span_ns / span
  std::optional<WhatIf> what_if;  // the speedup simulated for it (nullopt: none)
  // What the what-if gives: the simulated T_P at each of ScaleOptions::what_if_workers
  // (same order) with and without it.
  std::vector<std::uint32_t> what_if_workers;
  std::vector<double> what_if_ns, baseline_ns;
};

// CurvePoint: T_P at one worker count.
struct CurvePoint {
  std::uint32_t workers = 0;
  double lower_ns = 0, upper_ns = 0;      // the greedy bounds
  std::optional<double> simulated_ns;     // nullopt: not computable (see not_computed)
  std::optional<double> measured_ns;      // the run itself, at its own worker count
  double work_ns = 0;                     // T1 (the speedups' numerator)
  double speedup_lower() const noexcept;  // T1 / upper_ns, T1 / lower_ns: the speedup band
  double speedup_upper() const noexcept;
  // T1 / simulated_ns and T1 / measured_ns; nullopt where that time is missing or 0.
  std::optional<double> speedup_simulated() const noexcept;
  std::optional<double> speedup_measured() const noexcept;
};

struct Scalability {
  bool has_graph = false;                 // the trace holds task-graph events
  std::vector<std::string> not_computed;  // one sentence per figure left out, and why
  // why_not: why a figure was left out, for a view that names the figure itself: the
  // reason in the first not_computed sentence naming one of `words` (lower case, e.g.
  // "span", "simulat", "critical path"), else in the first sentence, without the
  // sentence's list of the figures it covers ("work, span, ... are not computed: R" gives
  // R); "the analysis gave no reason" when nothing was left out. Every view asks this.
  std::string why_not(std::initializer_list<std::string_view> words) const;
  // simulated: some point of the curve was simulated (else `topology` was never used).
  bool simulated() const noexcept;
  // speedup_measured: T1 / the run's own time (work_ns / measured_ns); nullopt where
  // either is missing or the time is 0.
  std::optional<double> speedup_measured() const noexcept;
  std::vector<std::string> notes;  // caveats on figures that are computed
  std::uint64_t tasks = 0, stretches = 0, edges = 0;
  std::optional<double> work_ns, span_ns, parallelism;
  std::optional<double> burdened_span_ns, burdened_parallelism;
  std::uint32_t measured_workers = 0;  // the workers the run had
  std::optional<double> measured_ns;   // the run's time: first task begin to last task end
  RunCosts costs;
  TopologySpec topology;  // what the simulator used
  std::vector<PathStretch> critical_path;
  // path_preempted_ns: of the span, the time the critical path's tasks waited for a CPU
  // while they ran (their task_end's off-CPU time; each task at most its own time on the
  // path; an upper bound where a preempted task's nested task is on the path too).
  double path_preempted_ns = 0;
  // span_by_edge[k]: span time of the stretches entered by an edge of kind k (with the
  // edge's own weight); they add up to the span.
  std::array<double, kEdgeKindCount> span_by_edge{};
  std::vector<LabelFigure> labels;  // ranked by span_ns, then work_ns
  std::vector<CurvePoint> curve;    // by workers
};

// cost_text: a measured cost (spawn, steal, wake) as every view prints it: "X (median
// of N)", or "not computed: WHY". A spawn's cost is read off the task graph
// (`from_graph`), so without a graph the reason is the graph's; otherwise the run had
// no sample of it and the simulator counts it as 0.
std::string cost_text(const Scalability& s, const std::optional<double>& ns, std::uint64_t samples,
                      bool from_graph = false);

// scalability: the figures for everything the analysis holds (call after finish(), or
// on a live analysis: open tasks are left out and notes say how many). Tick window
// [from, to]: only tasks that began inside it (the viewer's live parallelism uses the
// last few seconds).
Scalability scalability(const Analysis& analysis, const ScaleOptions& options = {}, Tick from = 0, Tick to = kOpenEnd);

// write_json: the figures as one JSON object (what `lantern-trace scale --json` prints;
// null for a figure not computed, with not_computed beside it).
void write_json(JsonOut& out, const Scalability& s);

}  // namespace lantern::analysis
