// SPDX-License-Identifier: Apache-2.0
// health_view.hpp - what went wrong: lost events, a damaged trace, and the warnings a
// user should not miss (long tasks, starved lanes, work waiting while all sleep, workers
// spinning). Clicking a warning shows its place on the timeline.
#pragma once

#include <imgui.h>

#include "lantern/viewer/model.hpp"
#include "view_state.hpp"

namespace lantern::viewer {

class HealthView {
 public:
  void draw(Model& model, ViewState& view, ImVec2 size);
  // The warning count is Model::warning_count() (the badge, the summary line and this
  // panel's total print it). trace_error_count: problems reading the trace (damage,
  // truncation), not warnings.
  static std::uint64_t trace_error_count(const Model& model);

 private:
  void data_section(const Model& model);
  void problem_rows(const Model& model, ViewState& view, ProblemKind kind, const std::vector<Problem>& list);
  void thresholds_section(Model& model);
  static void focus(const Model& model, ViewState& view, const Problem& p);

  HealthThresholds edit_;
  bool edit_loaded_ = false;
  bool sort_by_duration_ = false;  // Health lists: by time (default) or longest first

 public:
  void set_sort_by_duration(bool on) noexcept { sort_by_duration_ = on; }
  // set_recheck_allowed: Re-check writes to the model, so it waits while the scalability
  // figures are computed from it on their own thread (ScaleFigures::busy).
  void set_recheck_allowed(bool on) noexcept { recheck_allowed_ = on; }

 private:
  bool recheck_allowed_ = true;
};

}  // namespace lantern::viewer
