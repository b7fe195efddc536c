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
//   - Bad usage: "PROGRAM: what is wrong (see PROGRAM --help)" on stderr, exit status 2.
//   - Addresses are read by lantern::parse_host_port (lantern/host_port.hpp), numbers by
//     number_option below, names by choice_option, comma-separated lists ("--workers 1,2")
//     by number_list_option and choice_list_option, so every program refuses the same
//     texts with the same words.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdio>
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

// version_text: what --version prints, e.g. "lantern-trace 0.1.0 (trace format version 3)".
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

// Program: a CLI11 App with the conventions above. The usage text is the program's own
// (written for people, with examples and exit codes); CLI11 does the parsing.
class Program {
 public:
  Program(std::string name, std::string usage) : app_(std::string(), name), name_(std::move(name)), usage_(std::move(usage)) {
    app_.set_help_flag("-h,--help");
    app_.set_version_flag("--version", version_text(name_));
    app_.allow_extras();  // unknown arguments are reported by parse(), in our words
    app_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)->disable_flag_override();
  }

  CLI::App& app() { return app_; }
  const std::string& name() const { return name_; }

  // parse: nullopt when the program should go on; otherwise the exit status to return
  // at once: 0 after --help or --version (printed on stdout), 2 after bad usage (the
  // message on stderr).
  std::optional<int> parse(int argc, const char* const* argv) {
    try {
      app_.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      std::fputs(usage_.c_str(), stdout);
      return kExitOk;
    } catch (const CLI::CallForAllHelp&) {
      std::fputs(usage_.c_str(), stdout);
      return kExitOk;
    } catch (const CLI::CallForVersion& v) {
      std::printf("%s\n", v.what());
      return kExitOk;
    } catch (const CLI::ParseError& e) {
      return usage_error(describe_parse_error(e));
    }
    const std::vector<std::string> extra = app_.remaining();
    if (!extra.empty()) {
      const std::string& first = extra.front();
      return usage_error(first.size() > 1 && first[0] == '-' ? "unknown option '" + first + "'"
                                                             : "unexpected argument '" + first + "'");
    }
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
  return app.add_option_function<std::string>(name, [out, lo, hi](const std::string& text) {
                                                    *out = *parse_number<T>(text, lo, hi);
                                                  })
      ->check(takes_check(what, [lo, hi](const std::string& text) { return parse_number<T>(text, lo, hi).has_value(); }));
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
  return app.add_option_function<std::string>(name, [out, lo, hi](const std::string& text) {
                                                    *out = *parse_number_list<T>(text, lo, hi);
                                                  })
      ->check(takes_check(what, [lo, hi](const std::string& text) { return parse_number_list<T>(text, lo, hi).has_value(); }));
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
  return app.add_option(name, *out)->check(
      takes_check(what, [names = std::move(names)](const std::string& text) { return is_one_of(text, names); }));
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
