// SPDX-License-Identifier: Apache-2.0
// lane_painter.hpp - draws one worker's state band and task rows in O(pixels).
//
// The level-of-detail rule, for both: a pixel column either lies inside one interval or
// slice (drawn as part of a run, and the painter jumps to that run's end), or it holds
// several (the painter reads the column's aggregate with a range query and moves on by
// one pixel). The work per frame is therefore bounded by the pixels, with one binary
// search per step, however many millions of events the window spans.
#pragma once

#include <imgui.h>

#include <cstdint>

#include "lantern/viewer/model.hpp"
#include "view_state.hpp"

namespace lantern::viewer {

// TimeMapping: window [start, end) in relative ticks onto [x0, x0 + width) pixels.
struct TimeMapping {
  double start = 0;
  double end = 1;
  float x0 = 0;
  float width = 1;
  double ticks_per_pixel() const noexcept { return (end - start) / static_cast<double>(width); }
  float x(double t) const noexcept { return x0 + static_cast<float>((t - start) / ticks_per_pixel()); }
  double t(float px) const noexcept { return start + static_cast<double>(px - x0) * ticks_per_pixel(); }
};

struct PaintStats {
  std::uint64_t runs = 0;     // rectangles emitted
  std::uint64_t queries = 0;  // range queries (mixed pixels)
};

class LanePainter {
 public:
  LanePainter(const Model& model, const TimeMapping& map, double limit_rel, ImDrawList* draw, bool by_label = false)
      : model_(model), map_(map), limit_(limit_rel), draw_(draw), by_label_(by_label) {}

  // states: the worker's state band in [y0, y1).
  void states(std::uint32_t worker, float y0, float y1);
  // tasks: slices of `depth` in [y0, y1), coloured by source or (by_label) by task label;
  // a wide enough slice shows its label's name, else its id.
  void tasks(std::uint32_t worker, int depth, float y0, float y1);
  // dominant_state: the state a worker spent most of [a, b) in (relative ticks), or -1.
  int dominant_state(std::uint32_t worker, double a, double b) const;

  const PaintStats& stats() const noexcept { return stats_; }
  // set_layout: record what tests read (off-CPU bars: "off_cpu worker depth x0 y0 x1 y1").
  void set_layout(LayoutRecord* layout) noexcept { view_layout_ = layout; }

 private:
  Tick open_end() const noexcept;  // where the open interval / running task is drawn to
  void flush_run(float y0, float y1);

  const Model& model_;
  TimeMapping map_;
  double limit_;
  ImDrawList* draw_;
  bool by_label_;
  LayoutRecord* view_layout_ = nullptr;
  PaintStats stats_;
  // The pending run of one colour (merged across pixels before it becomes a rectangle).
  float run_x0_ = 0, run_x1_ = 0;
  ImU32 run_colour_ = 0;
  bool run_open_ = false;
};

}  // namespace lantern::viewer
