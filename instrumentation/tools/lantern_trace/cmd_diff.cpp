// SPDX-License-Identifier: Apache-2.0
// cmd_diff.cpp - `lantern-trace diff A B`: two runs compared, as a table or JSON.
//
// The comparison is lantern::analysis::compare (lantern/analysis/compare.hpp), the one
// `lantern-view A --compare B` draws: both fold each trace with the one analysis and
// print what compare() returned, so the table, the JSON and the viewer agree.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli.hpp"
#include "commands.hpp"
#include "lantern/analysis/compare.hpp"

namespace lantern::trace::cli {
namespace {

constexpr const char* kHelp =
    "usage: lantern-trace diff [--no-progress] [--json] [--notable] A.trace B.trace\n"
    "\n"
    "Compares two runs (B against A) - the same program before and after a change, or\n"
    "under two sleep strategies: each run's work, span and parallelism (as lantern-trace\n"
    "scale computes them: 'not computed' with why for a trace without a task graph),\n"
    "per-worker state shares, task durations per label, steal matrices and steals by\n"
    "distance, the latency histograms (ready wait, task duration, wake latency, IO\n"
    "latency), and every count stats prints (events by type,\n"
    "tasks, steals, helps, wakes by cause, sleeps, lane pops, releases, IO, drops,\n"
    "warnings by kind, and per worker; \"counts\" in JSON). Rows a reader should look at\n"
    "are marked '*' (\"notable\": work, span or parallelism 1.25x apart; a state share 5\n"
    "points apart; a duration or latency 1.25x apart with 10+ samples a side; a steal or\n"
    "other count changed by half and by 10+). A worker only one run has prints '-' for\n"
    "the other (null in JSON). lantern-view A --compare B shows the same comparison.\n"
    "\n"
    "Tasks per label are the tasks begun (as stats and the Chrome export count them);\n"
    "their mean and p90 are of those that ended. A count a run's recording level does\n"
    "not record (tasks and steals at level states) prints as '-', with why under the\n"
    "run's line; in JSON it is null, with \"tasks_not_recorded\" / \"steals_not_recorded\"\n"
    "saying why; work, span or parallelism not computed is null, with\n"
    "\"graph_not_computed\" saying why. An empty latency figure prints '-' with why\n"
    "below the table; in JSON its side has count 0 and \"no_samples\" (why), as in\n"
    "stats --json.\n"
    "\n"
    "options:\n"
    "  --json        JSON instead of the table\n"
    "  --notable     only the notable rows (table)\n"
    "  --no-progress no progress bar on stderr (it is shown only on a terminal)\n"
    "  -h, --help    this text\n"
    "\n"
    "exit status: 0 compared, 1 a trace has problems (what could be read is compared),\n"
    "             2 bad options, or a file cannot be read or written (the report)\n";

}  // namespace

int run_diff(std::span<char* const> args) {
  std::string error;
  auto parsed =
      parse_args(args, {{"--no-progress", "", false}, {"--json", "", false}, {"--notable", "", false}}, &error);
  if (!parsed) return usage_error("diff", error);
  if (const auto exit = answer_help(*parsed, kHelp)) return *exit;
  if (parsed->positional.size() != 2) return usage_error("diff", "expected two trace files, A and B");
  for (const std::string& path : parsed->positional) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || ::access(path.c_str(), R_OK) != 0) {
      std::fprintf(stderr, "lantern-trace diff: cannot open '%s': %s\n", path.c_str(), std::strerror(errno));
      return kExitUsage;
    }
    if (S_ISDIR(st.st_mode)) {
      std::fprintf(stderr, "lantern-trace diff: '%s' is a directory, not a trace file\n", path.c_str());
      return kExitUsage;
    }
  }
  analysis::Analysis runs[2];
  int status = kExitOk;
  for (int i = 0; i < 2; ++i) {
    const std::string& path = parsed->positional[static_cast<std::size_t>(i)];
    const Scan scan = analyse_trace(path, !parsed->has("--no-progress"), runs[i]);
    for (const TraceError& p : scan.problems)
      std::fprintf(stderr, "lantern-trace diff: %s: %s\n", path.c_str(), describe(p).c_str());
    if (scan.io_failed) return kExitUsage;
    if (scan.has_errors()) status = kExitProblems;
    if (runs[i].empty()) {
      std::fprintf(stderr, "lantern-trace diff: %s holds no events\n", path.c_str());
      return status == kExitOk ? kExitUsage : status;
    }
  }
  const analysis::Comparison c = analysis::compare(runs[0], parsed->positional[0], runs[1], parsed->positional[1]);
  if (parsed->has("--json")) {
    analysis::write_json(stdout, c);
  } else {
    analysis::write_table(stdout, c, parsed->has("--notable"));
  }
  return status;
}

}  // namespace lantern::trace::cli
