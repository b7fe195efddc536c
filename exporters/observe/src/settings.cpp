// SPDX-License-Identifier: Apache-2.0
// settings.cpp - where each of observe()'s settings comes from, and parsing its text.
#include "settings.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace lantern::observe_detail {

const std::array<SettingInfo, kSettingCount> kSettings = {{
    {&ObserveSettings::trace, "LANTERN_TRACE", "trace"},
    {&ObserveSettings::level, "LANTERN_LEVEL", "level"},
    {&ObserveSettings::metrics, "LANTERN_METRICS", "metrics"},
    {&ObserveSettings::stream, "LANTERN_STREAM", "stream"},
    {&ObserveSettings::flight, "LANTERN_FLIGHT", "flight"},
    {&ObserveSettings::flight_dir, "LANTERN_FLIGHT_DIR", "flight directory"},
    {&ObserveSettings::flight_signal, "LANTERN_FLIGHT_SIGNAL", "flight signal"},
}};

std::size_t index_of(std::optional<std::string> ObserveSettings::*field) noexcept {
  for (std::size_t i = 0; i < kSettingCount; ++i) {
    if (kSettings[i].field == field) return i;
  }
  return kSettingCount;
}

ResolvedSettings resolve(const ObserveOptions& options) {
  ResolvedSettings r;
  for (std::size_t i = 0; i < kSettingCount; ++i) {
    const auto field = kSettings[i].field;
    if (options.settings.*field) {
      r.values.*field = *(options.settings.*field);
      r.sources[i] = ObserveSource::settings;
      continue;
    }
    if (options.environment) {
      // Set but empty counts: LANTERN_FLIGHT= turns off a flight recorder the app's
      // defaults would start.
      const char* value = std::getenv(kSettings[i].env);
      if (value) {
        r.values.*field = std::string(value);
        r.sources[i] = ObserveSource::environment;
        continue;
      }
    }
    if (options.defaults.*field) {
      r.values.*field = *(options.defaults.*field);
      r.sources[i] = ObserveSource::defaults;
      continue;
    }
    r.sources[i] = ObserveSource::unset;
  }
  return r;
}

std::string describe_origin(const ResolvedSettings& r, std::size_t index) {
  const SettingInfo& info = kSettings[index];
  const std::string value = (r.values.*info.field).value_or("");
  if (r.sources[index] == ObserveSource::environment) return std::string(info.env) + "=" + value;
  return std::string(info.name) + " \"" + value + "\"";
}

std::optional<trace::Level> parse_level(const std::string& text) {
  for (int l = 0; l <= static_cast<int>(trace::Level::graph); ++l) {
    if (text == trace::kLevelNames[l]) return static_cast<trace::Level>(l);
  }
  return std::nullopt;
}

namespace {

// parse_number: a non-negative decimal number at the start of `text`; the rest in *rest.
std::optional<double> parse_number(const std::string& text, std::string* rest) {
  std::size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  if (end == 0) return std::nullopt;
  char* stop = nullptr;
  const std::string digits = text.substr(0, end);
  const double v = std::strtod(digits.c_str(), &stop);
  if (*stop != '\0' || !std::isfinite(v)) return std::nullopt;
  *rest = text.substr(end);
  return v;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::optional<FlightSpec> parse_flight(const std::string& text, std::string* why) {
  FlightSpec spec;
  const std::string usage = "give seconds (\"30s\" or \"30\"), a size (\"64MB\"), or both (\"30s,64MB\")";
  std::size_t at = 0;
  bool seconds = false, size = false;  // given yet; the loop reads at least one part
  while (at <= text.size()) {
    const std::size_t comma = text.find(',', at);
    const std::string part = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    at = comma == std::string::npos ? text.size() + 1 : comma + 1;
    std::string unit;
    const auto value = parse_number(part, &unit);
    unit = lower(unit);
    if (!value || *value <= 0) {
      *why = "\"" + part + "\" is not a positive number; " + usage;
      return std::nullopt;
    }
    const bool is_seconds = unit.empty() || unit == "s";
    if (!is_seconds && unit != "mb" && unit != "m" && unit != "mib") {
      *why = "unknown unit \"" + unit + "\" in \"" + part + "\"; " + usage;
      return std::nullopt;
    }
    bool& given = is_seconds ? seconds : size;
    if (given) {
      *why = "\"" + text + "\" gives the " + (is_seconds ? "seconds" : "size") + " twice; " + usage;
      return std::nullopt;
    }
    given = true;
    if (is_seconds) {
      if (*value > 86400) {
        *why = "keeps at most 86400 seconds (one day), not " + part;
        return std::nullopt;
      }
      spec.keep_seconds = *value;
    } else {
      if (*value > 65536) {
        *why = "keeps at most 65536 MB, not " + part;
        return std::nullopt;
      }
      spec.max_bytes = static_cast<std::size_t>(*value * 1048576.0);
    }
  }
  return spec;
}

}  // namespace lantern::observe_detail
