// SPDX-License-Identifier: Apache-2.0
// view_state.hpp - what the panels share: the time window, the playhead, the cursor,
// the focus a health warning sets, and the layout record screenshot tests read.
//
// Times here are ticks relative to Model::origin(), as doubles: a double holds any tick
// difference of a trace exactly enough for drawing, and negative values (events slightly
// before the first batch) need no special case.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "lantern/analysis/analysis.hpp"
#include "lantern/analysis/scalability.hpp"
#include "lantern/viewer/scale_figures.hpp"

namespace lantern::viewer {

// LayoutRecord: where things were drawn, one line per item ("lane_band 0 x0 y0 x1 y1"),
// for tests that check a screenshot's pixels without guessing coordinates.
struct LayoutRecord {
  std::vector<std::string> lines;
  void add(const char* what, int a, int b, float x0, float y0, float x1, float y1) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s %d %d %.0f %.0f %.0f %.0f", what, a, b, x0, y0, x1, y1);
    lines.emplace_back(buf);
  }
  // add_window: the timeline's window and playhead (inf: none), relative ticks.
  void add_window(double start, double end, double limit) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "timeline_window %.17g %.17g %.17g", start, end, limit);
    lines.emplace_back(buf);
  }
};

struct ViewState {
  static constexpr double kNoLimit = std::numeric_limits<double>::infinity();

  double start = 0;  // the timeline's window [start, end)
  double end = 1;
  double limit = kNoLimit;                                  // nothing later is shown: replay playhead, frozen live view
  bool follow = false;                                      // live: the window slides with the newest data
  bool fit_requested = true;                                // fit the window to the data on the next frame
  double hover = std::numeric_limits<double>::quiet_NaN();  // time under the timeline's cursor

  // focus: set by the health view; the timeline scrolls there and highlights it.
  struct Focus {
    bool active = false;
    double start = 0, end = 0;
    int worker = -1;  // -1: all lanes
    bool scroll_to = false;
  } focus;

  // How task slices are coloured: by where the task came from, or by the label it gave
  // itself. auto: by label as soon as the trace has labelled tasks.
  enum class TaskColours : std::uint8_t { automatic, source, label } task_colours = TaskColours::automatic;
  bool colour_by_label(bool trace_has_labels) const noexcept {
    return task_colours == TaskColours::label || (task_colours == TaskColours::automatic && trace_has_labels);
  }

  LayoutRecord* layout = nullptr;  // non-null only when recording (--layout)

  // The scalability figures the app computed for this trace (nullptr until they are):
  // the timeline outlines their critical path, when show_critical_path; path_step is
  // the stretch the walk control stands on (-1: none).
  const analysis::Scalability* scale = nullptr;
  bool show_critical_path = true;
  int path_step = -1;
  // Live: the rolling window's parallelism samples (nullptr for a replay), a plot.
  const std::vector<ParallelismSample>* live_parallelism = nullptr;
  double live_window_s = 0;

  double width() const noexcept { return end - start; }
  // show: make [a, b) the window, with a little margin, keeping a minimum width.
  void show(double a, double b, double min_width) {
    double w = std::max(b - a, min_width);
    const double mid = (a + b) / 2;
    start = mid - w * 0.55;
    end = mid + w * 0.55;
  }
};

// format_duration: "850 ns", "12.35 us", "3.07 ms", "1.250 s": the analysis' formatter,
// so a figure reads the same here as in lantern-trace and the demo.
inline std::string format_duration(double ns) { return analysis::format_duration_ns(ns); }

// format_count: 1234567 -> "1,234,567".
inline std::string format_count(unsigned long long v) {
  char digits[32], out[48];
  const int n = std::snprintf(digits, sizeof digits, "%llu", v);
  int o = 0;
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out[o++] = ',';
    out[o++] = digits[i];
  }
  return std::string(out, static_cast<std::size_t>(o));
}

// count_of: "1 warning", "5,116 steals": a count and its noun, plural when not one.
inline std::string count_of(std::uint64_t n, const std::string& noun) {
  return format_count(n) + " " + noun + (n == 1 ? "" : "s");
}

using analysis::parse_duration_ns;  // "1.5ms", "200us", "3s", "120ns", "250000" (ns); NaN when invalid

}  // namespace lantern::viewer
