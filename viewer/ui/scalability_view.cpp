// SPDX-License-Identifier: Apache-2.0
// scalability_view.cpp - the Scalability view (see the header).
#include "scalability_view.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "palette.hpp"

namespace lantern::viewer {

namespace {

using analysis::Scalability;

// record: one figure as the view shows it, for tests ("scale_figure NAME VALUE", or
// "scale_not_computed NAME" when the analysis left it out).
void record(LayoutRecord* layout, const char* run, const char* name, const std::optional<double>& v) {
  if (!layout) return;
  char buf[160];
  if (v)
    std::snprintf(buf, sizeof buf, "scale_figure %s %s %.17g", run, name, *v);
  else
    std::snprintf(buf, sizeof buf, "scale_not_computed %s %s", run, name);
  layout->lines.emplace_back(buf);
}

// text_box: records a drawn text's box ("scale_text x0 y0 x1 y1 TEXT") so that a test can
// check that no two overlap and none leaves its panel.
void text_box(LayoutRecord* layout, ImVec2 p, const char* text) {
  if (!layout) return;
  const ImVec2 ts = ImGui::CalcTextSize(text);
  char buf[200];
  std::snprintf(buf, sizeof buf, "scale_text %.0f %.0f %.0f %.0f %s", p.x, p.y, p.x + ts.x, p.y + ts.y, text);
  layout->lines.emplace_back(buf);
}

void plot_text(ImDrawList* draw, LayoutRecord* layout, ImVec2 p, ImU32 colour, const char* text) {
  draw->AddText(p, colour, text);
  text_box(layout, p, text);
}

// figure_row: a name and its value, or "not computed: <reason>" (wrapped) in its place.
// `key`: the word Scalability::why_not looks for in the analysis' sentences, read only
// when the figure is missing.
void figure_row(const char* name, const std::optional<double>& v, const std::string& value_text, const Scalability& s,
                const char* key, const char* hint = nullptr) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextUnformatted(name);
  if (hint && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", hint);
  ImGui::TableNextColumn();
  if (v) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(value_text.c_str());
    ImGui::PopTextWrapPos();
  } else {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(palette::vec(palette::kWarning), "not computed: %s", s.why_not({key}).c_str());
    ImGui::PopTextWrapPos();
  }
}

std::string ratio(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// What each kind of edge means, from the analysis' table.
constexpr const char* kEdgeKindTexts[] = {
#define LANTERN_X(name, text) text,
    LANTERN_EDGE_KINDS(LANTERN_X)
#undef LANTERN_X
};

}  // namespace

bool ScalabilityView::take_recompute(analysis::ScaleOptions* options) {
  if (!recompute_) return false;
  recompute_ = false;
  options->top_label_percent = what_if_percent_;
  return true;
}

void ScalabilityView::curve(const Run& a, const Run* b, ViewState& view, ImVec2 size) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  LayoutRecord* layout = view.layout;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float line = ImGui::GetTextLineHeight();
  const Scalability& s = *a.figures->whole();
  const Scalability* sb = b && b->figures && b->figures->whole() ? b->figures->whole() : nullptr;
  const bool two = sb != nullptr;
  // The legend, laid out first: it takes as many lines above the plot as it needs. The
  // y axis' title leads its first line; a run is named by its file's name.
  const char* y_title = "speedup T1 / T_P (log scale)";
  struct Key {
    ImU32 colour;
    int shape;  // 0 band, 1 line, 2 point
    std::string text;
    ImVec2 at;
  };
  auto base = [](const std::string& path) { return path.substr(path.find_last_of('/') + 1); };
  std::vector<Key> keys = {{palette::kBoundsBand, 0, "greedy bounds", {}},
                           {palette::kSimulated, 1, "simulated T_P", {}}};
  if (sb) keys.push_back({palette::kRunB, 1, "simulated T_P (B)", {}});
  keys.push_back(
      {two ? palette::kRunA : palette::kText,
       2,
       two ? "measured A (" + base(a.name) + ")" : "measured (" + count_of(s.measured_workers, "worker") + ")",
       {}});
  if (sb) keys.push_back({palette::kRunB, 2, "measured B (" + base(b->name) + ")", {}});
  const float left_x = origin.x + 44 + line, right_x = origin.x + size.x - 8;
  float kx = origin.x + 2 + ImGui::CalcTextSize(y_title).x + 24, ky = origin.y + 2;
  for (Key& k : keys) {
    float tw = ImGui::CalcTextSize(k.text.c_str()).x;
    while (tw > right_x - left_x - 20 && k.text.size() > 4) {  // shortened, never run over
      k.text = k.text.substr(0, k.text.size() - 5) + "...";
      tw = ImGui::CalcTextSize(k.text.c_str()).x;
    }
    if (kx + 18 + tw > right_x && kx > left_x) kx = left_x, ky += line + 2;
    k.at = ImVec2(kx, ky);
    kx += 18 + tw + 16;
  }
  // Plot area: room on the left for the y tick labels, below for the x tick labels and
  // title, above for the legend.
  const ImVec2 p0(left_x, ky + line + 8);
  // The right margin holds half of the "1024" under the last tick.
  const ImVec2 p1(origin.x + size.x - 8 - ImGui::CalcTextSize("1024").x / 2, origin.y + size.y - 2 * line - 10);
  ImGui::Dummy(size);
  if (p1.x - p0.x < 60 || p1.y - p0.y < 40) return;
  draw->AddRectFilled(p0, p1, IM_COL32(26, 28, 33, 255));
  if (layout) layout->add("scale_plot", 0, 0, p0.x, p0.y, p1.x, p1.y);
  // Speedup T1 / T_P for every curve point; the y axis reaches the highest of them.
  const auto& pts = s.curve;
  if (pts.empty() || !s.work_ns) {
    const std::string why = "not computed: " + s.why_not({pts.empty() ? "curve" : "work"});
    draw->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(p0.x + 8, p0.y + 8), palette::kWarning, why.c_str(),
                  nullptr, p1.x - p0.x - 16);
    text_box(layout, ImVec2(p0.x + 8, p0.y + 8), "not computed");
    return;
  }
  double top = 2;
  for (const auto& p : pts) top = std::max({top, p.speedup_upper(), p.speedup_simulated().value_or(0.0)});
  for (const Scalability* r : {&s, sb})
    if (r) top = std::max(top, r->speedup_measured().value_or(0));
  // The axis reaches below 1x where a bound or a run is slower than one worker's work.
  double bottom = 1;
  for (const auto& p : pts) bottom = std::min(bottom, p.speedup_lower());
  for (const Scalability* r : {&s, sb})
    if (r) bottom = std::min(bottom, r->speedup_measured().value_or(1));
  const double y_min = std::max(-10.0, std::floor(std::log2(std::max(bottom, 1e-3))));  // log2 of its bottom
  const double y_max = std::max(y_min + 1, std::ceil(std::log2(top * 1.15)));           // and of its top
  const double x_max = 10;                                                              // 1024 workers
  auto X = [&](double workers) {
    return p0.x + (p1.x - p0.x) * static_cast<float>(std::log2(std::max(workers, 1.0)) / x_max);
  };
  auto Y = [&](double speedup) {
    const double v = std::clamp(std::log2(std::max(speedup, 1e-9)), y_min, y_max);
    return p1.y - (p1.y - p0.y) * static_cast<float>((v - y_min) / (y_max - y_min));
  };
  // Grid and ticks: powers of two (every other one where they would crowd).
  char text[64];
  const int x_every = (p1.x - p0.x) / 10 < 34 ? 2 : 1;
  for (int k = 0; k <= 10; k += x_every) {
    const float x = X(std::ldexp(1.0, k));
    draw->AddLine(ImVec2(x, p0.y), ImVec2(x, p1.y), palette::kGrid);
    std::snprintf(text, sizeof text, "%d", 1 << k);
    const float tw = ImGui::CalcTextSize(text).x;
    plot_text(draw, layout, ImVec2(x - tw / 2, p1.y + 3), palette::kDimText, text);
  }
  const int y_steps = static_cast<int>(y_max - y_min);
  const int y_every = std::max(1, static_cast<int>(std::ceil(y_steps * (line + 4) / (p1.y - p0.y))));
  for (int k = static_cast<int>(y_min); k <= static_cast<int>(y_max); k += y_every) {
    const float y = Y(std::ldexp(1.0, k));
    draw->AddLine(ImVec2(p0.x, y), ImVec2(p1.x, y), palette::kGrid);
    std::snprintf(text, sizeof text, "%gx", std::ldexp(1.0, k));
    const float tw = ImGui::CalcTextSize(text).x;
    plot_text(draw, layout, ImVec2(p0.x - tw - 4, std::clamp(y - line / 2, p0.y, p1.y - line)), palette::kDimText,
              text);
  }
  // Axis titles: x below its tick labels, y rotated is not available in ImGui 1.86's
  // draw list, so it stands above the y axis' top, left of the legend.
  const char* x_title = "workers P (log scale)";
  const float xw = ImGui::CalcTextSize(x_title).x;
  plot_text(draw, layout, ImVec2((p0.x + p1.x - xw) / 2, p1.y + line + 5), palette::kText, x_title);
  plot_text(draw, layout, ImVec2(origin.x + 2, origin.y + 2), palette::kText, y_title);
  draw->PushClipRect(p0, p1, true);
  // The greedy bounds' band, then the simulated line, then the measured points on top.
  for (std::size_t i = 1; i < pts.size(); ++i) {
    const auto& l = pts[i - 1];
    const auto& r = pts[i];
    const ImVec2 q[4] = {ImVec2(X(l.workers), Y(l.speedup_upper())), ImVec2(X(r.workers), Y(r.speedup_upper())),
                         ImVec2(X(r.workers), Y(r.speedup_lower())), ImVec2(X(l.workers), Y(l.speedup_lower()))};
    draw->AddConvexPolyFilled(q, 4, palette::kBoundsBand);
    draw->AddLine(q[0], q[1], palette::kBoundsEdge, 1.0f);
    draw->AddLine(q[3], q[2], palette::kBoundsEdge, 1.0f);
  }
  auto simulated_line = [&](const Scalability& r, ImU32 colour, float thickness, const char* run) {
    std::vector<ImVec2> line_pts;
    for (const auto& p : r.curve) {
      if (layout) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "scale_curve %s %u %.17g %.17g %s", run, p.workers, p.lower_ns, p.upper_ns,
                      p.simulated_ns ? std::to_string(*p.simulated_ns).c_str() : "none");
        layout->lines.emplace_back(buf);
      }
      const std::optional<double> speedup = p.speedup_simulated();
      if (!speedup) {
        if (line_pts.size() >= 2)
          draw->AddPolyline(line_pts.data(), static_cast<int>(line_pts.size()), colour, 0, thickness);
        line_pts.clear();
        continue;
      }
      line_pts.emplace_back(X(p.workers), Y(*speedup));
    }
    if (line_pts.size() >= 2)
      draw->AddPolyline(line_pts.data(), static_cast<int>(line_pts.size()), colour, 0, thickness);
    for (const ImVec2& q : line_pts) draw->AddCircleFilled(q, 2.0f, colour);
  };
  if (sb) simulated_line(*sb, palette::kRunB, 1.5f, "B");
  simulated_line(s, palette::kSimulated, 2.0f, "A");
  auto point = [&](const Scalability& r, ImU32 colour, const char* run) {
    const auto sp = r.speedup_measured();
    if (!sp || r.measured_workers == 0) return;
    const ImVec2 c(X(r.measured_workers), Y(*sp));
    draw->AddCircleFilled(c, 6.0f, colour);
    draw->AddCircle(c, 6.0f, IM_COL32(0, 0, 0, 255), 0, 1.5f);
    if (layout) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "scale_measured %s %u %.17g %.0f %.0f", run, r.measured_workers, *sp, c.x, c.y);
      layout->lines.emplace_back(buf);
    }
  };
  draw->PopClipRect();
  // The points whole, also at the plot's corner (one worker, speedup 1).
  draw->PushClipRect(ImVec2(p0.x - 8, p0.y - 8), ImVec2(p1.x + 8, p1.y + 8), true);
  point(s, two ? palette::kRunA : palette::kText, "A");
  if (sb) point(*sb, palette::kRunB, "B");
  draw->PopClipRect();
  for (const Key& k : keys) {
    const float kx = k.at.x, ky = k.at.y;
    const float my = ky + line / 2;
    if (k.shape == 0) {
      draw->AddRectFilled(ImVec2(kx, ky + 2), ImVec2(kx + 14, ky + line - 2), k.colour);
      draw->AddRect(ImVec2(kx, ky + 2), ImVec2(kx + 14, ky + line - 2), palette::kBoundsEdge);
    } else if (k.shape == 1) {
      draw->AddLine(ImVec2(kx, my), ImVec2(kx + 14, my), k.colour, 2.0f);
    } else {
      draw->AddCircleFilled(ImVec2(kx + 7, my), 5.0f, k.colour);
    }
    plot_text(draw, layout, ImVec2(kx + 18, ky), palette::kText, k.text.c_str());
    if (layout) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "scale_legend %u %u %u %s", k.colour & 0xFF, (k.colour >> 8) & 0xFF,
                    (k.colour >> 16) & 0xFF, k.text.c_str());
      layout->lines.emplace_back(buf);
    }
  }
}

void ScalabilityView::figures(const Scalability& s, ViewState& view) {
  LayoutRecord* layout = view.layout;
  record(layout, "A", "work_ns", s.work_ns);
  record(layout, "A", "span_ns", s.span_ns);
  record(layout, "A", "parallelism", s.parallelism);
  record(layout, "A", "burdened_span_ns", s.burdened_span_ns);
  record(layout, "A", "burdened_parallelism", s.burdened_parallelism);
  record(layout, "A", "measured_ns", s.measured_ns);
  if (layout) {
    layout->lines.push_back("scale_counts " + std::to_string(s.tasks) + " " + std::to_string(s.stretches) + " " +
                            std::to_string(s.edges) + " " + std::to_string(s.measured_workers) + " " +
                            std::to_string(s.critical_path.size()));
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("##scale_figures", 2, flags)) return;
  ImGui::TableSetupColumn("figure", ImGuiTableColumnFlags_WidthFixed,
                          ImGui::CalcTextSize("burdened parallelism").x + 8);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
  auto dur = [](const std::optional<double>& v) { return v ? format_duration(*v) : std::string(); };
  figure_row("work T1", s.work_ns, dur(s.work_ns), s, "work", "the tasks' own running time, summed");
  figure_row("span T_inf", s.span_ns, dur(s.span_ns), s, "span",
             "the heaviest path through the task graph: no number of workers finishes sooner");
  figure_row("parallelism", s.parallelism, s.parallelism ? ratio(*s.parallelism) : "", s, "parallelism",
             "work / span: the most workers the program can keep busy");
  figure_row("burdened span", s.burdened_span_ns, dur(s.burdened_span_ns), s, "burdened",
             "the span with this run's measured steal and wake costs charged on the path");
  figure_row("burdened parallelism", s.burdened_parallelism,
             s.burdened_parallelism ? ratio(*s.burdened_parallelism) : "", s, "burdened", "work / burdened span");
  figure_row("measured", s.measured_ns,
             s.measured_ns ? dur(s.measured_ns) + " on " + count_of(s.measured_workers, "worker") : "", s, "measured",
             "the run itself: first task begin to last task end");
  figure_row("graph", std::optional<double>(0.0),
             count_of(s.tasks, "task") + ", " + format_count(s.stretches) +
                 (s.stretches == 1 ? " stretch" : " stretches") + ", " + count_of(s.edges, "edge"),
             s, "");
  // The run's own costs, which the simulator and the burdened span charge.
  const auto& c = s.costs;
  figure_row("spawn cost", std::optional<double>(0.0),
             analysis::cost_text(s, c.spawn_ns, c.spawn_samples, /*from_graph=*/true), s, "");
  figure_row("steal cost", std::optional<double>(0.0), analysis::cost_text(s, c.steal_ns, c.steal_samples), s, "");
  figure_row("wake cost", std::optional<double>(0.0), analysis::cost_text(s, c.wake_ns, c.wake_samples), s, "");
  figure_row("event cost", std::optional<double>(0.0),
             c.event_ns > 0 ? format_duration(c.event_ns) + " per event, taken off own time (" +
                                  std::to_string(static_cast<int>(100 * c.recording_share + 0.5)) +
                                  " % of the tasks' recorded time)"
                            : std::string("not measured (the trace header has none): nothing taken off"),
             s, "");
  figure_row("simulated on", s.simulated() ? std::optional<double>(0.0) : std::nullopt, s.topology.describe(), s,
             "simulat");
  ImGui::EndTable();
  // The span by the kind of edge that led into each stretch: what the path is made of.
  if (s.span_ns && *s.span_ns > 0) {
    ImGui::TextDisabled("span by edge kind:");
    for (int k = 0; k < analysis::kEdgeKindCount; ++k) {
      const double v = s.span_by_edge[static_cast<std::size_t>(k)];
      if (v <= 0) continue;
      ImGui::SameLine();
      if (ImGui::GetContentRegionAvail().x < 140) ImGui::NewLine();
      ImGui::Text("%s %.1f%%", analysis::kEdgeKindNames[k].data(), 100 * v / *s.span_ns);
    }
  }
  ImGui::PushTextWrapPos(0);
  for (const std::string& n : s.notes) ImGui::TextDisabled("note: %s", n.c_str());
  for (const std::string& n : s.not_computed)
    ImGui::TextColored(palette::vec(palette::kWarning), "not computed: %s", n.c_str());
  ImGui::PopTextWrapPos();
}

void ScalabilityView::walk(const Scalability& s, const Model& model, ViewState& view) {
  const auto& path = s.critical_path;
  ImGui::TextUnformatted("critical path");
  ImGui::SameLine();
  if (path.empty()) {
    ImGui::TextColored(palette::vec(palette::kWarning), "not computed: %s", s.why_not({"critical path"}).c_str());
    return;
  }
  ImGui::Checkbox("on the timeline", &view.show_critical_path);
  const int n = static_cast<int>(path.size());
  int step = std::clamp(view.path_step, -1, n - 1);
  bool moved = false;
  if (ImGui::Button("< previous")) step = std::max(step - 1, 0), moved = true;
  ImGui::SameLine();
  if (ImGui::Button("next >")) step = std::min(step + 1, n - 1), moved = true;
  if (walk_to_ >= 0) step = std::min(walk_to_, n - 1), moved = true, walk_to_ = -1;
  ImGui::SameLine();
  if (step < 0)
    ImGui::Text("%d stretches: walk from the first", n);
  else
    ImGui::Text("stretch %d of %d", step + 1, n);
  view.path_step = step;
  if (view.layout) view.layout->add("walk_step", step, n, 0, 0, 0, 0);
  if (step < 0) return;
  const analysis::PathStretch& p = path[static_cast<std::size_t>(step)];
  if (moved) {
    // Centre the timeline on the stretch (a little wider than it) and bring its lane into view.
    const double b = model.rel(p.begin), e = model.rel(p.end);
    view.show(b, e, std::max((e - b) * 1.6, 20.0));
    view.follow = false;
    view.focus.active = false;
    view.focus.worker = static_cast<int>(p.worker);
    view.focus.scroll_to = true;
  }
  ImGui::Text("task #%llx on worker %u", static_cast<unsigned long long>(p.task), p.worker);
  if (p.label != 0) {
    ImGui::TextColored(palette::vec(palette::label(p.label)), "label %s", model.label_name(p.label).c_str());
  } else {
    ImGui::TextDisabled("no label");
  }
  const auto kind = static_cast<int>(p.entered_by);
  ImGui::Text("entered by a %s edge", analysis::kEdgeKindNames[kind].data());
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("(%s)", kEdgeKindTexts[kind]);
  ImGui::PopTextWrapPos();
  ImGui::Text("own time %s, at %s", format_duration(p.own_ns).c_str(),
              format_duration(model.ticks_to_ns(model.rel(p.begin))).c_str());
  if (p.edge_ns > 0) ImGui::Text("the edge itself: %s", format_duration(p.edge_ns).c_str());
}

void ScalabilityView::labels(const Scalability& s, ViewState& view, float height) {
  ImGui::TextUnformatted("labels by share of the span");
  ImGui::SameLine();
  ImGui::TextDisabled("(what-if: the label's tasks %.0f%% faster, simulated)", what_if_percent_);
  if (s.labels.empty()) {
    ImGui::TextDisabled("no labels: %s", s.span_ns ? "the run's tasks name no label" : s.why_not({"label"}).c_str());
    return;
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("##scale_labels", 5, flags, ImVec2(0, std::max(height, 60.0f)))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* h : {"label", "tasks", "span share", "work", "what-if: T_P before -> after"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (std::size_t i = 0; i < s.labels.size(); ++i) {
    const analysis::LabelFigure& l = s.labels[i];
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::TextColored(palette::vec(palette::label(l.label)), "%s", l.name.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(format_count(l.tasks).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%.1f%% (%s)", 100 * l.span_share, format_duration(l.span_ns).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(format_duration(l.work_ns).c_str());
    ImGui::TableNextColumn();
    if (!l.what_if || l.what_if_ns.empty()) {
      ImGui::TextDisabled("not simulated");
    } else {
      for (std::size_t k = 0; k < l.what_if_ns.size() && k < l.baseline_ns.size() && k < l.what_if_workers.size();
           ++k) {
        const double before = l.baseline_ns[k], after = l.what_if_ns[k];
        ImGui::PushTextWrapPos(0);
        ImGui::Text("%.0f%% faster, P=%u: %s -> %s (%+.1f%%)", l.what_if->percent, l.what_if_workers[k],
                    format_duration(before).c_str(), format_duration(after).c_str(),
                    before > 0 ? 100 * (after - before) / before : 0.0);
        ImGui::PopTextWrapPos();
      }
    }
    if (view.layout) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "scale_label %zu %.17g %s", i, l.span_share, l.name.c_str());
      view.layout->lines.emplace_back(buf);
    }
  }
  ImGui::EndTable();
}

void ScalabilityView::draw(const Run& a, const Run* b, ViewState& view, ImVec2 size) {
  const ScaleFigures& f = *a.figures;
  const Scalability* s = f.whole();
  if (!s) {
    const bool streaming = a.model->status().phase == SourceStatus::Phase::streaming;
    if (streaming && !f.busy()) {
      // Live: the whole run's figures when the app disconnects, or now when asked (the
      // rolling window's parallelism is a plot under the timeline).
      ImGui::TextDisabled("live: the whole run's figures are computed when the app disconnects");
      if (ImGui::Button("Compute now")) recompute_ = true;
    } else {
      ImGui::TextDisabled("%s", f.busy() || f.pending() ? "computing the scalability figures..."
                                                        : "the scalability figures come once the trace has loaded");
    }
    ImGui::Dummy(ImVec2(size.x, std::max(size.y - ImGui::GetFrameHeightWithSpacing(), 1.0f)));
    return;
  }
  const Model& model = *a.model;
  // The controls: recompute (another what-if speedup), and how long the analysis took.
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("what-if: the top labels' tasks");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  ImGui::SliderFloat("##what_if", &what_if_percent_, 5, 100, "%.0f%% faster");
  ImGui::SameLine();
  if (ImGui::Button(f.busy() ? "computing..." : "Recompute") && !f.busy()) recompute_ = true;
  ImGui::SameLine();
  ImGui::TextDisabled("computed in %s", format_duration(f.whole_compute_ms() * 1e6).c_str());
  if (view.layout) view.layout->lines.push_back("scale_compute_ms " + std::to_string(f.whole_compute_ms()));
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const bool wide = avail.x >= 900;
  if (wide) {
    // Two columns: the curve over the labels (left), the figures over the walk (right).
    const float left = std::floor(avail.x * 0.55f);
    ImGui::BeginChild("##scale_left", ImVec2(left, avail.y), false);
    const float curve_h = std::floor(avail.y * 0.6f);
    curve(a, b, view, ImVec2(left - 8, curve_h));
    labels(*s, view, ImGui::GetContentRegionAvail().y - ImGui::GetFrameHeightWithSpacing());
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("##scale_right", ImVec2(0, avail.y), false);
    walk(*s, model, view);
    ImGui::Separator();
    figures(*s, view);
    if (b && b->figures && b->figures->whole()) {
      const Scalability& sb = *b->figures->whole();
      record(view.layout, "B", "work_ns", sb.work_ns);
      record(view.layout, "B", "span_ns", sb.span_ns);
      record(view.layout, "B", "parallelism", sb.parallelism);
      record(view.layout, "B", "measured_ns", sb.measured_ns);
      ImGui::Separator();
      ImGui::TextColored(palette::vec(palette::kRunB), "B: %s", b->name.c_str());
      ImGui::PushTextWrapPos(0);
      auto txt = [&](const char* what, const std::optional<double>& v, bool duration, const char* key) {
        if (v)
          ImGui::Text("%s %s", what, duration ? format_duration(*v).c_str() : ratio(*v).c_str());
        else
          ImGui::TextColored(palette::vec(palette::kWarning), "%s not computed: %s", what, sb.why_not({key}).c_str());
      };
      txt("work", sb.work_ns, true, "work");
      txt("span", sb.span_ns, true, "span");
      txt("parallelism", sb.parallelism, false, "parallelism");
      if (sb.measured_ns)
        ImGui::Text("measured %s on %s", format_duration(*sb.measured_ns).c_str(),
                    count_of(sb.measured_workers, "worker").c_str());
      ImGui::PopTextWrapPos();
    } else if (b) {
      ImGui::TextDisabled("B: computing...");
    }
    ImGui::EndChild();
    return;
  }
  // Narrow (a tab beside the timeline): one column, scrolled.
  ImGui::BeginChild("##scale_narrow", ImVec2(0, avail.y), false);
  curve(a, b, view, ImVec2(ImGui::GetContentRegionAvail().x - 4, std::clamp(avail.x * 0.7f, 220.0f, 360.0f)));
  walk(*s, model, view);
  ImGui::Separator();
  figures(*s, view);
  ImGui::Separator();
  labels(*s, view, 200);
  ImGui::EndChild();
}

}  // namespace lantern::viewer
