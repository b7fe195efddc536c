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

// Tasks coloured by label: ten light fills (dark text reads on each) that are far apart
// in CIELAB (CIE76 distance 20 or more between any two, checked by tests/viewer/palette_test.cpp),
// also for deuteranopes and protanopes (simulated there), and none near a state colour
// (the band just above the task rows). After Paul Tol's "light" scheme (colour-blind
// safe), widened to ten hues. Label ids are dense from 1 (lantern::label interns in
// order), so a program's first ten labels get ten different colours; an eleventh shares
// the first's. Tasks that named themselves nothing are a dark slate, so labelled work
// stands out.
inline constexpr ImU32 kUnlabelled = rgb(84, 92, 110);
inline constexpr ImU32 kLabel[] = {rgb(119, 170, 221), rgb(238, 136, 102), rgb(170, 140, 110), rgb(190, 160, 255),
                                   rgb(187, 204, 51),  rgb(255, 170, 187), rgb(204, 121, 167), rgb(170, 230, 120),
                                   rgb(255, 200, 150), rgb(221, 221, 221)};

// What the timeline draws over the lanes and the plots draw as lines, one colour per
// event of the vocabulary (lantern/vocabulary.hpp's LANTERN_EVENTS), so a help is the
// same teal as an arrow, a plot line and a legend key. Red is the far end of the
// distance scale (remote steals) and nothing else: no plot line is red.
inline constexpr ImU32 kEvent[] = {
    rgb(225, 228, 235),       // state (the workers-by-state plot uses the state colours)
    rgb(225, 228, 235),       // task_begin: tasks per second, the plot's white total
    rgb(225, 228, 235),       // task_end
    rgb(150, 156, 172),       // push
    rgb(206, 150, 236),       // steal: the stolen tasks' violet (arrows: by distance)
    rgb(150, 156, 172),       // steal_round_failed
    rgb(60, 200, 160),        // help: teal (help arrows and the help source)
    rgb(250, 250, 250, 200),  // wake: white arrows from the waker
    rgb(225, 228, 235),       // lane_pop: queue depth, the plot's white total
    rgb(255, 70, 150, 230),   // release: pink arrows, releasing task -> released task
    rgb(150, 156, 172),       // task_label
    rgb(40, 150, 200),        // io_submit: deep cyan
    rgb(80, 230, 255),        // io_complete: light cyan diamonds
    rgb(240, 228, 66),        // not_ready: yellow
    rgb(255, 40, 40),         // dropped: red triangles, the gap shaded
    rgb(255, 170, 40),        // deadlock: the warning colour
    rgb(150, 156, 172),       // spawn: the task graph's spawn edges
    rgb(150, 156, 172),       // wait_begin
    rgb(150, 156, 172),       // wait_end
    rgb(255, 70, 150, 230),   // signal_set: release's pink (a signal releases its waiters)
    rgb(255, 150, 200),       // satisfy: a lighter release pink (one dependency of several)
};
static_assert(std::size(kEvent) == static_cast<std::size_t>(kEventCount), "one colour per event in vocabulary.hpp");
constexpr ImU32 event(EventId e) { return kEvent[static_cast<int>(e)]; }
inline constexpr ImU32 kRelease = event(EventId::release);
inline constexpr ImU32 kIoCompletion = event(EventId::io_complete);

// Time a task's thread waited for a CPU (preempted): a near-black bar along the slice's
// bottom with a light edge (kOffCpuEdge), so it shows on every label colour and, in the
// legend, on the dark background.
inline constexpr ImU32 kOffCpu = rgb(12, 12, 16, 235);
inline constexpr ImU32 kOffCpuEdge = rgb(225, 228, 235, 200);

inline constexpr ImU32 kWake = event(EventId::wake);
inline constexpr ImU32 kHelp = event(EventId::help);
static_assert(kHelp == kSource[static_cast<int>(TaskSource::help)], "helps are one teal: arrows, plots, sources");
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

// The critical path (lantern::analysis::scalability's): its stretches outlined on the
// timeline and its worker-to-worker edges drawn as arrows, in magenta, which no state,
// label, arrow or plot line uses; the walk's current stretch is also filled with it.
inline constexpr ImU32 kCriticalPath = rgb(255, 0, 255);
inline constexpr ImU32 kCriticalPathFill = rgb(255, 0, 255, 70);
// Two runs compared (--compare): A's figures in the label palette's blue, B's in its salmon.
inline constexpr ImU32 kRunA = rgb(110, 190, 255);
inline constexpr ImU32 kRunB = rgb(250, 150, 120);
// The Scalability view's speedup plot: the greedy bounds as a shaded band, the simulated
// T_P as a mint line; the measured point is white (kText) for one run, kRunA/kRunB for two.
inline constexpr ImU32 kBoundsBand = rgb(110, 140, 220, 80);
inline constexpr ImU32 kBoundsEdge = rgb(140, 170, 240, 200);
inline constexpr ImU32 kSimulated = rgb(120, 230, 200);

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
inline ImU32 label(std::uint32_t id) { return id == 0 ? kUnlabelled : kLabel[(id - 1) % std::size(kLabel)]; }
// lane: the colour of lane i's line in the queue-depth plot: muted hues of their own
// (lines of one kind, told apart by hovering), none red, none an event's colour.
inline constexpr ImU32 kLane[] = {rgb(136, 204, 238), rgb(180, 160, 220), rgb(150, 190, 130), rgb(200, 160, 110),
                                  rgb(120, 140, 220), rgb(220, 160, 200), rgb(170, 170, 170), rgb(110, 180, 180)};
inline ImU32 lane(int i) { return kLane[static_cast<std::size_t>(i) % std::size(kLane)]; }

}  // namespace lantern::viewer::palette
