// SPDX-License-Identifier: Apache-2.0
// scalability_view.hpp - what limits the run's parallelism: the figures of
// lantern::analysis::scalability (the analysis `lantern-trace scale` prints), drawn.
//
//   - The speedup curve: workers P from 1 to 1024 (log) against speedup T1 / T_P (log),
//     the greedy bounds' band (T1 / (T1/P + span) to T1 / max(T1/P, span)), the
//     simulated T_P as a line, and the measured point of each run (two with --compare).
//   - Work, span, parallelism, burdened span and parallelism, the run's costs, the span
//     by edge kind, as text; a figure the analysis could not compute reads "not
//     computed: " and its reason, never a number.
//   - A walk along the critical path: previous/next stretch, which centres the timeline
//     on it and says its task, label, worker and the edge that led to it.
//   - The labels ranked by span share, each with its what-if (its tasks x % faster).
// The view computes nothing: ScaleFigures (lantern/viewer/scale_figures.hpp) calls the
// analysis once per trace, off the render thread; Recompute asks again (another what-if
// speedup).
#pragma once

#include <imgui.h>

#include <string>

#include "lantern/viewer/scale_figures.hpp"
#include "view_state.hpp"

namespace lantern::viewer {

class ScalabilityView {
 public:
  // Run: one trace's figures as the view draws them (b: the --compare run, may be absent).
  struct Run {
    const ScaleFigures* figures = nullptr;
    const Model* model = nullptr;
    std::string name;
  };
  // draw: fills `size`; `a` drives the timeline (the walk centres view's window on it).
  void draw(const Run& a, const Run* b, ViewState& view, ImVec2 size);
  // take_recompute: the user asked for the figures again (Recompute), with these options.
  bool take_recompute(analysis::ScaleOptions* options);
  // walk_to: stand the walk on stretch `step` (from 0) once the figures are there, as
  // "next" would (lantern-view --path-stretch).
  void walk_to(int step) noexcept { walk_to_ = step; }

 private:
  void curve(const Run& a, const Run* b, ViewState& view, ImVec2 size);
  void figures(const analysis::Scalability& s, ViewState& view);
  void walk(const analysis::Scalability& s, const Model& model, ViewState& view);
  void labels(const analysis::Scalability& s, ViewState& view, float height);

  float what_if_percent_ = 50;
  int walk_to_ = -1;
  bool recompute_ = false;
};

}  // namespace lantern::viewer
