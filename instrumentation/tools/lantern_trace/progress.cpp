// SPDX-License-Identifier: Apache-2.0
// progress.cpp - drawing the bar with carriage returns.
#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace lantern::trace::cli {

namespace {
constexpr auto kDelay = std::chrono::milliseconds(300);
constexpr auto kRedraw = std::chrono::milliseconds(100);
constexpr int kWidth = 30;
}  // namespace

Progress::Progress(std::string label, std::uint64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      active_(enabled && total > 0 && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void Progress::update(std::uint64_t done) {
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < kDelay || (drawn_ && now - last_draw_ < kRedraw)) return;
  last_draw_ = now;
  drawn_ = true;
  const double fraction = done >= total_ ? 1.0 : static_cast<double>(done) / static_cast<double>(total_);
  const int filled = static_cast<int>(fraction * kWidth);
  std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% %.1f/%.1f MB", label_.c_str(), filled, "##############################",
               kWidth - filled, "", static_cast<int>(fraction * 100), static_cast<double>(done) / 1e6,
               static_cast<double>(total_) / 1e6);
  std::fflush(stderr);
}

void Progress::finish() {
  if (!drawn_) return;
  drawn_ = false;
  std::fprintf(stderr, "\r\033[K");  // carriage return, erase to the end of the line
  std::fflush(stderr);
}

}  // namespace lantern::trace::cli
