// SPDX-License-Identifier: Apache-2.0
// viewer_app.hpp - one frame of the viewer: the status bar, the panels and their layout.
//
// ViewerApp owns the Session (file or live) and one instance of each panel. It knows no
// window system: lantern-view's main loop (app/) calls frame() between ImGui's NewFrame
// and Render, and so does the benchmark, headless. The model's mutex is held for the
// frame, so the feed thread waits at most one frame to apply its next chunk.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "compare_view.hpp"
#include "health_view.hpp"
#include "lantern/viewer/scale_figures.hpp"
#include "lantern/viewer/session.hpp"
#include "latency_view.hpp"
#include "plots_view.hpp"
#include "replay_controls.hpp"
#include "scalability_view.hpp"
#include "steal_matrix_view.hpp"
#include "timeline_view.hpp"

namespace lantern::viewer {

struct AppOptions {
  std::string view = "all";  // all | timeline | steals | plots | latency | health | scalability
  double at_ns = std::numeric_limits<double>::quiet_NaN();      // --at: playhead, from the trace start
  double window_ns = std::numeric_limits<double>::quiet_NaN();  // --window: timeline width
  int max_rows = 6;                                             // task rows per lane
  std::string task_colours = "auto";                            // --task-colours: auto, label or source
  bool health_by_duration = false;                              // --health-sort duration
  int path_stretch = -1;  // --path-stretch: the walk's stretch on the critical path (from 0)
};

// is_view_name: whether `name` is one of AppOptions::view's values.
bool is_view_name(const std::string& name);

class ViewerApp {
 public:
  using Reconnect = std::function<std::unique_ptr<Session>()>;
  ViewerApp(std::unique_ptr<Session> session, AppOptions options, Reconnect reconnect = {});

  // frame builds the whole UI for one frame; `seconds` since the previous one.
  void frame(double seconds);
  Session& session() noexcept { return *session_; }
  ViewState& view() noexcept { return view_; }
  TimelineView& timeline() noexcept { return timeline_; }
  std::string title();
  // set_compare: a second run (lantern-view A --compare B): the window shows both side
  // by side, with the comparison's notable differences highlighted.
  void set_compare(std::unique_ptr<Session> b, std::string a_name, std::string b_name);
  Session* compare_session() noexcept { return compare_.get(); }
  const CompareView& compare_view() const noexcept { return compare_view_; }
  // start_option_error: once a file has loaded, why --at cannot be honoured (beyond the
  // end of the trace); empty otherwise.
  std::string start_option_error();
  // animating: something moves without input (live data, loading, playback, the
  // scalability figures being computed).
  bool animating() const noexcept {
    return session_->live() || !session_->finished() || (compare_ && !compare_->finished()) || controls_.playing() ||
           scale_a_.busy() || scale_b_.busy();
  }
  // computing: the scalability figures of a loaded trace (and of B) are still to come:
  // --screenshot draws frames until they are there.
  bool computing();
  const ScaleFigures& scale_figures() const noexcept { return scale_a_; }

 private:
  void status_bar(Model& model);
  void legend(const Model& model);
  void layout_all(Model& model, ImVec2 size);
  void apply_start_options(const Model& model);
  void global_keys(const Model& model);
  void scalability_full(Model& model, ImVec2 size);

  std::unique_ptr<Session> session_;
  std::unique_ptr<Session> compare_;  // B, with --compare
  std::string a_name_, b_name_;
  CompareView compare_view_;
  AppOptions options_;
  Reconnect reconnect_;
  ViewState view_;
  TimelineView timeline_;
  StealMatrixView steals_;
  PlotsView plots_;
  LatencyView latency_;
  HealthView health_;
  ReplayControls controls_;
  bool start_applied_ = false;
  // Opening a file: the window follows the data as it loads (whole trace so far), and
  // once more when loading ends, until the user moves it (any change of the window that
  // the automatic fit did not make).
  bool user_moved_ = false;
  bool final_fit_done_ = false;
  double fitted_start_ = 0, fitted_end_ = 0, fitted_limit_ = 0;
  bool fitted_ = false;
  bool show_health_ = false;  // select the Health tab on the next frame
  // The scalability figures of A and B, computed off the render thread; declared after
  // the sessions they read, so that they are destroyed (their threads joined) first.
  ScaleFigures scale_a_, scale_b_;
  ScalabilityView scalability_;
  double clock_s_ = 0;  // seconds of frames so far (ScaleFigures::poll's clock)
};

}  // namespace lantern::viewer
