// SPDX-License-Identifier: Apache-2.0
// plots_view.cpp - four stacked plots on the timeline's time axis.
#include "plots_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "palette.hpp"
#include "timeline_view.hpp"

namespace lantern::viewer {
namespace {

// nice_max: a round number at or above v, for the y axis.
double nice_max(double v) {
  if (!(v > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0}) {
    if (m * p >= v) return m * p;
  }
  return 10 * p;
}

std::string short_number(double v) {
  char buf[32];
  if (v >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3gG", v / 1e9);
  else if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3gM", v / 1e6);
  else if (v >= 1e3)
    std::snprintf(buf, sizeof buf, "%.3gk", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

PlotsView::Frame PlotsView::frame(const char* title, const char* unit, double max, ImVec2 origin, ImVec2 size,
                                  float strip) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  Frame f;
  // The plot area starts below a strip (one text line, or `strip` px): the keys of the
  // lines and the notes on what is not recorded go there, never over a line.
  f.p0 = ImVec2(origin.x + TimelineView::kLabelWidth, origin.y + 4 + std::max(strip, ImGui::GetTextLineHeight()));
  f.p0.y = std::min(f.p0.y, origin.y + size.y - 24);
  f.p1 = ImVec2(origin.x + size.x - 14, origin.y + size.y - 4);
  f.max = std::strcmp(unit, "workers") == 0 ? std::max(max, 1.0) : nice_max(max);  // whole workers stay exact
  draw->AddRectFilled(f.p0, f.p1, IM_COL32(26, 28, 33, 255));
  for (int i = 1; i < 4; ++i) {
    const float y = f.p1.y - (f.p1.y - f.p0.y) * static_cast<float>(i) / 4;
    draw->AddLine(ImVec2(f.p0.x, y), ImVec2(f.p1.x, y), palette::kGrid);
  }
  draw->AddText(ImVec2(origin.x + 6, origin.y + 2), palette::kText, title);
  const std::string top = short_number(f.max) + " " + unit;
  draw->AddText(ImVec2(origin.x + 6, origin.y + 18), palette::kDimText, top.c_str());
  return f;
}

void PlotsView::cursor(const ViewState& view, const TimeMapping& map, const Frame& f,
                       const std::vector<Line>& lines) const {
  if (!std::isfinite(view.hover)) return;
  const float x = map.x(view.hover);
  if (x < f.p0.x || x > f.p1.x) return;
  ImGui::GetWindowDrawList()->AddLine(ImVec2(x, f.p0.y), ImVec2(x, f.p1.y), IM_COL32(255, 255, 255, 90));
  if (!ImGui::IsMouseHoveringRect(f.p0, f.p1, false)) return;
  ImGui::BeginTooltip();
  for (const Line& l : lines)
    ImGui::TextColored(palette::vec(l.colour), "%-12s %s", l.name, short_number(l.last).c_str());
  ImGui::EndTooltip();
}

void PlotsView::draw_states(const Model& model, const ViewState& view, const TimeMapping& map, ImVec2 origin,
                            ImVec2 size) {
  const std::uint32_t n = model.worker_count();
  const Frame f = frame("workers by state", "workers", n, origin, size);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float step = n <= 16 ? 2.0f : n <= 64 ? 4.0f : 8.0f;  // keep it O(pixels x workers) affordable
  const double hi = std::min({map.end, view.limit, model.rel(model.last_tick())});
  const float x_end = std::min(f.p1.x, map.x(hi));
  const Tick open_end = model.last_tick();
  std::vector<std::ptrdiff_t> hints(n, -1);
  std::vector<Occupancy> prev(n);
  for (std::uint32_t w = 0; w < n; ++w)
    prev[w] = model.track(w).cumulative(model.abs(map.t(f.p0.x)), open_end, &hints[w]);
  const float height = f.p1.y - f.p0.y;
  std::vector<Line> lines(trace::kStateCount);
  for (int s = 0; s < trace::kStateCount; ++s) lines[s] = Line{{}, palette::state(s), 1, trace::kStateNames[s].data()};
  for (float x = f.p0.x; x < x_end; x += step) {
    const double a = map.t(x), b = map.t(std::min(x + step, x_end));
    std::array<double, trace::kStateCount> workers{};
    for (std::uint32_t w = 0; w < n; ++w) {
      const Occupancy next = model.track(w).cumulative(model.abs(b), open_end, &hints[w]);
      for (int s = 0; s < trace::kStateCount; ++s) workers[s] += (next[s] - prev[w][s]) / (b - a);
      prev[w] = next;
    }
    // Stacked from the bottom: active, idle, sleepy, sleeping.
    float y = f.p1.y;
    for (int s = 0; s < trace::kStateCount; ++s) {
      const float h = height * static_cast<float>(workers[s] / f.max);
      if (h > 0.05f) draw->AddRectFilled(ImVec2(x, y - h), ImVec2(std::min(x + step, x_end), y), palette::state(s));
      y -= h;
      if (std::isfinite(view.hover) && view.hover >= a && view.hover < b) lines[s].last = workers[s];
    }
  }
  cursor(view, map, f, lines);
}

void PlotsView::draw_lines(const Model& model, const ViewState& view, const TimeMapping& map, const char* title,
                           const std::vector<Series>& series, bool rate, ImVec2 origin, ImVec2 size, int second_axis) {
  const TimeSeries* ts = model.series();
  const float step = 2.0f;
  const double hi = std::min({map.end, view.limit, model.rel(model.last_tick())});
  const float x0 = map.x0, x_end = std::min(map.x0 + map.width, map.x(hi));
  std::vector<Line> lines;
  std::vector<bool> recorded;
  double max = 0, max_second = 0;  // the left axis; the right axis (series from second_axis on)
  for (std::size_t k = 0; k < series.size(); ++k) {
    const int id = series[k].id;
    Line line{{}, series[k].colour, k == 0 ? 2.0f : 1.2f, series[k].name};
    // Not recorded at the trace's level (or no lane pops to build queue depth from): no
    // line, which would read as none happening; a note says why.
    recorded.push_back(model.empty() ||
                       (model.analysis().counted(series[k].source) &&
                        (series[k].source != EventId::lane_pop || model.events_of(EventId::lane_pop) > 0)));
    for (float x = x0; ts && recorded.back() && x < x_end; x += step) {
      const double a = map.t(x), b = map.t(std::min(x + step, x_end));
      const double sum = ts->sum(id, a, b);
      const double v = rate ? sum / (model.ticks_to_ns(b - a) * 1e-9) : sum / (b - a);
      double& axis_max = static_cast<int>(k) >= second_axis ? max_second : max;
      axis_max = std::max(axis_max, v);
      line.points.emplace_back(x, static_cast<float>(v));
      if (std::isfinite(view.hover) && view.hover >= a && view.hover < b) line.last = v;
    }
    lines.push_back(std::move(line));
  }
  // Why a series is not drawn: the analysis' sentence (from the trace header's level), the
  // one lantern-trace stats prints, in the strip above the plot area.
  std::vector<std::string> notes;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const EventId source = series[k].source;
    if (recorded[k] || model.empty()) continue;
    bool seen = false;
    for (std::size_t j = 0; j < k; ++j) seen = seen || (!recorded[j] && series[j].source == source);
    if (seen) continue;
    if (source == EventId::lane_pop) {
      if (view.layout) view.layout->add("needs_level", 0, 0, 0, 0, 0, 0);
      notes.push_back("queue depth: no lane pops: " + model.analysis().no_samples_reason(source));
    } else {
      if (view.layout) view.layout->add("not_recorded_plot", static_cast<int>(source), 0, 0, 0, 0, 0);
      notes.push_back(std::string(series[k].name) + (rate ? " / s: " : ": ") +
                      model.analysis().no_samples_reason(source));
    }
  }
  const float wrap = std::max(1.0f, size.x - TimelineView::kLabelWidth - 16);
  float strip = ImGui::GetTextLineHeight();
  for (const std::string& n : notes) strip += ImGui::CalcTextSize(n.c_str(), nullptr, false, wrap).y;
  const Frame f = frame(title, rate ? "/s" : "tasks", max, origin, size, strip);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float height = f.p1.y - f.p0.y;
  draw->PushClipRect(f.p0, f.p1, true);
  // Thin lines first, the total (k == 0) last so it stays on top.
  // A series of another magnitude (steals beside tasks) gets its own axis on the right,
  // in its colour, instead of plotting as zero on the left one.
  const double second_max = nice_max(max_second);
  for (std::size_t k = lines.size(); k-- > 0;) {
    auto& pts = lines[k].points;
    const double scale = static_cast<int>(k) >= second_axis ? second_max : f.max;
    for (auto& p : pts) p.y = f.p1.y - height * static_cast<float>(p.y / scale);
    if (pts.size() >= 2)
      draw->AddPolyline(pts.data(), static_cast<int>(pts.size()), lines[k].colour, 0, lines[k].thickness);
  }
  draw->PopClipRect();
  // Notes, then the keys, right-aligned (a short line of its colour, then its name; the
  // right axis' top value leads them, in its series' colour), in the strip above the plot.
  float note_y = origin.y + 2 + ImGui::GetTextLineHeight();
  for (const std::string& n : notes) {
    draw->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(f.p0.x + 8, note_y), palette::kDimText, n.c_str(),
                  nullptr, wrap);
    note_y += ImGui::CalcTextSize(n.c_str(), nullptr, false, wrap).y;
  }
  const float key_y = origin.y + 2;
  float lx = f.p1.x;
  auto key_text = [&](const std::string& text, ImU32 colour, bool line_mark, int k) {
    const ImVec2 ts_size = ImGui::CalcTextSize(text.c_str());
    lx -= ts_size.x + (line_mark ? 16 : 0) + 12;
    if (lx < f.p0.x) return;  // no room: the cursor's tooltip names every line
    if (line_mark) {
      const float my = key_y + ts_size.y / 2;
      draw->AddLine(ImVec2(lx, my), ImVec2(lx + 12, my), colour, 2.0f);
    }
    draw->AddText(ImVec2(lx + (line_mark ? 16 : 0), key_y), colour, text.c_str());
    if (view.layout && k >= 0) {
      char line[160];
      // plot_key: a drawn line's key, in its colour; plot_key_note: a series not recorded.
      std::snprintf(line, sizeof line, "%s %d %u %u %u %.0f %.0f %.0f %.0f %s",
                    line_mark ? "plot_key" : "plot_key_note", series[static_cast<std::size_t>(k)].id, colour & 0xFF,
                    (colour >> 8) & 0xFF, (colour >> 16) & 0xFF, lx, key_y, lx + (line_mark ? 16 : 0) + ts_size.x,
                    key_y + ts_size.y, text.c_str());
      view.layout->lines.emplace_back(line);
    }
  };
  for (std::size_t k = std::min<std::size_t>(lines.size(), 10); k-- > 0;) {
    key_text(std::string(lines[k].name) + (recorded[k] ? "" : ": not recorded"),
             recorded[k] ? lines[k].colour : palette::kDimText, recorded[k], static_cast<int>(k));
  }
  if (second_axis < static_cast<int>(lines.size()) && recorded[static_cast<std::size_t>(second_axis)]) {
    const std::string right = "right axis: " + short_number(second_max) + (rate ? " /s" : "");
    key_text(right, lines[static_cast<std::size_t>(second_axis)].colour, false, -1);
  }
  cursor(view, map, f, lines);
}

void PlotsView::draw_parallelism(const Model& model, const ViewState& view, const TimeMapping& map, ImVec2 origin,
                                 ImVec2 size) {
  const std::vector<ParallelismSample>& samples = *view.live_parallelism;
  double max = 1;
  for (const auto& s : samples) max = std::max(max, s.parallelism.value_or(0));
  char title[96];
  // The window's width: the last sample's (a busy run's window holds its last tasks only,
  // scale_figures.hpp), else the configured one.
  const double width_s = samples.empty() || samples.back().to <= samples.back().from
                             ? view.live_window_s
                             : model.ticks_to_ns(static_cast<double>(samples.back().to - samples.back().from)) / 1e9;
  std::snprintf(title, sizeof title, "parallelism, last %.3g s", width_s);
  std::string note;
  if (samples.empty()) {
    note = "computed every 0.5 s or so, once data arrives";
  } else if (!samples.back().parallelism) {
    note = "not computed: " + samples.back().reason;
  }
  const float wrap = std::max(1.0f, size.x - TimelineView::kLabelWidth - 16);
  const float strip = note.empty() ? 0 : ImGui::CalcTextSize(note.c_str(), nullptr, false, wrap).y;
  const Frame f = frame(title, "work / span", max, origin, size, strip);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  if (!note.empty())
    draw->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(f.p0.x + 8, origin.y + 2), palette::kDimText,
                  note.c_str(), nullptr, wrap);
  if (view.layout) {
    char buf[200];
    const ParallelismSample* last = samples.empty() ? nullptr : &samples.back();
    // live_parallelism SAMPLES VALUE|none COMPUTE_MS [REASON]
    std::snprintf(buf, sizeof buf, "live_parallelism %zu %s %.3f %s", samples.size(),
                  last && last->parallelism ? std::to_string(*last->parallelism).c_str() : "none",
                  last ? last->compute_ms : 0.0, last && !last->parallelism ? last->reason.c_str() : "");
    view.layout->lines.emplace_back(buf);
  }
  Line line{{}, palette::kSimulated, 2.0f, "parallelism"};
  const float height = f.p1.y - f.p0.y;
  draw->PushClipRect(f.p0, f.p1, true);
  auto flush = [&] {
    if (line.points.size() >= 2)
      draw->AddPolyline(line.points.data(), static_cast<int>(line.points.size()), line.colour, 0, line.thickness);
    for (const ImVec2& p : line.points) draw->AddCircleFilled(p, 2.5f, line.colour);
    line.points.clear();
  };
  for (const auto& s : samples) {
    if (!s.parallelism) {
      flush();
      continue;
    }
    const float x = map.x(model.rel(s.to));
    line.points.emplace_back(x, f.p1.y - height * static_cast<float>(*s.parallelism / f.max));
    if (std::isfinite(view.hover) && model.rel(s.to) <= view.hover) line.last = *s.parallelism;
  }
  flush();
  draw->PopClipRect();
  cursor(view, map, f, {line});
}

void PlotsView::draw(const Model& model, ViewState& view, ImVec2 size) {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(size.x - TimelineView::kLabelWidth - 14.0f, 40.0f);
  const TimeMapping map{view.start, view.end, origin.x + TimelineView::kLabelWidth, width};
  const bool dependencies = model.events_of(EventId::release) > 0 || model.events_of(EventId::io_submit) > 0 ||
                            model.events_of(EventId::io_complete) > 0;
  const bool live_parallelism = view.live_parallelism != nullptr;
  const float h = size.y / static_cast<float>(4 + (dependencies ? 1 : 0) + (live_parallelism ? 1 : 0));
  draw_states(model, view, map, origin, ImVec2(size.x, h));
  using palette::event;
  std::vector<Series> queues = {{kSeriesQueuedAll, "all lanes", event(EventId::lane_pop), EventId::lane_pop}};
  if (model.events_of(EventId::not_ready) > 0)
    queues.push_back({kSeriesNotReady, "not ready", event(EventId::not_ready), EventId::not_ready});
  static const char* kLaneNames[] = {"lane 0", "lane 1", "lane 2", "lane 3", "lane 4", "lane 5", "lane 6", "lane 7"};
  for (std::uint32_t l = 0; l < std::min<std::uint32_t>(model.worker_count(), 8); ++l)
    queues.push_back(
        {kSeriesFirstLane + static_cast<int>(l), kLaneNames[l], palette::lane(static_cast<int>(l)), EventId::lane_pop});
  draw_lines(model, view, map, "queue depth", queues, false, ImVec2(origin.x, origin.y + h), ImVec2(size.x, h));
  draw_lines(model, view, map, "tasks / s",
             {{kSeriesTasks, "tasks", event(EventId::task_begin), EventId::task_begin},
              {kSeriesSteals, "steals", event(EventId::steal), EventId::steal}},
             true, ImVec2(origin.x, origin.y + 2 * h), ImVec2(size.x, h), 1);
  draw_lines(model, view, map, "helps / s",
             {{kSeriesHelps, "helps", event(EventId::help), EventId::help},
              {kSeriesWakes, "wakes", event(EventId::wake), EventId::wake}},
             true, ImVec2(origin.x, origin.y + 3 * h), ImVec2(size.x, h));
  if (dependencies) {
    // Shown once the trace has any: dependency releases, IO submitted and completed.
    draw_lines(model, view, map, "releases / s",
               {{kSeriesReleases, "releases", event(EventId::release), EventId::release},
                {kSeriesIoSubmits, "IO submitted", event(EventId::io_submit), EventId::io_submit},
                {kSeriesIoCompletions, "IO completed", event(EventId::io_complete), EventId::io_complete}},
               true, ImVec2(origin.x, origin.y + 4 * h), ImVec2(size.x, h));
  }
  if (live_parallelism) {
    // Live: the rolling window's parallelism, under the other plots.
    draw_parallelism(model, view, map, ImVec2(origin.x, origin.y + (dependencies ? 5 : 4) * h), ImVec2(size.x, h));
  }
  ImGui::Dummy(size);
}

}  // namespace lantern::viewer
