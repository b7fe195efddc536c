// SPDX-License-Identifier: Apache-2.0
// palette.hpp - the viewer's colours, keyed by the event table's vocabularies.
//
// Every legend is built by walking trace::kStateNames / kSourceNames / kDistanceNames and
// looking the colour up here; the static_asserts fail the build if the table gains an
// entry this palette does not colour, instead of drawing it in a default colour.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <iterator>

#include "lantern/trace/event_table.hpp"

namespace lantern::viewer::palette {

constexpr ImU32 rgb(int r, int g, int b, int a = 255) { return IM_COL32(r, g, b, a); }

// Worker states: active green, idle amber, sleepy orange, sleeping blue - warm means
// "awake and burning CPU", cool means "parked".
inline constexpr ImU32 kState[] = {rgb(76, 185, 88), rgb(236, 196, 64), rgb(238, 122, 48), rgb(74, 112, 196)};
static_assert(sizeof(kState) / sizeof(kState[0]) == static_cast<std::size_t>(trace::kStateCount),
              "one colour per worker state in event_table.hpp");
inline constexpr ImU32 kUnknownState = rgb(90, 90, 96);

// Task sources (where a task was found): own work in muted blues, stolen work in
// violets so steals stand out, help in teal.
inline constexpr ImU32 kSource[] = {rgb(96, 140, 200),  rgb(112, 182, 218), rgb(165, 105, 215),
                                    rgb(206, 150, 236), rgb(60, 200, 160),  rgb(140, 140, 150)};
static_assert(sizeof(kSource) / sizeof(kSource[0]) == sizeof(trace::kSourceNames) / sizeof(trace::kSourceNames[0]),
              "one colour per task source in event_table.hpp");
inline constexpr ImU32 kTaskCluster = rgb(150, 156, 172);  // many tasks inside a few pixels

// Topology distances, near to far: pale to hot. None is near a state colour, so an
// arrow over a state band is never mistaken for a state.
// l2 and llc are deeper than the label palette's light blue and lavender: no legend
// key shares a colour with another (the layout screenshot test checks every pair).
inline constexpr ImU32 kDistance[] = {rgb(175, 232, 238), rgb(60, 120, 255), rgb(150, 90, 255), rgb(255, 130, 200),
                                      rgb(255, 70, 70)};
static_assert(sizeof(kDistance) / sizeof(kDistance[0]) == static_cast<std::size_t>(trace::kDistanceCount),
              "one colour per topology distance in event_table.hpp");

// Tasks coloured by label. The first twelve labels get hand-picked light colours, none
// near a state colour (the band just above the task rows), the release arrows or the IO
// marks; later ones golden-angle hues. Tasks that named themselves nothing are a dark
// slate, so labelled work stands out.
inline constexpr ImU32 kUnlabelled = rgb(84, 92, 110);
inline constexpr ImU32 kLabel[] = {rgb(110, 190, 255), rgb(250, 150, 120), rgb(190, 150, 250), rgb(215, 225, 110),
                                   rgb(120, 225, 205), rgb(255, 205, 150), rgb(150, 160, 255), rgb(225, 175, 175),
                                   rgb(185, 240, 170), rgb(200, 190, 135), rgb(160, 220, 250), rgb(220, 165, 235)};
inline constexpr ImU32 kRelease = rgb(255, 70, 150, 230);  // releasing task -> released task
inline constexpr ImU32 kIoCompletion = rgb(80, 230, 255);

inline constexpr ImU32 kWake = rgb(250, 250, 250, 200);
inline constexpr ImU32 kHelp = kSource[4];
inline constexpr ImU32 kDrop = rgb(255, 40, 40);
inline constexpr ImU32 kWarning = rgb(255, 170, 40);
inline constexpr ImU32 kError = rgb(255, 85, 85);
inline constexpr ImU32 kGood = rgb(120, 210, 120);
inline constexpr ImU32 kText = rgb(225, 228, 235);
inline constexpr ImU32 kDimText = rgb(150, 155, 165);
inline constexpr ImU32 kGrid = rgb(255, 255, 255, 28);
inline constexpr ImU32 kLaneBackground[] = {rgb(30, 32, 38), rgb(36, 38, 45)};
inline constexpr ImU32 kPlayhead = rgb(255, 255, 255, 210);
inline constexpr ImU32 kFocus = rgb(255, 170, 40, 60);

inline ImU32 state(int s) { return s >= 0 && s < trace::kStateCount ? kState[s] : kUnknownState; }
inline ImU32 source(int s) {
  return s >= 0 && s < static_cast<int>(sizeof(kSource) / sizeof(kSource[0])) ? kSource[s] : kTaskCluster;
}
inline ImU32 distance(int d) { return d >= 0 && d < trace::kDistanceCount ? kDistance[d] : kDimText; }
inline ImVec4 vec(ImU32 c) { return ImGui::ColorConvertU32ToFloat4(c); }
// scale: the colour with its RGB multiplied by k (alpha kept).
inline ImU32 scale(ImU32 c, float k) {
  ImVec4 v = vec(c);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(v.x * k, v.y * k, v.z * k, v.w));
}
// label: the colour of task label `id` (0: none).
inline ImU32 label(std::uint32_t id) {
  if (id == 0) return kUnlabelled;
  if (id <= std::size(kLabel)) return kLabel[id - 1];
  const float h = static_cast<float>(id) * 0.618034f + 0.08f;
  float r, g, b;
  ImGui::ColorConvertHSVtoRGB(h - static_cast<float>(static_cast<int>(h)), 0.45f, 0.92f, r, g, b);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(r, g, b, 1.0f));
}
// series: a distinct colour for the i-th line of a plot (lanes): golden-angle hues.
inline ImU32 series(int i) {
  float r, g, b;
  ImGui::ColorConvertHSVtoRGB(
      static_cast<float>(i) * 0.618034f - static_cast<float>(static_cast<int>(static_cast<float>(i) * 0.618034f)),
      0.55f, 0.95f, r, g, b);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(r, g, b, 1.0f));
}

}  // namespace lantern::viewer::palette
