// SPDX-License-Identifier: Apache-2.0
// lane_painter.cpp - the timeline's level-of-detail drawing (see the header).
#include "lane_painter.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "palette.hpp"

namespace lantern::viewer {
namespace {
constexpr float kMinSliceWidth = 3.0f;  // narrower slices are drawn as clusters
constexpr float kMinMark = 2.0f;        // least height of a state present in a mixed column
}  // namespace

Tick LanePainter::open_end() const noexcept {
  Tick end = model_.last_tick();
  if (std::isfinite(limit_)) end = std::min(end, model_.abs(limit_));
  return end;
}

void LanePainter::flush_run(float y0, float y1) {
  if (run_open_ && run_x1_ > run_x0_) {
    draw_->AddRectFilled(ImVec2(run_x0_, y0), ImVec2(run_x1_, y1), run_colour_);
    ++stats_.runs;
  }
  run_open_ = false;
}

void LanePainter::states(std::uint32_t worker, float y0, float y1) {
  const WorkerTrack& track = model_.track(worker);
  if (!track.seen()) return;
  // The band ends where the worker's time does (its stop, else the stream's newest event:
  // Analysis::span_end, the span the summary counts), or at the playhead.
  const Tick end_abs = std::min(open_end(), model_.analysis().span_end(worker));
  // Visible part: the window, clipped to the worker's data and the playhead.
  const double lo = std::max(map_.start, model_.rel(track.first_tick()));
  const double hi = std::min({map_.end, model_.rel(end_abs), limit_});
  if (hi <= lo) return;
  const double tpp = map_.ticks_per_pixel();
  const float x_lo = map_.x(lo), x_hi = map_.x(hi);
  auto add = [&](float a, float b, ImU32 colour) {
    a = std::max(a, x_lo);
    b = std::min(b, x_hi);
    if (b <= a) return;
    if (run_open_ && colour == run_colour_ && a <= run_x1_ + 0.01f) {
      run_x1_ = std::max(run_x1_, b);
      return;
    }
    flush_run(y0, y1);
    run_open_ = true;
    run_x0_ = a, run_x1_ = b, run_colour_ = colour;
  };
  std::ptrdiff_t hint = -1;
  // Walk pixel columns [x, x + 1) from the first visible one.
  float x = std::floor(x_lo - map_.x0) + map_.x0;
  while (x < x_hi) {
    const Tick a = model_.abs(map_.t(x)), b = model_.abs(map_.t(x + 1.0f));
    std::ptrdiff_t i = track.interval_at(a);
    if (i < 0) {
      x = std::max(x + 1.0f, std::floor(map_.x(model_.rel(track.first_tick()))));
      continue;
    }
    const Tick e = track.interval_end(static_cast<std::size_t>(i), end_abs);
    if (e >= b) {
      // One interval covers this column and maybe many more: one run to its end.
      const int s = track.interval_state(static_cast<std::size_t>(i));
      const float x_end = map_.x(model_.rel(e));
      if (s != kUnknownState) add(x, x_end, palette::state(s));
      x = std::max(x + 1.0f, std::floor(x_end - map_.x0) + map_.x0);
      continue;
    }
    // Several intervals inside this column: the time spent in each state over exactly
    // this column, from the cumulative occupancy (a range query, not a walk over the
    // intervals). The column is drawn as a stack of those shares, so a state present in
    // the column is never hidden by the dominant one: every non-dominant state present
    // gets at least kMinMark pixels (together at most 40% of the band), the dominant
    // state the rest.
    ++stats_.queries;
    const Occupancy before = track.cumulative(a, end_abs, &hint);
    const Occupancy after = track.cumulative(b, end_abs, &hint);
    int best = -1;
    double best_ticks = 0, total = 0;
    for (int s = 0; s < trace::kStateCount; ++s) {
      const double v = after[s] - before[s];
      total += std::max(v, 0.0);
      if (v > best_ticks) best_ticks = v, best = s;
    }
    if (best >= 0) {
      const float h = y1 - y0;
      float marks[trace::kStateCount] = {};
      float used = 0;
      for (int s = 0; s < trace::kStateCount; ++s) {
        const double v = after[s] - before[s];
        if (s == best || !(v > 0)) continue;
        marks[s] = std::max(kMinMark, static_cast<float>(v / total) * h);
        used += marks[s];
      }
      if (used > 0) {
        const float fit = std::min(1.0f, 0.4f * h / used);
        flush_run(y0, y1);
        float top = y0;
        draw_->AddRectFilled(ImVec2(x, y0), ImVec2(x + 1.0f, y1), palette::state(best));
        for (int s = 0; s < trace::kStateCount; ++s) {
          if (marks[s] <= 0) continue;
          const float m = std::max(1.0f, marks[s] * fit);
          draw_->AddRectFilled(ImVec2(x, top), ImVec2(x + 1.0f, top + m), palette::state(s));
          top += m;
        }
        ++stats_.runs;
      } else {
        add(x, x + 1.0f, palette::state(best));
      }
    }
    x += 1.0f;
  }
  (void)tpp;
  flush_run(y0, y1);
}

int LanePainter::dominant_state(std::uint32_t worker, double a, double b) const {
  const WorkerTrack& track = model_.track(worker);
  if (!track.seen() || b <= a) return -1;
  const Occupancy o = track.occupancy(model_.abs(a), model_.abs(b), open_end());
  int best = -1;
  double best_ticks = 0;
  for (int s = 0; s < trace::kStateCount; ++s) {
    if (o[s] > best_ticks) best_ticks = o[s], best = s;
  }
  return best;
}

void LanePainter::tasks(std::uint32_t worker, int depth, float y0, float y1) {
  const WorkerTrack& track = model_.track(worker);
  if (depth >= track.depth_count()) return;
  const auto& row = track.slices(depth);
  const Tick end_abs = open_end();
  const double hi = std::min(map_.end, limit_);
  const float x_left = map_.x0, x_right = map_.x(hi);
  std::size_t i = track.first_slice_ending_after(depth, model_.abs(map_.start));
  char label[64];
  while (i < row.size()) {
    const TaskSlice& s = row[i];
    const double start = model_.rel(s.start);
    if (start >= hi) break;
    const Tick s_end = s.open() ? end_abs : s.end;
    const float x0 = map_.x(start), x1 = map_.x(model_.rel(std::max(s_end, s.start)));
    if (x1 - x0 >= kMinSliceWidth) {
      const float a = std::max(x0, x_left), b = std::min(x1, x_right);
      if (b > a) {
        const ImU32 fill = by_label_ ? palette::label(s.label) : palette::source(s.source);
        if (s.flags & kSliceEndLost) {
          // Its end was lost (dropped events, or a chunk the reader had to skip): drawn
          // faded and hatched, open on the right, up to where the worker's record stops.
          draw_->AddRectFilled(ImVec2(a, y0), ImVec2(b, y1), palette::scale(fill, 0.45f));
          draw_->PushClipRect(ImVec2(a, y0), ImVec2(b, y1), true);
          for (float hx = a - (y1 - y0); hx < b; hx += 7.0f) {
            draw_->AddLine(ImVec2(hx, y1), ImVec2(hx + (y1 - y0), y0), palette::scale(fill, 0.8f), 1.5f);
          }
          draw_->PopClipRect();
          draw_->AddLine(ImVec2(a, y0), ImVec2(b, y0), palette::scale(fill, 0.8f));
          draw_->AddLine(ImVec2(a, y1 - 1), ImVec2(b, y1 - 1), palette::scale(fill, 0.8f));
        } else {
          draw_->AddRectFilled(ImVec2(a, y0), ImVec2(b, y1), fill);
          draw_->AddRect(ImVec2(a, y0), ImVec2(b, y1), palette::scale(fill, 0.55f));
        }
        if (s.flags & kSliceOffCpu) {
          // Time its thread waited for a CPU (preempted) while it ran: a bar along the
          // slice's bottom, as long as that share of the slice. The trace says how long,
          // not when, so the bar starts at the slice's start.
          const double share =
              static_cast<double>(track.off_cpu(s)) / static_cast<double>(std::max<Tick>(s_end - s.start, 1));
          const float ox1 = std::min(b, x0 + static_cast<float>(share * (x1 - x0)));
          if (ox1 > a) {
            const float oy0 = y1 - std::max(3.0f, (y1 - y0) * 0.35f);
            draw_->AddRectFilled(ImVec2(a, oy0), ImVec2(ox1, y1), palette::kOffCpu);
            draw_->AddLine(ImVec2(a, oy0), ImVec2(ox1, oy0), palette::kOffCpuEdge);
            if (view_layout_) view_layout_->add("off_cpu", static_cast<int>(worker), depth, a, oy0, ox1, y1);
          }
        }
        ++stats_.runs;
        if (b - a > 46) {
          // A task that named itself shows its label and its id; others their id, which
          // is what a user matches against push/steal events and their own logs.
          if (s.label != 0) {
            std::snprintf(label, sizeof label, "%s #%llx", model_.label_name(s.label).c_str(),
                          static_cast<unsigned long long>(s.id & 0xffffff));
          } else {
            std::snprintf(label, sizeof label, "#%llx", static_cast<unsigned long long>(s.id & 0xffffff));
          }
          const ImVec2 size = ImGui::CalcTextSize(label);
          if (size.x + 6 < b - a) {
            draw_->PushClipRect(ImVec2(a, y0), ImVec2(b, y1), true);
            draw_->AddText(ImVec2(a + 3, y0 + (y1 - y0 - size.y) / 2), IM_COL32(20, 20, 28, 255), label);
            draw_->PopClipRect();
          }
        }
      }
      ++i;
      continue;
    }
    // A cluster: every slice that starts within the next few pixels, skipped with one
    // binary search. Its extent is from the first start to the last end.
    const Tick limit_tick = model_.abs(map_.t(x0 + kMinSliceWidth));
    std::size_t j = std::max(i + 1, track.first_slice_starting_at_or_after(depth, limit_tick));
    // Slices of one depth never overlap, so only the last slice starting inside the
    // cluster can reach past it. If that one is wide enough to draw by itself it is not
    // part of the cluster: it is drawn next, in its own colour, with its name.
    if (j - 1 > i) {
      const TaskSlice& tail = row[j - 1];
      const Tick tail_end = tail.open() ? end_abs : tail.end;
      if (map_.x(model_.rel(std::max(tail_end, tail.start))) - map_.x(model_.rel(tail.start)) >= kMinSliceWidth) --j;
    }
    const TaskSlice& last = row[j - 1];
    const Tick last_end = last.open() ? end_abs : last.end;
    const float cx1 = std::max(map_.x(model_.rel(std::max(last_end, last.start))), x0 + 1.0f);
    const float a = std::max(x0, x_left), b = std::min(cx1, x_right);
    if (b > a) {
      const ImU32 one = by_label_ ? palette::label(s.label) : palette::source(s.source);
      draw_->AddRectFilled(ImVec2(a, y0), ImVec2(b, y1), j - i > 1 ? palette::kTaskCluster : one);
      ++stats_.runs;
    }
    ++stats_.queries;
    i = j;
  }
}

}  // namespace lantern::viewer
