// SPDX-License-Identifier: Apache-2.0
// cmd_scale.cpp - `lantern-trace scale FILE`: what limits the run's parallelism and what
// it does on more workers. Every figure is what lantern::analysis::scalability() returns
// for the one fold of the trace (lantern/analysis/scalability.hpp); this file only lays
// it out (a table, a text chart) or hands it to write_json, so the text, the JSON, the
// viewer's Scalability view and the demo print the same numbers.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <limits>
#include <numeric>

#include "cli.hpp"
#include "commands.hpp"
#include "lantern/analysis/json_out.hpp"
#include "lantern/analysis/scalability.hpp"
#include "lantern/tools/program_cli.hpp"

namespace lantern::trace::cli {
namespace {

using analysis::CurvePoint;
using analysis::EdgeKind;
using analysis::Scalability;

constexpr const char* kHelp =
    "usage: lantern-trace scale [--json] [--workers LIST] [--topology SPEC]\n"
    "                           [--what-if LABEL=PCT]... [--top N] [--from TIME] [--to TIME]\n"
    "                           [--no-progress] FILE\n"
    "\n"
    "What limits the run's parallelism, and what the program does on more workers, from\n"
    "the task graph in the trace (recorded at level graph: every spawn, wait, release\n"
    "and signal; at level tasks a join shows only once its half was stolen, and the\n"
    "figures say so):\n"
    "  work T1         the tasks' own running time, summed: a task's time less the tasks\n"
    "                  nested in it, its waits, and the recording's cost per event\n"
    "  span            the heaviest path through the task graph, weighted by own time\n"
    "  parallelism     work / span: the most workers the program can keep busy\n"
    "  burdened span   the span with this run's measured steal cost on every edge of the\n"
    "                  path that crosses workers and its wake latency on every wake\n"
    "                  (Cilkscale's burdened span, with costs measured, not assumed)\n"
    "  measured costs  this run's spawn, steal (by distance) and wake costs (medians)\n"
    "Then T_P for each worker count P: the greedy bounds max(T1/P, span) <= T_P <=\n"
    "T1/P + span, the task graph replayed on P virtual workers by a work-stealing\n"
    "simulator (with the run's costs, on the trace's machine or --topology), the speedup\n"
    "T1/T_P, and the run's own time at its own worker count, as a table and a chart\n"
    "(log scale: '*' simulated, ':' between the bounds, 'o' measured). Then the\n"
    "critical path: its stretches (a task's own time between two edges), the span by\n"
    "the kind of edge that led to each stretch, and its longest stretches with their\n"
    "task's label, worker and time. Last, the task labels ranked by their share of the\n"
    "span, each of the top ones with a what-if: the simulated T_P when that label's tasks\n"
    "run 50 % faster (Coz's virtual speedup, on the task graph).\n"
    "\n"
    "A figure the trace cannot support (a version-3 or 4 trace has no task graph; events\n"
    "dropped inside the graph; a flight-recorder window that cut tasks off) prints as\n"
    "'not computed: REASON', never as a number; in JSON it is null, and \"not_computed\"\n"
    "says why. lantern-view's Scalability view shows the same figures; lantern-trace\n"
    "diff prints both runs' work, span and parallelism.\n"
    "\n"
    "options:\n"
    "  --json               the same figures as one JSON object on stdout\n"
    "  --workers LIST       worker counts of the curve, e.g. 1,2,4,64 (each 1 to 1024;\n"
    "                       default 1, 2, 4, ..., 1024 and the run's own count)\n"
    "  --topology SPEC      the machine to simulate, e.g. \"2 sockets x 32 cores x 2\n"
    "                       threads\" or \"64 cores\" (default: the trace's machine)\n"
    "  --what-if LABEL=PCT  also simulate the tasks labelled LABEL running PCT % faster\n"
    "                       (0 < PCT <= 100); may be given once for each label\n"
    "  --top N              what-ifs for the N labels with the most span, and the N\n"
    "                       longest stretches of the critical path listed (default 5)\n"
    "  --from TIME, --to TIME\n"
    "                       only the tasks that began in that window (times from the\n"
    "                       first event, e.g. 1.5s, 200ms): one phase of a run whose\n"
    "                       phases were ordered outside the pool (the notes say when)\n"
    "  --no-progress        no progress bar (it is only drawn when stderr is a terminal)\n"
    "  -h, --help           this text\n"
    "\n"
    "exit status: 0 ok, 1 the trace has problems (printed on stderr; the figures cover\n"
    "             what could be read and say what they could not compute; nothing on\n"
    "             stdout for a file that is not a trace), 2 bad options, a --what-if\n"
    "             label no task in the trace has, or a file cannot be read or written\n";

constexpr std::uint32_t kMaxCurveWorkers = 1024;
constexpr std::size_t kMaxTop = 1000;
constexpr std::size_t kDefaultTop = 5;
constexpr std::size_t kMaxLabelRows = 30;

// not_computed: "not computed: REASON" for a figure this line names (Scalability::why_not).
std::string not_computed(const Scalability& s, std::initializer_list<std::string_view> words) {
  return "not computed: " + s.why_not(words);
}

std::string duration(const Scalability& s, const std::optional<double>& ns,
                     std::initializer_list<std::string_view> words) {
  return ns ? format_duration_ns(*ns) : not_computed(s, words);
}

std::string ratio(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", value);
  return buf;
}

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * share);
  return buf;
}

void print_figures(const Scalability& s) {
  std::printf("%-22s %s\n", "work T1", duration(s, s.work_ns, {"work"}).c_str());
  std::printf("%-22s %s\n", "span", duration(s, s.span_ns, {"span"}).c_str());
  std::printf("%-22s %s\n", "parallelism",
              s.parallelism ? ratio(*s.parallelism).c_str() : not_computed(s, {"parallelism", "span"}).c_str());
  std::printf("%-22s %s\n", "burdened span", duration(s, s.burdened_span_ns, {"burdened", "span"}).c_str());
  std::printf("%-22s %s\n", "burdened parallelism",
              s.burdened_parallelism ? ratio(*s.burdened_parallelism).c_str()
                                     : not_computed(s, {"burdened", "parallelism", "span"}).c_str());
  std::printf("%-22s %s\n", "measured time",
              s.measured_ns ? (format_duration_ns(*s.measured_ns) + " (first task begin to last task end)").c_str()
                            : not_computed(s, {"measured", "time"}).c_str());
  std::printf("%-22s %u\n", "workers", s.measured_workers);
  std::printf("%-22s %" PRIu64 " tasks, %" PRIu64 " stretches, %" PRIu64 " edges%s\n", "task graph", s.tasks,
              s.stretches, s.edges, s.has_graph ? "" : " (the trace holds no task-graph events)");
  std::printf("measured costs\n");
  std::printf("  %-20s %s\n", "spawn",
              analysis::cost_text(s, s.costs.spawn_ns, s.costs.spawn_samples, /*from_graph=*/true).c_str());
  std::printf("  %-20s %s\n", "steal", analysis::cost_text(s, s.costs.steal_ns, s.costs.steal_samples).c_str());
  for (int d = 0; d < kStealDistanceCount; ++d) {
    const auto& ns = s.costs.steal_by_distance_ns[static_cast<std::size_t>(d)];
    if (ns)
      std::printf("  %-20s %s\n", ("  at distance " + std::string(kStealDistanceNames[d])).c_str(),
                  format_duration_ns(*ns).c_str());
  }
  std::printf("  %-20s %s\n", "wake", analysis::cost_text(s, s.costs.wake_ns, s.costs.wake_samples).c_str());
  std::printf("  %-20s %s per event (taken off own time: %.0f %% of the tasks' recorded time)\n", "recording",
              format_duration_ns(s.costs.event_ns).c_str(), 100 * s.costs.recording_share);
  std::printf("%-22s %s\n", "simulated machine",
              s.simulated() ? s.topology.describe().c_str() : not_computed(s, {"simulat"}).c_str());
}

void print_curve(const Scalability& s) {
  std::printf("\nT_P on P workers (bounds: max(T1/P, span) <= T_P <= T1/P + span; simulated: work stealing)\n");
  if (s.curve.empty()) {
    std::printf("  %s\n", not_computed(s, {"simulat", "bound", "span"}).c_str());
    return;
  }
  const bool bounds = s.work_ns && s.span_ns;  // the bounds and speedups need both
  std::printf("%8s %12s %12s %14s %9s %17s  %s\n", "workers", "lower", "upper", "simulated", "speedup",
              "speedup bounds", "measured (speedup)");
  bool any_missing = false;
  for (const CurvePoint& p : s.curve) {
    const auto sim_speedup = p.speedup_simulated();
    any_missing = any_missing || !p.simulated_ns;
    std::string measured;
    if (p.measured_ns) {
      measured = format_duration_ns(*p.measured_ns);
      if (const auto m = p.speedup_measured()) measured += " (" + ratio(*m) + ")";
    }
    std::string row(256, '\0');
    const int n = std::snprintf(row.data(), row.size(), "%8u %12s %12s %14s %9s %17s  %s", p.workers,
                                bounds ? format_duration_ns(p.lower_ns).c_str() : "not computed",
                                bounds ? format_duration_ns(p.upper_ns).c_str() : "not computed",
                                p.simulated_ns ? format_duration_ns(*p.simulated_ns).c_str() : "not computed",
                                sim_speedup ? ratio(*sim_speedup).c_str() : "-",
                                bounds ? (ratio(p.speedup_lower()) + " - " + ratio(p.speedup_upper())).c_str() : "-",
                                measured.c_str());
    row.resize(static_cast<std::size_t>(std::max(n, 0)));
    while (!row.empty() && row.back() == ' ') row.pop_back();
    std::printf("%s\n", row.c_str());
  }
  if (!bounds) std::printf("  bounds and speedups: %s\n", not_computed(s, {"bound", "span", "work"}).c_str());
  if (any_missing) std::printf("  simulated: %s\n", not_computed(s, {"simulat"}).c_str());
}

// print_chart: the speedup curve on log-log axes, one column per curve point: ':' from
// the lower to the upper bound's speedup, '*' the simulated speedup, 'o' the measured.
void print_chart(const Scalability& s) {
  if (s.curve.empty() || !s.work_ns || !s.span_ns) return;
  double top = 1;
  for (const CurvePoint& p : s.curve) {
    top = std::max(top, p.speedup_upper());
    if (const auto v = p.speedup_simulated()) top = std::max(top, *v);
    if (const auto v = p.speedup_measured()) top = std::max(top, *v);
  }
  if (!std::isfinite(top)) return;
  const int doublings = std::max(1, static_cast<int>(std::ceil(std::log2(top) - 1e-9)));
  const int per_doubling = doublings <= 8 ? 2 : 1;  // rows per doubling of the speedup
  const int rows = doublings * per_doubling + 1;
  auto row_of = [&](double speedup_value) {
    const double r = std::round(std::log2(std::max(speedup_value, 1.0)) * per_doubling);
    return std::clamp(static_cast<int>(r), 0, rows - 1);
  };
  constexpr int kColumn = 5;  // characters per curve point
  const std::size_t width = s.curve.size() * kColumn;
  std::vector<std::string> grid(static_cast<std::size_t>(rows), std::string(width, ' '));
  for (std::size_t i = 0; i < s.curve.size(); ++i) {
    const CurvePoint& p = s.curve[i];
    const std::size_t x = i * kColumn + kColumn / 2;
    for (int r = row_of(p.speedup_lower()); r <= row_of(p.speedup_upper()); ++r)
      grid[static_cast<std::size_t>(r)][x] = ':';
    if (const auto v = p.speedup_simulated()) grid[static_cast<std::size_t>(row_of(*v))][x] = '*';
    if (const auto v = p.speedup_measured()) grid[static_cast<std::size_t>(row_of(*v))][x] = 'o';
  }
  std::printf("\nspeedup T1/T_P (log scale): * simulated, : between the bounds, o measured\n");
  for (int r = rows - 1; r >= 0; --r) {
    std::string axis;
    if (r % per_doubling == 0) axis = std::to_string(1ull << (r / per_doubling));
    std::string line = grid[static_cast<std::size_t>(r)];
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::printf("%7s |%s\n", axis.c_str(), line.c_str());
  }
  std::printf("%7s +%s\n", "", std::string(width, '-').c_str());
  std::string labels;
  for (const CurvePoint& p : s.curve) {
    char cell[16];
    std::snprintf(cell, sizeof cell, "%*u", kColumn - 1, p.workers);
    labels += std::string(cell) + " ";
  }
  std::printf("%7s  %s workers\n", "", labels.c_str());
}

std::string label_name(std::uint32_t label, const LabelTable& names) {
  return label == 0 ? "(no label)" : printable(names.display_name(label));
}

void print_path(const Scalability& s, const analysis::Analysis& a, std::size_t top) {
  std::printf("\ncritical path: ");
  if (!s.span_ns) {
    std::printf("%s\n", not_computed(s, {"critical path", "span"}).c_str());
    return;
  }
  std::printf("%zu stretches, span %s\n", s.critical_path.size(), format_duration_ns(*s.span_ns).c_str());
  std::printf("span by the edge that led to each stretch:\n");
  for (int k = 0; k < analysis::kEdgeKindCount; ++k) {
    const double ns = s.span_by_edge[static_cast<std::size_t>(k)];
    std::printf("  %-14s %12s %9s\n", std::string(analysis::kEdgeKindNames[k]).c_str(), format_duration_ns(ns).c_str(),
                *s.span_ns > 0 ? percent(ns / *s.span_ns).c_str() : "-");
  }
  if (top == 0 || s.critical_path.empty()) return;
  std::vector<std::size_t> order(s.critical_path.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return s.critical_path[x].own_ns + s.critical_path[x].edge_ns >
           s.critical_path[y].own_ns + s.critical_path[y].edge_ns;
  });
  order.resize(std::min(order.size(), top));
  std::printf("its %zu longest stretches (#: place on the path, 1 first; at: from the trace's first event)\n",
              order.size());
  std::printf("%8s %12s %8s  %-20s %7s %12s  %s\n", "#", "own time", "of span", "label", "worker", "at", "entered by");
  for (const std::size_t i : order) {
    const analysis::PathStretch& p = s.critical_path[i];
    std::string name = label_name(p.label, a.labels());
    if (name.size() > 20) name = name.substr(0, 17) + "...";
    std::string edge(analysis::kEdgeKindNames[static_cast<int>(p.entered_by)]);
    if (p.edge_ns > 0) edge += " (" + format_duration_ns(p.edge_ns) + ")";
    std::printf("%8zu %12s %8s  %-20s %7u %12s  %s\n", i + 1, format_duration_ns(p.own_ns).c_str(),
                *s.span_ns > 0 ? percent(p.own_ns / *s.span_ns).c_str() : "-", name.c_str(), p.worker,
                format_duration_ns(a.ticks_to_ns(static_cast<double>(p.begin - a.first_tick()))).c_str(), edge.c_str());
  }
}

void print_labels(const Scalability& s) {
  std::printf("\nlabels by share of the span\n");
  if (!s.span_ns) {
    std::printf("  %s\n", not_computed(s, {"label", "span"}).c_str());
    return;
  }
  if (s.labels.empty()) {
    std::printf("  (no tasks)\n");
    return;
  }
  std::printf("%-22s %9s %12s %12s %8s  %s\n", "label", "tasks", "work", "span", "of span", "what-if");
  const std::size_t shown = std::min(s.labels.size(), kMaxLabelRows);
  for (std::size_t i = 0; i < shown; ++i) {
    const analysis::LabelFigure& l = s.labels[i];
    std::string name = l.label == 0 ? "(no label)" : printable(l.name);
    if (name.size() > 22) name = name.substr(0, 19) + "...";
    std::string what_if = "-";
    if (l.what_if) {
      char head[64];
      std::snprintf(head, sizeof head, "%g %% faster:", l.what_if->percent);
      what_if = head;
      for (std::size_t k = 0; k < l.what_if_workers.size() && k < l.what_if_ns.size() && k < l.baseline_ns.size();
           ++k) {
        const double gain = l.what_if_ns[k] > 0 ? l.baseline_ns[k] / l.what_if_ns[k] : 0;
        what_if += (k ? "; P=" : " P=") + std::to_string(l.what_if_workers[k]) + " " +
                   format_duration_ns(l.baseline_ns[k]) + " -> " + format_duration_ns(l.what_if_ns[k]) + " (" +
                   ratio(gain) + "x)";
      }
      if (l.what_if_workers.empty()) what_if += " " + not_computed(s, {"what-if", "simulat"});
    }
    std::printf("%-22s %9" PRIu64 " %12s %12s %8s  %s\n", name.c_str(), l.tasks, format_duration_ns(l.work_ns).c_str(),
                format_duration_ns(l.span_ns).c_str(), percent(l.span_share).c_str(), what_if.c_str());
  }
  if (shown < s.labels.size())
    std::printf("(%zu more labels with less of the span; --json lists them all)\n", s.labels.size() - shown);
}

// window: "" for the whole run, else " from X to Y" (times from the first event).
void print_text(const std::string& path, const std::string& window, const Scalability& s, const analysis::Analysis& a,
                std::size_t top) {
  std::printf("%s: scalability of the recorded run%s\n\n", path.c_str(), window.c_str());
  print_figures(s);
  print_curve(s);
  print_chart(s);
  print_path(s, a, top);
  print_labels(s);
  if (!s.not_computed.empty()) {
    std::printf("\nnot computed:\n");
    for (const std::string& why : s.not_computed) std::printf("  - %s\n", why.c_str());
  }
  if (!s.notes.empty()) {
    std::printf("\nnotes:\n");
    for (const std::string& note : s.notes) std::printf("  - %s\n", note.c_str());
  }
}

}  // namespace

int run_scale(std::span<char* const> args) {
  std::string error;
  auto parsed = parse_args(args,
                           {{"--json", "", false},
                            {"--no-progress", "", false},
                            {"--workers", "", true},
                            {"--topology", "", true},
                            {"--what-if", "", true, true},
                            {"--top", "", true},
                            {"--from", "", true},
                            {"--to", "", true}},
                           &error);
  if (!parsed) return usage_error("scale", error);
  if (const auto exit = answer_help(*parsed, kHelp)) return *exit;
  if (parsed->positional.size() != 1)
    return usage_error("scale", parsed->positional.empty() ? "missing FILE" : "expected one FILE");
  analysis::ScaleOptions options;
  std::size_t top = kDefaultTop;
  if (parsed->has("--workers")) {
    const std::string& v = parsed->options["--workers"];
    auto list = tools::parse_number_list<std::uint32_t>(v, 1, kMaxCurveWorkers);
    if (!list)
      return usage_error("scale", "--workers takes a list of numbers from 1 to " + std::to_string(kMaxCurveWorkers) +
                                      ", not '" + v + "'");
    options.workers = std::move(*list);
  }
  if (parsed->has("--topology")) {
    const std::string& v = parsed->options["--topology"];
    options.topology = analysis::parse_topology(v, &error);
    if (!options.topology) {
      // parse_topology's sentence names the text too: keep only why.
      const std::string named = "topology \"" + v + "\": ";
      if (error.rfind(named, 0) == 0) error.erase(0, named.size());
      return usage_error(
          "scale", "--topology takes a spec such as \"2 sockets x 32 cores x 2 threads\", not '" + v + "': " + error);
    }
  }
  for (const std::string& v : parsed->all["--what-if"]) {
    auto what_if = analysis::parse_what_if(v, &error);
    if (!what_if) return usage_error("scale", "--what-if takes LABEL=PCT (0 < PCT <= 100), not '" + v + "': " + error);
    for (const analysis::WhatIf& earlier : options.what_if)
      if (earlier.label == what_if->label)
        return usage_error(
            "scale", "--what-if names '" + printable(what_if->label) + "' twice: give one percentage for each label");
    options.what_if.push_back(std::move(*what_if));
  }
  double from_ns = 0, to_ns = std::numeric_limits<double>::infinity();
  if (!time_option(*parsed, "--from", &from_ns, &error) || !time_option(*parsed, "--to", &to_ns, &error))
    return usage_error("scale", error);
  if (to_ns < from_ns) return usage_error("scale", "--to is before --from");
  const bool windowed = parsed->has("--from") || parsed->has("--to");
  if (parsed->has("--top")) {
    const std::string& v = parsed->options["--top"];
    const auto n = tools::parse_number<std::size_t>(v, 0, kMaxTop);
    if (!n)
      return usage_error("scale", "--top takes a number from 0 to " + std::to_string(kMaxTop) + ", not '" + v + "'");
    top = *n;
  }
  options.top_labels = top;

  const std::string& path = parsed->positional[0];
  analysis::Analysis analysis;
  const Scan scan = analyse_trace(path, !parsed->has("--no-progress"), analysis);
  if (scan.io_failed) {
    for (const TraceError& p : scan.problems)
      if (p.kind == TraceErrorKind::io) std::fprintf(stderr, "lantern-trace scale: %s\n", p.message.c_str());
    return kExitUsage;
  }
  if (nothing_to_report("scale", path, scan)) return kExitProblems;
  if (!scan.problems.empty()) {
    std::fprintf(stderr, "lantern-trace scale: %s has %zu problem(s):\n", path.c_str(), scan.problems.size());
    print_problems("lantern-trace scale: " + path, scan.problems);
  }
  // A what-if for a label no task has would print a gain of nothing: say so instead.
  for (const analysis::WhatIf& w : options.what_if) {
    const auto& names = analysis.labels().all();
    if (std::none_of(names.begin(), names.end(), [&](const auto& entry) { return entry.second == w.label; })) {
      std::string known;
      for (const auto& [id, name] : names) known += (known.empty() ? "" : ", ") + printable(name);
      std::fprintf(stderr, "lantern-trace scale: --what-if: no task in %s has the label '%s' (its labels: %s)\n",
                   path.c_str(), printable(w.label).c_str(), known.empty() ? "none" : known.c_str());
      return kExitUsage;
    }
  }
  analysis::Tick from = 0, to = analysis::kOpenEnd;
  std::string window;
  if (windowed && !analysis.empty()) {
    from = tick_after_first(analysis, from_ns);
    if (!std::isinf(to_ns)) to = tick_after_first(analysis, to_ns);
    const double length_ns = analysis.ticks_to_ns(static_cast<double>(analysis.last_tick() - analysis.first_tick()));
    if (from > analysis.last_tick())
      return usage_error("scale", "--from " + parsed->options["--from"] + " is after the trace's end (" +
                                      format_duration_ns(length_ns) + ")");
    window = " from " + format_duration_ns(from_ns) + " to " +
             format_duration_ns(std::isinf(to_ns) ? length_ns : std::min(to_ns, length_ns)) + " (of " +
             format_duration_ns(length_ns) + ")";
  }
  const Scalability s = analysis::scalability(analysis, options, from, to);
  if (parsed->has("--json")) {
    analysis::JsonOut j(stdout);
    analysis::write_json(j, s);
    j.raw("\n");
    if (!j.flush()) {
      tools::stdout_written(errno);  // "lantern-trace scale: cannot write the output: REASON"
      return kExitUsage;
    }
  } else {
    print_text(path, window, s, analysis, top);
  }
  return exit_code(scan);
}

}  // namespace lantern::trace::cli
