// SPDX-License-Identifier: Apache-2.0
// timeline_overlays.cpp - what the timeline draws over the lanes: steal, help, wake and
// release arrows (only when zoomed in far enough for them to be told apart), drop
// markers, IO completion marks, the health view's focus, the playhead and cursor, and
// the hover tooltip.
#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include "palette.hpp"
#include "timeline_view.hpp"

namespace lantern::viewer {
namespace {

// More arrows than one per few pixels of width is a blur, not arrows: zoom in first.
constexpr float kPixelsPerArrow = 3.0f;
constexpr float kArrowSpacing = 5.0f;  // pixels between two drawn arrows of one pair

// Spacing keeps a burst of steals between the same two workers from painting a solid
// block: within a few pixels only the first arrow of each (from, to, kind) is drawn.
class ArrowSpacing {
 public:
  bool take(std::uint32_t from, std::uint32_t to, int kind, float x) {
    const std::uint64_t key = (static_cast<std::uint64_t>(from) << 34) | (static_cast<std::uint64_t>(to) << 2) |
                              static_cast<std::uint64_t>(kind);
    auto [it, fresh] = last_.try_emplace(key, x);
    if (fresh) return true;
    if (x - it->second < kArrowSpacing) return false;
    it->second = x;
    return true;
  }

 private:
  std::unordered_map<std::uint64_t, float> last_;
};

// in_window: [first, last) of a time-sorted array whose elements fall in [a, b].
template <class T>
std::pair<std::size_t, std::size_t> in_window(const std::vector<T>& v, Tick a, Tick b) {
  auto lo = std::lower_bound(v.begin(), v.end(), a, [](const T& e, Tick t) { return e.t < t; });
  auto hi = std::upper_bound(lo, v.end(), b, [](Tick t, const T& e) { return t < e.t; });
  return {static_cast<std::size_t>(lo - v.begin()), static_cast<std::size_t>(hi - v.begin())};
}

void arrow(ImDrawList* draw, ImVec2 from, ImVec2 to, ImU32 colour, float thickness) {
  draw->AddLine(from, to, colour, thickness);
  const float dx = to.x - from.x, dy = to.y - from.y;
  const float len = std::sqrt(dx * dx + dy * dy);
  if (len < 1) return;
  const float ux = dx / len, uy = dy / len;
  draw->AddTriangleFilled(to, ImVec2(to.x - ux * 7 - uy * 3.5f, to.y - uy * 7 + ux * 3.5f),
                          ImVec2(to.x - ux * 7 + uy * 3.5f, to.y - uy * 7 - ux * 3.5f), colour);
}

}  // namespace

void TimelineView::draw_markers(const Model& model, const ViewState& view, const TimeMapping& map, const Lanes& lanes,
                                ImDrawList* draw) const {
  const float bottom = lanes.y(model.worker_count());
  const Tick a = model.abs(map.start), b = model.abs(map.end);
  for (std::uint32_t w = 0; w < model.worker_count(); ++w) {
    const auto [lo, hi] = in_window(model.drops(w), a, b);
    for (std::size_t i = lo; i < hi; ++i) {
      // The gap (from the worker's last event before it to the marker) is shaded: what
      // the lane shows there is a guess; the marker says how many events are missing.
      const Drop& d = model.drops(w)[i];
      const float x = map.x(model.rel(d.t)), y = lanes.y(w) - 3;
      const float x0 = std::min(map.x(model.rel(d.gap_start)), x - 1);
      draw->AddRectFilled(ImVec2(x0, y), ImVec2(x, y + lanes.band + 6), IM_COL32(255, 60, 60, 70));
      draw->AddTriangleFilled(ImVec2(x - 5, y), ImVec2(x + 5, y), ImVec2(x, y + 8), palette::kDrop);
    }
  }
  // IO completions: a small cyan diamond on the state band where a worker reaped one
  // (the task waiting for it becomes ready there), when few enough to tell apart.
  std::uint64_t completions = 0;
  for (std::uint32_t w = 0; w < model.worker_count(); ++w) {
    const auto [lo, hi] = in_window(model.io(w), a, b);
    completions += hi - lo;
  }
  if (completions > 0 && completions <= static_cast<std::uint64_t>(map.width / kPixelsPerArrow)) {
    for (std::uint32_t w = 0; w < model.worker_count(); ++w) {
      const auto [lo, hi] = in_window(model.io(w), a, b);
      for (std::size_t i = lo; i < hi; ++i) {
        const IoEvent& io = model.io(w)[i];
        if (!io.completed) continue;
        const float x = map.x(model.rel(io.t)), y = lanes.y(w) + lanes.band / 2;
        draw->AddQuadFilled(ImVec2(x, y - 4), ImVec2(x + 4, y), ImVec2(x, y + 4), ImVec2(x - 4, y),
                            palette::kIoCompletion);
      }
    }
  }
  if (view.focus.active) {
    const float x0 = map.x(view.focus.start), x1 = std::max(map.x(view.focus.end), x0 + 3);
    const bool one = view.focus.worker >= 0 && view.focus.worker < static_cast<int>(model.worker_count());
    const float y0 = one ? lanes.y(static_cast<std::uint32_t>(view.focus.worker)) - 3 : lanes.top - 3;
    const float y1 = one ? y0 + lanes.height - 4 : bottom;
    draw->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), palette::kFocus);
    draw->AddRect(ImVec2(x0 - 1, y0), ImVec2(x1 + 1, y1), palette::kWarning, 0, 0, 2.0f);
  }
  if (std::isfinite(view.limit)) {
    const float x = map.x(view.limit);
    draw->AddLine(ImVec2(x, lanes.top - 4), ImVec2(x, bottom), palette::kPlayhead, 2.0f);
  }
  if (std::isfinite(view.hover)) {
    const float x = map.x(view.hover);
    draw->AddLine(ImVec2(x, lanes.top - 4), ImVec2(x, bottom), IM_COL32(255, 255, 255, 70));
  }
}

void TimelineView::draw_arrows(const Model& model, const ViewState& view, const TimeMapping& map, const Lanes& lanes,
                               ImDrawList* draw) {
  const Tick a = model.abs(map.start);
  const Tick b = model.abs(std::isfinite(view.limit) ? std::min(map.end, view.limit) : map.end);
  std::array<std::uint64_t, 4> kinds{};  // steals, helps, wakes, releases
  for (std::uint32_t w = 0; w < model.worker_count(); ++w) {
    const auto s = in_window(model.steals(w), a, b);
    const auto h = in_window(model.helps(w), a, b);
    const auto k = in_window(model.wakes(w), a, b);
    const auto r = in_window(model.releases(w), a, b);
    kinds[0] += s.second - s.first, kinds[1] += h.second - h.first;
    kinds[2] += k.second - k.first, kinds[3] += r.second - r.first;
  }
  const std::uint64_t count = kinds[0] + kinds[1] + kinds[2] + kinds[3];
  const auto max_arrows = static_cast<std::uint64_t>(std::max(50.0f, map.width / kPixelsPerArrow));
  arrows_hidden_ = count > max_arrows ? kinds : std::array<std::uint64_t, 4>{};
  if (count > max_arrows) return;
  const float band_mid = lanes.band / 2;
  const std::uint32_t n = model.worker_count();
  ArrowSpacing spacing;
  auto lane_y = [&](std::uint32_t w) { return lanes.y(w) + band_mid; };
  // row_y: the middle of a task row (the deepest drawn row for deeper slices).
  auto row_y = [&](const SliceRef& r) {
    const int d = std::min(r.depth, std::max(lanes.rows - 1, 0));
    return lanes.y(static_cast<std::uint32_t>(r.worker)) + lanes.band + 3 + (static_cast<float>(d) + 0.5f) * lanes.row;
  };
  for (std::uint32_t w = 0; w < n; ++w) {
    const auto [slo, shi] = in_window(model.steals(w), a, b);
    for (std::size_t i = slo; i < shi; ++i) {
      const Steal& s = model.steals(w)[i];
      if (s.victim >= n || s.victim == w) continue;
      const float x = map.x(model.rel(s.t));
      if (!spacing.take(s.victim, w, 0, x)) continue;
      // From the victim's lane to the thief's, slightly slanted so that steals in
      // both directions at the same moment stay distinguishable.
      arrow(draw, ImVec2(x - 6, lane_y(s.victim)), ImVec2(x, lane_y(w)), palette::distance(s.distance), 1.6f);
    }
    const auto [hlo, hhi] = in_window(model.helps(w), a, b);
    for (std::size_t i = hlo; i < hhi; ++i) {
      const Help& h = model.helps(w)[i];
      if (h.lane >= n || h.lane == w) continue;
      const float x = map.x(model.rel(h.t));
      if (!spacing.take(h.lane, w, 1, x)) continue;
      arrow(draw, ImVec2(x - 6, lane_y(h.lane)), ImVec2(x, lane_y(w)), palette::kHelp, 1.6f);
    }
    // Releases: from the releasing task (where it completed) to the start of the task it
    // made ready, when both are tasks and the released one starts inside the window.
    const auto [rlo, rhi] = in_window(model.releases(w), a, b);
    for (std::size_t i = rlo; i < rhi && lanes.rows > 0; ++i) {
      const Release& r = model.releases(w)[i];
      if (!r.from.valid() || !r.to.valid()) continue;
      const TaskSlice& target = model.slice(r.to);
      if (target.start > b) continue;
      const float x0 = map.x(model.rel(r.t)), x1 = map.x(model.rel(target.start));
      if (!spacing.take(w, static_cast<std::uint32_t>(r.to.worker), 3, x0)) continue;
      const ImVec2 from(x0, row_y(r.from)), to(std::max(x1, x0 + 2), row_y(r.to));
      draw->AddCircleFilled(from, 2.5f, palette::kRelease);
      arrow(draw, from, to, palette::kRelease, 1.5f);
    }
    const auto [klo, khi] = in_window(model.wakes(w), a, b);
    for (std::size_t i = klo; i < khi; ++i) {
      const Wake& k = model.wakes(w)[i];
      const float x1 = map.x(model.rel(k.t));
      const float x0 = map.x(model.rel(k.t > k.latency ? k.t - k.latency : 0));
      if (!spacing.take(k.by_worker(n) ? k.waker : n, w, 2, x1)) continue;
      // An outside thread (a submit from main) has no lane: the arrow comes from the top.
      const float y0 = k.by_worker(n) ? lane_y(k.waker) : lanes.top - 6;
      arrow(draw, ImVec2(x0, y0), ImVec2(x1, lane_y(w)), palette::kWake, 1.2f);
    }
  }
}

void TimelineView::draw_critical_path(const Model& model, const ViewState& view, const TimeMapping& map,
                                      const Lanes& lanes, ImDrawList* draw) const {
  if (!view.scale || !view.show_critical_path || lanes.rows <= 0) return;
  const std::vector<PathStretch>& path = view.scale->critical_path;
  if (path.empty()) return;
  const std::uint32_t n = model.worker_count();
  // The row a stretch's task ran in (the deepest drawn row for deeper slices).
  auto row_top = [&](const PathStretch& p) {
    const int d = std::min(p.slice.valid() ? p.slice.depth : 0, lanes.rows - 1);
    return lanes.y(p.worker) + lanes.band + 3 + static_cast<float>(d) * lanes.row;
  };
  const float right = map.x0 + map.width;
  // The path runs forward in time: the stretches in the window are one range of it.
  const Tick a = model.abs(map.start), b = model.abs(map.end);
  const auto first =
      std::lower_bound(path.begin(), path.end(), a, [](const PathStretch& p, Tick t) { return p.end < t; });
  std::size_t drawn = 0;
  float last_x = -1e30f;
  std::uint32_t last_worker = ~0u;
  for (auto it = first == path.begin() ? first : first - 1; it != path.end() && it->begin <= b; ++it) {
    if (it->worker >= n) continue;
    const float x0 = map.x(model.rel(it->begin)), x1 = std::max(map.x(model.rel(it->end)), x0 + 2);
    const float y0 = row_top(*it), y1 = y0 + lanes.row - 2;
    const auto i = static_cast<std::size_t>(it - path.begin());
    const bool current = static_cast<int>(i) == view.path_step;
    if (x1 >= map.x0 && x0 <= right) {
      // Stretches under a pixel from the previous one's outline on the same worker share it.
      if (current || x1 > last_x + 1 || it->worker != last_worker) {
        if (current) draw->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), palette::kCriticalPathFill);
        draw->AddRect(ImVec2(x0 - 1, y0 - 1), ImVec2(x1 + 1, y1 + 1), palette::kCriticalPath, 0, 0,
                      current ? 3.0f : 2.0f);
        last_x = x1, last_worker = it->worker;
        ++drawn;
      }
      if (view.layout) {
        view.layout->add("critical_stretch", static_cast<int>(i), static_cast<int>(it->worker), x0, y0, x1, y1);
      }
    }
    // The edge into this stretch, when it comes from another worker: an arrow from where
    // the previous stretch ended to where this one began.
    if (it == path.begin()) continue;
    const PathStretch& prev = *(it - 1);
    if (prev.worker == it->worker || prev.worker >= n) continue;
    const ImVec2 from(map.x(model.rel(prev.end)), row_top(prev) + (lanes.row - 2) / 2);
    const ImVec2 to(std::max(x0, from.x + 2), y0 + (lanes.row - 2) / 2);
    if (std::max(from.x, to.x) < map.x0 || std::min(from.x, to.x) > right) continue;
    arrow(draw, from, to, palette::kCriticalPath, 2.0f);
    if (view.layout) {
      view.layout->add("critical_edge", static_cast<int>(i), static_cast<int>(it->entered_by), from.x, from.y, to.x,
                       to.y);
    }
  }
  if (view.layout) view.layout->add("critical_drawn", static_cast<int>(drawn), 0, 0, 0, 0, 0);
}

void TimelineView::tooltip(const Model& model, const ViewState& view, const TimeMapping& map, const Lanes& lanes,
                           ImVec2 mouse) const {
  if (mouse.x < map.x0 || lanes.height <= 0) return;
  const float rel_y = mouse.y - lanes.top;
  if (rel_y < 0) return;
  const auto w = static_cast<std::uint32_t>(rel_y / lanes.height);
  if (w >= model.worker_count()) return;
  const float in_lane = rel_y - static_cast<float>(w) * lanes.height;
  const double t = map.t(mouse.x);
  if (std::isfinite(view.limit) && t > view.limit) return;
  const WorkerTrack& track = model.track(w);
  const Tick at = model.abs(t);
  const double tpp = map.ticks_per_pixel();
  const Tick open_end = model.last_tick();  // where a running task is drawn to
  auto ns = [&](double ticks) { return format_duration(model.ticks_to_ns(ticks)); };
  if (in_lane < lanes.band) {
    // The band ends where the worker's time does (its stop: Analysis::span_end).
    const Tick span_end = model.analysis().span_end(w);
    const std::ptrdiff_t i = track.interval_at(at);
    if (i < 0 || at > span_end) return;
    const auto k = static_cast<std::size_t>(i);
    const Tick s = track.interval_start(k), e = track.interval_end(k, span_end);
    ImGui::BeginTooltip();
    ImGui::Text("worker %u at %s", w, ns(t).c_str());
    if (static_cast<double>(e - s) >= tpp) {
      const int state = track.interval_state(k);
      ImGui::TextColored(
          palette::vec(palette::state(state)), "%s",
          state < trace::kStateCount ? trace::kStateNames[state].data() : "unknown (before the first state event)");
      ImGui::Text("for %s (since %s)", ns(static_cast<double>(e - s)).c_str(), ns(model.rel(s)).c_str());
      if (const StateReason why = track.interval_reason(k); valid(why))
        ImGui::TextDisabled("because: %s", name_of(why).data());
    } else {
      // Several intervals under the cursor: the pixel's mix, from the occupancy sums, as
      // shares the way every view computes them (state_shares: unknown time its own).
      const Occupancy o = track.occupancy(model.abs(t - tpp * 2), model.abs(t + tpp * 2), span_end);
      std::array<std::uint64_t, kStateSlots> ticks{};
      for (int st = 0; st < kStateSlots; ++st) ticks[static_cast<std::size_t>(st)] = static_cast<std::uint64_t>(o[st]);
      const StateShares shares = state_shares(ticks);
      ImGui::Text("%s around the cursor:", ns(tpp * 4).c_str());
      const bool any = std::any_of(ticks.begin(), ticks.end(), [](std::uint64_t v) { return v > 0; });
      for (int st = 0; st < kStateSlots && any; ++st) {
        const double share = shares[static_cast<std::size_t>(st)];
        if (st == kUnknownState && share == 0) continue;
        ImGui::TextColored(palette::vec(palette::state(st)), "  %-9s %5.1f%%", state_slot_name(st).data(), 100 * share);
      }
    }
    ImGui::EndTooltip();
    return;
  }
  const int d = static_cast<int>((in_lane - lanes.band - 3) / lanes.row);
  if (d < 0 || d >= lanes.rows || d >= track.depth_count()) return;
  const auto& row = track.slices(d);
  const std::size_t lo = track.first_slice_ending_after(d, model.abs(t - tpp * 1.5));
  const std::size_t hi = track.first_slice_starting_at_or_after(d, model.abs(t + tpp * 1.5));
  if (lo >= row.size() || hi <= lo) return;
  ImGui::BeginTooltip();
  if (hi - lo > 1) {
    ImGui::Text("%s tasks at depth %d within %s", format_count(hi - lo).c_str(), d, ns(tpp * 3).c_str());
    ImGui::TextDisabled("zoom in to see them one by one");
  } else {
    const TaskSlice& s = row[lo];
    const Tick end = s.open() ? open_end : s.end;
    if (s.label != 0) {
      ImGui::TextColored(palette::vec(palette::label(s.label)), "%s", model.label_name(s.label).c_str());
      ImGui::SameLine();
      ImGui::TextDisabled("(label %u)", s.label);
    }
    ImGui::Text("task #%llx", static_cast<unsigned long long>(s.id));
    ImGui::TextColored(palette::vec(palette::source(s.source)), "from %s",
                       valid(s.task_source()) ? name_of(s.task_source()).data() : "?");
    ImGui::Text("ran %s%s (at %s, depth %d)", ns(static_cast<double>(end - s.start)).c_str(), s.open() ? " so far" : "",
                ns(model.rel(s.start)).c_str(), d);
    if (const auto wait = track.ready_wait(s))
      ImGui::Text("waited %s in a lane before running", ns(static_cast<double>(*wait)).c_str());
    if (s.steal >= 0 && static_cast<std::size_t>(s.steal) < model.steals(w).size()) {
      const Steal& st = model.steals(w)[static_cast<std::size_t>(s.steal)];
      ImGui::Text("stolen from worker %u (%s)", st.victim,
                  valid(st.steal_distance()) ? name_of(st.steal_distance()).data() : "?");
    }
    if (const Tick off = track.off_cpu(s)) {
      ImGui::TextColored(palette::vec(palette::kOffCpu), "preempted: waited %s for a CPU of its %s",
                         ns(static_cast<double>(off)).c_str(), ns(static_cast<double>(end - s.start)).c_str());
      ImGui::TextDisabled("(the kernel ran other threads; the bar along the slice's bottom: how much, not when)");
    }
    if (s.flags & kSliceThrew) ImGui::TextColored(palette::vec(palette::kError), "threw an exception");
    if (s.flags & kSliceEndLost)
      ImGui::TextColored(palette::vec(palette::kWarning), "end not recorded (events dropped, or in a damaged chunk)");
  }
  ImGui::EndTooltip();
}

}  // namespace lantern::viewer
