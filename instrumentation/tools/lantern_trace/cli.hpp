// SPDX-License-Identifier: Apache-2.0
// cli.hpp - what every lantern-trace subcommand shares: exit codes, option parsing,
// reading a trace with a progress bar, and printing problems.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lantern/analysis/analysis.hpp"
#include "lantern/trace/trace_reader.hpp"

namespace lantern::trace::cli {

// Exit codes, the same for every subcommand (also in the --help texts).
inline constexpr int kExitOk = 0;
inline constexpr int kExitProblems = 1;  // the trace has problems; what could be read was still reported
inline constexpr int kExitUsage = 2;     // bad options, or a file that cannot be opened, read or written

// OptionSpec: one option a subcommand accepts. Options with a value take it as the next
// argument or after '=' (--output=x.json); -o x.json also works.
struct OptionSpec {
  std::string name;   // "--output"
  std::string alias;  // "-o", or empty
  bool takes_value = false;
  bool repeats = false;  // may be given more than once (--what-if A=50 --what-if B=20): ParsedArgs::all
};

struct ParsedArgs {
  bool help = false;
  std::string version;  // --version was given: what it prints
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;           // by name; flags map to "" (the last value given)
  std::map<std::string, std::vector<std::string>> all;  // a repeating option's values, in order
  bool has(const std::string& name) const { return options.count(name) != 0; }
};

// parse_args parses a subcommand's arguments (after the subcommand name): options, then
// FILEs; "--" ends the options (a FILE named -x.trace: `info -- -x.trace`). On error
// returns nullopt with *error set to a sentence naming the bad argument.
std::optional<ParsedArgs> parse_args(std::span<char* const> args, const std::vector<OptionSpec>& specs,
                                     std::string* error);

// answer_help: after --help (`help`, the command's text) or --version, what they print,
// on stdout, and kExitOk to return; nullopt when neither was given.
std::optional<int> answer_help(const ParsedArgs& parsed, const char* help);

// usage_error prints "lantern-trace CMD: WHAT (see lantern-trace CMD --help)" and
// returns kExitUsage.
int usage_error(const std::string& command, const std::string& what);

// time_option: the value of a --from/--to/--margin option `name`, in ns, into *ns (left
// alone when the option is absent); false with *error when it is not a time.
bool time_option(const ParsedArgs& parsed, const char* name, double* ns, std::string* error);

// tick_after_first: the tick `ns` after the analysis' first event, saturated at the
// largest tick (--from and --to count from the first event).
analysis::Tick tick_after_first(const analysis::Analysis& analysis, double ns);

// Scan is what reading a whole trace produced, besides what the caller's callback saw.
struct Scan {
  TraceHeader header;
  bool header_ok = false;
  bool io_failed = false;
  LabelTable labels;  // the task label names the chunks carried
  std::vector<TraceError> problems;
  std::uint64_t chunks = 0;
  std::uint64_t events = 0;
  std::uint64_t payload_bytes = 0;  // chunk headers and payloads
  std::uint64_t file_bytes = 0;
  bool has_ticks = false;
  std::uint64_t min_tick = 0;
  std::uint64_t max_tick = 0;

  bool has_errors() const;
  double duration_seconds() const;
};

// scan_trace reads `path` chunk by chunk, calling on_header once the header has been
// read (with whether it was intact), then on_chunk for each intact chunk. A progress bar
// goes to stderr when `progress` is set and stderr is a terminal.
// on_problem gets each problem the reader found, in stream order (before the chunk read
// after it).
Scan scan_trace(const std::string& path, bool progress, const std::function<void(const DecodedChunk&)>& on_chunk,
                const std::function<void(const TraceHeader&, bool header_ok)>& on_header = {},
                const std::function<void(const TraceError&)>& on_problem = {});

// analyse_trace: scan_trace into `out` (the one fold, lantern/analysis), finished: every
// figure stats, export and diff print comes from it. A damaged chunk skipped ends the tasks
// open then (Analysis::lose_record), as the viewer's Model does.
Scan analyse_trace(const std::string& path, bool progress, analysis::Analysis& out);

// print_problems writes one line per problem on stderr, each starting with `prefix`
// (README: every line on stderr starts with the program's name), e.g.
// "lantern-trace stats: run.trace: error: truncated at offset ...".
void print_problems(const std::string& prefix, const std::vector<TraceError>& problems);

// nothing_to_report: true (and says so on stderr, after the problems that say why,
// "lantern-trace COMMAND: PATH: error: ...")
// when the file is not a trace at all (no header, not one chunk: empty, /dev/null,
// another kind of file): there are no counts to report, not zeros.
bool nothing_to_report(const std::string& command, const std::string& path, const Scan& scan);

// exit_code: kExitUsage if the file could not be read at all, kExitProblems if it has
// errors (warnings do not count), else kExitOk.
int exit_code(const Scan& scan);

// Human formatting shared by the reports.
using analysis::format_duration_ns;  // "850 ns", "12.35 us", "4.56 ms", "1.230 s": the demo's too
std::string format_bytes(std::uint64_t bytes);
// printable replaces control characters (a header string could carry terminal escapes).
std::string printable(const std::string& text);

}  // namespace lantern::trace::cli
