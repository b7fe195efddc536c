// SPDX-License-Identifier: Apache-2.0
// palette_test.cpp - the viewer's colours (viewer/ui/palette.hpp): task labels get colours
// a reader tells apart (CIELAB distance, also under simulated colour blindness), one colour
// per event of the vocabulary, and the plots, arrows and legend keys read that one table.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "palette.hpp"

namespace {

using namespace lantern;
namespace palette = lantern::viewer::palette;

using Rgb = std::array<double, 3>;
Rgb rgb_of(ImU32 c) {
  return {static_cast<double>(c & 0xFF), static_cast<double>((c >> 8) & 0xFF), static_cast<double>((c >> 16) & 0xFF)};
}
double to_linear(double c) {
  c /= 255;
  return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}
double to_srgb(double c) {
  c = std::clamp(c, 0.0, 1.0);
  return 255 * (c <= 0.0031308 ? 12.92 * c : 1.055 * std::pow(c, 1 / 2.4) - 0.055);
}
// lab: CIELAB (D65) of an sRGB colour.
Rgb lab(const Rgb& c) {
  const double r = to_linear(c[0]), g = to_linear(c[1]), b = to_linear(c[2]);
  const double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, y = 0.2126 * r + 0.7152 * g + 0.0722 * b,
               z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116; };
  return {116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
}
// delta_e: CIE76, the Euclidean distance in CIELAB (about 2.3: just noticeable).
double delta_e(const Rgb& a, const Rgb& b) {
  const Rgb p = lab(a), q = lab(b);
  return std::sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
}
// simulate: how a dichromat sees it (Machado, Oliveira and Fernandes 2009, severity 1).
using Matrix = std::array<std::array<double, 3>, 3>;
constexpr Matrix kDeuteranopia = {
    {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}}};
constexpr Matrix kProtanopia = {
    {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}}};
Rgb simulate(const Rgb& c, const Matrix& m) {
  const Rgb l = {to_linear(c[0]), to_linear(c[1]), to_linear(c[2])};
  Rgb out{};
  for (int i = 0; i < 3; ++i) out[i] = to_srgb(m[i][0] * l[0] + m[i][1] * l[1] + m[i][2] * l[2]);
  return out;
}

constexpr std::uint32_t kLabels = std::size(palette::kLabel);

// Labels hashed to colours: any two of a program's first ten labels differ clearly, also
// for the two commonest colour blindnesses. (The demo's "echo read", "flood" and "parse"
// were near-identical pastels of a golden-angle hue sequence.)
TEST(Palette, LabelColoursArePairwiseDistinct) {
  ASSERT_GE(kLabels, 10u);
  for (std::uint32_t a = 1; a <= kLabels; ++a) {
    for (std::uint32_t b = a + 1; b <= kLabels; ++b) {
      const Rgb x = rgb_of(palette::label(a)), y = rgb_of(palette::label(b));
      EXPECT_GE(delta_e(x, y), 20.0) << "labels " << a << " and " << b;
      EXPECT_GE(delta_e(simulate(x, kDeuteranopia), simulate(y, kDeuteranopia)), 8.0)
          << "deuteranopia: " << a << ", " << b;
      EXPECT_GE(delta_e(simulate(x, kProtanopia), simulate(y, kProtanopia)), 8.0) << "protanopia: " << a << ", " << b;
    }
    // Not an unlabelled task's slate, nor a state's colour (the band above the task rows).
    EXPECT_GE(delta_e(rgb_of(palette::label(a)), rgb_of(palette::kUnlabelled)), 20.0) << a;
    for (int s = 0; s < trace::kStateCount; ++s)
      EXPECT_GE(delta_e(rgb_of(palette::label(a)), rgb_of(palette::state(s))), 15.0)
          << "label " << a << ", state " << s;
  }
  // Ids are dense from 1: the demo's labels (echo accept/read/write, fib, burst, flood,
  // lane task, parse, render, compress: ids 1-10) all differ.
  EXPECT_NE(palette::label(2), palette::label(6));  // echo read, flood
  EXPECT_NE(palette::label(2), palette::label(8));  // echo read, parse
  EXPECT_NE(palette::label(6), palette::label(8));  // flood, parse
}

// One table: every event of the vocabulary has its colour, and the names the views use
// are that table's entries (a help is one teal in arrows, plots, sources and docs).
TEST(Palette, EventColoursComeFromOneTable) {
  static_assert(std::size(palette::kEvent) == static_cast<std::size_t>(kEventCount));
  EXPECT_EQ(palette::kWake, palette::event(EventId::wake));
  EXPECT_EQ(palette::kHelp, palette::event(EventId::help));
  EXPECT_EQ(palette::kHelp, palette::source(static_cast<int>(TaskSource::help)));
  EXPECT_EQ(palette::kRelease, palette::event(EventId::release));
  EXPECT_EQ(palette::kIoCompletion, palette::event(EventId::io_complete));
  EXPECT_EQ(palette::kDrop, palette::event(EventId::dropped));
  // Red means the far end of the distance scale: no plotted event is red, and the lines of
  // one plot differ from each other.
  const Rgb remote = rgb_of(palette::distance(static_cast<int>(StealDistance::remote)));
  for (const EventId e : {EventId::task_begin, EventId::steal, EventId::help, EventId::wake, EventId::lane_pop,
                          EventId::release, EventId::io_submit, EventId::io_complete, EventId::not_ready}) {
    EXPECT_GE(delta_e(rgb_of(palette::event(e)), remote), 30.0) << name_of(e) << " looks like 'remote' red";
  }
  for (int lane = 0; lane < 8; ++lane) {
    EXPECT_GE(delta_e(rgb_of(palette::lane(lane)), remote), 30.0) << "lane " << lane;
    EXPECT_GE(delta_e(rgb_of(palette::lane(lane)), rgb_of(palette::event(EventId::not_ready))), 25.0) << lane;
  }
  const std::array<std::array<EventId, 3>, 3> plots = {{{EventId::help, EventId::wake, EventId::wake},
                                                        {EventId::task_begin, EventId::steal, EventId::steal},
                                                        {EventId::release, EventId::io_submit, EventId::io_complete}}};
  for (const auto& p : plots) {
    for (std::size_t i = 0; i < p.size(); ++i) {
      for (std::size_t j = i + 1; j < p.size(); ++j) {
        if (p[i] == p[j]) continue;
        EXPECT_GE(delta_e(rgb_of(palette::event(p[i])), rgb_of(palette::event(p[j]))), 20.0)
            << name_of(p[i]) << " and " << name_of(p[j]) << " share a plot";
      }
    }
  }
}

}  // namespace
