// SPDX-License-Identifier: Apache-2.0
// cmd_export.cpp - `lantern-trace export --chrome FILE -o OUT.json`.
#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "chrome_export.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "lantern/tools/program_cli.hpp"

namespace lantern::trace::cli {
namespace {

constexpr const char* kHelp =
    "usage: lantern-trace export --chrome [--no-progress] FILE -o OUT.json\n"
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
    "steals). Each lane's queue depth is a counter track. Times are in\n"
    "microseconds from the first event, exact in units of 1/1024 us (adjacent slices\n"
    "never overlap). A damaged trace is exported as far as it reads.\n"
    "\n"
    "options:\n"
    "  --chrome             the output format (the only one so far; required)\n"
    "  -o, --output FILE    where to write the JSON ('-' for standard output); when it\n"
    "                       cannot be written completely (a full disk), the error says\n"
    "                       why and the incomplete file is removed\n"
    "  --no-progress        no progress bar (it is only drawn when stderr is a terminal)\n"
    "  -h, --help           this text\n"
    "\n"
    "exit status: 0 ok, 1 the trace has problems (printed on stderr; the export covers\n"
    "             what could be read), 2 bad options, or a file cannot be read or written\n";

}  // namespace

int run_export(std::span<char* const> args) {
  std::string error;
  auto parsed =
      parse_args(args, {{"--chrome", "", false}, {"--output", "-o", true}, {"--no-progress", "", false}}, &error);
  if (!parsed) return usage_error("export", error);
  if (const auto exit = answer_help(*parsed, kHelp)) return *exit;
  if (!parsed->has("--chrome")) return usage_error("export", "choose the output format: --chrome");
  if (!parsed->has("--output")) return usage_error("export", "missing -o OUT.json");
  if (parsed->positional.size() != 1)
    return usage_error("export", parsed->positional.empty() ? "missing FILE" : "expected one FILE");
  const std::string& path = parsed->positional[0];
  const std::string& output = parsed->options["--output"];

  analysis::Analysis analysis;
  const Scan scan = analyse_trace(path, !parsed->has("--no-progress"), analysis);
  if (scan.io_failed) {
    for (const TraceError& p : scan.problems)
      if (p.kind == TraceErrorKind::io) std::fprintf(stderr, "lantern-trace export: %s\n", p.message.c_str());
    return kExitUsage;
  }
  if (!scan.problems.empty()) {
    std::fprintf(stderr, "lantern-trace export: %s has %zu problem(s) (exporting what could be read):\n", path.c_str(),
                 scan.problems.size());
    print_problems("lantern-trace export: " + path, scan.problems);
  }

  std::FILE* out = output == "-" ? stdout : std::fopen(output.c_str(), "wb");
  if (!out) {
    std::fprintf(stderr, "lantern-trace export: cannot create '%s': %s\n", output.c_str(), std::strerror(errno));
    return kExitUsage;
  }
  ChromeExportCounts counts;
  errno = 0;
  bool ok = write_chrome_trace(out, scan.header, analysis, scan.problems.size(), &counts);
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
