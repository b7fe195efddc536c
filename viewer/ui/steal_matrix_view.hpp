// SPDX-License-Identifier: Apache-2.0
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
  // Grid: what is drawn. With many workers (past kMaxSide), neighbours in topology
  // order are grouped so that a cell stays a few pixels wide and a frame stays cheap;
  // rebuilt only when the model changed.
  struct Grid {
    std::uint32_t side = 0;   // cells per row
    std::uint32_t group = 1;  // workers per cell
    std::vector<std::uint64_t> counts;
    std::vector<std::int8_t> distance;
    std::uint64_t max = 0;
  };
  static constexpr std::uint32_t kMaxSide = 96;
  void order_workers(const Model& model);
  void build_grid(const Model& model);
  void draw_matrix(const Model& model, ViewState& view, ImVec2 origin, float side);
  void tooltip(std::uint32_t row, std::uint32_t col) const;
  void draw_totals(const Model& model, float width, LayoutRecord* layout);

  std::vector<std::uint32_t> order_;  // display position -> worker
  std::uint32_t ordered_for_ = 0;     // worker count order_ was built for
  Grid grid_;
  std::uint64_t grid_generation_ = ~std::uint64_t{0};
};

}  // namespace lantern::viewer
