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
  // attention: how many things the top bar should flag (problems + trace errors + drops).
  static std::uint64_t attention(const Model& model);

 private:
  void data_section(const Model& model);
  void problem_rows(const Model& model, ViewState& view, ProblemKind kind, const std::vector<Problem>& list);
  void thresholds_section(Model& model);
  static void focus(const Model& model, ViewState& view, const Problem& p);

  HealthThresholds edit_;
  bool edit_loaded_ = false;
};

}  // namespace lantern::viewer
