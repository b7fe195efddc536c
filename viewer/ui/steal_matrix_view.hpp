// steal_matrix_view.hpp - who stole from whom: a thief x victim heatmap.
//
// Workers are ordered by where they run (package, NUMA node, LLC, L2, core), so the
// topology shows as blocks along the diagonal; each cell is tinted with the distance
// between its two workers and brightened by its count (log scale, so a few remote
// steals next to millions of near ones still show). Beside it: totals per distance
// level, per thief and per victim.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <vector>

#include "lantern/viewer/model.hpp"
#include "view_state.hpp"

namespace lantern::viewer {

class StealMatrixView {
 public:
  void draw(const Model& model, ViewState& view, ImVec2 size);

 private:
  void order_workers(const Model& model);
  void draw_matrix(const Model& model, ViewState& view, ImVec2 origin, float side);
  void draw_totals(const Model& model, float width);

  std::vector<std::uint32_t> order_;  // display position -> worker
  std::uint32_t ordered_for_ = 0;     // worker count order_ was built for
};

}  // namespace lantern::viewer
