// SPDX-License-Identifier: Apache-2.0
// settings.hpp - reading lantern::observe's settings: where each comes from (the app,
// the environment, the app's defaults) and what its text means.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "lantern/observe.hpp"
#include "lantern/trace/event_table.hpp"

namespace lantern::observe_detail {

// One row per setting: the field and its environment variable.
struct SettingInfo {
  std::optional<std::string> ObserveSettings::*field;
  const char* env;   // LANTERN_...
  const char* name;  // how a message names it when it did not come from the environment
};
inline constexpr std::size_t kSettingCount = 7;
extern const std::array<SettingInfo, kSettingCount> kSettings;

struct ResolvedSettings {
  ObserveSettings values;
  std::array<ObserveSource, kSettingCount> sources{};
};

// resolve: settings, then (if `environment`) the LANTERN_* variables, then defaults. A
// variable set to "" counts: "" turns its sink off.
ResolvedSettings resolve(const ObserveOptions& options);
std::size_t index_of(std::optional<std::string> ObserveSettings::*field) noexcept;

// describe_origin: "LANTERN_TRACE=/x" or "trace \"/x\"": how a message names a setting.
std::string describe_origin(const ResolvedSettings& r, std::size_t index);

// parse_level: "off", "states", "tasks", "full", "graph".
std::optional<trace::Level> parse_level(const std::string& text);

// FlightSpec: "30s", "30", "64MB", "30s,64MB".
struct FlightSpec {
  double keep_seconds = 0;    // 0: by size only
  std::size_t max_bytes = 0;  // 0: the default (64 MiB)
};
std::optional<FlightSpec> parse_flight(const std::string& text, std::string* why);

}  // namespace lantern::observe_detail
