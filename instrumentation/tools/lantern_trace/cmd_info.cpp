// SPDX-License-Identifier: Apache-2.0
// cmd_info.cpp - `lantern-trace info FILE`: what a trace is, at a glance.
#include <cinttypes>
#include <ctime>
#include <map>

#include "cli.hpp"
#include "commands.hpp"
#include "lantern/tools/program_cli.hpp"

namespace lantern::trace::cli {
namespace {

constexpr const char* kHelp =
    "usage: lantern-trace info [--no-progress] FILE\n"
    "\n"
    "Prints a trace's header (producer, host, CPU, topology, workers, clock, the level\n"
    "recording started at, what recording one event cost), its duration, chunk and event counts, bytes per event,\n"
    "events by type, the events lost (from 'dropped' markers, by reason: ring_full, the\n"
    "app's rings; slow_viewer, a live stream's viewer that read too slowly), and the\n"
    "task labels the trace names\n"
    "(id, name, how many task_label events use it). Damaged or cut-off files are read\n"
    "as far as possible; their problems are counted at the end and listed on stderr.\n"
    "Events are counted as stats counts them (the one analysis): events with an\n"
    "impossible worker id, type or state are left out, and counted on a line of their\n"
    "own when there are any.\n"
    "\n"
    "options:\n"
    "  --no-progress   no progress bar (it is only drawn when stderr is a terminal)\n"
    "  -h, --help      this text\n"
    "\n"
    "exit status: 0 ok, 1 the trace has problems (the report shows what was read;\n"
    "             nothing is printed on stdout for a file that is not a trace at all),\n"
    "             2 bad options, or a file cannot be read or written (the report)\n";

std::string format_wall_clock(std::int64_t unix_ns) {
  if (unix_ns == 0) return "unknown";
  const std::time_t seconds = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  if (!::gmtime_r(&seconds, &tm)) return std::to_string(unix_ns) + " ns since the epoch";
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

void print_header(const TraceHeader& h) {
  std::printf("format      version %u\n", static_cast<unsigned>(h.version));
  std::printf("producer    %s\n", printable(h.producer).c_str());
  std::printf("host        %s\n", printable(h.hostname).c_str());
  std::printf("cpu         %s\n", printable(h.cpu_model).c_str());
  std::printf("topology    %s\n", printable(h.topology).c_str());
  if (!h.cpus.empty()) {
    std::printf("cpus        %zu (os_cpu core l2 llc node package):", h.cpus.size());
    for (std::size_t i = 0; i < h.cpus.size(); ++i) {
      const CpuRow& c = h.cpus[i];
      if (i % 4 == 0) std::printf("\n           ");
      std::printf("  [%d %d %d %d %d %d]", c.os_cpu, c.core, c.l2, c.llc, c.numa_node, c.package);
    }
    std::printf("\n");
  }
  std::printf("workers     %u\n", h.workers);
  std::printf("clock       %s, %.6f ns/tick (base %" PRIu64 " ticks = %" PRId64 " ns)\n",
              h.clock.tsc ? "TSC" : "steady_clock ns", h.clock.ns_per_tick, h.clock.base_ticks, h.clock.base_ns);
  std::printf("started     %s\n", format_wall_clock(h.wall_start_unix_ns).c_str());
  if (h.level)
    std::printf("level       %s (when recording started)\n",
                std::string(kLevelNames[static_cast<int>(*h.level)]).c_str());
  else
    std::printf("level       not in the header (written before traces said it)\n");
  if (h.event_cost_ns)
    std::printf(
        "event cost  %.1f ns per recorded event (measured when recording started; the scalability\n"
        "            analysis takes it off each stretch)\n",
        *h.event_cost_ns);
  else
    std::printf("event cost  not measured (the scalability analysis takes nothing off for recording)\n");
}

// print_labels: every label the trace names, and ids used but never named.
void print_labels(const LabelTable& names, const std::map<std::uint32_t, std::uint64_t>& uses) {
  std::map<std::uint64_t, std::uint64_t> all(uses.begin(), uses.end());
  for (const auto& [id, name] : names.all()) all.try_emplace(id, 0);
  if (all.empty()) {
    std::printf("labels      none\n");
    return;
  }
  std::printf("labels      %zu named (id, name, task_label events):\n", names.size());
  for (const auto& [id, count] : all) {
    const auto name = id <= 0xFFFF'FFFFu ? names.name(static_cast<std::uint32_t>(id)) : std::nullopt;
    std::printf("  %6" PRIu64 "  %-32s %12" PRIu64 "\n", id,
                name ? printable(std::string(*name)).c_str() : (id == 0 ? "(no label)" : "(not named in the trace)"),
                count);
  }
}

}  // namespace

int run_info(std::span<char* const> args) {
  std::string error;
  auto parsed = parse_args(args, {{"--no-progress", "", false}}, &error);
  if (!parsed) return usage_error("info", error);
  if (const auto exit = answer_help(*parsed, kHelp)) return *exit;
  if (parsed->positional.size() != 1)
    return usage_error("info", parsed->positional.empty() ? "missing FILE" : "expected one FILE");
  const std::string& path = parsed->positional[0];

  // The one fold (lantern/analysis), as stats reads the file: the same counts.
  analysis::Analysis analysis;
  const Scan scan = analyse_trace(path, !parsed->has("--no-progress"), analysis);
  if (scan.io_failed) {
    for (const TraceError& p : scan.problems)
      if (p.kind == TraceErrorKind::io) std::fprintf(stderr, "lantern-trace info: %s\n", p.message.c_str());
    return kExitUsage;
  }

  if (nothing_to_report("info", path, scan)) return kExitProblems;  // not a report of zeros
  std::printf("file        %s (%s)\n", path.c_str(), format_bytes(scan.file_bytes).c_str());
  if (scan.header_ok)
    print_header(scan.header);
  else
    std::printf("header      unreadable (see problems); ticks are shown as 1 ns\n");
  std::printf("duration    %.6f s\n", scan.duration_seconds());
  std::printf("chunks      %" PRIu64 "\n", scan.chunks);
  const analysis::Summary sum = analysis.summary();
  std::printf("events      %" PRIu64, sum.events);
  if (scan.events > 0)  // over every event in the file, the rejected ones too
    std::printf(" (%.2f bytes/event in the file, %.2f in chunks)",
                static_cast<double>(scan.file_bytes) / static_cast<double>(scan.events),
                static_cast<double>(scan.payload_bytes) / static_cast<double>(scan.events));
  if (sum.rejected_events > 0)
    std::printf("\nrejected    %" PRIu64 " more events, as damage (impossible worker id, type or state): left out",
                sum.rejected_events);
  std::printf("\ndropped     %" PRIu64 " events lost (%" PRIu64 " markers)", sum.dropped_events, sum.drop_markers);
  for (int r = 0; r < kDropReasonCount; ++r) {
    if (sum.dropped_by_reason[r])
      std::printf("; %s: %" PRIu64, std::string(kDropReasonNames[r]).c_str(), sum.dropped_by_reason[r]);
  }
  std::printf("\n");
  std::printf("events by type:\n");
  for (int t = 0; t < kEventCount; ++t)
    std::printf("  %-20s %12" PRIu64 "\n", std::string(kEventInfo[t].name).c_str(),
                sum.events_by_type[static_cast<std::size_t>(t)]);
  print_labels(scan.labels, analysis.label_uses());
  // The problems themselves go to stderr (every Lantern program's errors do); the report
  // on stdout says how many there are.
  if (scan.problems.empty()) {
    std::printf("problems    none\n");
  } else {
    std::printf("problems    %zu (listed on stderr)\n", scan.problems.size());
    tools::flush_stdout();
    std::fprintf(stderr, "lantern-trace info: %s has %zu problem(s):\n", path.c_str(), scan.problems.size());
    print_problems("lantern-trace info: " + path, scan.problems);
  }
  return exit_code(scan);
}

}  // namespace lantern::trace::cli
