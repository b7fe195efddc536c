// SPDX-License-Identifier: Apache-2.0
// steal_matrix_view.cpp - the thief x victim heatmap and its totals.
#include "steal_matrix_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <tuple>

#include "palette.hpp"

namespace lantern::viewer {

void StealMatrixView::order_workers(const Model& model) {
  const std::uint32_t n = model.worker_count();
  if (n == ordered_for_ && order_.size() == n) return;
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0u);
  auto key = [&](std::uint32_t w) {
    const trace::CpuRow* c = model.cpu_of(w);
    return c ? std::make_tuple(c->package, c->numa_node, c->llc, c->l2, c->core, static_cast<int>(w))
             : std::make_tuple(0, 0, 0, 0, 0, static_cast<int>(w));
  };
  std::stable_sort(order_.begin(), order_.end(), [&](auto a, auto b) { return key(a) < key(b); });
  ordered_for_ = n;
}

void StealMatrixView::build_grid(const Model& model) {
  if (model.generation() == grid_generation_ && grid_.side * grid_.group >= order_.size()) return;
  grid_generation_ = model.generation();
  const auto n = static_cast<std::uint32_t>(order_.size());
  Grid g;
  g.group = std::max<std::uint32_t>(1, (n + kMaxSide - 1) / kMaxSide);
  g.side = (n + g.group - 1) / g.group;
  g.counts.assign(static_cast<std::size_t>(g.side) * g.side, 0);
  g.distance.assign(g.counts.size(), -1);
  // Counts from the pairs that stole (the analysis keeps the matrix sparse): reading all
  // n x n pairs would cost 16 M look-ups a frame at the format's 4,096 workers.
  std::vector<std::uint32_t> position(n);
  for (std::uint32_t r = 0; r < n; ++r) position[order_[r]] = r;
  for (const auto& [key, cell] : model.steal_cells()) {
    const std::uint32_t thief = analysis::Analysis::steal_thief(key), victim = analysis::Analysis::steal_victim(key);
    if (thief >= n || victim >= n) continue;
    g.counts[static_cast<std::size_t>(position[thief] / g.group) * g.side + position[victim] / g.group] += cell.count;
  }
  // A group's distance is that of its first pair that is not a worker with itself.
  for (std::uint32_t gr = 0; gr < g.side; ++gr) {
    for (std::uint32_t gc = 0; gc < g.side; ++gc) {
      const std::uint32_t r = gr * g.group;
      std::uint32_t c = gc * g.group;
      if (r == c) ++c;
      if (c >= n || c >= (gc + 1) * g.group) continue;
      g.distance[static_cast<std::size_t>(gr) * g.side + gc] =
          static_cast<std::int8_t>(model.distance(order_[r], order_[c]));
    }
  }
  for (auto v : g.counts) g.max = std::max(g.max, v);
  grid_ = std::move(g);
}

void StealMatrixView::tooltip(std::uint32_t row, std::uint32_t col) const {
  const std::uint64_t count = grid_.counts[static_cast<std::size_t>(row) * grid_.side + col];
  const int d = grid_.distance[static_cast<std::size_t>(row) * grid_.side + col];
  ImGui::BeginTooltip();
  if (grid_.group == 1) {
    if (row == col) {
      ImGui::Text("worker %u (a worker never steals from itself)", order_[row]);
    } else {
      ImGui::Text("worker %u stole %s tasks from worker %u", order_[row], format_count(count).c_str(), order_[col]);
    }
  } else {
    ImGui::Text("%u workers (from worker %u) stole %s tasks from %u workers (from worker %u)", grid_.group,
                order_[row * grid_.group], format_count(count).c_str(), grid_.group, order_[col * grid_.group]);
  }
  if (d >= 0) ImGui::TextColored(palette::vec(palette::distance(d)), "distance: %s", trace::kDistanceNames[d].data());
  ImGui::EndTooltip();
}

void StealMatrixView::draw_matrix(const Model& model, ViewState& view, ImVec2 origin, float side) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  build_grid(model);
  const std::uint32_t n = grid_.side;
  const float cell = side / static_cast<float>(n);
  const float label = 44.0f;  // room for row labels and the row totals header
  const ImVec2 m0(origin.x + label, origin.y + 22.0f);
  const double max_log = std::log1p(static_cast<double>(grid_.max));
  draw->AddText(ImVec2(m0.x, origin.y + 2), palette::kDimText, grid_.group > 1 ? "victims ->  (grouped)" : "victim ->");
  draw->AddText(ImVec2(origin.x, origin.y + 2), palette::kDimText, "thief");
  if (view.layout) view.layout->add("matrix_area", static_cast<int>(n), 0, m0.x, m0.y, m0.x + side, m0.y + side);
  char text[64];
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t c = 0; c < n; ++c) {
      const std::uint64_t count = grid_.counts[static_cast<std::size_t>(r) * n + c];
      const int d = grid_.distance[static_cast<std::size_t>(r) * n + c];
      const ImVec2 p0(m0.x + static_cast<float>(c) * cell, m0.y + static_cast<float>(r) * cell);
      const ImVec2 p1(p0.x + cell - (cell > 6 ? 1.0f : 0.0f), p0.y + cell - (cell > 6 ? 1.0f : 0.0f));
      ImU32 fill = IM_COL32(28, 29, 34, 255);  // a worker with itself
      if (d >= 0 && count == 0) {
        // Empty, but tinted by distance so the topology's blocks show before any steal.
        fill = palette::scale(palette::distance(d), 0.22f);
      } else if (count > 0) {
        const double k = max_log > 0 ? std::log1p(static_cast<double>(count)) / max_log : 1.0;
        fill = palette::scale(palette::distance(d), static_cast<float>(0.45 + 0.55 * k));
      }
      draw->AddRectFilled(p0, p1, fill);
      if (count > 0 && cell >= 34) {
        if (count >= 10000) {
          std::snprintf(text, sizeof text, "%lluk", static_cast<unsigned long long>(count / 1000));
        } else {
          std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(count));
        }
        draw->AddText(ImVec2(p0.x + 3, p0.y + 3), IM_COL32(15, 15, 20, 255), text);
      }
      if (view.layout && grid_.group == 1)
        view.layout->add("matrix_cell", static_cast<int>(order_[r]), static_cast<int>(order_[c]), p0.x, p0.y, p1.x,
                         p1.y);
      if (mouse.x >= p0.x && mouse.x < p0.x + cell && mouse.y >= p0.y && mouse.y < p0.y + cell &&
          ImGui::IsWindowHovered())
        tooltip(r, c);
    }
    if (cell >= 12) {
      std::snprintf(text, sizeof text, "%u", order_[r * grid_.group]);
      draw->AddText(ImVec2(origin.x + 4, m0.y + static_cast<float>(r) * cell + (cell - 14) / 2), palette::kDimText,
                    text);
    }
  }
  for (std::uint32_t c = 0; c < n && cell >= 12; ++c) {
    std::snprintf(text, sizeof text, "%u", order_[c * grid_.group]);
    draw->AddText(ImVec2(m0.x + static_cast<float>(c) * cell + cell / 2 - 4, m0.y + side + 2), palette::kDimText, text);
  }
  // Group boundaries: a line wherever the last-level cache (or package) changes.
  for (std::uint32_t i = 1; i < n; ++i) {
    const trace::CpuRow* a = model.cpu_of(order_[i * grid_.group - 1]);
    const trace::CpuRow* b = model.cpu_of(order_[i * grid_.group]);
    if (!a || !b || (a->llc == b->llc && a->package == b->package)) continue;
    const float at = static_cast<float>(i) * cell;
    const ImU32 line = a->package != b->package ? IM_COL32(255, 255, 255, 150) : IM_COL32(255, 255, 255, 70);
    draw->AddLine(ImVec2(m0.x + at - 0.5f, m0.y), ImVec2(m0.x + at - 0.5f, m0.y + side), line, 1.5f);
    draw->AddLine(ImVec2(m0.x, m0.y + at - 0.5f), ImVec2(m0.x + side, m0.y + at - 0.5f), line, 1.5f);
  }
  // Per-thief totals as bars right of each row.
  std::vector<std::uint64_t> rows(n, 0);
  std::uint64_t max_row = 1;
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t c = 0; c < n; ++c) rows[r] += grid_.counts[static_cast<std::size_t>(r) * n + c];
    max_row = std::max(max_row, rows[r]);
  }
  const float bar_x = m0.x + side + 8, bar_w = 60;
  draw->AddText(ImVec2(bar_x, origin.y + 2), palette::kDimText, "stole");
  for (std::uint32_t r = 0; r < n; ++r) {
    const float y = m0.y + static_cast<float>(r) * cell;
    const float w = bar_w * static_cast<float>(static_cast<double>(rows[r]) / static_cast<double>(max_row));
    draw->AddRectFilled(ImVec2(bar_x, y + cell * 0.2f), ImVec2(bar_x + w, y + cell * 0.8f), palette::kSource[2]);
  }
}

void StealMatrixView::draw_totals(const Model& model, float width, LayoutRecord* layout) {
  const auto& by = model.steals_by_distance();
  std::uint64_t total = 0;
  for (auto v : by) total += v;
  // A count the trace's level does not record is not 0 (Analysis::counted): the panel
  // says "not recorded" and why, as lantern-trace stats does.
  const bool steals_counted = model.analysis().counted(EventId::steal);
  const bool helps_counted = model.analysis().counted(EventId::help);
  if (layout && (!steals_counted || !helps_counted))
    layout->add("not_recorded", !steals_counted, !helps_counted, 0, 0, 0, 0);
  ImGui::Text("Steals: %s", steals_counted ? format_count(total).c_str() : "not recorded");
  if (total == 0) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", model.worker_count() <= 1 && steals_counted
                                 ? "one worker: there is nobody to steal from"
                                 : model.analysis().no_samples_reason(EventId::steal).c_str());
    ImGui::PopStyleColor();
  }
  ImGui::Spacing();
  for (int d = 0; d < trace::kDistanceCount; ++d) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + 11, p.y + 14), palette::distance(d));
    ImGui::Dummy(ImVec2(16, 16));
    ImGui::SameLine();
    const double share = total ? 100.0 * static_cast<double>(by[d]) / static_cast<double>(total) : 0.0;
    if (steals_counted)
      ImGui::Text("%-6s %s  %.1f%%", trace::kDistanceNames[d].data(), format_count(by[d]).c_str(), share);
    else
      ImGui::Text("%-6s -", trace::kDistanceNames[d].data());
    ImGui::SameLine();
    const ImVec2 q = ImGui::GetCursorScreenPos();
    const float bar = std::max(0.0f, width - (q.x - p.x) - 8) * static_cast<float>(share / 100.0);
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(q.x, q.y + 4), ImVec2(q.x + bar, q.y + 13), palette::distance(d));
    ImGui::NewLine();
  }
  std::uint64_t helps = 0;
  for (std::uint32_t w = 0; w < model.worker_count(); ++w) helps += model.helps(w).size();
  ImGui::Spacing();
  ImGui::TextWrapped(
      "Helps (lane tasks taken for fairness): %s",
      helps_counted ? format_count(helps).c_str() : model.analysis().no_samples_reason(EventId::help).c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("Rows: thieves; columns: victims; ordered and grouped by topology.");
  ImGui::PopStyleColor();
}

void StealMatrixView::draw(const Model& model, ViewState& view, ImVec2 size) {
  order_workers(model);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  // The totals go right of the matrix when both fit side by side, else below it: their
  // text is never clipped by the panel's edge.
  constexpr float kTotalsWidth = 330.0f, kMatrixExtra = 44.0f + 80.0f;
  const float totals_h = 11.0f * ImGui::GetTextLineHeightWithSpacing();
  const bool beside = size.x >= kMatrixExtra + 160.0f + kTotalsWidth;
  const float side = beside ? std::max(40.0f, std::min(size.y - 44.0f, size.x - kMatrixExtra - kTotalsWidth - 20.0f))
                            : std::max(40.0f, std::min(size.y - 44.0f - totals_h, size.x - kMatrixExtra - 10.0f));
  if (!order_.empty()) draw_matrix(model, view, origin, side);
  const ImVec2 at =
      beside ? ImVec2(origin.x + side + kMatrixExtra + 10, origin.y) : ImVec2(origin.x, origin.y + side + 44.0f);
  const float width = beside ? size.x - side - kMatrixExtra - 20 : size.x - 10;
  ImGui::SetCursorScreenPos(at);
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(at.x + width - ImGui::GetWindowPos().x);
  draw_totals(model, std::max(120.0f, width), view.layout);
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
  if (view.layout) {
    const ImVec2 q = ImGui::GetItemRectMax();
    view.layout->add("matrix_panel", 0, 0, origin.x, origin.y, origin.x + size.x, origin.y + size.y);
    view.layout->add("matrix_totals", 0, 0, at.x, at.y, q.x, q.y);
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + size.y));
}

}  // namespace lantern::viewer
