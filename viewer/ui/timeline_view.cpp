// SPDX-License-Identifier: Apache-2.0
// timeline_view.cpp - the timeline panel: layout of the lanes, zoom and pan, the ruler.
// Arrows, markers and tooltips are in timeline_overlays.cpp; the O(pixels) drawing of
// bands and slices in lane_painter.cpp.
#include "timeline_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "palette.hpp"

namespace lantern::viewer {
namespace {

constexpr float kRulerHeight = 24.0f;
constexpr double kMinWidthTicks = 20.0;  // deepest zoom: a few ticks across the window

// nice_step: 1, 2 or 5 times a power of ten, at least `raw`.
double nice_step(double raw) {
  if (!(raw > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

bool key(int glfw_key) { return ImGui::IsKeyPressed(glfw_key, true); }

}  // namespace

void TimelineView::fit(const Model& model, ViewState& view) const {
  view.fit_requested = false;
  const double first = model.rel(model.first_tick());
  double last = model.rel(model.last_tick());
  if (std::isfinite(view.limit)) last = std::min(last, view.limit);
  if (view.follow) {
    const double w = view.width() > kMinWidthTicks ? view.width() : model.ns_to_ticks(1e9);
    view.end = last, view.start = last - w;
    return;
  }
  const double span = std::max(last - first, kMinWidthTicks * 50);
  view.start = first - span * 0.01;
  view.end = first + span * 1.01;
}

void TimelineView::handle_input(const Model& model, ViewState& view, const TimeMapping& map, bool hovered) {
  ImGuiIO& io = ImGui::GetIO();
  const double span = std::max(model.rel(model.last_tick()) - model.rel(model.first_tick()), kMinWidthTicks);
  auto zoom = [&](double factor, double around) {
    double w = std::clamp(view.width() * factor, kMinWidthTicks, span * 8);
    if (view.follow) {
      view.start = view.end - w;  // following: keep the newest data at the right edge
      return;
    }
    const double k = (around - view.start) / view.width();
    view.start = around - k * w;
    view.end = view.start + w;
  };
  auto pan = [&](double ticks) {
    view.start += ticks;
    view.end += ticks;
    view.follow = false;
  };
  if (hovered && io.MouseWheel != 0) {
    if (io.KeyShift) {
      ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseWheel * 60.0f);
    } else {
      zoom(std::pow(0.8, io.MouseWheel), map.t(io.MousePos.x));
    }
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 1.0f) && io.MouseDelta.x != 0) {
    dragging_ = true;
    pan(-static_cast<double>(io.MouseDelta.x) * map.ticks_per_pixel());
  }
  if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) dragging_ = false;
  const bool keyboard = !io.WantTextInput && ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows);
  if (keyboard) {
    const double centre = (view.start + view.end) / 2;
    if (key('W')) zoom(0.8, centre);
    if (key('S')) zoom(1.25, centre);
    if (key('A') || key(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) pan(-0.15 * view.width());
    if (key('D') || key(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) pan(0.15 * view.width());
    if (key(ImGui::GetKeyIndex(ImGuiKey_Home))) view.fit_requested = true;
  }
}

void TimelineView::draw_ruler(const Model& model, const TimeMapping& map, ImDrawList* draw, float y0, float y1) const {
  const float right = map.x0 + map.width;
  draw->AddRectFilled(ImVec2(map.x0 - kLabelWidth, y0), ImVec2(right, y1), IM_COL32(24, 26, 31, 255));
  const double ns_per_px = map.ticks_per_pixel() * model.ns_per_tick();
  const double step_ns = nice_step(ns_per_px * 110.0);
  const double start_ns = model.ticks_to_ns(map.start), end_ns = model.ticks_to_ns(map.end);
  char text[48];
  float label_end = -1e30f;  // right edge of the last label drawn
  for (double t = std::floor(start_ns / step_ns) * step_ns; t <= end_ns; t += step_ns / 5) {
    const float x = map.x(model.ns_to_ticks(t));
    if (x < map.x0 || x > right) continue;
    const bool major = std::fabs(std::remainder(t, step_ns)) < step_ns * 1e-6;
    draw->AddLine(ImVec2(x, y1 - (major ? 9.0f : 4.0f)), ImVec2(x, y1), palette::kDimText);
    if (!major) continue;
    // Relative time from the trace start; finer steps need more digits to differ.
    const double a = std::fabs(t);
    if (step_ns >= 1e9 || (a >= 1e9 && step_ns >= 1e8)) {
      std::snprintf(text, sizeof text, "%.*f s", step_ns >= 1e9 ? 0 : 1, t / 1e9);
    } else if (a >= 1e6 || step_ns >= 1e6) {
      std::snprintf(text, sizeof text, "%.*f ms",
                    step_ns >= 1e6   ? 0
                    : step_ns >= 1e5 ? 1
                    : step_ns >= 1e4 ? 2
                                     : 3,
                    t / 1e6);
    } else if (a >= 1e3 || step_ns >= 1e3) {
      std::snprintf(text, sizeof text, "%.*f us", step_ns >= 1e3 ? 0 : step_ns >= 1e2 ? 1 : 2, t / 1e3);
    } else {
      std::snprintf(text, sizeof text, "%.0f ns", t);
    }
    // Right of its tick, or left of it at the right edge: never clipped.
    const float tw = ImGui::CalcTextSize(text).x;
    const float tx = x + 3 + tw <= right ? x + 3 : x - 3 - tw;
    // A label flipped left of its tick at the right edge may reach the one before: then
    // the tick stays unlabelled rather than the two running together.
    if (tx < label_end + 8) continue;
    label_end = tx + tw;
    draw->AddText(ImVec2(tx, y0 + 3), palette::kText, text);
    if (layout_ruler_)
      layout_ruler_->add("ruler_label", 0, 0, tx, y0 + 3, tx + tw, y0 + 3 + ImGui::GetTextLineHeight());
  }
  std::snprintf(text, sizeof text, "%s / div", format_duration(step_ns).c_str());
  draw->AddText(ImVec2(map.x0 - kLabelWidth + 6, y0 + 4), palette::kDimText, text);
}

float TimelineView::preferred_height(const Model& model) const {
  int depth = 0;
  for (std::uint32_t w = 0; w < model.worker_count(); ++w) depth = std::max(depth, model.track(w).depth_count());
  const Lanes lanes;
  const float lane = lanes.band + static_cast<float>(std::min(depth, max_rows_)) * (lanes.row + 4) + 16.0f;
  return kRulerHeight + 16.0f + lane * static_cast<float>(model.worker_count());
}

void TimelineView::draw(const Model& model, ViewState& view, ImVec2 size) {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  if (view.fit_requested && !model.empty()) fit(model, view);
  if (!(view.end > view.start)) view.end = view.start + kMinWidthTicks;
  const float width = std::max(size.x - kLabelWidth - 14.0f, 40.0f);
  TimeMapping map{view.start, view.end, origin.x + kLabelWidth, width};

  Lanes lanes;
  int depth = 0;
  for (std::uint32_t w = 0; w < model.worker_count(); ++w) depth = std::max(depth, model.track(w).depth_count());
  lanes.rows = std::min(depth, max_rows_);
  lanes.height = lanes.band + static_cast<float>(lanes.rows) * lanes.row + 12.0f;
  // Few workers: grow band and rows (up to a limit) rather than leave the panel empty.
  const float room =
      (size.y - kRulerHeight - 12.0f) / static_cast<float>(std::max<std::uint32_t>(model.worker_count(), 1));
  if (room > lanes.height) {
    const float extra = room - lanes.height;
    lanes.band += std::min(extra * 0.3f, 8.0f);
    if (lanes.rows > 0) lanes.row += std::min(extra * 0.7f / static_cast<float>(lanes.rows), 6.0f);
    lanes.height = lanes.band + static_cast<float>(lanes.rows) * lanes.row + 12.0f;
  }

  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + kRulerHeight));
  ImGui::BeginChild("##lanes", ImVec2(size.x, size.y - kRulerHeight), false, ImGuiWindowFlags_NoScrollWithMouse);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 top = ImGui::GetCursorScreenPos();
  lanes.top = top.y + 4.0f;
  const float total = lanes.height * static_cast<float>(model.worker_count()) + 8.0f;
  ImGui::InvisibleButton("##canvas",
                         ImVec2(std::max(size.x - 14.0f, 1.0f), std::max(total, size.y - kRulerHeight - 8)));
  const bool hovered = ImGui::IsItemHovered();
  if (view.focus.scroll_to) {
    // A health warning was clicked: bring its worker's lane into view.
    if (view.focus.worker >= 0)
      ImGui::SetScrollY(std::max(0.0f, static_cast<float>(view.focus.worker) * lanes.height - 20.0f));
    view.focus.scroll_to = false;
  }
  handle_input(model, view, map, hovered);
  map.start = view.start, map.end = view.end;
  view.hover = hovered ? map.t(ImGui::GetIO().MousePos.x) : std::numeric_limits<double>::quiet_NaN();

  if (view.layout) view.layout->add_window(map.start, map.end, view.limit);
  const float clip_top = ImGui::GetWindowPos().y, clip_bottom = clip_top + ImGui::GetWindowSize().y;
  const float right = map.x0 + map.width;
  const bool by_label = view.colour_by_label(!model.label_uses().empty());
  LanePainter painter(model, map, view.limit, draw, by_label);
  painter.set_layout(view.layout);
  if (view.layout) view.layout->add("task_colours", by_label ? 1 : 0, 0, 0, 0, 0, 0);
  char text[96];
  for (std::uint32_t w = 0; w < model.worker_count(); ++w) {
    const float y = lanes.y(w);
    if (y + lanes.height < clip_top || y > clip_bottom) continue;  // scrolled out of view
    draw->AddRectFilled(ImVec2(origin.x, y - 3), ImVec2(right, y + lanes.height - 7), palette::kLaneBackground[w % 2]);
    std::snprintf(text, sizeof text, "worker %u", w);
    const WorkerTrack& track = model.track(w);
    if (track.stopped_at() != kOpenEnd) {
      // Stopped (its `stopping` state event): no state any more, as its band ends there.
      draw->AddCircle(ImVec2(origin.x + 9, y + 7), 3.5f, palette::kDimText);
    } else {
      draw->AddCircleFilled(ImVec2(origin.x + 9, y + 7), 4.0f, palette::state(track.current_state()));
    }
    draw->AddText(ImVec2(origin.x + 18, y - 1), palette::kText, text);
    if (const trace::CpuRow* cpu = model.cpu_of(w)) {
      std::snprintf(text, sizeof text, "pkg %d  llc %d", cpu->package, cpu->llc);
      draw->AddText(ImVec2(origin.x + 18, y + 14), palette::kDimText, text);
    }
    if (model.track(w).depth_count() > lanes.rows && lanes.rows > 0) {
      std::snprintf(text, sizeof text, "+%d deeper", model.track(w).depth_count() - lanes.rows);
      draw->AddText(ImVec2(origin.x + 18, y + 29), palette::kDimText, text);
    }
    draw->PushClipRect(ImVec2(map.x0, y - 3), ImVec2(right, y + lanes.height), true);
    painter.states(w, y, y + lanes.band);
    for (int d = 0; d < lanes.rows; ++d) {
      const float r0 = y + lanes.band + 3 + static_cast<float>(d) * lanes.row;
      painter.tasks(w, d, r0, r0 + lanes.row - 2);
      if (view.layout) view.layout->add("task_row", static_cast<int>(w), d, map.x0, r0, right, r0 + lanes.row - 2);
    }
    draw->PopClipRect();
    if (view.layout) view.layout->add("lane_band", static_cast<int>(w), 0, map.x0, y, right, y + lanes.band);
  }
  stats_ = painter.stats();
  draw->PushClipRect(ImVec2(map.x0, clip_top), ImVec2(right, clip_bottom), true);
  draw_markers(model, view, map, lanes, draw);
  draw_arrows(model, view, map, lanes, draw);
  draw_critical_path(model, view, map, lanes, draw);
  draw->PopClipRect();
  if (hovered && !dragging_) tooltip(model, view, map, lanes, ImGui::GetIO().MousePos);
  ImGui::EndChild();

  // The ruler last, over the lanes' child, so that it reflects this frame's zoom.
  layout_ruler_ = view.layout;
  if (view.layout) view.layout->add("ruler", 0, 0, map.x0 - kLabelWidth, origin.y, right, origin.y + kRulerHeight);
  draw_ruler(model, map, ImGui::GetWindowDrawList(), origin.y, origin.y + kRulerHeight);
  if (arrows_hidden_[0] + arrows_hidden_[1] + arrows_hidden_[2] + arrows_hidden_[3] > 0) {
    // Each kind with its own count: "zoom in to see arrows: 4,215 steals, 294 wakes".
    static constexpr const char* kKinds[] = {"steal", "help", "wake", "release"};
    std::string note = "zoom in to see arrows:";
    const char* sep = " ";
    for (int k : {0, 2, 1, 3}) {
      if (arrows_hidden_[static_cast<std::size_t>(k)] == 0) continue;
      note += sep + count_of(arrows_hidden_[static_cast<std::size_t>(k)], kKinds[k]);
      sep = ", ";
    }
    const ImVec2 ts = ImGui::CalcTextSize(note.c_str());
    ImGui::GetWindowDrawList()->AddText(ImVec2(right - ts.x - 4, origin.y + size.y - ts.y - 4), palette::kDimText,
                                        note.c_str());
    if (view.layout) view.layout->lines.push_back("arrows_note " + note);
  }
}

}  // namespace lantern::viewer
