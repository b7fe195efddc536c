// SPDX-License-Identifier: Apache-2.0
// cmd_stats.cpp - `lantern-trace stats FILE`: where the workers' time went. Every figure
// comes from the one fold of the trace (lantern::analysis::Summary), the figures the
// viewer and the Chrome export show for the same file.
#include <algorithm>
#include <cerrno>
#include <cinttypes>

#include "cli.hpp"
#include "commands.hpp"
#include "lantern/analysis/json_out.hpp"
#include "lantern/tools/program_cli.hpp"

namespace lantern::trace::cli {
namespace {

using analysis::JsonOut;
using analysis::Percentiles;
using analysis::Summary;
using analysis::WorkerFigures;

constexpr const char* kHelp =
    "usage: lantern-trace stats [--no-progress] [--json] FILE\n"
    "\n"
    "Events by type. Per worker: the share of time in each state (active, idle, sleepy,\n"
    "sleeping; from the worker's first event - its start - to its 'stopping' state\n"
    "event, or to the end of the trace if it has none: the span the recorder's counters\n"
    "cover, so the demo's table shows the same shares; 'unknown': time whose state no\n"
    "event says, in a trace that starts mid-run; lantern-trace diff and the viewer show\n"
    "the same shares), tasks run, steals, helps and wakes (times it was woken). Then\n"
    "steals by distance (smt, l2, llc, numa, remote), wakes by cause (work, latch,\n"
    "io), and p50/p90/p99/max of the ready wait\n"
    "(time a task waited in a lane, from lane_pop), of task duration (task_begin to\n"
    "task_end on one worker; a task's duration includes the tasks nested in it while it\n"
    "waited in a join), also per task label (the name a task gave itself with\n"
    "lantern::label_task; 'no label' for the rest), of wake latency - IO WAKES LEFT OUT:\n"
    "an IO completion has no waker to time it from (the count of IO wakes is printed) -\n"
    "and of IO operations (io_submit to io_complete). Last, the health warnings (the\n"
    "viewer's Health panel: long task, lane head waited, work queued while all slept,\n"
    "searching without work, events dropped, deadlock suspected).\n"
    "\n"
    "A count of events the trace's recording level does not record (tasks, steals and\n"
    "helps at level states) is not 0 but unknown: it prints as '-', with a line saying\n"
    "from which level it is recorded. The event count is of the events kept; events\n"
    "rejected as damage (impossible worker id, type or state) are counted apart.\n"
    "\n"
    "Percentiles are the midpoint of the bucket holding the value (buckets 1/8 of a\n"
    "power of two wide: within 6.25 %), kept within the smallest and largest sample (so\n"
    "never above the max), computed as the recorder's exact histograms and the viewer\n"
    "compute them, so the demo, stats, diff and the viewer show the same p50 for the\n"
    "same run, and the demo's table and stats print it as the same text (Prometheus\n"
    "gets the same buckets at power-of-two edges only, and its histogram_quantile\n"
    "interpolates). A figure with no samples says why, from the\n"
    "recording level in the trace header: the ready wait's lane_pop events, for one,\n"
    "are recorded at level full only.\n"
    "Ticks are converted to time with the clock calibration in the trace header.\n"
    "\n"
    "options:\n"
    "  --json          the same figures as one JSON object on stdout; a count the\n"
    "                  trace's level does not record is null (never 0), and\n"
    "                  \"not_recorded\" maps each such event type to why; an empty\n"
    "                  figure has count 0 and \"no_samples\" (why);\n"
    "                  \"rejected_events\" counts the events left out as damage;\n"
    "                  \"warnings\" counts the health warnings, \"warnings_by_kind\"\n"
    "                  the occurrences of each kind (one warning may stand for\n"
    "                  many occurrences); \"io_unpaired\": IO events whose partner\n"
    "                  is not in the trace (left out of io_latency)\n"
    "  --no-progress   no progress bar (it is only drawn when stderr is a terminal)\n"
    "  -h, --help      this text\n"
    "\n"
    "exit status: 0 ok, 1 the trace has problems (printed on stderr; the statistics\n"
    "             cover what could be read; none at all, nothing on stdout, for a file\n"
    "             that is not a trace), 2 bad options, or a file cannot be read or\n"
    "             written (the report)\n";

void print_percentiles(const char* what, const Percentiles& p) {
  std::printf("%s: %s\n", what, analysis::format_percentiles(p).c_str());  // the demo's table prints the same text
}

// The per-worker table's counts and the events each counts; a count whose events the
// trace's level does not record prints as "-" (Summary::counts), never as 0.
struct CountColumn {
  const char* name;
  EventId source;
  std::uint64_t WorkerFigures::*value;
  int width;
};
constexpr CountColumn kCountColumns[] = {{"tasks", EventId::task_begin, &WorkerFigures::tasks, 10},
                                         {"steals", EventId::steal, &WorkerFigures::steals, 9},
                                         {"helps", EventId::help, &WorkerFigures::helps, 8},
                                         {"wakes", EventId::wake, &WorkerFigures::wakes, 8}};

// not_recorded_note: "tasks, steals: not recorded at level states (task_begin, steal
// events are recorded at level tasks and above)", one clause per level needed.
std::string not_recorded_note(const Summary& s) {
  std::string note;
  for (int level = 0; level < static_cast<int>(std::size(kLevelNames)); ++level) {
    std::string columns, events;
    for (const CountColumn& c : kCountColumns) {
      if (s.counts(c.source) || static_cast<int>(info(c.source).level) != level) continue;
      columns += (columns.empty() ? "" : ", ") + std::string(c.name);
      events += (events.empty() ? "" : ", ") + std::string(info(c.source).name);
    }
    if (columns.empty()) continue;
    note += (note.empty() ? "" : "; ") + columns + ": not recorded at level " +
            (s.level ? std::string(kLevelNames[static_cast<int>(*s.level)]) : "?") + " (" + events +
            " events are recorded at level " + std::string(kLevelNames[level]) + " and above)";
  }
  return note;
}

std::string label_text(std::uint32_t label, const LabelTable& names) {
  return label == 0 ? "(no label)" : printable(names.display_name(label));
}

void print_labels(const Summary& s, const LabelTable& names) {
  // Labelled tasks first, most frequent first; the unlabelled ones last.
  std::vector<std::pair<std::uint32_t, const Percentiles*>> rows;
  for (const auto& [label, p] : s.duration_by_label)
    if (label != 0) rows.emplace_back(label, &p);
  if (rows.empty()) return;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second->count > b.second->count; });
  if (auto it = s.duration_by_label.find(0); it != s.duration_by_label.end()) rows.emplace_back(0, &it->second);
  std::printf("\ntask duration by label (inclusive of nested tasks; tasks that ended)\n");
  std::printf("%-28s%10s%11s%11s%11s%11s\n", "label", "tasks", "p50", "p90", "p99", "max");
  for (const auto& [label, p] : rows) {
    std::string name = label_text(label, names);
    if (name.size() > 27) name = name.substr(0, 24) + "...";
    std::printf("%-28s%10" PRIu64 "%11s%11s%11s%11s\n", name.c_str(), p->count, format_duration_ns(p->p50_ns).c_str(),
                format_duration_ns(p->p90_ns).c_str(), format_duration_ns(p->p99_ns).c_str(),
                format_duration_ns(p->max_ns).c_str());
  }
}

void print_row(const std::string& label, const WorkerFigures& w, const Summary& s) {
  // The shares every view prints (analysis::state_shares: of the worker's whole span,
  // unknown time its own column), which lantern-trace diff and the viewer show too.
  const analysis::StateShares shares = analysis::state_shares(w.state_ticks);
  const bool any = std::any_of(w.state_ticks.begin(), w.state_ticks.end(), [](std::uint64_t t) { return t > 0; });
  std::printf("%8s", label.c_str());
  for (int s = 0; s <= kStateCount; ++s) {
    if (!any || (s == kStateCount && w.state_ticks[static_cast<std::size_t>(s)] == 0)) {
      std::printf("%9s", "-");
      continue;
    }
    std::printf("%8.1f%%", 100.0 * shares[static_cast<std::size_t>(s)]);
  }
  for (const CountColumn& c : kCountColumns)
    std::printf("%*s", c.width, s.counts(c.source) ? std::to_string(w.*c.value).c_str() : "-");
  std::printf("\n");
}

void print_text(const Scan& scan, const Summary& s, const analysis::Analysis& a) {
  std::printf("%" PRIu64 " events over %.6f s, recorded at level %s\n", s.events, scan.duration_seconds(),
              s.level ? std::string(kLevelNames[static_cast<int>(*s.level)]).c_str() : "(not in the header)");
  if (s.rejected_events > 0)
    std::printf("%" PRIu64 " more events rejected as damage (impossible worker id, type or state) and left out\n",
                s.rejected_events);
  std::printf("\n");
  std::printf("events by type:");
  for (int t = 0; t < kEventCount; ++t)
    std::printf("%s %s %" PRIu64, t ? "," : "", std::string(kEventInfo[t].name).c_str(),
                s.events_by_type[static_cast<std::size_t>(t)]);
  std::printf("\n\ntime share by state, tasks, steals, helps and wakes (times woken) per worker\n");
  std::printf("(time share: of each worker's time from its start to its stop, or to the end of the trace)\n");
  std::printf("%8s", "worker");
  for (int k = 0; k < analysis::kStateSlots; ++k) std::printf("%9s", std::string(analysis::state_slot_name(k)).c_str());
  for (const CountColumn& c : kCountColumns) std::printf("%*s", c.width, c.name);
  std::printf("\n");
  WorkerFigures all;
  for (std::size_t id = 0; id < s.workers.size(); ++id) {
    const WorkerFigures& w = s.workers[id];
    print_row(std::to_string(id), w, s);
    for (std::size_t k = 0; k < all.state_ticks.size(); ++k) all.state_ticks[k] += w.state_ticks[k];
    all.tasks += w.tasks;
    all.steals += w.steals;
    all.helps += w.helps;
    all.wakes += w.wakes;
  }
  print_row("all", all, s);
  if (const std::string note = not_recorded_note(s); !note.empty()) std::printf("%s\n", note.c_str());

  std::printf("\nsteals by distance:");
  if (!s.counts(EventId::steal))
    std::printf(" %s", a.no_samples_reason(EventId::steal).c_str());  // "not recorded at ..."
  for (int d = 0; d < kDistanceCount && s.counts(EventId::steal); ++d)
    std::printf(" %s %" PRIu64 "%s", std::string(kDistanceNames[d]).c_str(),
                s.steals_by_distance[static_cast<std::size_t>(d)], d + 1 < kDistanceCount ? "," : "");
  if (s.steals_by_distance[kDistanceCount] > 0) std::printf(", other %" PRIu64, s.steals_by_distance[kDistanceCount]);
  if (s.counts(EventId::wake)) {
    std::printf("\nwakes: %" PRIu64 " (", s.wakes);
    for (int c = 0; c < kWakeCauseCount; ++c)
      std::printf("%s%s %" PRIu64, c ? ", " : "", std::string(kWakeCauseNames[c]).c_str(),
                  s.wakes_by_cause[static_cast<std::size_t>(c)]);
    std::printf("); %" PRIu64 " by a worker of the pool\n", s.wake_arrows);
    std::printf("sleeps: %" PRIu64 " (times a worker fell asleep)\n\n", s.sleeps);
  } else {
    std::printf("\nwakes: %s\n\n", a.no_samples_reason(EventId::wake).c_str());
  }
  print_percentiles("ready wait (lane_pop)", s.ready_wait);
  print_percentiles("task duration (inclusive of nested tasks)", s.task_duration);
  char what[128];
  std::snprintf(what, sizeof what, "wake latency (IO wakes left out: %" PRIu64 ")", s.io_wakes);
  print_percentiles(what, s.wake_latency);
  if (s.unmatched_task_ends > 0 || s.unfinished_tasks > 0)
    std::printf("(%" PRIu64 " task ends without a recorded begin, %" PRIu64 " tasks still running at the end)\n",
                s.unmatched_task_ends, s.unfinished_tasks);
  print_labels(s, scan.labels);
  if (s.io_submitted > 0 || s.io_completed > 0) {
    std::printf("\nIO: %" PRIu64 " operations submitted, %" PRIu64 " completed (%" PRIu64 " failed)", s.io_submitted,
                s.io_completed, s.io_failed);
    if (s.io_unpaired > 0) {
      std::printf("; %" PRIu64
                  " submissions or completions without their partner (lost events, or before the trace "
                  "began): not in the IO latency",
                  s.io_unpaired);
    }
    std::printf("\n");
    print_percentiles("IO latency (io_submit to io_complete)", s.io_latency);
  }
  std::printf("\ndropped: %" PRIu64 " events lost (%" PRIu64 " markers)", s.dropped_events, s.drop_markers);
  for (int r = 0; r < kDropReasonCount; ++r) {
    if (s.dropped_by_reason[r])
      std::printf("; %s: %" PRIu64, std::string(kDropReasonNames[r]).c_str(), s.dropped_by_reason[r]);
  }
  std::printf("\n");
  std::printf("warnings: %" PRIu64, s.warnings);
  bool any = false;
  for (int k = 0; k < analysis::kProblemKindCount; ++k) {
    if (s.warnings_by_kind[static_cast<std::size_t>(k)] == 0) continue;
    std::printf("%s%s %" PRIu64, any ? ", " : " (", analysis::problem_kind_name(static_cast<analysis::ProblemKind>(k)),
                s.warnings_by_kind[static_cast<std::size_t>(k)]);
    any = true;
  }
  std::printf("%s\n", any ? " occurrences)" : "");
}

// json_count: a count, or null when the trace's level does not record its events
// (the JSON's "not_recorded" says why).
void json_count(JsonOut& j, const Summary& s, EventId source, std::uint64_t n) {
  if (s.counts(source))
    j.u64(n);
  else
    j.raw("null");
}

void json_percentiles(JsonOut& j, const char* key, const Percentiles& p) {
  j.raw(",\"").raw(key).raw("\":{\"count\":").u64(p.count).raw(",\"p50_ns\":").f64(p.p50_ns);
  j.raw(",\"p90_ns\":").f64(p.p90_ns).raw(",\"p99_ns\":").f64(p.p99_ns).raw(",\"max_ns\":").f64(p.max_ns);
  if (p.count == 0) j.raw(",\"no_samples\":").string(p.no_samples);
  j.raw("}");
}

bool print_json(const Summary& s, const LabelTable& names, const analysis::Analysis& a) {
  JsonOut j(stdout);
  j.raw("{\"level\":");
  if (s.level)
    j.string(std::string(kLevelNames[static_cast<int>(*s.level)]));
  else
    j.raw("null");
  j.raw(",\"not_recorded\":{");  // event type -> why its counts are null
  bool first = true;
  for (int t = 0; t < kEventCount; ++t) {
    if (s.counts(static_cast<EventId>(t))) continue;
    j.raw(first ? "" : ",").string(std::string(kEventInfo[t].name)).raw(":");
    j.string(a.no_samples_reason(static_cast<EventId>(t)));
    first = false;
  }
  j.raw("},\"events\":").u64(s.events).raw(",\"rejected_events\":").u64(s.rejected_events).raw(",\"events_by_type\":{");
  for (int t = 0; t < kEventCount; ++t) {
    j.raw(t ? "," : "")
        .string(std::string(kEventInfo[t].name))
        .raw(":")
        .u64(s.events_by_type[static_cast<std::size_t>(t)]);
  }
  j.raw("},\"workers\":[");
  for (std::size_t w = 0; w < s.workers.size(); ++w) {
    const WorkerFigures& f = s.workers[w];
    j.raw(w ? "," : "").raw("{\"tasks\":");
    json_count(j, s, EventId::task_begin, f.tasks);
    j.raw(",\"steals\":");
    json_count(j, s, EventId::steal, f.steals);
    j.raw(",\"helps\":");
    json_count(j, s, EventId::help, f.helps);
    j.raw(",\"wakes\":");
    json_count(j, s, EventId::wake, f.wakes);
    j.raw(",\"wakes_performed\":");
    json_count(j, s, EventId::wake, f.wakes_performed);
    j.raw(",\"sleeps\":");
    json_count(j, s, EventId::state, f.sleeps);
    j.raw(",\"dropped\":").u64(f.dropped);
    j.raw(",\"state_ticks\":{");  // over the worker's span, as the text's shares
    for (int k = 0; k <= kStateCount; ++k) {
      j.raw(k ? "," : "").string(std::string(analysis::state_slot_name(k))).raw(":");
      j.u64(f.state_ticks[static_cast<std::size_t>(k)]);
    }
    j.raw("}}");
  }
  j.raw("],\"tasks\":");
  json_count(j, s, EventId::task_begin, s.tasks);
  j.raw(",\"tasks_by_label\":");
  if (s.counts(EventId::task_begin)) {
    j.raw("{");
    first = true;
    for (const auto& [label, n] : s.tasks_by_label) {
      j.raw(first ? "" : ",").string(label_text(label, names)).raw(":").u64(n);
      first = false;
    }
    j.raw("}");
  } else {
    j.raw("null");
  }
  j.raw(",\"steals_by_distance\":");
  if (s.counts(EventId::steal)) {
    j.raw("{");
    for (int d = 0; d <= kDistanceCount; ++d) {
      j.raw(d ? "," : "").string(d < kDistanceCount ? std::string(kDistanceNames[d]) : "other").raw(":");
      j.u64(s.steals_by_distance[static_cast<std::size_t>(d)]);
    }
    j.raw("}");
  } else {
    j.raw("null");
  }
  j.raw(",\"wakes\":");
  json_count(j, s, EventId::wake, s.wakes);
  j.raw(",\"wakes_by_cause\":{");
  for (int c = 0; c < kWakeCauseCount; ++c) {
    j.raw(c ? "," : "").string(std::string(kWakeCauseNames[c])).raw(":");
    json_count(j, s, EventId::wake, s.wakes_by_cause[static_cast<std::size_t>(c)]);
  }
  j.raw("}");
  // A count of events of `type`: null when the trace's level does not record them.
  auto count_field = [&](const char* key, EventId type, std::uint64_t value) {
    j.raw(",\"").raw(key).raw("\":");
    json_count(j, s, type, value);
  };
  count_field("io_wakes_left_out_of_wake_latency", EventId::wake, s.io_wakes);
  count_field("wakes_by_a_worker", EventId::wake, s.wake_arrows);
  count_field("sleeps", EventId::state, s.sleeps);
  count_field("lane_pops", EventId::lane_pop, s.lane_pops);
  count_field("releases", EventId::release, s.releases);
  count_field("io_submitted", EventId::io_submit, s.io_submitted);
  count_field("io_completed", EventId::io_complete, s.io_completed);
  count_field("io_failed", EventId::io_complete, s.io_failed);
  count_field("io_unpaired", EventId::io_complete, s.io_unpaired);
  j.raw(",\"dropped_events\":").u64(s.dropped_events).raw(",\"drop_markers\":").u64(s.drop_markers);
  j.raw(",\"dropped_by_reason\":{");
  for (int r = 0; r < kDropReasonCount; ++r) {
    j.raw(r ? ",\"" : "\"").raw(std::string(kDropReasonNames[r])).raw("\":").u64(s.dropped_by_reason[r]);
  }
  j.raw("}");
  count_field("unmatched_task_ends", EventId::task_end, s.unmatched_task_ends);
  count_field("unfinished_tasks", EventId::task_begin, s.unfinished_tasks);
  count_field("deadlocks", EventId::deadlock, s.deadlocks);
  json_percentiles(j, "ready_wait", s.ready_wait);
  json_percentiles(j, "task_duration", s.task_duration);
  json_percentiles(j, "wake_latency", s.wake_latency);
  json_percentiles(j, "io_latency", s.io_latency);
  j.raw(",\"duration_by_label\":{");
  first = true;
  for (const auto& [label, p] : s.duration_by_label) {
    j.raw(first ? "" : ",").string(label_text(label, names)).raw(":{\"count\":").u64(p.count);
    j.raw(",\"p50_ns\":").f64(p.p50_ns).raw(",\"p90_ns\":").f64(p.p90_ns).raw(",\"p99_ns\":").f64(p.p99_ns);
    j.raw(",\"max_ns\":").f64(p.max_ns).raw("}");  // the text table's max column too
    first = false;
  }
  j.raw("},\"warnings\":").u64(s.warnings).raw(",\"warnings_by_kind\":{");
  for (int k = 0; k < analysis::kProblemKindCount; ++k) {
    j.raw(k ? "," : "").string(analysis::problem_kind_name(static_cast<analysis::ProblemKind>(k))).raw(":");
    j.u64(s.warnings_by_kind[static_cast<std::size_t>(k)]);
  }
  j.raw("}}\n");
  return j.flush();
}

}  // namespace

int run_stats(std::span<char* const> args) {
  std::string error;
  auto parsed = parse_args(args, {{"--no-progress", "", false}, {"--json", "", false}}, &error);
  if (!parsed) return usage_error("stats", error);
  if (const auto exit = answer_help(*parsed, kHelp)) return *exit;
  if (parsed->positional.size() != 1)
    return usage_error("stats", parsed->positional.empty() ? "missing FILE" : "expected one FILE");

  analysis::Analysis analysis;
  const Scan scan = analyse_trace(parsed->positional[0], !parsed->has("--no-progress"), analysis);
  if (scan.io_failed) {
    for (const TraceError& p : scan.problems)
      if (p.kind == TraceErrorKind::io) std::fprintf(stderr, "lantern-trace stats: %s\n", p.message.c_str());
    return kExitUsage;
  }
  if (nothing_to_report("stats", parsed->positional[0], scan)) return kExitProblems;  // the counts are unknown, not 0
  if (!scan.problems.empty()) {
    std::fprintf(stderr, "lantern-trace stats: %s has %zu problem(s):\n", parsed->positional[0].c_str(),
                 scan.problems.size());
    print_problems("lantern-trace stats: " + parsed->positional[0], scan.problems);
  }
  const Summary summary = analysis.summary();
  if (parsed->has("--json")) {
    if (!print_json(summary, scan.labels, analysis)) {
      tools::stdout_written(errno);  // "lantern-trace stats: cannot write the output: REASON"
      return kExitUsage;
    }
  } else {
    print_text(scan, summary, analysis);
  }
  return exit_code(scan);
}

}  // namespace lantern::trace::cli
