// SPDX-License-Identifier: Apache-2.0
// main.cpp - lantern-trace: inspect, check and convert Lantern trace files.
#include <cstdio>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <string_view>

#include "cli.hpp"
#include "commands.hpp"
#include "lantern/tools/program_cli.hpp"

namespace {

constexpr const char* kHelp =
    "usage: lantern-trace COMMAND [options] FILE\n"
    "\n"
    "Inspect, check and convert Lantern trace files (.trace).\n"
    "\n"
    "commands:\n"
    "  info FILE                      header, duration, chunks, events by type, drops\n"
    "  stats FILE                     per-worker time by state, steals by distance,\n"
    "                                 ready-wait and task-duration percentiles\n"
    "  export --chrome FILE -o OUT    Chrome trace-event JSON for ui.perfetto.dev\n"
    "  validate FILE                  check structure, checksums, worker ids, payload\n"
    "                                 values and clocks (validate --help lists the\n"
    "                                 checks); exit 1 if any fails\n"
    "  diff A B [--json]              compare two runs: work, span and parallelism, state\n"
    "                                 shares, task durations per label, steal matrices,\n"
    "                                 latency histograms\n"
    "  scale FILE [--workers LIST] [--topology SPEC] [--what-if LABEL=PCT]\n"
    "                                 work, span, parallelism, the critical path, the\n"
    "                                 speedup curve on P workers (bounds and a simulation),\n"
    "                                 and which task labels limit it (what-if speedups)\n"
    "\n"
    "'lantern-trace COMMAND --help' describes a command; 'lantern-trace --version' prints\n"
    "the version and the trace format version it reads and writes.\n"
    "\n"
    "Reports go to stdout; problems and errors go to stderr, each line starting with\n"
    "'lantern-trace COMMAND:'. Options end at '--' (lantern-trace info -- -x.trace).\n"
    "exit status: 0 ok, 1 the trace has problems (what could be read is still reported),\n"
    "             2 bad usage, or a file cannot be read or written\n";

}  // namespace

namespace {

// The commands, by name: `help CMD` and the dispatch below both look here.
struct Command {
  std::string_view name;
  int (*run)(std::span<char* const>);
};
constexpr Command kCommands[] = {
    {"info", lantern::trace::cli::run_info},     {"stats", lantern::trace::cli::run_stats},
    {"export", lantern::trace::cli::run_export}, {"validate", lantern::trace::cli::run_validate},
    {"diff", lantern::trace::cli::run_diff},     {"scale", lantern::trace::cli::run_scale}};
const Command* find_command(std::string_view name) {
  for (const Command& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lantern::trace::cli;
  // A report that cannot be written (a full disk, /dev/full) is an error, status 2 as the
  // help says for a file that cannot be written; the command's name is put in once known.
  lantern::tools::check_output_at_exit("lantern-trace", kExitUsage);
  try {
    if (argc < 2) {
      std::fputs(kHelp, stderr);
      return kExitUsage;
    }
    const std::string command = argv[1];
    const std::span<char* const> rest(argv + 2, static_cast<std::size_t>(argc - 2));
    if (command == "--help" || command == "-h" || command == "help") {
      if (command == "help" && argc > 2) {  // "help CMD" = "CMD --help"
        char help_flag[] = "--help";
        char* args[] = {help_flag};
        if (const Command* sub = find_command(argv[2])) return sub->run(std::span<char* const>(args));
      }
      lantern::tools::put_stdout(kHelp);
      return kExitOk;
    }
    if (command == "--version") {
      lantern::tools::put_stdout(lantern::tools::version_text("lantern-trace") + "\n");
      return kExitOk;
    }
    if (const Command* c = find_command(command)) {
      lantern::tools::check_output_at_exit("lantern-trace " + command, kExitUsage);
      return c->run(rest);
    }
    std::fprintf(
        stderr,
        "lantern-trace: unknown command '%s' (commands: info, stats, export, validate, diff, scale; see --help)\n",
        command.c_str());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    // The one failure that can reach here: a trace too large to export in this memory.
    std::fprintf(stderr, "lantern-trace: out of memory\n");
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lantern-trace: internal error: %s\n", e.what());
    return kExitUsage;
  }
}
