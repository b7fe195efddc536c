// SPDX-License-Identifier: Apache-2.0
// cmd_export.cpp - `lantern-trace export --chrome FILE -o OUT.json`.
#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "chrome_export.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "lantern/tools/program_cli.hpp"

namespace lantern::trace::cli {
namespace {

constexpr const char* kHelp =
    "usage: lantern-trace export --chrome [--from TIME] [--to TIME] [--around-warning N [--margin TIME]]\n"
    "                            [--no-progress] FILE -o OUT.json\n"
    "\n"
    "Writes the trace as Chrome trace-event JSON, which ui.perfetto.dev and\n"
    "chrome://tracing open. Each worker gets two tracks: its states (active, idle,\n"
    "sleepy, sleeping) and its tasks (nested as they ran, each named by the label it\n"
    "gave itself, else 'task'). IO operations are async slices from submission to\n"
    "completion (category io, e.g. 'read fd 7'). Steals and wakes are arrows\n"
    "(flow events, category 'state') from the victim to the thief and from the waker\n"
    "(at the wake call) to the woken worker (as it wakes). Every wake is also an instant\n"
    "on the woken worker's states track; a wake whose waker is outside the pool, or an\n"
    "IO completion (no waker), has no arrow, and the export says how many (stdout and\n"
    "the JSON's otherData; its \"steals\" is null when the trace's level does not record\n"
    "steals). Each lane's queue depth is a counter track (\"lane N\", from lane pops: level\n"
    "full), and so is the pool's not-ready tasks (\"not-ready tasks\": tasks waiting for a\n"
    "dependency, as workers sampled it); counter samples are written in time order. IO\n"
    "slices sit under the worker that submitted them. Times are in\n"
    "microseconds from the first event, exact in units of 1/1024 us (adjacent slices\n"
    "never overlap). A damaged trace is exported as far as it reads.\n"
    "\n"
    "options:\n"
    "  --chrome             the output format (the only one so far; required)\n"
    "  -o, --output FILE    where to write the JSON ('-' for standard output); when it\n"
    "                       cannot be written completely (a full disk), the error says\n"
    "                       why and the incomplete file is removed\n"
    "  --from TIME, --to TIME\n"
    "                       export only that window (times from the first event, as\n"
    "                       stats and lantern-view give them: 1.02s, 1020ms, 80us, or ns);\n"
    "                       slices and IO crossing an edge are cut there (\"clipped\")\n"
    "  --around-warning N   export the window around the N-th health warning, counted\n"
    "                       by start time over all workers (1 is the earliest; the\n"
    "                       export prints the warning it took: kind, worker, start),\n"
    "                       --margin (default 10ms) on each side\n"
    "  --no-progress        no progress bar (it is only drawn when stderr is a terminal)\n"
    "  -h, --help           this text\n"
    "\n"
    "exit status: 0 ok, 1 the trace has problems (printed on stderr; the export covers\n"
    "             what could be read; nothing is written for a file that is not a trace),\n"
    "             2 bad options, or a file cannot be read or written\n";

}  // namespace

int run_export(std::span<char* const> args) {
  std::string error;
  auto parsed = parse_args(args,
                           {{"--chrome", "", false},
                            {"--output", "-o", true},
                            {"--no-progress", "", false},
                            {"--from", "", true},
                            {"--to", "", true},
                            {"--around-warning", "", true},
                            {"--margin", "", true}},
                           &error);
  if (!parsed) return usage_error("export", error);
  if (const auto exit = answer_help(*parsed, kHelp)) return *exit;
  if (!parsed->has("--chrome")) return usage_error("export", "choose the output format: --chrome");
  if (!parsed->has("--output")) return usage_error("export", "missing -o OUT.json");
  if (parsed->positional.size() != 1)
    return usage_error("export", parsed->positional.empty() ? "missing FILE" : "expected one FILE");
  const std::string& path = parsed->positional[0];
  const std::string& output = parsed->options["--output"];
  double from_ns = 0, to_ns = std::numeric_limits<double>::infinity(), margin_ns = 10e6;
  if (!time_option(*parsed, "--from", &from_ns, &error) || !time_option(*parsed, "--to", &to_ns, &error) ||
      !time_option(*parsed, "--margin", &margin_ns, &error))
    return usage_error("export", error);
  if (to_ns < from_ns) return usage_error("export", "--to is before --from");
  std::uint64_t warning = 0;
  if (parsed->has("--around-warning")) {
    const std::string& v = parsed->options["--around-warning"];
    const auto n = tools::parse_number<std::uint64_t>(v, 1, std::numeric_limits<std::uint64_t>::max());
    if (!n) return usage_error("export", "--around-warning '" + v + "' is not a warning number (1, 2, ...)");
    warning = *n;
    if (parsed->has("--from") || parsed->has("--to"))
      return usage_error("export", "--around-warning chooses the window: not with --from or --to");
  } else if (parsed->has("--margin")) {
    return usage_error("export", "--margin goes with --around-warning");
  }

  analysis::Analysis analysis;
  const Scan scan = analyse_trace(path, !parsed->has("--no-progress"), analysis);
  if (scan.io_failed) {
    for (const TraceError& p : scan.problems)
      if (p.kind == TraceErrorKind::io) std::fprintf(stderr, "lantern-trace export: %s\n", p.message.c_str());
    return kExitUsage;
  }
  // Not a trace at all (no header, no chunk): no JSON, not even an empty one.
  if (nothing_to_report("export", path, scan)) return kExitProblems;
  if (!scan.problems.empty()) {
    std::fprintf(stderr, "lantern-trace export: %s has %zu problem(s) (exporting what could be read):\n", path.c_str(),
                 scan.problems.size());
    print_problems("lantern-trace export: " + path, scan.problems);
  }
  ExportWindow window;
  if (!analysis.empty() && (parsed->has("--from") || parsed->has("--to") || warning)) {
    const double first = static_cast<double>(analysis.first_tick());
    auto at = [&](double ns) { return tick_after_first(analysis, ns); };
    if (warning) {
      const std::vector<analysis::Problem> all = analysis.health().by_time(analysis);
      if (warning > all.size()) {
        std::fprintf(stderr, "lantern-trace export: %s has %zu warning%s listed: there is no warning %llu\n",
                     path.c_str(), all.size(), all.size() == 1 ? "" : "s", static_cast<unsigned long long>(warning));
        return kExitUsage;
      }
      const analysis::Problem& p = all[warning - 1];
      const double margin = analysis.ns_to_ticks(margin_ns);
      window.from = static_cast<double>(p.start) - margin > first
                        ? static_cast<analysis::Tick>(static_cast<double>(p.start) - margin)
                        : analysis.first_tick();
      window.to = at(analysis.ticks_to_ns(static_cast<double>(p.end - analysis.first_tick())) + margin_ns);
      std::printf(
          "warning %llu of %zu: %s on %s %u at %s, %s long\n", static_cast<unsigned long long>(warning), all.size(),
          analysis::problem_kind_name(p.kind), p.kind == analysis::ProblemKind::lane_wait ? "lane" : "worker", p.worker,
          format_duration_ns(analysis.ticks_to_ns(static_cast<double>(p.start - analysis.first_tick()))).c_str(),
          format_duration_ns(analysis.ticks_to_ns(static_cast<double>(p.end - p.start))).c_str());
    } else {
      window.from = at(from_ns);
      window.to = std::isinf(to_ns) ? ~analysis::Tick{0} : at(to_ns);
    }
    if (window.from > analysis.last_tick()) {
      std::fprintf(
          stderr, "lantern-trace export: --from %s is after the trace's end (%s)\n", parsed->options["--from"].c_str(),
          format_duration_ns(analysis.ticks_to_ns(static_cast<double>(analysis.last_tick() - analysis.first_tick())))
              .c_str());
      return kExitUsage;
    }
  }

  std::FILE* out = output == "-" ? stdout : std::fopen(output.c_str(), "wb");
  if (!out) {
    std::fprintf(stderr, "lantern-trace export: cannot create '%s': %s\n", output.c_str(), std::strerror(errno));
    return kExitUsage;
  }
  ChromeExportCounts counts;
  errno = 0;
  bool ok = write_chrome_trace(out, scan.header, analysis, scan.problems.size(), &counts, window);
  if (out == stdout) {
    // "lantern-trace export: cannot write the output: REASON", as every report to stdout.
    // A failed write leaves stdout's error flag set: stdout_written says it then too.
    const bool written = tools::stdout_written(ok ? 0 : errno);
    return written && ok ? exit_code(scan) : kExitUsage;
  }
  // The reason is the first failure's: a write's, or fclose's when the JSON was still in
  // the stdio buffer (errno before fclose would be stale: "Success").
  int write_errno = ok ? 0 : errno;
  struct stat st {};
  const bool regular = ::fstat(::fileno(out), &st) == 0 && S_ISREG(st.st_mode);
  errno = 0;
  if (std::fclose(out) != 0) {
    if (ok || write_errno == 0) write_errno = errno;
    ok = false;
  }
  if (!ok) {
    std::fprintf(stderr, "lantern-trace export: cannot write '%s': %s\n", output.c_str(),
                 write_errno != 0 ? std::strerror(write_errno) : "a write failed");
    // No cut-off JSON left behind (the flight recorder removes its partial dumps too);
    // only a regular file: never a device such as /dev/full.
    if (regular && std::remove(output.c_str()) == 0)
      std::fprintf(stderr, "lantern-trace export: removed the incomplete '%s'\n", output.c_str());
    return kExitUsage;
  }
  if (out != stdout) {
    std::printf("wrote %s: %" PRIu64 " state slices, %" PRIu64 " task slices, %" PRIu64 " flows, %" PRIu64
                " counter samples, %" PRIu64 " instants, %" PRIu64 " IO slices\n",
                output.c_str(), counts.state_slices, counts.task_slices, counts.flows, counts.counter_samples,
                counts.instants, counts.io_slices);
    std::printf("wakes: %" PRIu64 " exported (instants), %" PRIu64
                " with an arrow from the waker; without an arrow: %" PRIu64 " woken from outside the pool, %" PRIu64
                " IO completions (no waker), %" PRIu64 " with an end outside every state slice\n",
                counts.wakes, counts.wake_flows, counts.wakes_from_outside, counts.wakes_by_io, counts.wakes_unbound);
    std::printf("steals: %" PRIu64 " arrows, %" PRIu64 " with an end outside every state slice\n", counts.steal_flows,
                counts.steals_unbound);
  }
  return exit_code(scan);
}

}  // namespace lantern::trace::cli
