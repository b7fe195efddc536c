// SPDX-License-Identifier: Apache-2.0
// promql_names.hpp - the metric names a PromQL expression refers to, for checking that a
// dashboard asks only for metrics the exporter emits.
//
// Not a PromQL parser: it removes what cannot hold a metric name (string literals,
// label matchers {...}, ranges and subqueries [...], grouping lists after by / without
// / on / ignoring / group_left / group_right, numbers and durations, Grafana $variables)
// and keeps each remaining identifier that is not a call (followed by "(") or a keyword.
// What dashboards write is covered by promql_names_test.cpp.
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <string_view>

namespace lantern::exporters::testing {

namespace detail {

inline bool identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
inline bool identifier_char(char c) { return identifier_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

inline bool is_keyword(std::string_view word) {
  static const std::set<std::string_view> kKeywords = {
      "by", "without", "on",     "ignoring", "group_left", "group_right", "bool", "and",
      "or", "unless",  "offset", "atan2",    "inf",        "nan",         "Inf",  "NaN"};
  return kKeywords.count(word) > 0;
}

inline bool is_grouping_keyword(std::string_view word) {
  return word == "by" || word == "without" || word == "on" || word == "ignoring" || word == "group_left" ||
         word == "group_right";
}

// skip_balanced: from the opening bracket at `i`, the index just past its match.
inline std::size_t skip_balanced(std::string_view s, std::size_t i, char open, char close) {
  int depth = 0;
  for (; i < s.size(); ++i) {
    if (s[i] == '"' || s[i] == '\'' || s[i] == '`') {  // a quote inside: skip to its end
      const char q = s[i];
      for (++i; i < s.size() && s[i] != q; ++i) {
        if (s[i] == '\\') ++i;
      }
      continue;
    }
    if (s[i] == open) ++depth;
    if (s[i] == close && --depth == 0) return i + 1;
  }
  return s.size();
}

inline std::size_t skip_spaces(std::string_view s, std::size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

// followed_by_grouping: the word at `i` is "by" or "without" (so the word before it is an
// aggregation operator, as in "sum by (le) (...)").
inline bool followed_by_grouping(std::string_view s, std::size_t i) {
  std::size_t end = i;
  while (end < s.size() && identifier_char(s[end])) ++end;
  const std::string_view word = s.substr(i, end - i);
  return word == "by" || word == "without";
}

}  // namespace detail

// metric_names: the metric names `expr` selects, e.g. {"lantern_steals_total"} for
// `sum by (distance) (rate(lantern_steals_total{worker=~"$worker"}[$__rate_interval]))`.
inline std::set<std::string> metric_names(std::string_view expr) {
  using namespace detail;
  std::set<std::string> names;
  std::size_t i = 0;
  while (i < expr.size()) {
    const char c = expr[i];
    if (c == '"' || c == '\'' || c == '`') {
      for (++i; i < expr.size() && expr[i] != c; ++i) {
        if (expr[i] == '\\') ++i;
      }
      ++i;
    } else if (c == '{') {
      i = skip_balanced(expr, i, '{', '}');
    } else if (c == '[') {
      i = skip_balanced(expr, i, '[', ']');
    } else if (c == '#') {  // a comment runs to the end of the line
      while (i < expr.size() && expr[i] != '\n') ++i;
    } else if (c == '$') {  // a Grafana variable: $name or ${name}
      ++i;
      if (i < expr.size() && expr[i] == '{') {
        i = skip_balanced(expr, i, '{', '}');
      } else {
        while (i < expr.size() && identifier_char(expr[i])) ++i;
      }
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < expr.size() && std::isdigit(static_cast<unsigned char>(expr[i + 1])))) {
      while (i < expr.size() && (identifier_char(expr[i]) || expr[i] == '.')) ++i;  // 0.99, 1e-3, 5m, 0x1f
    } else if (identifier_start(c)) {
      const std::size_t start = i;
      while (i < expr.size() && identifier_char(expr[i])) ++i;
      const std::string_view word = expr.substr(start, i - start);
      const std::size_t next = skip_spaces(expr, i);
      if (is_grouping_keyword(word)) {
        if (next < expr.size() && expr[next] == '(') i = skip_balanced(expr, next, '(', ')');  // label list
      } else if (!is_keyword(word) && !(next < expr.size() && expr[next] == '(') && !followed_by_grouping(expr, next)) {
        names.insert(std::string(word));  // not a call, nor an aggregation written "sum by (...) (...)"
      }
    } else {
      ++i;
    }
  }
  return names;
}

}  // namespace lantern::exporters::testing
