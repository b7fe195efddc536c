// SPDX-License-Identifier: Apache-2.0
// screenshot_check.cpp - checks a lantern-view screenshot against the trace it shows.
//
//   screenshot_check lanes  PNG LAYOUT TRACE    every worker lane's state band shows, column
//                                               by column, the state the trace says dominated
//   screenshot_check matrix PNG LAYOUT TRACE nonempty|empty
//                                               steal-matrix cells are lit exactly where the
//                                               trace has steals (and some are, or none are)
//   screenshot_check labels PNG LAYOUT TRACE    the legend has a swatch in each task label's
//                                               colour, task rows show every label wide enough
//                                               to see, and release arrows are drawn
//   screenshot_check wide PNG LAYOUT TRACE      every slice >= 8 px is drawn in its own colour
//                                               with its name, never inside a grey cluster
//   screenshot_check mix PNG LAYOUT TRACE       every state present in a column shows in it
//   screenshot_check lost_end PNG LAYOUT TRACE  a slice whose end was lost stops where the
//                                               record does, drawn unlike a complete one
//   screenshot_check damaged PNG LAYOUT TRACE   a damaged trace: no 'all good' green, red text
//   screenshot_check whole PNG LAYOUT TRACE     the window shows the whole trace, data to its end
//   screenshot_check progress PNG LAYOUT TRACE  a progress indicator (taken while loading)
//   screenshot_check layout PNG LAYOUT TRACE    latency and ruler labels unclipped and apart,
//                                               steal-matrix text inside its panel, legend
//                                               colours distinct
//   screenshot_check highlight PNG LAYOUT TRACE the compare view's notable rows (and only
//                                               they) are drawn highlighted
//
// LAYOUT is what `lantern-view --layout` wrote: where lanes and cells were drawn. The
// expectation is computed here from the trace with the model library; the colours are
// the palette's. Exit 0 when the picture matches, 1 with a report when it does not.
#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "lantern/viewer/session.hpp"
#include "palette.hpp"
#include "view_state.hpp"

namespace {

using namespace lantern::viewer;

struct Image {
  int w = 0, h = 0;
  std::vector<unsigned char> rgba;
  void at(int x, int y, int* r, int* g, int* b) const {
    const unsigned char* p =
        &rgba[(static_cast<std::size_t>(y) * static_cast<std::size_t>(w) + static_cast<std::size_t>(x)) * 4];
    *r = p[0], *g = p[1], *b = p[2];
  }
};

struct Rect {
  int a, b;
  float x0, y0, x1, y1;
};

bool load_image(const char* path, Image* out) {
  int n = 0;
  unsigned char* data = stbi_load(path, &out->w, &out->h, &n, 4);
  if (!data) return false;
  out->rgba.assign(data, data + static_cast<std::size_t>(out->w) * static_cast<std::size_t>(out->h) * 4);
  stbi_image_free(data);
  return true;
}

// classify: the state whose palette colour is nearest (within a tolerance), else -1.
int classify(int r, int g, int b) {
  int best = -1, best_d = 40 * 40 * 3;
  for (int s = 0; s < lantern::trace::kStateCount; ++s) {
    const ImU32 c = palette::kState[s];
    const int dr = r - static_cast<int>(c & 0xFF), dg = g - static_cast<int>((c >> 8) & 0xFF),
              db = b - static_cast<int>((c >> 16) & 0xFF);
    const int d = dr * dr + dg * dg + db * db;
    if (d < best_d) best_d = d, best = s;
  }
  return best;
}

int check_lanes(const Image& img, const std::vector<Rect>& lanes, double start, double end, double limit,
                const Model& m) {
  int failures = 0;
  if (lanes.size() != m.worker_count()) {
    std::printf("FAIL: %zu lanes drawn for %u workers\n", lanes.size(), m.worker_count());
    ++failures;
  }
  for (const Rect& lane : lanes) {
    const auto w = static_cast<std::uint32_t>(lane.a);
    const int y = static_cast<int>((lane.y0 + lane.y1) / 2);
    const double tpp = (end - start) / static_cast<double>(lane.x1 - lane.x0);
    int columns = 0, agree = 0;
    // A worker that stopped (its `stopping` state event) is drawn up to its stop and no
    // further: the summary counts none of its time after it (Analysis::span_end).
    const bool stopped = m.track(w).stopped_at() != lantern::analysis::kOpenEnd;
    const double stop = m.rel(m.analysis().span_end(w));
    int after_stop = 0, drawn_after_stop = 0;
    std::map<int, int> expected_columns, seen_columns;
    for (int x = static_cast<int>(lane.x0) + 1; x < static_cast<int>(lane.x1) - 1 && x < img.w; ++x) {
      const double a = start + (x - lane.x0) * tpp, b = a + tpp;
      if (b > limit) break;  // past the playhead nothing is drawn
      if (stopped && a >= stop + 1) {
        int r, g, bl;
        img.at(x, y, &r, &g, &bl);
        ++after_stop;
        drawn_after_stop += classify(r, g, bl) >= 0;
      }
      const Occupancy o = m.track(w).occupancy(m.abs(a), m.abs(b), m.last_tick());
      int expected = -1;
      double most = 0;
      for (int s = 0; s < lantern::trace::kStateCount; ++s) {
        if (o[s] > most) most = o[s], expected = s;
      }
      // Columns split between two states within a pixel can go either way.
      if (expected >= 0 && most < 0.75 * (b - a)) continue;
      int r, g, bl;
      img.at(x, y, &r, &g, &bl);
      const int seen = classify(r, g, bl);
      ++columns;
      agree += seen == expected;
      ++expected_columns[expected];
      ++seen_columns[seen];
    }
    const double share = columns ? static_cast<double>(agree) / columns : 0;
    std::printf("lane %u: %d columns, %.1f%% agree;", w, columns, 100 * share);
    for (int s = 0; s < lantern::trace::kStateCount; ++s) {
      std::printf(" %s %d/%d", lantern::trace::kStateNames[s].data(), seen_columns[s], expected_columns[s]);
    }
    if (stopped) std::printf("; stopped: %d of %d columns after the stop drawn", drawn_after_stop, after_stop);
    std::printf("\n");
    if (drawn_after_stop > 0) {
      std::printf("FAIL: lane %u draws a state after its worker stopped\n", w);
      ++failures;
    }
    if (columns < 50 || share < 0.9) {
      std::printf("FAIL: lane %u does not show the trace's states (need >= 90%% of columns)\n", w);
      ++failures;
    }
    for (int s = 0; s < lantern::trace::kStateCount; ++s) {
      if (expected_columns[s] >= 3 && seen_columns[s] == 0) {
        std::printf("FAIL: lane %u never shows %s, which dominates %d columns\n", w,
                    lantern::trace::kStateNames[s].data(), expected_columns[s]);
        ++failures;
      }
    }
  }
  return failures;
}

int classify_at(const Image& img, int x, int y) {
  int r, g, b;
  img.at(x, y, &r, &g, &b);
  return classify(r, g, b);
}

// near: whether a pixel is within `tolerance` (per channel, summed squares) of a colour.
bool near(const Image& img, int x, int y, ImU32 c, int tolerance = 30) {
  int r, g, b;
  img.at(x, y, &r, &g, &b);
  const int dr = r - static_cast<int>(c & 0xFF), dg = g - static_cast<int>((c >> 8) & 0xFF),
            db = b - static_cast<int>((c >> 16) & 0xFF);
  return dr * dr + dg * dg + db * db <= tolerance * tolerance;
}

int check_labels(const Image& img, const std::vector<Rect>& swatches, const std::vector<Rect>& rows, double start,
                 double end, const Model& m) {
  int failures = 0;
  if (m.label_uses().empty()) std::printf("FAIL: the trace has no labelled tasks\n"), ++failures;
  // 1. The legend: one swatch per label, in the label's colour.
  for (const auto& [id, uses] : m.label_uses()) {
    auto it =
        std::find_if(swatches.begin(), swatches.end(), [&](const Rect& r) { return r.a == static_cast<int>(id); });
    if (it == swatches.end()) {
      std::printf("FAIL: no legend swatch for label %u (%s)\n", id, m.label_name(id).c_str());
      ++failures;
      continue;
    }
    const int x = static_cast<int>((it->x0 + it->x1) / 2), y = static_cast<int>((it->y0 + it->y1) / 2);
    if (!near(img, x, y, palette::label(id))) {
      std::printf("FAIL: the legend swatch of label %u (%s) is not in its colour\n", id, m.label_name(id).c_str());
      ++failures;
    }
  }
  // 2. The task rows: every label that has a slice at least 8 px wide in the window must
  //    colour some pixels of the row it is on.
  std::map<std::uint32_t, int> expected, seen;
  for (const Rect& row : rows) {
    const auto w = static_cast<std::uint32_t>(row.a);
    if (w >= m.worker_count() || row.b >= m.track(w).depth_count()) continue;
    const double px_per_tick = static_cast<double>(row.x1 - row.x0) / (end - start);
    for (const TaskSlice& s : m.track(w).slices(row.b)) {
      if (s.label == 0 || s.open()) continue;
      const double x0 = std::max<double>(row.x0, row.x0 + (m.rel(s.start) - start) * px_per_tick);
      const double x1 = std::min<double>(row.x1, row.x0 + (m.rel(s.end) - start) * px_per_tick);
      if (x1 - x0 < 8) continue;
      ++expected[s.label];
      const int y = static_cast<int>((row.y0 + row.y1) / 2) - 3;  // above the name drawn on it
      for (int x = static_cast<int>(x0) + 2; x < static_cast<int>(x1) - 2 && x < img.w; ++x) {
        if (near(img, x, y, palette::label(s.label))) {
          ++seen[s.label];
          break;
        }
      }
    }
  }
  for (const auto& [id, n] : expected) {
    std::printf("label %u (%s): %d of %d wide slices drawn in its colour\n", id, m.label_name(id).c_str(), seen[id], n);
    if (seen[id] < n * 9 / 10) {
      std::printf("FAIL: label %u's slices are not drawn in its colour\n", id);
      ++failures;
    }
  }
  if (expected.empty()) std::printf("FAIL: no labelled slice is wide enough to check\n"), ++failures;
  // 3. Release arrows: the trace has releases between tasks in the window, so some pixels
  //    of the lanes are in the release colour.
  int release_pixels = 0;
  for (const Rect& row : rows)
    for (int y = static_cast<int>(row.y0) - 24; y < static_cast<int>(row.y1) + 4; ++y)
      for (int x = static_cast<int>(row.x0); x < static_cast<int>(row.x1) && x < img.w; ++x)
        if (y >= 0 && y < img.h && near(img, x, y, palette::kRelease, 40)) ++release_pixels;
  std::printf("release arrows: %d pixels\n", release_pixels);
  if (m.events_of(lantern::EventId::release) > 0 && release_pixels < 20)
    std::printf("FAIL: the trace has releases but no release arrow is drawn\n"), ++failures;
  return failures;
}

int check_matrix(const Image& img, const std::vector<Rect>& cells, const Model& m, bool want_steals) {
  int failures = 0, lit = 0;
  std::uint64_t total = 0;
  for (const auto v : m.steals_by_distance()) total += v;
  for (const Rect& c : cells) {
    const int x = static_cast<int>(c.x0 + 0.7f * (c.x1 - c.x0)), y = static_cast<int>(c.y0 + 0.7f * (c.y1 - c.y0));
    int r, g, b;
    img.at(x, y, &r, &g, &b);
    const double luminance = 0.299 * r + 0.587 * g + 0.114 * b;
    const bool bright = luminance > 50;
    const bool has = m.steal_count(static_cast<std::uint32_t>(c.a), static_cast<std::uint32_t>(c.b)) > 0;
    lit += bright;
    if (bright != has) {
      std::printf("FAIL: cell thief %d victim %d is %s but has %llu steals\n", c.a, c.b, bright ? "lit" : "dark",
                  static_cast<unsigned long long>(
                      m.steal_count(static_cast<std::uint32_t>(c.a), static_cast<std::uint32_t>(c.b))));
      ++failures;
    }
  }
  std::printf("matrix: %zu cells, %d lit, %llu steals in the trace\n", cells.size(), lit,
              static_cast<unsigned long long>(total));
  if (cells.empty()) std::printf("FAIL: no matrix cells in the layout\n"), ++failures;
  if (want_steals && (lit == 0 || total == 0)) std::printf("FAIL: expected a non-empty steal matrix\n"), ++failures;
  if (!want_steals && (lit != 0 || total != 0)) std::printf("FAIL: expected an empty steal matrix\n"), ++failures;
  return failures;
}

// slice_fill: the colour a slice is drawn in (by label or by source, as the layout says).
ImU32 slice_fill(const TaskSlice& s, bool by_label) {
  return by_label ? palette::label(s.label) : palette::source(s.source);
}

// check_wide (scenario wide_slices): every slice at least 8 px wide in the window is drawn by itself:
// >= 90% of its columns in its own colour, none in the cluster grey, and its name on it.
int check_wide(const Image& img, const std::vector<Rect>& rows, double start, double end, bool by_label,
               const Model& m) {
  int failures = 0, wide = 0;
  for (const Rect& row : rows) {
    const auto w = static_cast<std::uint32_t>(row.a);
    if (w >= m.worker_count() || row.b >= m.track(w).depth_count()) continue;
    const double px_per_tick = static_cast<double>(row.x1 - row.x0) / (end - start);
    for (const TaskSlice& s : m.track(w).slices(row.b)) {
      if (s.open()) continue;
      const double x0 = std::max<double>(row.x0, row.x0 + (m.rel(s.start) - start) * px_per_tick);
      const double x1 = std::min<double>(row.x1, row.x0 + (m.rel(s.end) - start) * px_per_tick);
      if (x1 - x0 < 8) continue;
      ++wide;
      int columns = 0, own = 0, grey = 0, text = 0;
      const int y = static_cast<int>(row.y0) + 2;  // above the name drawn on it
      for (int x = static_cast<int>(x0) + 2; x < static_cast<int>(x1) - 2 && x < img.w; ++x) {
        ++columns;
        own += near(img, x, y, slice_fill(s, by_label));
        grey += near(img, x, y, palette::kTaskCluster, 12);
        for (int yy = static_cast<int>(row.y0) + 2; yy < static_cast<int>(row.y1) - 2; ++yy)
          text += near(img, x, yy, IM_COL32(20, 20, 28, 255), 40);
      }
      std::printf("worker %u depth %d: slice %s..%s (%.0f px): %d/%d columns in its colour, %d grey, %d name pixels\n",
                  w, row.b, format_duration(m.ticks_to_ns(m.rel(s.start))).c_str(),
                  format_duration(m.ticks_to_ns(m.rel(s.end))).c_str(), x1 - x0, own, columns, grey, text);
      if (own < columns * 9 / 10 || grey > columns / 20)
        std::printf("FAIL: a wide slice is not drawn in its own colour\n"), ++failures;
      if (x1 - x0 > 200 && text < 10) std::printf("FAIL: a wide slice carries no name\n"), ++failures;
    }
  }
  if (wide == 0) std::printf("FAIL: no slice is wide enough to check\n"), ++failures;
  return failures;
}

// check_mix (scenario state_mix): in every column of a lane band, every state the worker spent time
// in over that column shows somewhere in the column.
int check_mix(const Image& img, const std::vector<Rect>& lanes, double start, double end, double limit,
              const Model& m) {
  int failures = 0;
  for (const Rect& lane : lanes) {
    const auto w = static_cast<std::uint32_t>(lane.a);
    const double tpp = (end - start) / static_cast<double>(lane.x1 - lane.x0);
    int expected = 0, seen = 0;
    for (int x = static_cast<int>(lane.x0) + 1; x < static_cast<int>(lane.x1) - 1 && x < img.w; ++x) {
      const double a = start + (x - lane.x0) * tpp, b = a + tpp;
      if (b > limit) break;
      const Occupancy o = m.track(w).occupancy(m.abs(a), m.abs(b), m.last_tick());
      for (int s = 0; s < lantern::trace::kStateCount; ++s) {
        if (!(o[s] > 0.002 * (b - a))) continue;  // present for at least 0.2% of the column
        ++expected;
        bool found = false;
        for (int y = static_cast<int>(lane.y0); y < static_cast<int>(lane.y1) && !found; ++y)
          found = classify_at(img, x, y) == s;
        seen += found;
      }
    }
    std::printf("lane %u: %d of %d (column, state present) pairs visible\n", w, seen, expected);
    if (expected == 0)
      std::printf("FAIL: lane %u has nothing to check\n", w), ++failures;
    else if (seen < expected * 95 / 100)
      std::printf("FAIL: lane %u hides states that are present\n", w), ++failures;
  }
  return failures;
}

// check_lost_end (scenario damaged): a slice whose end was lost ends where the worker's record
// stops (not across the rest of the trace), and is drawn differently from a whole one.
int check_lost_end(const Image& img, const std::vector<Rect>& rows, double start, double end, bool by_label,
                   const Model& m) {
  int failures = 0, lost = 0;
  for (const Rect& row : rows) {
    const auto w = static_cast<std::uint32_t>(row.a);
    if (w >= m.worker_count() || row.b >= m.track(w).depth_count()) continue;
    const auto& list = m.track(w).slices(row.b);
    const double px_per_tick = static_cast<double>(row.x1 - row.x0) / (end - start);
    const int y = static_cast<int>((row.y0 + row.y1) / 2);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const TaskSlice& s = list[i];
      if (!(s.flags & kSliceEndLost) || s.open()) continue;
      ++lost;
      const ImU32 fill = slice_fill(s, by_label);
      const double xe = row.x0 + (m.rel(s.end) - start) * px_per_tick;
      const double xn = i + 1 < list.size() ? row.x0 + (m.rel(list[i + 1].start) - start) * px_per_tick : row.x1;
      int after = 0, full = 0, columns = 0;
      for (int x = static_cast<int>(xe) + 3; x < static_cast<int>(xn) - 3 && x < img.w; ++x)
        after += near(img, x, y, fill, 40);
      const double xs = row.x0 + (m.rel(s.start) - start) * px_per_tick;
      for (int x = static_cast<int>(xs) + 2; x < static_cast<int>(xe) - 2; ++x)
        ++columns, full += near(img, x, y, fill, 12);
      std::printf(
          "worker %u: slice with a lost end, %.0f..%.0f px; %d columns after its end in its colour; %d/%d drawn as a "
          "whole slice\n",
          w, xs, xe, after, full, columns);
      if (after > 2) std::printf("FAIL: the slice is drawn past where its record stops\n"), ++failures;
      if (columns > 0 && full > columns / 2) std::printf("FAIL: the slice is drawn like a complete one\n"), ++failures;
    }
  }
  if (lost == 0) std::printf("FAIL: the trace has no slice with a lost end\n"), ++failures;
  return failures;
}

// count_near: pixels within tolerance of a colour, in the whole picture.
int count_near(const Image& img, ImU32 c, int tolerance) {
  int n = 0;
  for (int y = 0; y < img.h; ++y)
    for (int x = 0; x < img.w; ++x) n += near(img, x, y, c, tolerance);
  return n;
}

// check_damaged (scenario damaged): a damaged trace is never called fine in green; it says so in red.
int check_damaged(const Image& img, const Model& m) {
  int failures = 0;
  if (!m.has_trace_errors()) std::printf("FAIL: the trace has no errors\n"), ++failures;
  const int green = count_near(img, palette::kGood, 30), red = count_near(img, palette::kError, 30);
  std::printf("damaged trace: %d pixels in the 'good' green, %d in the error red\n", green, red);
  if (green > 10)
    std::printf("FAIL: the damaged trace is reported in green ('No events dropped.' or 'No warnings.')\n"), ++failures;
  if (red < 50) std::printf("FAIL: the damage is not reported in red\n"), ++failures;
  return failures;
}

// check_whole (scenario loading): the window covers the whole trace, and every lane shows data near
// its end.
int check_whole(const Image& img, const std::vector<Rect>& lanes, double start, double end, const Model& m) {
  int failures = 0;
  const double first = m.rel(m.first_tick()), last = m.rel(m.last_tick());
  std::printf("window %.0f..%.0f ticks; trace %.0f..%.0f\n", start, end, first, last);
  if (!(start <= first && end >= last)) std::printf("FAIL: the window does not show the whole trace\n"), ++failures;
  if (end - start > 1.2 * (last - first)) std::printf("FAIL: the window is much wider than the trace\n"), ++failures;
  for (const Rect& lane : lanes) {
    const double t = last - 0.03 * (last - first);
    const int x = static_cast<int>(lane.x0 + (t - start) / (end - start) * (lane.x1 - lane.x0));
    const int c = x >= 0 && x < img.w ? classify_at(img, x, static_cast<int>((lane.y0 + lane.y1) / 2)) : -1;
    if (c < 0) std::printf("FAIL: lane %d shows no state near the end of the trace\n", lane.a), ++failures;
  }
  return failures;
}

// check_progress (scenario loading): while loading, a progress indicator with text or a fill.
int check_progress(const Image& img, const std::vector<Rect>& bars) {
  if (bars.empty()) return std::printf("FAIL: no progress indicator while loading\n"), 1;
  const Rect& r = bars.front();
  int bright = 0;
  for (int y = static_cast<int>(r.y0); y < static_cast<int>(r.y1); ++y)
    for (int x = static_cast<int>(r.x0); x < static_cast<int>(r.x1); ++x) {
      int cr, cg, cb;
      img.at(x, y, &cr, &cg, &cb);
      bright += 0.299 * cr + 0.587 * cg + 0.114 * cb > 140;
    }
  std::printf("progress indicator: %d bright pixels\n", bright);
  if (bright < 15) return std::printf("FAIL: the progress indicator is empty\n"), 1;
  return 0;
}

// check_highlight (scenario compare): every row the compare view marks notable is drawn on the
// highlight background (orange over the table's row colour), and other rows are not.
int check_highlight(const Image& img, const std::vector<Rect>& notable, const std::vector<Rect>& plain) {
  auto orange = [&](const Rect& r) {
    // Along the row from its first cell: mostly warm pixels (the highlight's orange over
    // the dark table; text glyphs aside) on a highlighted row, almost none on a plain one.
    int warm = 0, n = 0;
    const int y = static_cast<int>((r.y0 + r.y1) / 2);
    if (y < 0 || y >= img.h || r.x0 < 0) return false;  // scrolled out of the picture: not shown lit
    for (int x = static_cast<int>(r.x0); x < static_cast<int>(r.x0) + 120 && x < img.w; ++x, ++n) {
      int cr, cg, cb;
      img.at(x, y, &cr, &cg, &cb);
      warm += cr > cb + 25 && cg > cb + 10;
    }
    return warm * 2 > n;
  };
  int failures = 0, lit = 0, unlit = 0;
  for (const Rect& r : notable) lit += orange(r);
  for (const Rect& r : plain) unlit += !orange(r);
  std::printf("highlight: %d of %zu notable rows highlighted, %d of %zu other rows plain\n", lit, notable.size(), unlit,
              plain.size());
  if (notable.empty()) std::printf("FAIL: no notable rows\n"), ++failures;
  if (lit != static_cast<int>(notable.size())) std::printf("FAIL: a notable row is not highlighted\n"), ++failures;
  if (unlit != static_cast<int>(plain.size())) std::printf("FAIL: an unchanged row is highlighted\n"), ++failures;
  return failures;
}

struct Key {
  int group, r, g, b;
  std::string name;
};

bool inside(const Rect& in, const Rect& r, float slack = 1) {
  return r.x0 >= in.x0 - slack && r.x1 <= in.x1 + slack && r.y0 >= in.y0 - slack && r.y1 <= in.y1 + slack;
}

// check_layout (scenario layout): text inside its panel and not over other text; legend keys of
// distinct meanings in distinct colours; steal-matrix totals inside their panel.
int check_layout(const Image& img, const std::map<std::string, std::vector<Rect>>& items,
                 const std::vector<Key>& keys) {
  int failures = 0;
  auto get = [&](const char* what) {
    auto it = items.find(what);
    return it == items.end() ? std::vector<Rect>{} : it->second;
  };
  // Latency panels: every label inside a panel and inside the picture, none overlapping.
  const auto panels = get("latency_panel"), texts = get("latency_text");
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const Rect& t = texts[i];
    bool in = t.x0 >= 0 && t.x1 <= img.w;
    bool in_panel = false;
    for (const Rect& p : panels) in_panel |= inside(p, t, 2);
    if (!in || !in_panel)
      std::printf("FAIL: latency text at %.0f,%.0f-%.0f,%.0f is clipped\n", t.x0, t.y0, t.x1, t.y1), ++failures;
    for (std::size_t j = i + 1; j < texts.size(); ++j) {
      const Rect& u = texts[j];
      if (t.x0 < u.x1 && u.x0 < t.x1 && t.y0 < u.y1 && u.y0 < t.y1) {
        std::printf("FAIL: latency texts overlap at %.0f,%.0f and %.0f,%.0f\n", t.x0, t.y0, u.x0, u.y0);
        ++failures;
      }
    }
  }
  // Percentile labels (p50, p90, p99) above the bars, never over them.
  for (const Rect& t : texts) {
    if (t.a != 1) continue;
    for (const Rect& b : get("latency_bars")) {
      if (t.x0 < b.x1 && b.x0 < t.x1 && t.y0 < b.y1 && b.y0 < t.y1 - 1)
        std::printf("FAIL: a percentile label at %.0f,%.0f is over the bars\n", t.x0, t.y0), ++failures;
    }
  }
  std::printf("latency: %zu panels, %zu labels\n", panels.size(), texts.size());
  // Ruler labels inside the ruler.
  const auto rulers = get("ruler"), ruler_labels = get("ruler_label");
  for (const Rect& t : ruler_labels) {
    bool ok = false;
    for (const Rect& r : rulers) ok |= t.x0 >= r.x0 && t.x1 <= r.x1 + 1;
    if (!ok) std::printf("FAIL: a ruler label at x %.0f-%.0f is clipped\n", t.x0, t.x1), ++failures;
  }
  for (std::size_t i = 0; i < ruler_labels.size(); ++i) {  // apart, never "249.95 ms250.00 ms"
    for (std::size_t j = i + 1; j < ruler_labels.size(); ++j) {
      const Rect &t = ruler_labels[i], &u = ruler_labels[j];
      if (t.y0 == u.y0 && t.x0 < u.x1 + 4 && u.x0 < t.x1 + 4)
        std::printf("FAIL: ruler labels at x %.0f and %.0f run together\n", t.x0, u.x0), ++failures;
    }
  }
  std::printf("ruler: %zu labels\n", ruler_labels.size());
  // Steal matrix totals inside the panel.
  const auto mp = get("matrix_panel"), mt = get("matrix_totals");
  for (std::size_t i = 0; i < mt.size() && i < mp.size(); ++i) {
    if (mt[i].x1 > mp[i].x1 + 1)
      std::printf("FAIL: the steal matrix's side text runs %.0f px past its panel\n", mt[i].x1 - mp[i].x1), ++failures;
  }
  // Legend: distinct meanings, distinct colours (squared distance over 35^2).
  for (std::size_t i = 0; i < keys.size(); ++i) {
    for (std::size_t j = i + 1; j < keys.size(); ++j) {
      const Key &a = keys[i], &b = keys[j];
      if (a.name == b.name) continue;
      const int d = (a.r - b.r) * (a.r - b.r) + (a.g - b.g) * (a.g - b.g) + (a.b - b.b) * (a.b - b.b);
      if (d < 35 * 35)
        std::printf("FAIL: legend keys '%s' and '%s' share a colour\n", a.name.c_str(), b.name.c_str()), ++failures;
    }
  }
  std::printf("legend: %zu keys\n", keys.size());
  // The legend's arrow keys and the plots' lines read one colour table (palette::event):
  // a wake, help or release is one colour wherever it is drawn.
  const std::map<std::string, lantern::EventId> arrow_keys = {{"wake", lantern::EventId::wake},
                                                              {"help", lantern::EventId::help},
                                                              {"release", lantern::EventId::release},
                                                              {"IO done", lantern::EventId::io_complete}};
  auto same = [](int r, int g, int b, ImU32 c) {
    return r == static_cast<int>(c & 0xFF) && g == static_cast<int>((c >> 8) & 0xFF) &&
           b == static_cast<int>((c >> 16) & 0xFF);
  };
  for (const Key& k : keys) {
    const auto it = arrow_keys.find(k.name);
    if (k.group == 1 && it != arrow_keys.end() && !same(k.r, k.g, k.b, lantern::viewer::palette::event(it->second)))
      std::printf("FAIL: the legend's '%s' is not the %s colour of the palette\n", k.name.c_str(), k.name.c_str()),
          ++failures;
  }
  using namespace lantern::viewer;
  const std::map<int, lantern::EventId> series_event = {{kSeriesTasks, lantern::EventId::task_begin},
                                                        {kSeriesSteals, lantern::EventId::steal},
                                                        {kSeriesHelps, lantern::EventId::help},
                                                        {kSeriesWakes, lantern::EventId::wake},
                                                        {kSeriesReleases, lantern::EventId::release},
                                                        {kSeriesIoSubmits, lantern::EventId::io_submit},
                                                        {kSeriesIoCompletions, lantern::EventId::io_complete},
                                                        {kSeriesNotReady, lantern::EventId::not_ready},
                                                        {kSeriesQueuedAll, lantern::EventId::lane_pop}};
  const auto plot_keys = get("plot_key");
  for (std::size_t i = 0; i < plot_keys.size(); ++i) {
    const Rect& k = plot_keys[i];
    const auto it = series_event.find(k.a);
    const ImU32 c = static_cast<ImU32>(k.b);
    if (it != series_event.end() && c != (palette::event(it->second) & 0x00FFFFFFu))
      std::printf("FAIL: plot line %d is not drawn in its event's colour\n", k.a), ++failures;
    if (k.x0 < 0 || k.x1 > img.w) std::printf("FAIL: plot key %d is cut by the picture's edge\n", k.a), ++failures;
    for (std::size_t j = i + 1; j < plot_keys.size(); ++j) {
      const Rect& u = plot_keys[j];
      if (k.x0 < u.x1 && u.x0 < k.x1 && k.y0 < u.y1 && u.y0 < k.y1)
        std::printf("FAIL: plot keys %d and %d overlap\n", k.a, u.a), ++failures;
    }
  }
  std::printf("plots: %zu keys\n", plot_keys.size());
  if (texts.empty() && ruler_labels.empty() && mt.empty() && plot_keys.empty())
    std::printf("FAIL: nothing to check in the layout\n"), ++failures;
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: screenshot_check lanes|matrix|labels PNG LAYOUT TRACE [nonempty|empty]\n");
    return 2;
  }
  const std::string mode = argv[1];
  Image img;
  if (!load_image(argv[2], &img)) {
    std::printf("FAIL: cannot read the picture %s\n", argv[2]);
    return 1;
  }
  std::ifstream layout(argv[3]);
  std::vector<Rect> lanes, cells, swatches, rows, bars, notable, plain;
  std::map<std::string, std::vector<Rect>> items;
  std::vector<Key> keys;
  int by_label = 0;
  double start = 0, end = 0, limit = HUGE_VAL;
  for (std::string line; std::getline(layout, line);) {
    std::istringstream in(line);
    std::string what;
    in >> what;
    Rect r{};
    if (what == "timeline_window") {
      std::string limit_text;
      in >> start >> end >> limit_text;
      limit = limit_text.empty() || limit_text == "inf" ? HUGE_VAL : std::strtod(limit_text.c_str(), nullptr);
    }
    if (what == "lane_band" && in >> r.a >> r.b >> r.x0 >> r.y0 >> r.x1 >> r.y1) lanes.push_back(r);
    if (what == "matrix_cell" && in >> r.a >> r.b >> r.x0 >> r.y0 >> r.x1 >> r.y1) cells.push_back(r);
    if (what == "label_swatch" && in >> r.a >> r.b >> r.x0 >> r.y0 >> r.x1 >> r.y1) swatches.push_back(r);
    if (what == "task_row" && in >> r.a >> r.b >> r.x0 >> r.y0 >> r.x1 >> r.y1) rows.push_back(r);
    if (what == "loading_progress" && in >> r.a >> r.b >> r.x0 >> r.y0 >> r.x1 >> r.y1) bars.push_back(r);
    if (what == "task_colours") in >> by_label;
    if (what == "legend_key") {
      Key k{};
      float kx, ky;
      if (in >> k.group >> k.r >> k.g >> k.b >> kx >> ky) {
        std::getline(in >> std::ws, k.name);
        keys.push_back(k);
      }
    }
    for (const char* generic :
         {"latency_panel", "latency_text", "latency_bars", "ruler", "ruler_label", "matrix_panel", "matrix_totals"}) {
      if (what == generic && in >> r.a >> r.b >> r.x0 >> r.y0 >> r.x1 >> r.y1) items[what].push_back(r);
    }
    if (what == "plot_key") {  // id r g b x0 y0 x1 y1 name: b holds the colour as 0xBBGGRR
      int id, cr, cg, cb;
      if (in >> id >> cr >> cg >> cb >> r.x0 >> r.y0 >> r.x1 >> r.y1) {
        r.a = id;
        r.b = cr | cg << 8 | cb << 16;
        items[what].push_back(r);
      }
    }
    if (what == "compare_notable" && in >> r.a >> r.b >> r.x0 >> r.y0 >> r.x1 >> r.y1) notable.push_back(r);
    if (what == "compare_row" && in >> r.a >> r.b >> r.x0 >> r.y0 >> r.x1 >> r.y1) plain.push_back(r);
  }
  auto session = Session::open_file(argv[4]);
  session->wait_until_finished();
  std::lock_guard<std::mutex> lock(session->mutex());
  const Model& m = session->model();
  int failures = 0;
  if (mode == "lanes") {
    if (!(end > start)) std::printf("FAIL: no timeline window in the layout\n"), ++failures;
    failures += check_lanes(img, lanes, start, end, limit, m);
  } else if (mode == "labels") {
    if (!(end > start)) std::printf("FAIL: no timeline window in the layout\n"), ++failures;
    failures += check_labels(img, swatches, rows, start, end, m);
  } else if (mode == "wide") {
    failures += check_wide(img, rows, start, end, by_label != 0, m);
  } else if (mode == "mix") {
    failures += check_mix(img, lanes, start, end, limit, m);
  } else if (mode == "lost_end") {
    failures += check_lost_end(img, rows, start, end, by_label != 0, m);
  } else if (mode == "damaged") {
    failures += check_damaged(img, m);
  } else if (mode == "whole") {
    if (!(end > start)) std::printf("FAIL: no timeline window in the layout\n"), ++failures;
    failures += check_whole(img, lanes, start, end, m);
  } else if (mode == "layout") {
    failures += check_layout(img, items, keys);
  } else if (mode == "highlight") {
    failures += check_highlight(img, notable, plain);
  } else if (mode == "progress") {
    failures += check_progress(img, bars);
  } else if (mode == "matrix") {
    failures += check_matrix(img, cells, m, argc > 5 && std::string(argv[5]) == "nonempty");
  } else {
    std::fprintf(stderr, "screenshot_check: unknown mode %s\n", mode.c_str());
    return 2;
  }
  std::printf("%s\n", failures ? "screenshot check FAILED" : "screenshot check passed");
  return failures ? 1 : 0;
}
