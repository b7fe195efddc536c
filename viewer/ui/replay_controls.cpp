// SPDX-License-Identifier: Apache-2.0
// replay_controls.cpp - playhead and follow logic, and their widgets.
#include "replay_controls.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "palette.hpp"

namespace lantern::viewer {
namespace {
constexpr double kSpeeds[] = {0.01, 0.05, 0.1, 0.25, 1, 2, 5, 10};
constexpr const char* kSpeedNames[] = {"0.01x", "0.05x", "0.1x", "0.25x", "1x", "2x", "5x", "10x"};
constexpr double kLiveWidths[] = {10e6, 100e6, 1e9, 5e9, 20e9};
constexpr const char* kLiveWidthNames[] = {"10 ms", "100 ms", "1 s", "5 s", "20 s"};
}  // namespace

void ReplayControls::toggle_play(const Model& model, ViewState& view) {
  if (model.empty()) return;
  playing_ = !playing_;
  const double first = model.rel(model.first_tick()), last = model.rel(model.last_tick());
  if (playing_ && (!std::isfinite(view.limit) || view.limit >= last)) {
    // Start from the beginning with a window a tenth of the trace, so there is motion.
    const double w = std::min(view.width(), std::max((last - first) / 10, 1.0));
    view.limit = first;
    view.start = first - w, view.end = first;
  }
}

void ReplayControls::advance(const Model& model, ViewState& view, bool live, double seconds) {
  if (model.empty()) return;
  const double last = model.rel(model.last_tick());
  if (live) {
    if (view.follow) {
      // Keep the width the user zoomed to; a window narrower than a microsecond is the
      // initial placeholder, replaced by the chosen live width.
      const double w = view.width() >= model.ns_to_ticks(1e3) ? view.width() : model.ns_to_ticks(live_width_ns_);
      view.end = last + w * 0.02;  // a small margin: the newest events are not on the edge
      view.start = view.end - w;
      view.fit_requested = false;
    }
    return;
  }
  if (!playing_) return;
  const double w = view.width();
  view.limit += model.ns_to_ticks(seconds * 1e9 * kSpeeds[speed_index_]);
  if (view.limit >= last) {
    view.limit = last;
    playing_ = false;
  }
  view.end = view.limit + w * 0.02;
  view.start = view.end - w;
  view.fit_requested = false;
}

void ReplayControls::draw_replay(const Model& model, ViewState& view) {
  if (ImGui::Button(playing_ ? "Pause" : "Play", ImVec2(60, 0))) toggle_play(model, view);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(72);
  ImGui::Combo("##speed", &speed_index_, kSpeedNames, IM_ARRAYSIZE(kSpeedNames));
  ImGui::SameLine();
  const double first = model.rel(model.first_tick()), last = model.rel(model.last_tick());
  double at_ns = model.ticks_to_ns((std::isfinite(view.limit) ? view.limit : last) - first);
  const double min_ns = 0, max_ns = std::max(model.ticks_to_ns(last - first), 1.0);
  const std::string label = format_duration(at_ns) + " / " + format_duration(max_ns);
  ImGui::SetNextItemWidth(std::max(200.0f, ImGui::GetContentRegionAvail().x * 0.45f));
  if (ImGui::SliderScalar("##seek", ImGuiDataType_Double, &at_ns, &min_ns, &max_ns, label.c_str())) {
    const double w = view.width();
    view.limit = first + model.ns_to_ticks(at_ns);
    view.end = view.limit + w * 0.02;
    view.start = view.end - w;
    view.fit_requested = false;
  }
  ImGui::SameLine();
  if (ImGui::Button("All")) {
    view.limit = ViewState::kNoLimit;
    playing_ = false;
    view.fit_requested = true;
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("show the whole trace (Home)");
}

void ReplayControls::draw_live(const Model& model, ViewState& view) {
  const bool frozen = std::isfinite(view.limit);
  if (ImGui::Button(frozen ? "Unfreeze" : "Freeze", ImVec2(80, 0))) {
    if (frozen) {
      view.limit = ViewState::kNoLimit;
      view.follow = true;
    } else {
      view.limit = model.rel(model.last_tick());
      view.follow = false;
    }
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("stop the picture; data keeps arriving underneath");
  ImGui::SameLine();
  bool follow = view.follow;
  if (ImGui::Checkbox("Follow latest", &follow)) {
    view.follow = follow;
    if (follow) view.limit = ViewState::kNoLimit;
  }
  ImGui::SameLine();
  int width_index = 2;
  for (int i = 0; i < IM_ARRAYSIZE(kLiveWidths); ++i) {
    if (kLiveWidths[i] == live_width_ns_) width_index = i;
  }
  ImGui::SetNextItemWidth(80);
  if (ImGui::Combo("##window", &width_index, kLiveWidthNames, IM_ARRAYSIZE(kLiveWidthNames))) {
    live_width_ns_ = kLiveWidths[width_index];
    view.follow = true;
    view.limit = ViewState::kNoLimit;
    view.start = view.end - model.ns_to_ticks(live_width_ns_);
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("how much recent history the window shows while following");
  const auto phase = model.status().phase;
  if (phase == SourceStatus::Phase::disconnected || phase == SourceStatus::Phase::failed) {
    ImGui::SameLine();
    if (ImGui::Button("Reconnect")) reconnect_ = true;
  }
}

void ReplayControls::draw(const Model& model, ViewState& view, bool live) {
  if (live) {
    draw_live(model, view);
  } else {
    draw_replay(model, view);
  }
}

}  // namespace lantern::viewer
