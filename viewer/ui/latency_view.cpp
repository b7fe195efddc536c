// SPDX-License-Identifier: Apache-2.0
// latency_view.cpp - three log-x histograms with percentile markers.
#include "latency_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "palette.hpp"

namespace lantern::viewer {
namespace {
// A bucket's edges in nanoseconds, as the log-x axis reads them.
double lower_edge(int bucket) { return static_cast<double>(trace::LatencyBuckets::lower_bound(bucket)); }
double upper_edge(int bucket) { return static_cast<double>(trace::LatencyBuckets::upper_bound(bucket)); }
}  // namespace

void LatencyView::histogram(const char* title, const Model& model, EventId source, const LatencyHistogram& h,
                            ImU32 colour, ImVec2 origin, ImVec2 size) const {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float text_h = ImGui::GetTextLineHeight();
  char text[400];
  draw->AddText(origin, palette::kText, title);
  if (h.count() == 0) {
    // Why it is empty, from the trace header's level: the analysis says it, as it does
    // for lantern-trace stats. Layout: 1 not recorded at this level (or the header does
    // not say), 2 recorded but empty.
    const std::optional<bool> recorded = model.analysis().recorded_at_level(source);
    if (layout_) layout_->add("needs_level", recorded.value_or(false) ? 2 : 1, 0, 0, 0, 0, 0);
    std::snprintf(text, sizeof text, "no samples: %s", model.analysis().no_samples_reason(source).c_str());
    draw->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(origin.x, origin.y + text_h + 4), palette::kDimText,
                  text, nullptr, size.x - 8);
    return;
  }
  const double p50 = h.quantile_ns(0.5), p90 = h.quantile_ns(0.9), p99 = h.quantile_ns(0.99);
  std::snprintf(text, sizeof text, "n=%s   mean %s   max %s", format_count(h.count()).c_str(),
                format_duration(h.mean_ns()).c_str(), format_duration(static_cast<double>(h.max_ns())).c_str());
  draw->AddText(ImVec2(origin.x + ImGui::CalcTextSize(title).x + 16, origin.y), palette::kDimText, text);
  if (layout_) {
    layout_->add("latency_panel", 0, 0, origin.x, origin.y, origin.x + size.x, origin.y + size.y);
    layout_->add("latency_text", 2, 0, origin.x, origin.y,
                 origin.x + ImGui::CalcTextSize(title).x + 16 + ImGui::CalcTextSize(text).x, origin.y + text_h);
  }

  const ImVec2 p0(origin.x + 8, origin.y + text_h + 6);
  const ImVec2 p1(origin.x + size.x - 8, origin.y + size.y - text_h - 6);
  draw->AddRectFilled(p0, p1, IM_COL32(26, 28, 33, 255));
  // x: log2 of nanoseconds, from a power of two below the first bucket to one above the last.
  const double lo = std::floor(std::log2(std::max(1.0, lower_edge(h.first_used()))));
  const double hi = std::ceil(std::log2(std::max(2.0, upper_edge(h.last_used())))) + 0.01;
  const float width = p1.x - p0.x, height = p1.y - p0.y;
  auto x_of = [&](double ns) {
    return p0.x + width * static_cast<float>((std::log2(std::max(ns, 1.0)) - lo) / (hi - lo));
  };
  // Bars are densities per unit of log(time): a bucket's count over its log width.
  // Raw counts would saw-tooth, because the 8 linear buckets of each power of two
  // get narrower on a log axis towards the next power.
  auto density = [&](int i) {
    const double lw = std::log2(upper_edge(i)) - std::log2(std::max(lower_edge(i), 0.5));
    return static_cast<double>(h.bucket(i)) / std::max(lw, 1e-9);
  };
  double peak = 1e-300;
  for (int i = h.first_used(); i <= h.last_used(); ++i) peak = std::max(peak, density(i));
  // The bars stay below the percentile labels' rows (up to three: close percentiles stack),
  // so no label is drawn over a bar.
  const float labels_h = std::min(3 * (text_h + 2) + 2, height * 0.6f);
  const float bars_h = height - labels_h;
  auto y_of = [&](double d) {
    const double k = log_counts_ ? std::log1p(d) / std::log1p(peak) : d / peak;
    return p1.y - bars_h * static_cast<float>(k);
  };
  if (layout_) layout_->add("latency_bars", 0, 0, p0.x, p1.y - bars_h, p1.x, p1.y);
  for (int i = h.first_used(); i <= h.last_used(); ++i) {
    if (h.bucket(i) == 0) continue;
    const float x0 = x_of(lower_edge(i)), x1 = std::max(x_of(upper_edge(i)), x0 + 1);
    draw->AddRectFilled(ImVec2(x0, y_of(density(i))), ImVec2(x1 - 0.5f, p1.y), colour);
  }
  // Ticks at powers of ten inside the axis, each labelled with its unit ("10 us"). A
  // label that would touch the previous one (a narrow panel, many decades) is left out;
  // its tick stays. Labels stay inside the panel.
  float last_label_end = -1e9f;
  for (double ns = 1, k = 0; ns < 1e13; ns *= 10, ++k) {
    const float x = x_of(ns);
    if (x < p0.x || x > p1.x) continue;
    draw->AddLine(ImVec2(x, p1.y), ImVec2(x, p1.y + 4), palette::kDimText);
    static const char* const kUnits[] = {"ns", "us", "ms", "s"};
    const int unit = std::min(static_cast<int>(k) / 3, 3);
    std::snprintf(text, sizeof text, "%.0f %s", ns / std::pow(10.0, 3 * unit), kUnits[unit]);
    const float tw = ImGui::CalcTextSize(text).x;
    const float tx = std::clamp(x - tw / 2, origin.x, origin.x + size.x - tw);
    if (tx < last_label_end + 8) continue;
    draw->AddText(ImVec2(tx, p1.y + 4), palette::kDimText, text);
    if (layout_) layout_->add("latency_text", 0, 0, tx, p1.y + 4, tx + tw, p1.y + 4 + text_h);
    last_label_end = tx + tw;
  }
  const struct {
    double ns;
    const char* name;
  } marks[] = {{p50, "p50"}, {p90, "p90"}, {p99, "p99"}};
  float row_end[3] = {-1e9f, -1e9f, -1e9f};  // where each label row's text ends
  for (const auto& m : marks) {
    const float x = x_of(m.ns);
    draw->AddLine(ImVec2(x, p0.y), ImVec2(x, p1.y), IM_COL32(255, 255, 255, 200), 1.5f);
    std::snprintf(text, sizeof text, "%s %s", m.name, format_duration(m.ns).c_str());
    // Labels of close percentiles (p90 and p99 often are) go to the next free row.
    // Right of its line, or left of it where the panel ends.
    const float tw = ImGui::CalcTextSize(text).x;
    const float tx = x + 4 + tw <= p1.x ? x + 4 : x - 4 - tw;
    int row = 0;
    while (row < 2 && row_end[row] > tx) ++row;
    const float ty = p0.y + 2 + static_cast<float>(row) * (text_h + 2);
    draw->AddText(ImVec2(tx, ty), palette::kText, text);
    if (layout_) layout_->add("latency_text", 1, 0, tx, ty, tx + tw, ty + text_h);
    row_end[row] = std::max(row_end[row], tx + tw + 4);
  }
  if (ImGui::IsMouseHoveringRect(p0, p1)) {
    const double ns = std::exp2(lo + (hi - lo) * (ImGui::GetIO().MousePos.x - p0.x) / width);
    const int b = trace::LatencyBuckets::bucket_of(static_cast<std::uint64_t>(ns));
    ImGui::BeginTooltip();
    ImGui::Text("%s .. %s: %s", format_duration(lower_edge(b)).c_str(), format_duration(upper_edge(b)).c_str(),
                format_count(h.bucket(b)).c_str());
    ImGui::EndTooltip();
  }
}

void LatencyView::draw(const Model& model, ViewState& view, ImVec2 size) {
  layout_ = view.layout;
  ImGui::Checkbox("log counts", &log_counts_);
  ImGui::SameLine();
  ImGui::TextDisabled("(whole trace; hover a bar for its bucket)");
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float h = (size.y - ImGui::GetFrameHeightWithSpacing()) / 3;
  histogram("ready wait", model, EventId::lane_pop, model.ready_wait(), palette::kSource[1], origin, ImVec2(size.x, h));
  histogram("task duration", model, EventId::task_end, model.task_duration(), palette::kState[0],
            ImVec2(origin.x, origin.y + h), ImVec2(size.x, h));
  // IO wakes have no waker and no latency: the analysis leaves them out, and the label says so.
  const std::string wake_title = "wake latency (IO wakes left out: " + format_count(model.io_wakes()) + ")";
  histogram(wake_title.c_str(), model, EventId::wake, model.wake_latency(), palette::kState[3],
            ImVec2(origin.x, origin.y + 2 * h), ImVec2(size.x, h));
  ImGui::Dummy(ImVec2(size.x, 3 * h));
}

}  // namespace lantern::viewer
