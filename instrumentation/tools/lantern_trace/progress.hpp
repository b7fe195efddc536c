// SPDX-License-Identifier: Apache-2.0
// progress.hpp - a progress bar on stderr for long reads.
//
// Shown only when stderr is a terminal (never in pipes, logs or tests), only once the
// work has taken a moment (small files never flash a bar), and redrawn at most ten
// times a second so drawing costs nothing measurable.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace lantern::trace::cli {

class Progress {
 public:
  // total: the work's size in bytes (0: unknown, no bar). enabled: the user allows it.
  Progress(std::string label, std::uint64_t total, bool enabled);
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(std::uint64_t done);
  // finish erases the bar, leaving the terminal line clean for the report.
  void finish();

 private:
  std::string label_;
  std::uint64_t total_;
  bool active_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace lantern::trace::cli
