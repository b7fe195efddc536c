// SPDX-License-Identifier: Apache-2.0
// timeline_view.hpp - one lane per worker: state band, task rows (coloured by source or by
// task label), steal, wake and release arrows, IO completion marks.
//
// Zoom with the mouse wheel (around the cursor) or W/S; pan by dragging or with A/D and
// the arrow keys; Home fits the whole trace. Hovering shows what is under the cursor:
// a state interval (or the mix inside a pixel), a task (id, source, duration, ready
// wait, the steal that brought it), or a cluster of tasks too small to draw apart.
#pragma once

#include <imgui.h>

#include <array>
#include <cstdint>

#include "lane_painter.hpp"
#include "view_state.hpp"

namespace lantern::viewer {

class TimelineView {
 public:
  // draw: the panel, filling `size` at the current cursor position.
  void draw(const Model& model, ViewState& view, ImVec2 size);

  int max_rows() const noexcept { return max_rows_; }
  void set_max_rows(int rows) noexcept { max_rows_ = rows < 0 ? 0 : rows; }
  // fit_if_requested: applies ViewState::fit_requested (whole trace, or the newest
  // window when following); ViewerApp calls it before any panel draws.
  void fit_if_requested(const Model& model, ViewState& view) const {
    if (view.fit_requested && !model.empty()) fit(model, view);
  }
  // preferred_height: what the lanes need at their normal size (ruler included).
  float preferred_height(const Model& model) const;
  // label_width: pixels left of the time axis; plots align with it.
  static constexpr float kLabelWidth = 112.0f;
  const PaintStats& last_stats() const noexcept { return stats_; }

 private:
  struct Lanes {
    float top = 0;     // y of worker 0's lane
    float band = 12;   // state band height
    float row = 16;    // task row height
    int rows = 1;      // task rows per lane
    float height = 0;  // one lane, gaps included
    float y(std::uint32_t w) const noexcept { return top + static_cast<float>(w) * height; }
  };
  void fit(const Model& model, ViewState& view) const;
  void handle_input(const Model& model, ViewState& view, const TimeMapping& map, bool hovered);
  void draw_ruler(const Model& model, const TimeMapping& map, ImDrawList* draw, float y0, float y1) const;
  void draw_arrows(const Model& model, const ViewState& view, const TimeMapping& map, const Lanes& lanes,
                   ImDrawList* draw);
  // draw_critical_path: the scalability figures' critical path (ViewState::scale): each
  // stretch outlined in its task's row, each edge between workers an arrow, the walk's
  // current stretch filled.
  void draw_critical_path(const Model& model, const ViewState& view, const TimeMapping& map, const Lanes& lanes,
                          ImDrawList* draw) const;
  void draw_markers(const Model& model, const ViewState& view, const TimeMapping& map, const Lanes& lanes,
                    ImDrawList* draw) const;
  void tooltip(const Model& model, const ViewState& view, const TimeMapping& map, const Lanes& lanes,
               ImVec2 mouse) const;

  int max_rows_ = 6;
  bool dragging_ = false;
  PaintStats stats_;
  // Steals, helps, wakes and releases in view, when there are too many to draw as arrows
  // (all 0 when they are drawn): the ruler's note names each kind with its own count.
  std::array<std::uint64_t, 4> arrows_hidden_{};
  mutable LayoutRecord* layout_ruler_ = nullptr;  // this frame's, when recording
};

}  // namespace lantern::viewer
