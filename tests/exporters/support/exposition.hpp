// SPDX-License-Identifier: Apache-2.0
// exposition.hpp - reads Prometheus's text exposition format (what /metrics returns) into
// samples, so tests can compare a real scrape with what they expect.
#pragma once

#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace lantern::exporters::testing {

struct Sample {
  std::string name;  // e.g. lantern_ready_wait_seconds_bucket
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct Exposition {
  std::vector<Sample> samples;
  std::map<std::string, std::string> types;  // family name -> "counter", "gauge", ...
  std::map<std::string, std::string> help;   // family name -> help text

  std::set<std::string> sample_names() const {
    std::set<std::string> out;
    for (const Sample& s : samples) out.insert(s.name);
    return out;
  }
  std::set<std::string> label_names() const {
    std::set<std::string> out;
    for (const Sample& s : samples) {
      for (const auto& [key, value] : s.labels) out.insert(key);
    }
    return out;
  }
  // sum: the sum of every sample named `name` whose labels include `match`.
  double sum(const std::string& name, const std::map<std::string, std::string>& match = {}) const {
    double total = 0;
    for (const Sample& s : samples) {
      if (s.name != name) continue;
      bool ok = true;
      for (const auto& [key, value] : match) {
        const auto it = s.labels.find(key);
        ok = ok && it != s.labels.end() && it->second == value;
      }
      if (ok) total += s.value;
    }
    return total;
  }
  // label_values: the values label `label` takes on samples named `name`.
  std::set<std::string> label_values(const std::string& name, const std::string& label) const {
    std::set<std::string> out;
    for (const Sample& s : samples) {
      if (s.name != name) continue;
      if (const auto it = s.labels.find(label); it != s.labels.end()) out.insert(it->second);
    }
    return out;
  }
};

// parse_exposition reads text format 0.0.4. Throws std::runtime_error quoting a line it
// cannot read.
inline Exposition parse_exposition(const std::string& text) {
  Exposition out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    auto bad = [&] { return std::runtime_error("cannot read exposition line: " + line); };
    if (line[0] == '#') {
      // "# TYPE name type" / "# HELP name text"
      const bool type = line.rfind("# TYPE ", 0) == 0, help = line.rfind("# HELP ", 0) == 0;
      if (!type && !help) continue;
      const std::size_t name_end = line.find(' ', 7);
      if (name_end == std::string::npos) throw bad();
      (type ? out.types : out.help)[line.substr(7, name_end - 7)] = line.substr(name_end + 1);
      continue;
    }
    Sample s;
    std::size_t i = line.find_first_of("{ ");
    if (i == std::string::npos) throw bad();
    s.name = line.substr(0, i);
    if (line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const std::size_t eq = line.find("=\"", i);
        if (eq == std::string::npos) throw bad();
        const std::string key = line.substr(i, eq - i);
        std::string value;
        for (i = eq + 2; i < line.size() && line[i] != '"'; ++i) {
          if (line[i] == '\\' && i + 1 < line.size()) {
            ++i;
            value += line[i] == 'n' ? '\n' : line[i];
          } else {
            value += line[i];
          }
        }
        if (i >= line.size()) throw bad();
        s.labels[key] = value;
        ++i;                                         // past the closing quote
        if (i < line.size() && line[i] == ',') ++i;  // next label
      }
      if (i >= line.size()) throw bad();
      ++i;  // past '}'
    }
    const std::string value = line.substr(line.find_first_not_of(' ', i));
    char* parsed_end = nullptr;
    s.value = std::strtod(value.c_str(), &parsed_end);  // also reads +Inf and NaN
    if (parsed_end == value.c_str()) throw bad();
    out.samples.push_back(std::move(s));
  }
  return out;
}

}  // namespace lantern::exporters::testing
