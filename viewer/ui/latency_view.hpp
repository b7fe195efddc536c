// SPDX-License-Identifier: Apache-2.0
// latency_view.hpp - histograms of ready-to-run wait, task duration and wake latency,
// each with its p50, p90 and p99 marked.
//
// The x axis is logarithmic (the histograms' buckets are log-linear), so nanosecond tasks
// and millisecond stalls share one picture; the bars are the buckets themselves, never
// re-binned, so what is drawn is what the percentiles are computed from.
#pragma once

#include <imgui.h>

#include "lantern/viewer/model.hpp"
#include "view_state.hpp"

namespace lantern::viewer {

class LatencyView {
 public:
  void draw(const Model& model, ViewState& view, ImVec2 size);

 private:
  // histogram: one panel; `source` is the event type its samples come from, whose
  // absence the panel explains (Analysis::no_samples_reason) when it is empty.
  void histogram(const char* title, const Model& model, EventId source, const LatencyHistogram& h, ImU32 colour,
                 ImVec2 origin, ImVec2 size) const;
  LayoutRecord* layout_ = nullptr;  // this frame's, when recording (--layout)
  bool log_counts_ = false;         // y axis: linear counts, or log (to see the tail)
};

}  // namespace lantern::viewer
