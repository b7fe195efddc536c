// SPDX-License-Identifier: Apache-2.0
// compare_view.hpp - `lantern-view A --compare B`: two runs side by side, the
// differences highlighted. What is different is decided by lantern::analysis::compare
// (the comparison `lantern-trace diff` prints); this panel only draws it: both
// timelines, both steal matrices, the state shares, task durations per label and the
// latency figures, with notable rows marked.
#pragma once

#include <imgui.h>

#include <memory>
#include <optional>

#include "lantern/analysis/compare.hpp"
#include "lantern/viewer/session.hpp"
#include "steal_matrix_view.hpp"
#include "timeline_view.hpp"

namespace lantern::viewer {

class CompareView {
 public:
  // draw: both models locked by the caller; `view_a` is the app's view state of A.
  void draw(Model& a, const std::string& a_name, Model& b, const std::string& b_name, bool both_loaded,
            ViewState& view_a, ImVec2 size);
  const Comparison* comparison() const noexcept { return comparison_ ? &*comparison_ : nullptr; }

 private:
  void tables(const Comparison& c, ImVec2 size, LayoutRecord* layout);
  // share_scale: both timelines at one time scale (the same width of time, so the same
  // pixels per ms), each from its own run's start: fitted to the longer run once both
  // have loaded, and a zoom of either applied to the other.
  void share_scale(const Model& a, ViewState& view_a, const Model& b);
  bool scaled_ = false;
  double shared_width_ = 0;
  std::optional<Comparison> comparison_;
  TimelineView timeline_a_, timeline_b_;
  ViewState view_b_;
  StealMatrixView steals_a_, steals_b_;
};

}  // namespace lantern::viewer
