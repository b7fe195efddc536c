// SPDX-License-Identifier: Apache-2.0
// compare_view.cpp - two runs side by side (see the header).
#include "compare_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "lantern/trace/trace_error.hpp"
#include "palette.hpp"

namespace lantern::viewer {
namespace {

using palette::kRunA;
using palette::kRunB;
constexpr ImU32 kNotableRow = IM_COL32(255, 170, 40, 55);

// row_start: a table row; a notable one gets the highlight background and is recorded.
void row_start(bool notable, LayoutRecord* layout, int kind, int index) {
  ImGui::TableNextRow();
  if (notable) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, kNotableRow);
  ImGui::TableSetColumnIndex(0);
  if (layout) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    layout->add(notable ? "compare_notable" : "compare_row", kind, index, p.x, p.y, p.x + 4,
                p.y + ImGui::GetTextLineHeight());
  }
}

std::string ratio_text(double r) {
  if (!(r > 0)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", r);
  return buf;
}

// count_cell: a run's count, or "-" with why in a tooltip when its recording level does
// not record it (Comparison's nullopt: never shown as 0). Layout: "compare_not_recorded".
void count_cell(const Count& n, ImU32 colour, const std::string& why, LayoutRecord* layout, int kind, int index) {
  if (n) {
    ImGui::TextColored(palette::vec(colour), "%s", format_count(*n).c_str());
    return;
  }
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::TextDisabled("-");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", why.c_str());
  if (layout) layout->add("compare_not_recorded", kind, index, p.x, p.y, p.x + 8, p.y + ImGui::GetTextLineHeight());
}

}  // namespace

void CompareView::tables(const Comparison& c, ImVec2 size, LayoutRecord* layout) {
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_SizingStretchProp;
  const float half = std::floor((size.x - 8) / 2);
  // Left: state shares and task durations per label.
  ImGui::BeginChild("##cmp_left", ImVec2(half, size.y), false);
  ImGui::Text("%zu notable differences", c.notable_count());
  ImGui::SameLine();
  ImGui::TextDisabled("(highlighted; = lantern-trace diff)");
  // The task graph's figures, diff's first rows, on one line: A -> B, a notable one in
  // the highlight's colour. Layout: "compare_notable"/"compare_row", kind 4.
  for (std::size_t i = 0; i < c.graph.size(); ++i) {
    const auto& r = c.graph[i];
    const std::string line = r.what + " " + r.text(r.a) + " -> " + r.text(r.b) +
                             (r.a && r.b && *r.a > 0 ? " (" + ratio_text(*r.b / *r.a) + ")" : std::string());
    if (i > 0) {  // on the same line where it fits
      const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
      if (ImGui::GetItemRectMax().x + 16 + ImGui::CalcTextSize(line.c_str()).x <= right) ImGui::SameLine(0, 16);
    }
    const ImVec2 p = ImGui::GetCursorScreenPos();
    if (r.notable)
      ImGui::TextColored(palette::vec(IM_COL32(255, 170, 40, 255)), "%s", line.c_str());
    else
      ImGui::TextUnformatted(line.c_str());
    if (layout)
      layout->add(r.notable ? "compare_notable" : "compare_row", 4, static_cast<int>(i), p.x, p.y, p.x + 4,
                  p.y + ImGui::GetTextLineHeight());
  }
  const float table_h = (ImGui::GetContentRegionAvail().y - 2 * ImGui::GetTextLineHeightWithSpacing()) / 2;
  ImGui::TextDisabled("state shares of each worker's time");
  if (ImGui::BeginTable("##shares", 5, flags, ImVec2(half, table_h))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"worker", "state", "A", "B", "B - A"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (std::size_t i = 0; i < c.state_shares.size(); ++i) {
      const auto& r = c.state_shares[i];
      if (r.a == 0 && r.b == 0) continue;
      row_start(r.notable, layout, 0, static_cast<int>(i));
      ImGui::Text("%u", r.worker);
      ImGui::TableNextColumn();
      ImGui::ColorButton("##s", palette::vec(palette::state(r.state)), ImGuiColorEditFlags_NoTooltip, ImVec2(10, 10));
      ImGui::SameLine();
      ImGui::TextUnformatted(state_slot_name(r.state).data());
      ImGui::TableNextColumn();
      // A worker only one run has: '-' for the other, as lantern-trace diff prints it.
      r.in_a ? ImGui::TextColored(palette::vec(kRunA), "%.1f%%", 100 * r.a) : ImGui::TextDisabled("-");
      ImGui::TableNextColumn();
      r.in_b ? ImGui::TextColored(palette::vec(kRunB), "%.1f%%", 100 * r.b) : ImGui::TextDisabled("-");
      ImGui::TableNextColumn();
      if (r.in_a && r.in_b)
        ImGui::Text("%+.1f pp", std::fabs(r.b - r.a) < 5e-4 ? 0.0 : 100 * (r.b - r.a));
      else
        ImGui::TextDisabled("-");
    }
    ImGui::EndTable();
  }
  ImGui::TextDisabled("tasks by label (begun) and the mean duration of those that ended");
  if (ImGui::BeginTable("##durations", 6, flags, ImVec2(half, table_h))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"label", "A tasks", "B tasks", "A mean", "B mean", "B/A"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (std::size_t i = 0; i < c.durations.size(); ++i) {
      const auto& r = c.durations[i];
      row_start(r.notable, layout, 1, static_cast<int>(i));
      ImGui::TextUnformatted(r.name.c_str());
      ImGui::TableNextColumn();
      count_cell(r.tasks_a, kRunA, c.a.tasks_not_recorded, layout, 1, static_cast<int>(2 * i));
      ImGui::TableNextColumn();
      count_cell(r.tasks_b, kRunB, c.b.tasks_not_recorded, layout, 1, static_cast<int>(2 * i + 1));
      ImGui::TableNextColumn();
      ImGui::TextColored(palette::vec(kRunA), "%s", r.a.count ? format_duration(r.a.mean_ns).c_str() : "-");
      ImGui::TableNextColumn();
      ImGui::TextColored(palette::vec(kRunB), "%s", r.b.count ? format_duration(r.b.mean_ns).c_str() : "-");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(ratio_text(r.ratio).c_str());
    }
    ImGui::EndTable();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  // Right: latency figures, steals by distance.
  ImGui::BeginChild("##cmp_right", ImVec2(0, size.y), false);
  ImGui::TextDisabled("latency histograms (p50 / p90 / p99)");
  if (ImGui::BeginTable("##latency", 5, flags, ImVec2(0, table_h))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"what", "run", "n", "p50 / p90 / p99", "B/A p50"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (std::size_t i = 0; i < c.latencies.size(); ++i) {
      const auto& r = c.latencies[i];
      for (int side = 0; side < 2; ++side) {
        const SideFigures& f = side ? r.b : r.a;
        row_start(r.notable, layout, 2, static_cast<int>(2 * i + side));
        ImGui::TextUnformatted(side ? "" : r.what.c_str());
        ImGui::TableNextColumn();
        ImGui::TextColored(palette::vec(side ? kRunB : kRunA), side ? "B" : "A");
        ImGui::TableNextColumn();
        ImGui::TextColored(palette::vec(side ? kRunB : kRunA), "%s", format_count(f.count).c_str());
        ImGui::TableNextColumn();
        if (f.count) {
          ImGui::TextColored(palette::vec(side ? kRunB : kRunA), "%s / %s / %s", format_duration(f.p50_ns).c_str(),
                             format_duration(f.p90_ns).c_str(), format_duration(f.p99_ns).c_str());
        } else {
          // Why it is empty: the analysis' sentence, as stats, diff and the latency view say it.
          const ImVec2 p = ImGui::GetCursorScreenPos();
          ImGui::TextDisabled("no samples (why: hover)");
          if (ImGui::IsItemHovered()) ImGui::SetTooltip("no samples: %s", f.no_samples.c_str());
          if (layout) {
            layout->add("compare_no_samples", static_cast<int>(i), side, p.x, p.y, ImGui::GetItemRectMax().x,
                        ImGui::GetItemRectMax().y);
          }
        }
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(side ? ratio_text(r.ratio).c_str() : "");
      }
    }
    ImGui::EndTable();
  }
  ImGui::TextDisabled("counts (as lantern-trace stats prints them), steals, changed matrix cells");
  if (ImGui::BeginTable("##steals", 3, flags, ImVec2(0, table_h))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"count", "A", "B"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    // Notable counts first (helps 137 -> 1,013 is what an A/B of sleep strategies shows),
    // then the rest, in the comparison's order.
    for (const bool notable : {true, false}) {
      for (std::size_t i = 0; i < c.counts.size(); ++i) {
        const auto& r = c.counts[i];
        if (r.notable != notable) continue;
        row_start(r.notable, layout, 5, static_cast<int>(i));
        ImGui::TextUnformatted(r.what.c_str());
        ImGui::TableNextColumn();
        static const std::string kWhy = "not recorded at this run's recording level";
        count_cell(r.a, kRunA, kWhy, layout, 5, static_cast<int>(2 * i));
        ImGui::TableNextColumn();
        count_cell(r.b, kRunB, kWhy, layout, 5, static_cast<int>(2 * i + 1));
      }
    }
    for (std::size_t i = 0; i < c.steals_by_distance.size(); ++i) {
      const auto& r = c.steals_by_distance[i];
      row_start(r.notable, layout, 3, static_cast<int>(i));
      ImGui::TextUnformatted(trace::kDistanceNames[r.distance].data());
      ImGui::TableNextColumn();
      count_cell(r.a, kRunA, c.a.steals_not_recorded, layout, 3, static_cast<int>(2 * i));
      ImGui::TableNextColumn();
      count_cell(r.b, kRunB, c.b.steals_not_recorded, layout, 3, static_cast<int>(2 * i + 1));
    }
    for (std::size_t i = 0; i < c.steal_cells.size(); ++i) {
      const auto& r = c.steal_cells[i];
      if (!r.notable) continue;
      row_start(true, layout, 4, static_cast<int>(i));
      ImGui::Text("worker %u from %u", r.thief, r.victim);
      ImGui::TableNextColumn();
      count_cell(r.a, kRunA, c.a.steals_not_recorded, layout, 4, static_cast<int>(2 * i));
      ImGui::TableNextColumn();
      count_cell(r.b, kRunB, c.b.steals_not_recorded, layout, 4, static_cast<int>(2 * i + 1));
    }
    ImGui::EndTable();
  }
  ImGui::EndChild();
}

void CompareView::share_scale(const Model& a, ViewState& view_a, const Model& b) {
  if (a.empty() || b.empty()) return;
  const double a_first = a.rel(a.first_tick()), a_last = a.rel(a.last_tick());
  const double b_first = b.rel(b.first_tick()), b_last = b.rel(b.last_tick());
  // Ticks of both runs as nanoseconds: a width in A's ticks is b_per_a of B's.
  const double b_per_a = b.ns_to_ticks(a.ticks_to_ns(1.0));
  auto keep_mid = [](ViewState& v, double width) {
    const double mid = (v.start + v.end) / 2;
    v.start = mid - width / 2, v.end = mid + width / 2;
  };
  if (!scaled_) {
    scaled_ = true;
    view_a.fit_requested = view_b_.fit_requested = false;
    if (view_a.start <= a_first && view_a.end >= a_last) {
      // A shows its whole run (no --at or --window): both show the longer run's length.
      const double width = 1.1 * std::max(a_last - a_first, (b_last - b_first) / b_per_a);  // in A's ticks
      view_a.start = a_first - 0.05 * width, view_a.end = view_a.start + width;
    }
    // B from the same offset into its run as A.
    view_b_.start = b_first + (view_a.start - a_first) * b_per_a;
    view_b_.end = view_b_.start + view_a.width() * b_per_a;
    shared_width_ = view_a.width();
    return;
  }
  auto differs = [](double x, double y) { return std::fabs(x - y) > 1e-9 * std::fabs(y); };
  if (differs(view_b_.width(), shared_width_ * b_per_a)) {  // B was zoomed: A follows
    shared_width_ = view_b_.width() / b_per_a;
    keep_mid(view_a, shared_width_);
  } else if (differs(view_a.width(), shared_width_)) {  // A was zoomed: B follows
    shared_width_ = view_a.width();
    keep_mid(view_b_, shared_width_ * b_per_a);
  }
}

void CompareView::draw(Model& a, const std::string& a_name, Model& b, const std::string& b_name, bool both_loaded,
                       ViewState& view_a, ImVec2 size) {
  // B's problems, like A's, are said: a B that could not be read at all is not compared
  // (an empty run differs from anything), and one read in part is compared with a warning.
  const bool b_unreadable = both_loaded && b.has_trace_errors() && b.empty();
  if (both_loaded && !comparison_ && !b_unreadable) comparison_ = compare(a.analysis(), a_name, b.analysis(), b_name);
  view_b_.layout = nullptr;
  // While either run loads, each timeline is fitted to what it has; once both have, they
  // share one scale (share_scale), fitted to the whole of both.
  if (!both_loaded) view_b_.fit_requested = true;
  if (both_loaded) share_scale(a, view_a, b);
  if (view_a.layout && both_loaded) {
    // compare_scale: each timeline's window in nanoseconds (one scale: equal), and each
    // run's last event from its start (ns): what the timelines are drawn to.
    char buf[200];
    std::snprintf(buf, sizeof buf, "compare_scale %.17g %.17g %.17g %.17g", a.ticks_to_ns(view_a.width()),
                  b.ticks_to_ns(view_b_.width()),
                  a.empty() ? 0.0 : a.ticks_to_ns(a.rel(a.last_tick()) - a.rel(a.first_tick())),
                  b.empty() ? 0.0 : b.ticks_to_ns(b.rel(b.last_tick()) - b.rel(b.first_tick())));
    view_a.layout->lines.emplace_back(buf);
  }
  const float half = std::floor((size.x - 8) / 2);
  const float top_h = std::floor(size.y * 0.42f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  // Row 1: the two timelines, A left, B right, each fitted to its own run.
  for (int side = 0; side < 2; ++side) {
    ImGui::SetCursorScreenPos(ImVec2(origin.x + static_cast<float>(side) * (half + 8), origin.y));
    ImGui::BeginChild(side ? "##run_b" : "##run_a", ImVec2(half, top_h), true);
    ImGui::TextColored(palette::vec(side ? kRunB : kRunA), "%s", side ? "B" : "A");
    ImGui::SameLine();
    ImGui::TextUnformatted((side ? b_name : a_name).c_str());
    Model& m = side ? b : a;
    ViewState& v = side ? view_b_ : view_a;
    LayoutRecord* saved = view_a.layout;
    if (side) v.layout = nullptr;
    if (!m.empty()) (side ? timeline_b_ : timeline_a_).draw(m, v, ImGui::GetContentRegionAvail());
    view_a.layout = saved;
    ImGui::EndChild();
  }
  // Row 2: both steal matrices, and the comparison's tables.
  const float mid_y = origin.y + top_h + 6;
  const float matrix_w = std::floor(size.x * 0.4f);
  for (int side = 0; side < 2; ++side) {
    ImGui::SetCursorScreenPos(ImVec2(origin.x + static_cast<float>(side) * (matrix_w / 2 + 4), mid_y));
    ImGui::BeginChild(side ? "##steals_b" : "##steals_a", ImVec2(matrix_w / 2, size.y - top_h - 8), true);
    ImGui::TextColored(palette::vec(side ? kRunB : kRunA), "%s: steal matrix", side ? "B" : "A");
    Model& m = side ? b : a;
    if (!m.empty()) {
      LayoutRecord* saved = view_a.layout;
      view_a.layout = nullptr;  // the layout records A's main matrix only in the usual view
      (side ? steals_b_ : steals_a_).draw(m, side ? view_b_ : view_a, ImGui::GetContentRegionAvail());
      view_a.layout = saved;
    }
    ImGui::EndChild();
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x + matrix_w + 12, mid_y));
  ImGui::BeginChild("##cmp_tables", ImVec2(size.x - matrix_w - 12, size.y - top_h - 8), false);
  if (both_loaded && b.has_trace_errors() && !b.trace_problems().empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(palette::vec(palette::kError), "B (%s): %s%s", b_name.c_str(),
                       trace::describe(b.trace_problems().front()).c_str(),
                       b_unreadable ? "; nothing to compare" : "; comparing what could be read");
    ImGui::PopTextWrapPos();
  }
  if (comparison_) {
    tables(*comparison_, ImGui::GetContentRegionAvail(), view_a.layout);
  } else if (!b_unreadable) {
    ImGui::TextDisabled("Loading both runs...");
  }
  ImGui::EndChild();
}

}  // namespace lantern::viewer
