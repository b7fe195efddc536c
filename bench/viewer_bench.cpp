// SPDX-License-Identifier: Apache-2.0
// viewer_bench.cpp - lantern-view on a 10,000,000-event trace: time to the first frame
// and the CPU time to build one frame (ImGui, no GPU) fully zoomed out and zoomed in.
//
// The frames are built headless (an ImGui context with no window), exactly as
// lantern-view builds them: ViewerApp::frame between NewFrame and Render. The GPU's part
// (uploading and drawing the vertex buffers) is excluded, as the target says.
// The comparison: the same zoomed-out timeline drawn naively, one rectangle per state
// interval, which is what the level-of-detail painter avoids.
//
//   viewer_bench [--events N] [--workers W] [--trace FILE] [--frames N]   (--help: what each does)
#include <imgui.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lantern/tools/program_cli.hpp"
#include "lantern/viewer/synthetic_trace.hpp"
#include "viewer_app.hpp"

namespace {

using namespace lantern::viewer;
using Clock = std::chrono::steady_clock;

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size())));
  return v[i];
}

// frame: one ImGui frame with the app's UI; returns its CPU time in ms.
double frame(ViewerApp& app) {
  const double t0 = thread_cpu_ms();
  ImGui::NewFrame();
  app.frame(1.0 / 60);
  ImGui::Render();
  return thread_cpu_ms() - t0;
}

struct Figures {
  double median, p90, max;
};

Figures frames(ViewerApp& app, int n) {
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) ms.push_back(frame(app));
  return {percentile(ms, 50), percentile(ms, 90), *std::max_element(ms.begin(), ms.end())};
}

// naive_zoomed_out: one rectangle per state interval and per task slice (the rows the
// timeline shows), the O(events) way.
double naive_zoomed_out(Session& session) {
  std::lock_guard<std::mutex> lock(session.mutex());
  const Model& m = session.model();
  const double t0 = thread_cpu_ms();
  ImGui::NewFrame();
  ImGui::Begin("naive");
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const double span = m.rel(m.last_tick()) - m.rel(m.first_tick());
  for (std::uint32_t w = 0; w < m.worker_count(); ++w) {
    const WorkerTrack& t = m.track(w);
    for (std::size_t i = 0; i < t.interval_count(); ++i) {
      const float x0 = static_cast<float>(m.rel(t.interval_start(i)) / span * 1000.0);
      const float x1 = static_cast<float>(m.rel(t.interval_end(i, m.last_tick())) / span * 1000.0);
      draw->AddRectFilled(ImVec2(x0, 20.0f * static_cast<float>(w)),
                          ImVec2(x1 + 0.1f, 20.0f * static_cast<float>(w) + 10), IM_COL32(80, 180, 90, 255));
    }
    for (int d = 0; d < std::min(t.depth_count(), 6); ++d) {
      for (const TaskSlice& s : t.slices(d)) {
        const float x0 = static_cast<float>(m.rel(s.start) / span * 1000.0);
        const float x1 = static_cast<float>(m.rel(s.open() ? m.last_tick() : s.end) / span * 1000.0);
        const float y = 20.0f * static_cast<float>(w) + 12 + 2.0f * static_cast<float>(d);
        draw->AddRectFilled(ImVec2(x0, y), ImVec2(x1 + 0.1f, y + 2), IM_COL32(96, 140, 200, 255));
      }
    }
  }
  ImGui::End();
  ImGui::Render();
  return thread_cpu_ms() - t0;
}

constexpr const char* kUsage = R"(usage: viewer_bench [--events N] [--workers W] [--trace FILE] [--frames N]

lantern-view on a large trace, headless (ImGui with no window, no GPU): the time from
opening the trace to fully loaded and to its first frame (target <= 2 s each), the CPU
time to build one frame fully zoomed out and zoomed to 10 ms, 200 us and 5 us (target:
worst p90 <= 8 ms), and, for comparison, a naive zoomed-out timeline (one rectangle per
state interval and task slice). Without --trace it first generates a synthetic trace
in /tmp (removed at the end).

options:
  -h, --help      this text
  --version       print the version
  --events N      events in the generated trace, 1 to 1099511627776 (default 10000000)
  --workers W     workers in the generated trace, 1 to 1024 (default 4)
  --trace FILE    open FILE instead of generating a trace (e.g. one from
                  lantern_live_demo --trace); --events and --workers are then unused
  --frames N      frames built per zoom level, 1 to 100000 (default 40)

Exit status: 0 (even if targets were missed); 1 when the trace cannot be generated;
2 on bad usage.
)";

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t events = 10'000'000;
  std::uint32_t workers = 4;
  int n_frames = 40;
  std::string path;
  lantern::tools::Program program("viewer_bench", kUsage);
  auto& cli = program.app();
  lantern::tools::number_option<std::uint64_t>(cli, "--events", &events, 1, std::uint64_t{1} << 40);
  lantern::tools::number_option<std::uint32_t>(cli, "--workers", &workers, 1, 1024);
  cli.add_option("--trace", path);
  lantern::tools::number_option(cli, "--frames", &n_frames, 1, 100000);
  if (const auto exit = program.parse(argc, argv)) return *exit;
  const bool generated = path.empty();
  if (generated) {
    path = "/tmp/lantern_viewer_bench_" + std::to_string(::getpid()) + ".trace";
    SyntheticOptions o;
    o.workers = workers;
    o.target_events = events;
    std::string error;
    const auto g0 = Clock::now();
    if (!write_synthetic_trace(path, o, &error)) {
      std::fprintf(stderr, "viewer_bench: %s\n", error.c_str());
      return 1;
    }
    std::printf("generated %s in %.2f s\n", path.c_str(), std::chrono::duration<double>(Clock::now() - g0).count());
  }

  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(1600, 900);
  io.IniFilename = nullptr;
  // What lantern-view's OpenGL 3 backend declares: draw lists may pass 64k vertices.
  io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
  unsigned char* pixels = nullptr;
  int tw = 0, th = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &tw, &th);  // a built atlas is all NewFrame needs

  // Time to first frame: open, load completely, build the first frame of the whole trace.
  const auto t0 = Clock::now();
  ViewerApp app(Session::open_file(path), AppOptions{});
  app.session().wait_until_finished();
  const double loaded_s = std::chrono::duration<double>(Clock::now() - t0).count();
  frame(app);
  const double first_frame_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::uint64_t n_events = 0, intervals = 0, slices = 0;
  double span_ms = 0;
  std::uint32_t n_workers = 0;
  {
    std::lock_guard<std::mutex> lock(app.session().mutex());
    const Model& m = app.session().model();
    n_events = m.events();
    n_workers = m.worker_count();
    span_ms = m.ticks_to_ns(m.rel(m.last_tick()) - m.rel(m.first_tick())) / 1e6;
    for (std::uint32_t w = 0; w < n_workers; ++w) {
      intervals += m.track(w).interval_count();
      for (int d = 0; d < m.track(w).depth_count(); ++d) slices += m.track(w).slices(d).size();
    }
  }
  std::printf("trace: %llu events, %u workers, %.0f ms of recording; %llu state intervals, %llu task slices\n",
              static_cast<unsigned long long>(n_events), n_workers, span_ms, static_cast<unsigned long long>(intervals),
              static_cast<unsigned long long>(slices));
  std::printf("%-38s %10.3f s   (target <= 2 s: %s)\n", "open -> fully loaded", loaded_s,
              loaded_s <= 2 ? "PASS" : "MISS");
  std::printf("%-38s %10.3f s   (target <= 2 s: %s)\n", "open -> first frame of the whole trace", first_frame_s,
              first_frame_s <= 2 ? "PASS" : "MISS");

  struct Zoom {
    const char* name;
    double window_ms;
  };
  const Zoom zooms[] = {
      {"fully zoomed out", 0}, {"zoomed to 10 ms", 10}, {"zoomed to 200 us", 0.2}, {"zoomed to 5 us", 0.005}};
  double worst = 0;
  std::printf("\n%-24s %10s %10s %10s   (CPU ms per frame, %d frames, 1600x900)\n", "frame build", "median", "p90",
              "max", n_frames);
  for (const Zoom& z : zooms) {
    {
      std::lock_guard<std::mutex> lock(app.session().mutex());
      const Model& m = app.session().model();
      ViewState& v = app.view();
      if (z.window_ms == 0) {
        v.fit_requested = true;
      } else {
        const double mid = (m.rel(m.first_tick()) + m.rel(m.last_tick())) / 2;
        const double w = m.ns_to_ticks(z.window_ms * 1e6);
        v.start = mid - w / 2, v.end = mid + w / 2;
        v.fit_requested = false;
      }
    }
    const Figures f = frames(app, n_frames);
    worst = std::max(worst, f.p90);
    std::printf("%-24s %10.2f %10.2f %10.2f\n", z.name, f.median, f.p90, f.max);
  }
  std::printf("%-38s %s (worst p90 %.2f ms; target <= 8 ms)\n", "frame build target", worst <= 8 ? "PASS" : "MISS",
              worst);
  std::vector<double> naive;
  for (int i = 0; i < 5; ++i) naive.push_back(naive_zoomed_out(app.session()));
  const double naive_ms = percentile(naive, 50);
  std::printf(
      "\ncomparison, zoomed out: a naive timeline (one rectangle per interval and slice) %.1f ms/frame (median of 5)\n",
      naive_ms);
  ImGui::DestroyContext();
  if (generated) std::remove(path.c_str());
  return 0;
}
