// cmd_stats.cpp - `lantern-trace stats FILE`: where the workers' time went.
#include <algorithm>
#include <cinttypes>

#include "cli.hpp"
#include "commands.hpp"
#include "trace_stats.hpp"

namespace lantern::trace::cli {
namespace {

constexpr const char* kHelp =
    "usage: lantern-trace stats [--no-progress] FILE\n"
    "\n"
    "Per worker: the share of time in each state (active, idle, sleepy, sleeping; from\n"
    "the worker's first state event to the end of the trace), tasks run, steals, helps\n"
    "and wakes. Then steals by distance (smt, l2, llc, numa, remote), and p50/p90/p99\n"
    "latencies of the ready wait (time a task waited in a lane, from lane_pop) and of\n"
    "task duration (task_begin to task_end on one worker; a task's duration includes the\n"
    "tasks nested in it while it waited in a join), also per task label (the name a task\n"
    "gave itself with lantern::label_task; 'no label' for the rest), and of IO operations\n"
    "(io_submit to io_complete). Ticks are converted to time with the clock calibration\n"
    "in the trace header.\n"
    "\n"
    "options:\n"
    "  --no-progress   no progress bar (it is only drawn when stderr is a terminal)\n"
    "  -h, --help      this text\n"
    "\n"
    "exit status: 0 ok, 1 the trace has problems (printed on stderr; the statistics\n"
    "             cover what could be read), 2 bad options or the file cannot be read\n";

void print_percentiles(const char* what, const Percentiles& p) {
  if (p.count == 0) {
    std::printf("%s: no samples\n", what);
    return;
  }
  std::printf("%s: %" PRIu64 " samples, p50 %s, p90 %s, p99 %s, max %s\n", what, p.count,
              format_duration_ns(p.p50_ns).c_str(), format_duration_ns(p.p90_ns).c_str(),
              format_duration_ns(p.p99_ns).c_str(), format_duration_ns(p.max_ns).c_str());
}

void print_labels(const TraceStats& stats, const LabelTable& names) {
  // Labelled tasks first, most frequent first; the unlabelled ones last.
  std::vector<std::pair<std::uint64_t, const Percentiles*>> rows;
  for (const auto& [label, p] : stats.by_label)
    if (label != 0) rows.emplace_back(label, &p);
  if (rows.empty()) return;
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second->count > b.second->count; });
  if (auto it = stats.by_label.find(0); it != stats.by_label.end()) rows.emplace_back(0, &it->second);
  std::printf("\ntask duration by label (inclusive of nested tasks)\n");
  std::printf("%-28s%10s%11s%11s%11s%11s\n", "label", "tasks", "p50", "p90", "p99", "max");
  for (const auto& [label, p] : rows) {
    std::string name = label == 0                  ? "(no label)"
                       : label > 0xFFFF'FFFFu      ? "label " + std::to_string(label)
                                                   : printable(names.display_name(static_cast<std::uint32_t>(label)));
    if (name.size() > 27) name = name.substr(0, 24) + "...";
    std::printf("%-28s%10" PRIu64 "%11s%11s%11s%11s\n", name.c_str(), p->count, format_duration_ns(p->p50_ns).c_str(),
                format_duration_ns(p->p90_ns).c_str(), format_duration_ns(p->p99_ns).c_str(),
                format_duration_ns(p->max_ns).c_str());
  }
}

void print_row(const std::string& label, const WorkerSummary& w) {
  const double total = static_cast<double>(w.total_state_ticks());
  std::printf("%8s", label.c_str());
  for (int s = 0; s <= kStateCount; ++s) {
    if (s == kStateCount && w.state_ticks[s] == 0) {
      std::printf("%9s", "-");
      continue;
    }
    if (total > 0) std::printf("%8.1f%%", 100.0 * static_cast<double>(w.state_ticks[s]) / total);
    else std::printf("%9s", "-");
  }
  std::printf("%10" PRIu64 "%9" PRIu64 "%8" PRIu64 "%8" PRIu64 "\n", w.tasks, w.steals, w.helps, w.wakes);
}

}  // namespace

int run_stats(std::span<char* const> args) {
  std::string error;
  auto parsed = parse_args(args, {{"--no-progress", "", false}}, &error);
  if (!parsed) return usage_error("stats", error);
  if (parsed->help) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  if (parsed->positional.size() != 1)
    return usage_error("stats", parsed->positional.empty() ? "missing FILE" : "expected one FILE");

  StatsBuilder builder;
  const Scan scan = scan_trace(parsed->positional[0], !parsed->has("--no-progress"), [&](const DecodedChunk& chunk) {
    for (const Event& e : chunk.events) builder.add(e);
  });
  if (scan.io_failed) {
    for (const TraceError& p : scan.problems)
      if (p.kind == TraceErrorKind::io) std::fprintf(stderr, "lantern-trace stats: %s\n", p.message.c_str());
    return kExitUsage;
  }
  if (!scan.problems.empty()) {
    std::fprintf(stderr, "lantern-trace stats: %s has %zu problem(s):\n", parsed->positional[0].c_str(),
                 scan.problems.size());
    print_problems(stderr, scan.problems);
  }
  const TraceStats stats = builder.finish(scan.header, scan.max_tick);

  std::printf("%" PRIu64 " events over %.6f s\n\n", scan.events, scan.duration_seconds());
  std::printf("time share by state, tasks, steals, helps and wakes per worker\n");
  std::printf("%8s", "worker");
  for (std::string_view name : kStateNames) std::printf("%9s", std::string(name).c_str());
  std::printf("%9s%10s%9s%8s%8s\n", "other", "tasks", "steals", "helps", "wakes");
  WorkerSummary all;
  for (const auto& [id, w] : stats.workers) {
    print_row(std::to_string(id), w);
    for (int s = 0; s <= kStateCount; ++s) all.state_ticks[s] += w.state_ticks[s];
    all.tasks += w.tasks;
    all.steals += w.steals;
    all.helps += w.helps;
    all.wakes += w.wakes;
  }
  print_row("all", all);

  std::printf("\nsteals by distance:");
  for (int d = 0; d < kDistanceCount; ++d)
    std::printf(" %s %" PRIu64 "%s", std::string(kDistanceNames[d]).c_str(), stats.steals_by_distance[d],
                d + 1 < kDistanceCount ? "," : "");
  if (stats.steals_by_distance[kDistanceCount] > 0)
    std::printf(", other %" PRIu64, stats.steals_by_distance[kDistanceCount]);
  std::printf("\n\n");
  print_percentiles("ready wait (lane_pop)", stats.ready_wait);
  print_percentiles("task duration (inclusive of nested tasks)", stats.task_duration);
  if (stats.unmatched_task_ends > 0 || stats.unfinished_tasks > 0)
    std::printf("(%" PRIu64 " task ends without a recorded begin, %" PRIu64 " tasks still running at the end)\n",
                stats.unmatched_task_ends, stats.unfinished_tasks);
  print_labels(stats, scan.labels);
  if (stats.io_submitted > 0 || stats.io_completed > 0) {
    std::printf("\nIO: %" PRIu64 " operations submitted, %" PRIu64 " completed (%" PRIu64 " failed)\n",
                stats.io_submitted, stats.io_completed, stats.io_failed);
    print_percentiles("IO latency (io_submit to io_complete)", stats.io_latency);
  }
  return exit_code(scan);
}

}  // namespace lantern::trace::cli
