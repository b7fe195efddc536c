// SPDX-License-Identifier: Apache-2.0
// plots_view.hpp - counters over the timeline's window: workers in each state, queue
// depth per lane, tasks and steals per second, helps and wakes per second, and (when the
// trace has any) dependency releases and IO submissions and completions per second.
//
// The plots share the timeline's time axis (same window, same left margin), so a spike
// lines up with the lanes above it; the timeline's cursor is drawn here too. Every value
// is a range query per pixel column (occupancy sums for states, TimeSeries sums for
// counters), so plots cost O(pixels) like the timeline.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <vector>

#include "lane_painter.hpp"
#include "palette.hpp"
#include "view_state.hpp"

namespace lantern::viewer {

class PlotsView {
 public:
  void draw(const Model& model, ViewState& view, ImVec2 size);

 private:
  struct Line {
    std::vector<ImVec2> points;
    ImU32 colour;
    float thickness;
    const char* name;
    double last = 0;  // value under the cursor
  };
  struct Frame {
    ImVec2 p0, p1;  // the plot area
    double max = 1;
  };
  Frame frame(const char* title, const char* unit, double max, ImVec2 origin, ImVec2 size, float strip = 0);
  void draw_states(const Model& model, const ViewState& view, const TimeMapping& map, ImVec2 origin, ImVec2 size);
  // Series: one line of a plot: a TimeSeries id, its name, its colour (palette::event of
  // the events it counts, or palette::lane), and those events (a series whose events the
  // trace's level does not record is not drawn: the plot says why instead).
  struct Series {
    int id;
    const char* name;
    ImU32 colour;
    EventId source;
  };
  // draw_lines: per-second rates (rate=true) or averages (queue depth) of series ids.
  // The first series is the plot's total (thick); series from second_axis on use the
  // right axis. Keys are drawn in the strip above the plot area, never over a line.
  void draw_lines(const Model& model, const ViewState& view, const TimeMapping& map, const char* title,
                  const std::vector<Series>& series, bool rate, ImVec2 origin, ImVec2 size, int second_axis = 1 << 30);
  // draw_parallelism: live, the rolling window's parallelism (ViewState::live_parallelism,
  // ScaleFigures' samples): each sample at its window's end; a sample the analysis could
  // not compute is a gap, and the newest one's reason is said in the strip.
  void draw_parallelism(const Model& model, const ViewState& view, const TimeMapping& map, ImVec2 origin, ImVec2 size);
  void cursor(const ViewState& view, const TimeMapping& map, const Frame& f, const std::vector<Line>& lines) const;

  std::vector<double> column_values_;
};

}  // namespace lantern::viewer
