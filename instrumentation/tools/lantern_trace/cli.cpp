// SPDX-License-Identifier: Apache-2.0
// cli.cpp - option parsing, the shared scan loop and report formatting.
#include "cli.hpp"

#include <cinttypes>
#include <cmath>

#include "lantern/tools/program_cli.hpp"

#include "progress.hpp"

namespace lantern::trace::cli {

std::optional<ParsedArgs> parse_args(std::span<char* const> args, const std::vector<OptionSpec>& specs,
                                     std::string* error) {
  // CLI11 does the parsing, with the conventions every Lantern program follows
  // (lantern/tools/program_cli.hpp): --name VALUE or --name=VALUE, -o VALUE, flags take
  // no value, "--" ends the options.
  CLI::App app;
  app.set_help_flag("-h,--help");
  app.set_version_flag("--version", tools::version_text("lantern-trace"));  // as 'lantern-trace --version'
  app.allow_extras();
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)->disable_flag_override();
  ParsedArgs parsed;
  std::map<std::string, std::string> values;
  std::map<std::string, std::vector<std::string>> lists;
  std::vector<std::pair<const OptionSpec*, CLI::Option*>> options;
  for (const OptionSpec& spec : specs) {
    const std::string names = spec.alias.empty() ? spec.name : spec.alias + "," + spec.name;
    CLI::Option* option = nullptr;
    if (!spec.takes_value)
      option = app.add_flag(names);
    else if (spec.repeats)  // one value per occurrence (a FILE after it stays a FILE), every occurrence kept
      option = app.add_option(names, lists[spec.name])
                   ->allow_extra_args(false)
                   ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    else
      option = app.add_option(names, values[spec.name]);
    options.emplace_back(&spec, option);
  }
  app.add_option("FILE", parsed.positional);
  std::vector<const char*> argv = {"lantern-trace"};
  for (char* arg : args) argv.push_back(arg);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    parsed.help = true;
    return parsed;
  } catch (const CLI::CallForVersion& v) {
    parsed.version = v.what();
    return parsed;
  } catch (const CLI::ParseError& e) {
    *error = tools::describe_parse_error(e);
    return std::nullopt;
  }
  if (std::string extra = tools::unexpected_argument(app); !extra.empty()) {  // "--" ends the options
    *error = std::move(extra);
    return std::nullopt;
  }
  for (const auto& [spec, option] : options) {
    if (option->count() == 0) continue;
    std::vector<std::string> given;
    if (spec->repeats)
      given = lists[spec->name];
    else if (spec->takes_value)
      given = {values[spec->name]};
    parsed.options[spec->name] = given.empty() ? std::string() : given.back();
    if (spec->takes_value) parsed.all[spec->name] = given;
    for (const std::string& value : given) {
      if (!value.empty()) continue;
      *error = "option " + spec->name + " needs a non-empty value";
      return std::nullopt;
    }
  }
  return parsed;
}

bool time_option(const ParsedArgs& parsed, const char* name, double* ns, std::string* error) {
  if (!parsed.has(name)) return true;
  const double value = analysis::parse_duration_ns(parsed.options.at(name));
  if (std::isnan(value) || value < 0) {
    *error = std::string(name) + " '" + parsed.options.at(name) + "' is not a time (e.g. 1.02s, 1020ms, 80us)";
    return false;
  }
  *ns = value;
  return true;
}

analysis::Tick tick_after_first(const analysis::Analysis& analysis, double ns) {
  const double t = static_cast<double>(analysis.first_tick()) + analysis.ns_to_ticks(ns);
  return t >= 1.8e19 ? ~analysis::Tick{0} : static_cast<analysis::Tick>(t);
}

int usage_error(const std::string& command, const std::string& what) {
  std::fprintf(stderr, "lantern-trace %s: %s (see lantern-trace %s --help)\n", command.c_str(), what.c_str(),
               command.c_str());
  return kExitUsage;
}

bool Scan::has_errors() const {
  for (const TraceError& p : problems)
    if (!p.warning()) return true;
  return false;
}

double Scan::duration_seconds() const {
  if (!has_ticks) return 0;
  return header.ticks_to_ns(max_tick - min_tick) / 1e9;
}

Scan scan_trace(const std::string& path, bool progress, const std::function<void(const DecodedChunk&)>& on_chunk,
                const std::function<void(const TraceHeader&, bool header_ok)>& on_header,
                const std::function<void(const TraceError&)>& on_problem) {
  TraceReader reader = TraceReader::open(path);
  Scan scan;
  Progress bar("reading " + path, reader.total_bytes(), progress);
  reader.read_header();
  if (on_header) on_header(reader.header(), reader.header_ok());
  std::size_t problems_seen = 0;
  auto report_problems = [&] {  // in stream order: those found before the chunk just read
    for (; problems_seen < reader.problems().size(); ++problems_seen) {
      if (on_problem) on_problem(reader.problems()[problems_seen]);
    }
  };
  report_problems();
  while (reader.next_chunk()) {
    report_problems();
    const DecodedChunk& chunk = reader.chunk();
    ++scan.chunks;
    scan.events += chunk.events.size();
    scan.payload_bytes += kChunkHeaderBytes + chunk.info.payload_bytes;
    if (!chunk.events.empty()) {
      scan.min_tick = scan.has_ticks ? std::min(scan.min_tick, chunk.info.min_tick) : chunk.info.min_tick;
      scan.max_tick = std::max(scan.max_tick, chunk.info.max_tick);
      scan.has_ticks = true;
    }
    if (on_chunk) on_chunk(chunk);
    bar.update(reader.bytes_read());
  }
  report_problems();
  bar.finish();
  scan.header = reader.header();
  scan.header_ok = reader.header_ok();
  scan.labels = reader.labels();
  scan.io_failed = reader.io_failed();
  scan.problems = reader.problems();
  scan.file_bytes = reader.bytes_read();
  return scan;
}

Scan analyse_trace(const std::string& path, bool progress, analysis::Analysis& out) {
  Scan scan = scan_trace(
      path, progress,
      [&](const DecodedChunk& chunk) {
        out.add(chunk);
        out.advance_health();  // per chunk, as the viewer does: the same findings, merged the same way
      },
      [&](const TraceHeader& header, bool ok) { out.set_header(header, ok); },
      [&](const TraceError& p) {
        if (!p.warning()) out.lose_record();  // events lost in a skipped chunk: as the viewer's Model does
      });
  out.finish();
  return scan;
}

std::optional<int> answer_help(const ParsedArgs& parsed, const char* help) {
  if (!parsed.help && parsed.version.empty()) return std::nullopt;
  tools::put_stdout(parsed.help ? std::string(help) : parsed.version + "\n");
  return kExitOk;
}

void print_problems(const std::string& prefix, const std::vector<TraceError>& problems) {
  tools::flush_stdout();  // what the report said so far comes first on a terminal
  for (const TraceError& p : problems) std::fprintf(stderr, "%s: %s\n", prefix.c_str(), describe(p).c_str());
}

bool nothing_to_report(const std::string& command, const std::string& path, const Scan& scan) {
  if (scan.header_ok || scan.chunks != 0) return false;
  print_problems("lantern-trace " + command + ": " + path, scan.problems);
  std::fprintf(stderr, "lantern-trace %s: %s: nothing could be read from it (see the error above); no report\n",
               command.c_str(), path.c_str());
  return true;
}

int exit_code(const Scan& scan) {
  if (scan.io_failed) return kExitUsage;
  return scan.has_errors() ? kExitProblems : kExitOk;
}

std::string format_bytes(std::uint64_t bytes) {
  char buf[64];
  if (bytes < 10'000)
    std::snprintf(buf, sizeof buf, "%" PRIu64 " bytes", bytes);
  else if (bytes < 10'000'000)
    std::snprintf(buf, sizeof buf, "%.1f kB", static_cast<double>(bytes) / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

std::string printable(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

}  // namespace lantern::trace::cli
