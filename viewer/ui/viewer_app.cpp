// SPDX-License-Identifier: Apache-2.0
// viewer_app.cpp - the frame: status bar, legend, and the panels' layout.
#include "viewer_app.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "palette.hpp"

namespace lantern::viewer {
namespace {

const char* phase_name(SourceStatus::Phase p) {
  switch (p) {
    case SourceStatus::Phase::connecting: return "CONNECTING";
    case SourceStatus::Phase::loading: return "LOADING";
    case SourceStatus::Phase::streaming: return "LIVE";
    case SourceStatus::Phase::complete: return "REPLAY";
    case SourceStatus::Phase::disconnected: return "DISCONNECTED";
    case SourceStatus::Phase::failed: return "PROBLEMS";
  }
  return "";
}

ImU32 phase_colour(SourceStatus::Phase p) {
  switch (p) {
    case SourceStatus::Phase::streaming: return palette::kGood;
    case SourceStatus::Phase::complete: return palette::kText;
    case SourceStatus::Phase::disconnected: return palette::kWarning;
    case SourceStatus::Phase::failed: return palette::kError;
    default: return palette::kDimText;
  }
}

// swatch draws a colour key and its name; `layout` (when recording) gets the key's box.
void swatch(ImU32 colour, const char* name, LayoutRecord* layout = nullptr, const char* what = nullptr, int id = 0,
            int group = 0, ImU32 edge = 0) {
  // Wrap to a new line rather than run off the window's edge.
  if (ImGui::GetContentRegionAvail().x < 15 + ImGui::CalcTextSize(name).x + 4) ImGui::NewLine();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetTextLineHeight();
  ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + 12, p.y + h - 2), colour);
  if (edge) ImGui::GetWindowDrawList()->AddRect(ImVec2(p.x, p.y + 3), ImVec2(p.x + 12, p.y + h - 2), edge);
  if (layout && what) layout->add(what, id, 0, p.x, p.y + 3, p.x + 12, p.y + h - 2);
  if (layout) {
    // Every key, with its group (0 lane fills, 1 arrows) and colour: no two may be alike.
    char line[160];
    std::snprintf(line, sizeof line, "legend_key %d %u %u %u %.0f %.0f %s", group, colour & 0xFF, (colour >> 8) & 0xFF,
                  (colour >> 16) & 0xFF, p.x, p.y, name);
    layout->lines.emplace_back(line);
  }
  ImGui::Dummy(ImVec2(15, h));
  ImGui::SameLine(0, 2);
  ImGui::TextUnformatted(name);
  ImGui::SameLine(0, 12);
}

}  // namespace

bool is_view_name(const std::string& name) {
  return name == "all" || name == "timeline" || name == "steals" || name == "plots" || name == "latency" ||
         name == "health" || name == "scalability";
}

ViewerApp::ViewerApp(std::unique_ptr<Session> session, AppOptions options, Reconnect reconnect)
    : session_(std::move(session)), options_(std::move(options)), reconnect_(std::move(reconnect)) {
  timeline_.set_max_rows(options_.max_rows);
  health_.set_sort_by_duration(options_.health_by_duration);
  scalability_.walk_to(options_.path_stretch);
  if (options_.task_colours == "label") view_.task_colours = ViewState::TaskColours::label;
  if (options_.task_colours == "source") view_.task_colours = ViewState::TaskColours::source;
  view_.follow = session_->live();
}

std::string ViewerApp::title() {
  std::lock_guard<std::mutex> lock(session_->mutex());
  return "lantern-view - " + session_->model().status().name;
}

void ViewerApp::set_compare(std::unique_ptr<Session> b, std::string a_name, std::string b_name) {
  compare_ = std::move(b);
  a_name_ = std::move(a_name);
  b_name_ = std::move(b_name);
}

std::string ViewerApp::start_option_error() {
  if (session_->live() || !session_->finished() || !std::isfinite(options_.at_ns)) return {};
  std::lock_guard<std::mutex> lock(session_->mutex());
  const Model& model = session_->model();
  if (model.empty()) return {};
  const double span_ns = model.ticks_to_ns(model.rel(model.last_tick()) - model.rel(model.first_tick()));
  if (options_.at_ns <= span_ns) return {};
  return "--at " + format_duration(options_.at_ns) + " is beyond the end of the trace (it spans " +
         format_duration(span_ns) + ")";
}

void ViewerApp::apply_start_options(const Model& model) {
  // --at / --window wait for the data they refer to: a whole file, or any live data.
  if (!session_->live() && !session_->finished()) return;
  if (model.empty()) return;
  start_applied_ = true;
  const double first = model.rel(model.first_tick());
  const bool at = std::isfinite(options_.at_ns), window = std::isfinite(options_.window_ns);
  if (!at && !window) return;
  user_moved_ = true;  // the command line chose the window
  view_.fit_requested = false;
  view_.follow = false;
  if (at) view_.limit = first + model.ns_to_ticks(options_.at_ns);
  const double end = at ? view_.limit : first + model.ns_to_ticks(options_.window_ns);
  const double width = window ? model.ns_to_ticks(options_.window_ns) : std::max(end - first, 1.0);
  view_.end = end + width * 0.01;
  view_.start = view_.end - width * 1.02;
}

void ViewerApp::global_keys(const Model& model) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  if (!session_->live() && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space), false))
    controls_.toggle_play(model, view_);
  if (session_->live() && ImGui::IsKeyPressed('F', false))
    view_.follow = !view_.follow, view_.limit = ViewState::kNoLimit;
}

void ViewerApp::legend(const Model& model) {
  // Two fixed rows, whatever the colouring, so toggling "colour by label" never moves
  // the lanes: row 1 what fills the lanes (states, then task colours); row 2 what is
  // drawn over them (arrows and marks). A key that does not fit its row is counted
  // ("+N more"), not wrapped. Every name comes from the event table or the trace.
  const float line_y = ImGui::GetCursorPosY();
  const float row_h = ImGui::GetTextLineHeightWithSpacing();
  std::size_t more = 0;
  int group = 0;
  auto key = [&](ImU32 colour, const char* name, const char* what = nullptr, int id = 0, ImU32 edge = 0) {
    if (more > 0 || ImGui::GetContentRegionAvail().x < 15 + ImGui::CalcTextSize(name).x + 70) {
      ++more;
      return;
    }
    swatch(colour, name, view_.layout, what, id, group, edge);
  };
  auto end_row = [&](float y) {
    if (more > 0) {
      ImGui::TextDisabled("+%zu more", more);
      ImGui::SameLine();
    }
    more = 0;
    ImGui::SetCursorPosY(y);
    ImGui::NewLine();
  };
  ImGui::TextDisabled("states");
  ImGui::SameLine();
  for (int s = 0; s < trace::kStateCount; ++s) swatch(palette::state(s), trace::kStateNames[s].data(), view_.layout);
  const bool has_labels = !model.label_uses().empty();
  if (has_labels) {
    // The switch between the two colourings (source stays one click away).
    bool by_label = view_.colour_by_label(true);
    if (ImGui::Checkbox("colour by label", &by_label)) {
      view_.task_colours = by_label ? ViewState::TaskColours::label : ViewState::TaskColours::source;
    }
    ImGui::SameLine(0, 12);
  }
  if (view_.colour_by_label(has_labels)) {
    // Labels, most used first.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> by_use;
    for (const auto& [id, uses] : model.label_uses()) by_use.emplace_back(uses, id);
    std::stable_sort(by_use.begin(), by_use.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    ImGui::TextDisabled("tasks by label");
    ImGui::SameLine();
    key(palette::kTaskCluster, "many");
    key(palette::kUnlabelled, "no label");
    for (const auto& [uses, id] : by_use)
      key(palette::label(id), model.label_name(id).c_str(), "label_swatch", static_cast<int>(id));
  } else {
    ImGui::TextDisabled("tasks from");
    ImGui::SameLine();
    key(palette::kTaskCluster, "many");
    for (std::size_t s = 0; s + 1 < std::size(trace::kSourceNames); ++s)
      key(palette::source(static_cast<int>(s)), trace::kSourceNames[s].data());
  }
  end_row(line_y);
  group = 1;
  ImGui::TextDisabled("arrows: steal by distance");
  ImGui::SameLine();
  for (int d = 0; d < trace::kDistanceCount; ++d) key(palette::distance(d), trace::kDistanceNames[d].data());
  key(palette::kHelp, "help");
  key(palette::kWake, "wake");
  if (model.events_of(EventId::release) > 0) key(palette::kRelease, "release");
  if (model.events_of(EventId::io_complete) > 0) key(palette::kIoCompletion, "IO done");
  if (model.analysis().off_cpu_tasks() > 0) key(palette::kOffCpu, "waited for a CPU", nullptr, 0, palette::kOffCpuEdge);
  if (view_.scale && !view_.scale->critical_path.empty() && more == 0 &&
      ImGui::GetContentRegionAvail().x > 15 + ImGui::CalcTextSize("critical path").x + 100) {
    // The critical path's outline and arrows, with the switch that shows or hides them.
    ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(1, 0));
    ImGui::Checkbox("##critical_path", &view_.show_critical_path);
    ImGui::PopStyleVar();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("show the critical path (Scalability view) on the timeline");
    ImGui::SameLine(0, 4);
    key(palette::kCriticalPath, "critical path");
  }
  end_row(line_y + row_h);
  ImGui::SetCursorPosY(line_y + 2 * row_h);
}

void ViewerApp::status_bar(Model& model) {
  const SourceStatus& s = model.status();
  ImGui::TextColored(palette::vec(phase_colour(s.phase)), "%s", phase_name(s.phase));
  ImGui::SameLine();
  ImGui::TextUnformatted(s.name.c_str());
  ImGui::SameLine();
  if (s.phase == SourceStatus::Phase::loading || (!session_->live() && !session_->finished())) {
    // Progress while a file loads: a bar when its size is known (a pipe's is not).
    char read[64];
    std::snprintf(read, sizeof read, "%.1f MB read", static_cast<double>(s.bytes) / 1e6);
    const float fraction = s.total_bytes > 0
                               ? static_cast<float>(static_cast<double>(s.bytes) / static_cast<double>(s.total_bytes))
                               : -1.0f;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::ProgressBar(fraction >= 0 ? fraction : 0.0f, ImVec2(160, 0), fraction >= 0 ? nullptr : read);
    if (view_.layout) {
      const ImVec2 q = ImGui::GetItemRectMax();
      view_.layout->add("loading_progress", static_cast<int>(fraction * 1000), 0, p.x, p.y, q.x, q.y);
    }
    ImGui::SameLine();
  }
  // Right-aligned: what the user must not miss.
  char right[160];
  const std::uint64_t warnings = model.warning_count(), errors = HealthView::trace_error_count(model);
  const std::uint64_t attention = warnings + errors;
  std::snprintf(
      right, sizeof right, "%s events   %s dropped   %s warnings%s", format_count(model.events()).c_str(),
      format_count(model.dropped_events()).c_str(), format_count(warnings).c_str(),
      errors ? ("   " + format_count(errors) + (errors == 1 ? " trace error" : " trace errors")).c_str() : "");
  if (view_.layout)
    view_.layout->add("badge_warnings", static_cast<int>(warnings), static_cast<int>(errors), 0, 0, 0, 0);
  const float w = ImGui::CalcTextSize(right).x + ImGui::GetStyle().FramePadding.x * 2;
  // The message gets what is left of the line (shortened with "...", whole in a tooltip),
  // so it never runs under the counts.
  {
    const float room = ImGui::GetWindowContentRegionMax().x - w - 16 - ImGui::GetCursorPosX();
    std::string shown = s.message;
    if (ImGui::CalcTextSize(shown.c_str()).x > room) {
      while (!shown.empty() && ImGui::CalcTextSize((shown + "...").c_str()).x > room) shown.pop_back();
      shown += "...";
    }
    ImGui::TextColored(palette::vec(palette::kDimText), "%s", shown.c_str());
    if (shown != s.message && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", s.message.c_str());
  }
  ImGui::SameLine(std::max(ImGui::GetCursorPosX() + 10, ImGui::GetWindowContentRegionMax().x - w));
  ImGui::PushStyleColor(ImGuiCol_Text,
                        palette::vec(attention || model.dropped_events() ? palette::kWarning : palette::kText));
  if (ImGui::SmallButton(right)) show_health_ = true;
  ImGui::PopStyleColor();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("open the Health panel");

  controls_.draw(model, view_, session_->live());
  legend(model);
  if (model.has_trace_errors()) {
    const trace::TraceError* first = nullptr;
    std::size_t errors = 0;
    for (const auto& p : model.trace_problems()) {
      if (!p.warning()) first = first ? first : &p, ++errors;
    }
    ImGui::PushStyleColor(ImGuiCol_Text, palette::vec(palette::kError));
    ImGui::TextWrapped("%s%s", trace::describe(*first).c_str(),
                       errors > 1 ? ("  (" + std::to_string(errors) + " problems: see Health)").c_str() : "");
    ImGui::PopStyleColor();
  }
  ImGui::Separator();
}

void ViewerApp::layout_all(Model& model, ImVec2 size) {
  const float left = std::floor(size.x * 0.66f);
  ImGui::BeginChild("##left", ImVec2(left, size.y), false, ImGuiWindowFlags_NoScrollbar);
  // The timeline takes what its lanes need, between 30% and 65% of the height; the
  // plots below get the rest.
  const float timeline_h = std::floor(std::clamp(timeline_.preferred_height(model), size.y * 0.3f, size.y * 0.65f));
  timeline_.draw(model, view_, ImVec2(left, timeline_h));
  ImGui::SetCursorScreenPos(ImVec2(ImGui::GetWindowPos().x, ImGui::GetWindowPos().y + timeline_h + 4));
  plots_.draw(model, view_, ImVec2(left, size.y - timeline_h - 8));
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##right", ImVec2(0, size.y), true);
  if (ImGui::BeginTabBar("##tabs")) {
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const bool select = show_health_;
    show_health_ = false;
    if (ImGui::BeginTabItem("Health", nullptr, select ? ImGuiTabItemFlags_SetSelected : 0)) {
      health_.draw(model, view_, ImGui::GetContentRegionAvail());
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Steal matrix")) {
      steals_.draw(model, view_, ImVec2(avail.x, ImGui::GetContentRegionAvail().y));
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Latency")) {
      latency_.draw(model, view_, ImGui::GetContentRegionAvail());
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Scalability")) {
      scalability_.draw({&scale_a_, &model, a_name_}, nullptr, view_, ImGui::GetContentRegionAvail());
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
}

bool ViewerApp::computing() {
  for (auto [session, figures] : {std::pair{session_.get(), &scale_a_}, std::pair{compare_.get(), &scale_b_}}) {
    if (!session) continue;
    if (figures->busy()) return true;
    std::lock_guard<std::mutex> lock(session->mutex());
    if (session->finished() && !session->model().empty() && figures->pending()) return true;
  }
  return false;
}

void ViewerApp::scalability_full(Model& model, ImVec2 size) {
  // The figures above, the timeline with the critical path below (the walk centres it).
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float top = std::floor(size.y * 0.62f);
  ImGui::BeginChild("##scalability", ImVec2(size.x, top), false);
  ScalabilityView::Run b{&scale_b_, compare_ ? &compare_->model() : nullptr, b_name_};
  scalability_.draw({&scale_a_, &model, a_name_.empty() ? model.status().name : a_name_}, compare_ ? &b : nullptr,
                    view_, ImGui::GetContentRegionAvail());
  ImGui::EndChild();
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + top + 4));
  timeline_.draw(model, view_, ImVec2(size.x, size.y - top - 4));
}

void ViewerApp::frame(double seconds) {
  clock_s_ += seconds;
  if (controls_.take_reconnect() && reconnect_) {
    scale_a_.reset();  // it reads the session being replaced
    session_ = reconnect_();
    LayoutRecord* layout = view_.layout;
    view_ = ViewState{};
    view_.layout = layout;
    view_.follow = session_->live();
  }
  std::lock_guard<std::mutex> lock(session_->mutex());
  Model& model = session_->model();
  model.prepare_series();
  if (!start_applied_) apply_start_options(model);
  controls_.advance(model, view_, session_->live(), seconds);
  if (!session_->live() && !user_moved_) {
    // A moved window (zoom, pan, seek, play, a Health row) is the user's from then on.
    if (fitted_ && (view_.start != fitted_start_ || view_.end != fitted_end_ || !(view_.limit == fitted_limit_))) {
      user_moved_ = true;
    } else if (!final_fit_done_ && !model.empty()) {
      // Still loading, or loading just ended: show everything read so far.
      view_.fit_requested = true;
      if (session_->finished()) final_fit_done_ = true;
    }
  }
  // The scalability figures: once per loaded trace (off this thread), a live window now
  // and then, or again when asked.
  analysis::ScaleOptions again = scale_a_.options().scale;
  if (scalability_.take_recompute(&again)) {
    scale_a_.request_recompute(again);
    scale_b_.request_recompute(again);
  }
  scale_a_.poll(*session_, clock_s_);
  view_.scale = scale_a_.whole();
  view_.live_parallelism = session_->live() ? &scale_a_.live() : nullptr;
  view_.live_window_s = scale_a_.options().live_window_s;
  health_.set_recheck_allowed(!scale_a_.busy());
  timeline_.fit_if_requested(model, view_);
  if (!user_moved_) {
    fitted_ = !model.empty();
    fitted_start_ = view_.start, fitted_end_ = view_.end, fitted_limit_ = view_.limit;
  }

  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("##lantern", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoScrollWithMouse);
  status_bar(model);
  global_keys(model);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (model.empty()) {
    // Nothing to draw yet (or ever): say why, large, in the middle.
    const SourceStatus& s = model.status();
    const std::string text = s.phase == SourceStatus::Phase::failed && !model.trace_problems().empty()
                                 ? trace::describe(model.trace_problems().front())
                             : s.phase == SourceStatus::Phase::connecting ? s.message
                             : session_->finished()                       ? "The trace holds no events."
                                                                          : "Loading...";
    ImGui::SetCursorPos(ImVec2(ImGui::GetCursorPosX() + 40, ImGui::GetCursorPosY() + avail.y * 0.35f));
    ImGui::PushTextWrapPos(avail.x - 40);
    ImGui::TextColored(palette::vec(s.phase == SourceStatus::Phase::failed ? palette::kError : palette::kText), "%s",
                       text.c_str());
    ImGui::PopTextWrapPos();
  } else if (compare_) {
    std::lock_guard<std::mutex> lock_b(compare_->mutex());  // always after A's: one order
    compare_->model().prepare_series();
    scale_b_.poll(*compare_, clock_s_);
    if (options_.view == "scalability") {
      scalability_full(model, avail);
    } else {
      compare_view_.draw(model, a_name_, compare_->model(), b_name_, session_->finished() && compare_->finished(),
                         view_, avail);
    }
  } else if (options_.view == "timeline") {
    timeline_.draw(model, view_, avail);
  } else if (options_.view == "plots") {
    plots_.draw(model, view_, avail);
  } else if (options_.view == "steals") {
    steals_.draw(model, view_, avail);
  } else if (options_.view == "latency") {
    latency_.draw(model, view_, avail);
  } else if (options_.view == "health") {
    health_.draw(model, view_, avail);
  } else if (options_.view == "scalability") {
    scalability_full(model, avail);
  } else {
    layout_all(model, avail);
  }
  ImGui::End();
}

}  // namespace lantern::viewer
