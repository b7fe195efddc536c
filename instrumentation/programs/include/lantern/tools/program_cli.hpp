// SPDX-License-Identifier: Apache-2.0
// program_cli.hpp - the command-line conventions every Lantern program follows
// (lantern-trace, lantern-view, lantern_demo, lantern_echo_server, lantern_echo_client,
// lantern_live_demo, and the benchmark programs in bench/), on top of CLI11 (Debian:
// libcli11-dev). README.md, "Command-line conventions", is the user's side of this.
//
//   - GNU long options: --name VALUE or --name=VALUE; flags take no value (--quick, not
//     --quick=yes); -h is --help; a later repeat of an option wins; "--" ends options.
//   - --help prints the program's usage on stdout and exits 0.
//   - --version prints "PROGRAM VERSION (trace format version N)" on stdout and exits 0.
//   - Reports go to stdout; errors and warnings go to stderr, as "PROGRAM: what went wrong".
//     Output that cannot be written (a full disk, /dev/full, a closed stdout) is an error:
//     check_output_at_exit, which Program turns on, says "PROGRAM: cannot write the
//     output: REASON" and makes the exit status non-zero.
//   - Bad usage: "PROGRAM: what is wrong (see PROGRAM --help)" on stderr, exit status 2.
//   - Addresses are read by lantern::parse_host_port (lantern/host_port.hpp), numbers by
//     number_option below, names by choice_option, comma-separated lists ("--workers 1,2")
//     by number_list_option and choice_list_option, so every program refuses the same
//     texts with the same words.
#pragma once

#include <arpa/inet.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "lantern/host_port.hpp"
#include "lantern/trace/format.hpp"
#include "lantern/version.hpp"

namespace lantern::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;

// version_text: what --version prints, e.g. "lantern-trace 0.1.0 (trace format version 5)".
inline std::string version_text(std::string_view program) {
  return std::string(program) + " " + std::string(kVersion) + " (trace format version " +
         std::to_string(static_cast<unsigned>(trace::kFormatVersion)) + ")";
}

// describe_parse_error: CLI11's message for a parse error, in the words every Lantern
// program uses ("option --output needs a value", "--workers takes a number from ...").
inline std::string describe_parse_error(const CLI::ParseError& e) {
  std::string what = e.what();
  const auto colon = what.find(": ");
  const std::string name = colon == std::string::npos ? std::string() : what.substr(0, colon);
  if (const auto at = what.find(" was given a disallowed flag override"); at != std::string::npos) {
    const std::string flag = what.substr(0, at);  // CLI11 names a long flag without its dashes
    return "option " + (flag.size() > 1 && flag[0] != '-' ? "--" + flag : flag) + " takes no value";
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && !name.empty()) {
    if (what.find("missing") != std::string::npos || what.find("required") != std::string::npos)
      return "option " + name + " needs a value";
  }
  if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr && !name.empty())
    return name + " " + what.substr(colon + 2);  // "--workers takes a number from 1 to 1024, not '0'"
  return what;
}

// unexpected_argument: what to say about the arguments CLI11 left over (allow_extras),
// or "" when there are none. The "--" that ends the options is not one of them (CLI11
// lists it among the leftovers; its classifier is the only difference, and
// remaining_size() leaves it out): it is skipped, and what came after it is an argument
// ("unexpected argument '--quick'"), never an option.
inline std::string unexpected_argument(const CLI::App& app) {
  const std::vector<std::string> extra = app.remaining();
  bool has_mark = app.remaining_size() < extra.size();  // the first "--" among them is the mark
  bool after_mark = false;
  for (const std::string& arg : extra) {
    if (has_mark && !after_mark && arg == "--") {
      after_mark = true;
      continue;
    }
    return !after_mark && arg.size() > 1 && arg[0] == '-' ? "unknown option '" + arg + "'"
                                                          : "unexpected argument '" + arg + "'";
  }
  return {};
}

// check_output_at_exit: at exit, flush standard output and check that everything written
// to it arrived; when not (a full disk, /dev/full, a closed stdout), print
// "PROGRAM: cannot write the output: REASON" on stderr and end with `status` instead (the
// status the program's --help gives for a file that cannot be written). A report that
// did not arrive must not look like success. Call it again to change the name (e.g.
// "lantern-trace stats" once the command is known) or the status; it is registered once.
namespace detail {
struct OutputCheck {
  char program[96] = {};
  int status = 1;
  bool installed = false;
  bool reported = false;
  int first_errno = 0;  // of the first failed flush_stdout (stdio drops the data it could not write)
};
inline OutputCheck& output_check() {
  static OutputCheck check;  // trivially destructible: still there when the exit handler runs
  return check;
}
// keep_first_errno: a write to stdout just failed; remember why, unless an earlier one did.
inline void keep_first_errno() {
  if (output_check().first_errno == 0) output_check().first_errno = errno;
}
}  // namespace detail

// flush_stdout: std::fflush(stdout) (e.g. before a message on stderr, so a terminal shows
// them in order) that keeps the reason when it fails: stdio drops the bytes it could not
// write, and the check at exit could not say why any more.
inline void flush_stdout() {
  errno = 0;
  if (std::fflush(stdout) != 0) detail::keep_first_errno();
}

// put_stdout: std::fputs(text, stdout) that keeps the reason when a write fails (as
// flush_stdout does): help texts longer than stdio's buffer are written out at once.
inline void put_stdout(const std::string& text) {
  errno = 0;
  if (std::fputs(text.c_str(), stdout) == EOF) detail::keep_first_errno();
}

// stdout_written: flush standard output; true when everything written to it so far has
// arrived. Otherwise (once) prints "PROGRAM: cannot write the output: REASON" on stderr;
// REASON is the flush's errno, else `earlier_errno` (the caller's failed write's), else
// that of an earlier failed flush_stdout.
inline bool stdout_written(int earlier_errno = 0) {
  detail::OutputCheck& check = detail::output_check();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno != 0 ? errno : earlier_errno != 0 ? earlier_errno : check.first_errno;
  if (flushed && !std::ferror(stdout)) return true;
  if (!check.reported) {
    check.reported = true;
    std::fprintf(stderr, "%s: cannot write the output: %s\n", check.program[0] ? check.program : "error",
                 error != 0 ? std::strerror(error) : "a write to standard output failed");
  }
  return false;
}

inline void check_output_at_exit(std::string_view program, int status) {
  detail::OutputCheck& check = detail::output_check();
  const std::size_t n = std::min(program.size(), sizeof check.program - 1);
  std::memcpy(check.program, program.data(), n);
  check.program[n] = '\0';
  check.status = status;
  if (check.installed) return;
  check.installed = true;
  std::atexit([] {
    // _Exit: exit() must not be called again from an exit handler; stderr is unbuffered.
    if (!stdout_written()) std::_Exit(detail::output_check().status);
  });
}

// Program: a CLI11 App with the conventions above. The usage text is the program's own
// (written for people, with examples and exit codes); CLI11 does the parsing.
// `cannot_write_status` is the exit status for output that cannot be written
// (check_output_at_exit); set_cannot_write_status changes it.
class Program {
 public:
  Program(std::string name, std::string usage, int cannot_write_status = 1)
      : app_(std::string(), name), name_(std::move(name)), usage_(std::move(usage)) {
    check_output_at_exit(name_, cannot_write_status);
    app_.set_help_flag("-h,--help");
    app_.set_version_flag("--version", version_text(name_));
    app_.allow_extras();  // unknown arguments are reported by parse(), in our words
    app_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)->disable_flag_override();
  }

  CLI::App& app() { return app_; }
  const std::string& name() const { return name_; }
  void set_cannot_write_status(int status) { check_output_at_exit(name_, status); }

  // parse: nullopt when the program should go on; otherwise the exit status to return
  // at once: 0 after --help or --version (printed on stdout), 2 after bad usage (the
  // message on stderr).
  std::optional<int> parse(int argc, const char* const* argv) {
    try {
      app_.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      put_stdout(usage_);
      return kExitOk;
    } catch (const CLI::CallForAllHelp&) {
      put_stdout(usage_);
      return kExitOk;
    } catch (const CLI::CallForVersion& v) {
      put_stdout(std::string(v.what()) + "\n");
      return kExitOk;
    } catch (const CLI::ParseError& e) {
      return usage_error(describe_parse_error(e));
    }
    if (const std::string extra = unexpected_argument(app_); !extra.empty()) return usage_error(extra);
    return std::nullopt;
  }

  // usage_error prints "NAME: message (see NAME --help)" on stderr and returns 2.
  int usage_error(const std::string& message) const {
    std::fprintf(stderr, "%s: %s (see %s --help)\n", name_.c_str(), message.c_str(), name_.c_str());
    return kExitUsage;
  }

 private:
  CLI::App app_;
  std::string name_;
  std::string usage_;
};

// parse_number: a whole decimal number within [lo, hi]; nothing else (no sign, no
// spaces, no suffix). Floating point for double.
template <typename T>
std::optional<T> parse_number(std::string_view text, T lo, T hi) {
  T value{};
  if (text.empty() || text.front() == '+' || text.front() == ' ') return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value >= lo) || !(value <= hi)) return std::nullopt;
  return value;
}

// takes_check: a CLI11 check that refuses a value `accepts(text)` is false for, with
// "takes WHAT, not 'TEXT'" (the option's name is put in front by describe_parse_error).
template <class Accepts>
CLI::Validator takes_check(std::string what, Accepts accepts) {
  return CLI::Validator(
      [what = std::move(what), accepts](std::string& text) -> std::string {
        return accepts(text) ? std::string() : "takes " + what + ", not '" + text + "'";
      },
      "", "");
}

// number_option: --name N read into *out, refused with "--name takes a number from LO to
// HI, not 'TEXT'" when it is anything else. `what` replaces "a number from LO to HI".
template <typename T>
CLI::Option* number_option(CLI::App& app, const std::string& name, T* out, T lo, T hi, std::string what = {}) {
  static_assert(std::is_arithmetic_v<T>);
  if (what.empty()) what = "a number from " + std::to_string(lo) + " to " + std::to_string(hi);
  return app
      .add_option_function<std::string>(
          name, [out, lo, hi](const std::string& text) { *out = *parse_number<T>(text, lo, hi); })
      ->check(
          takes_check(what, [lo, hi](const std::string& text) { return parse_number<T>(text, lo, hi).has_value(); }));
}

// split_list: a comma-separated list's items, empty ones skipped: "1,2,,4" -> 1, 2, 4.
inline std::vector<std::string> split_list(std::string_view list) {
  std::vector<std::string> items;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (!item.empty()) items.emplace_back(item);
    list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
  }
  return items;
}

// parse_number_list: split_list's items, each read by parse_number; nullopt when one is
// not a number in [lo, hi] or there is none.
template <typename T>
std::optional<std::vector<T>> parse_number_list(std::string_view text, T lo, T hi) {
  std::vector<T> values;
  for (const std::string& item : split_list(text)) {
    const auto value = parse_number<T>(item, lo, hi);
    if (!value) return std::nullopt;
    values.push_back(*value);
  }
  if (values.empty()) return std::nullopt;
  return values;
}

// number_list_option: --name A,B,... read into *out (replacing it), refused with "--name
// takes a list of numbers from LO to HI, not 'TEXT'" when an item is anything else or the
// list is empty. `what` replaces "a list of numbers from LO to HI".
template <typename T>
CLI::Option* number_list_option(CLI::App& app, const std::string& name, std::vector<T>* out, T lo, T hi,
                                std::string what = {}) {
  static_assert(std::is_arithmetic_v<T>);
  if (what.empty()) what = "a list of numbers from " + std::to_string(lo) + " to " + std::to_string(hi);
  return app
      .add_option_function<std::string>(
          name, [out, lo, hi](const std::string& text) { *out = *parse_number_list<T>(text, lo, hi); })
      ->check(takes_check(
          what, [lo, hi](const std::string& text) { return parse_number_list<T>(text, lo, hi).has_value(); }));
}

// address_check: a CLI11 check that the value reads with lantern::parse_host_port under
// `rules`; refused with the parser's sentence. The option keeps the text as given.
inline CLI::Validator address_check(HostPortRules rules = {}) {
  return CLI::Validator(
      [rules](std::string& text) -> std::string {
        std::string error;
        return parse_host_port(text, &error, rules) ? std::string() : "takes HOST:PORT: " + error;
      },
      "", "");
}

// ipv4_check: a CLI11 check that the value is a numeric IPv4 address (inet_pton), such as
// 127.0.0.1; refused with "takes an IPv4 address such as 127.0.0.1, not 'TEXT'".
inline CLI::Validator ipv4_check() {
  return takes_check("an IPv4 address such as 127.0.0.1", [](const std::string& text) {
    in_addr address{};
    return ::inet_pton(AF_INET, text.c_str(), &address) == 1;
  });
}

// or_list: "a, b or c".
inline std::string or_list(const std::vector<std::string>& names) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return list;
}

inline bool is_one_of(const std::string& text, const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (text == n) return true;
  return false;
}

// choice_option: --name VALUE, one of `names`, refused with "--name takes a, b or c, not 'x'".
inline CLI::Option* choice_option(CLI::App& app, const std::string& name, std::string* out,
                                  std::vector<std::string> names) {
  const std::string what = or_list(names);
  return app.add_option(name, *out)->check(takes_check(what, [names = std::move(names)](const std::string& text) {
    return is_one_of(text, names);
  }));
}

// choice_list_option: --name a,c (comma-separated, each one of `names`) read into *out
// (replacing it), refused with "--name takes a list of a, b or c, not 'TEXT'" when an item
// is anything else or the list is empty.
inline CLI::Option* choice_list_option(CLI::App& app, const std::string& name, std::vector<std::string>* out,
                                       std::vector<std::string> names) {
  const std::string what = "a list of " + or_list(names);
  const auto accepts = [names = std::move(names)](const std::string& text) {
    const std::vector<std::string> items = split_list(text);
    for (const std::string& item : items)
      if (!is_one_of(item, names)) return false;
    return !items.empty();
  };
  return app.add_option_function<std::string>(name, [out](const std::string& text) { *out = split_list(text); })
      ->check(takes_check(what, accepts));
}

}  // namespace lantern::tools
