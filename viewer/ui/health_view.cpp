// SPDX-License-Identifier: Apache-2.0
// health_view.cpp - data-loss summary, trace problems, warnings with links, thresholds.
#include "health_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "palette.hpp"

namespace lantern::viewer {
namespace {
constexpr std::size_t kRowsPerKind = 200;  // a table longer than this is read by its count
}

std::uint64_t HealthView::trace_error_count(const Model& model) {
  std::uint64_t n = 0;
  for (const auto& p : model.trace_problems()) n += p.warning() ? 0 : 1;
  return n;
}

void HealthView::focus(const Model& model, ViewState& view, const Problem& p) {
  const double a = model.rel(p.start), b = model.rel(std::max(p.end, p.start));
  view.focus = ViewState::Focus{true, a, b, static_cast<int>(p.worker), true};
  view.follow = false;
  view.fit_requested = false;
  view.show(a, b, std::max((b - a) * 4, model.ns_to_ticks(50e3)));
  if (view.limit < b) view.limit = ViewState::kNoLimit;  // a replay paused before it: show it
}

void HealthView::data_section(const Model& model) {
  ImGui::Text("Events: %s in %s chunks", format_count(model.events()).c_str(), format_count(model.chunks()).c_str());
  if (ImGui::IsItemHovered() && !model.empty()) {
    // Per type, named and explained by the event table.
    ImGui::BeginTooltip();
    for (const trace::EventInfo& info : trace::kEventInfo) {
      ImGui::Text("%-18s %12s", info.name.data(), format_count(model.events_of(info.type)).c_str());
      ImGui::SameLine();
      ImGui::TextDisabled("%s", info.description.data());
    }
    ImGui::EndTooltip();
  }
  if (model.has_header() && model.header_ok()) {
    const trace::TraceHeader& h = model.header();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s on %s, %u workers; %s", h.producer.c_str(), h.hostname.c_str(), h.workers,
                       h.topology.c_str());
    ImGui::PopStyleColor();
  }
  const std::uint64_t dropped = model.dropped_events();
  std::size_t damaged = 0;
  for (const auto& p : model.trace_problems()) damaged += !p.warning();
  if (damaged > 0) {
    // Events lost in skipped bytes were never counted anywhere: the trace cannot be
    // called complete, whatever the drop counters say.
    ImGui::PushStyleColor(ImGuiCol_Text, palette::vec(palette::kError));
    ImGui::TextWrapped(
        "The trace is damaged (%zu problem%s below): events in the bytes the reader had to skip are "
        "lost and not counted, so every count here is a lower bound.",
        damaged, damaged == 1 ? "" : "s");
    ImGui::PopStyleColor();
  }
  if (dropped == 0 && damaged == 0) {
    ImGui::TextColored(palette::vec(palette::kGood), "No events dropped.");
  } else if (dropped == 0) {
    ImGui::TextDisabled("No drop markers in what could be read.");
  } else {
    ImGui::TextColored(palette::vec(palette::kError),
                       "%s events dropped (the trace has gaps; counters stay exact):", format_count(dropped).c_str());
    for (std::uint32_t w = 0; w < model.worker_count(); ++w) {
      if (model.dropped(w))
        ImGui::BulletText("worker %u: %s in %zu gaps", w, format_count(model.dropped(w)).c_str(),
                          model.drops(w).size());
    }
    for (int r = 0; r < kDropReasonCount; ++r) {
      const auto reason = static_cast<DropReason>(r);
      if (const std::uint64_t n = model.dropped_events(reason)) {
        ImGui::BulletText("%s: %s (%s)", std::string(kDropReasonNames[r]).c_str(), format_count(n).c_str(),
                          reason == DropReason::slow_viewer ? "this viewer read too slowly; the app lost nothing"
                          : reason == DropReason::before_attach
                              ? "streamed before this viewer connected; the app lost nothing"
                              : "the app's event rings were full");
      }
    }
  }
  if (model.rejected_events()) {
    ImGui::TextColored(palette::vec(palette::kWarning), "%s events ignored (impossible worker ids or states)",
                       format_count(model.rejected_events()).c_str());
  }
  for (const auto& p : model.trace_problems()) {
    ImGui::PushStyleColor(ImGuiCol_Text, palette::vec(p.warning() ? palette::kWarning : palette::kError));
    ImGui::TextWrapped("%s", trace::describe(p).c_str());
    ImGui::PopStyleColor();
  }
}

namespace {

// task_name: "render #3fa0c0" (its label and id), or "#3fa0c0" - never an address alone.
std::string task_name(const Model& model, std::uint32_t worker, std::uint64_t id, Tick at) {
  char buf[96];
  std::uint32_t label = 0;
  if (worker < model.worker_count()) {
    const WorkerTrack& t = model.track(worker);
    for (int d = 0; d < t.depth_count() && label == 0; ++d) {
      const std::size_t i = t.first_slice_ending_after(d, at);
      if (i < t.slices(d).size() && t.slices(d)[i].id == id) label = t.slices(d)[i].label;
    }
  }
  if (label != 0) {
    std::snprintf(buf, sizeof buf, "%s #%llx", model.label_name(label).c_str(),
                  static_cast<unsigned long long>(id & 0xffffff));
  } else {
    std::snprintf(buf, sizeof buf, "task #%llx", static_cast<unsigned long long>(id & 0xffffff));
  }
  return buf;
}

}  // namespace

void HealthView::problem_rows(const Model& model, ViewState& view, ProblemKind kind, const std::vector<Problem>& list) {
  // One group per worker (or lane), with its count; rows sorted by time or by duration,
  // and groups in the order of their first row.
  std::vector<std::size_t> items;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].kind == kind) items.push_back(i);
  }
  auto before = [&](std::size_t x, std::size_t y) {
    const Problem &p = list[x], &q = list[y];
    if (sort_by_duration_ && p.value != q.value) return p.value > q.value;
    return p.start < q.start;
  };
  std::stable_sort(items.begin(), items.end(), before);
  std::vector<std::pair<std::uint32_t, std::vector<std::size_t>>> groups;
  for (const std::size_t i : items) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == list[i].worker; });
    if (it == groups.end()) {
      groups.emplace_back(list[i].worker, std::vector<std::size_t>{});
      it = groups.end() - 1;
    }
    it->second.push_back(i);
  }
  if (!ImGui::BeginTable("##problems", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) return;
  // "where" and "at" are as wide as their widest text (a group's "worker 12 (137)" after
  // its tree arrow, "from 1.234 s"), never cut; the description takes the rest.
  const float indent = ImGui::GetTreeNodeToLabelSpacing() + ImGui::GetStyle().CellPadding.x * 2;
  ImGui::TableSetupColumn("where", ImGuiTableColumnFlags_WidthFixed,
                          ImGui::CalcTextSize("worker 0000 (0000)").x + indent);
  ImGui::TableSetupColumn("at", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("from 000.00 ms").x + 8);
  ImGui::TableSetupColumn("how long / how many", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("times", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("times ").x + 8);
  ImGui::TableHeadersRow();
  const bool lane = kind == ProblemKind::lane_wait || kind == ProblemKind::queued_while_asleep;
  std::size_t shown = 0;
  char label[128];
  auto row = [&](std::size_t i, bool child) {
    const Problem& p = list[i];
    ++shown;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    std::snprintf(label, sizeof label, "%s%s %u##%zu", child ? "    " : "", lane ? "lane" : "worker", p.worker, i);
    if (ImGui::Selectable(label, false, ImGuiSelectableFlags_SpanAllColumns)) focus(model, view, p);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("show on the timeline");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(
        format_duration(model.ticks_to_ns(model.rel(p.start) - model.rel(model.first_tick()))).c_str());
    ImGui::TableNextColumn();
    const std::string v = format_duration(model.ticks_to_ns(static_cast<double>(p.value)));
    switch (kind) {
      case ProblemKind::long_task:
        ImGui::Text("%s  %s", v.c_str(), task_name(model, p.worker, p.detail, p.start).c_str());
        if (p.off_cpu > 0) {
          // What the kernel did meanwhile: the task's thread waited for a CPU this long.
          const std::string off = format_duration(model.ticks_to_ns(static_cast<double>(p.off_cpu)));
          const std::string all = format_duration(model.ticks_to_ns(static_cast<double>(p.task_ticks)));
          ImGui::TextColored(palette::vec(preempted(p) ? palette::kWarning : palette::kDimText),
                             "preempted for %s of its %s", off.c_str(), all.c_str());
          if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", problem_advice(p));
          if (view.layout)
            view.layout->lines.push_back("health_preempted " + std::to_string(p.worker) + " preempted for " + off +
                                         " of its " + all);
        }
        break;
      case ProblemKind::lane_wait:
        ImGui::Text("%s  (lane avg %s)", v.c_str(),
                    format_duration(model.ticks_to_ns(static_cast<double>(p.detail))).c_str());
        break;
      case ProblemKind::queued_while_asleep: ImGui::Text("%s all asleep", v.c_str()); break;
      case ProblemKind::spinning: ImGui::Text("%s searching", v.c_str()); break;
      case ProblemKind::events_dropped: ImGui::Text("%s events", format_count(p.value).c_str()); break;
      case ProblemKind::deadlock:
        ImGui::Text("%s tasks unfinished, %s workers blocked", format_count(p.value).c_str(),
                    format_count(p.detail).c_str());
        break;
    }
    if (p.uncertain) {
      ImGui::SameLine();
      ImGui::TextDisabled("(gap)");
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("events were dropped around here: the model may miss what explains it");
    }
    ImGui::TableNextColumn();
    ImGui::Text("%u", p.occurrences);
    if (view.layout) {
      view.layout->add("health_row", static_cast<int>(kind), static_cast<int>(p.worker),
                       static_cast<float>(model.ticks_to_ns(model.rel(p.start) - model.rel(model.first_tick())) / 1e3),
                       static_cast<float>(model.ticks_to_ns(static_cast<double>(p.value)) / 1e3),
                       static_cast<float>(child), 0);
    }
  };
  for (const auto& [worker, rows] : groups) {
    if (shown >= kRowsPerKind) break;
    if (rows.size() == 1) {
      row(rows.front(), false);
      continue;
    }
    // The group's row: how many findings, and the worst; its rows below when open.
    std::uint64_t times = 0, worst = 0;
    Tick first = list[rows.front()].start;
    for (const std::size_t i : rows) {
      times += list[i].occurrences, worst = std::max<std::uint64_t>(worst, list[i].value);
      first = std::min(first, list[i].start);
    }
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    std::snprintf(label, sizeof label, "%s %u (%zu)###g%u", lane ? "lane" : "worker", worker, rows.size(), worker);
    // clipped: what a reader would see cut (tests check none is): `text` wider than its cell.
    auto check_fits = [&](const char* text, float before) {
      if (view.layout && ImGui::CalcTextSize(text, nullptr, true).x + before > ImGui::GetContentRegionAvail().x + 1)
        view.layout->lines.push_back(std::string("health_clipped ") + text);
    };
    check_fits(label, ImGui::GetTreeNodeToLabelSpacing());
    const bool open = ImGui::TreeNodeEx(label, ImGuiTreeNodeFlags_SpanFullWidth | ImGuiTreeNodeFlags_DefaultOpen);
    ImGui::TableNextColumn();
    const std::string from =
        "from " + format_duration(model.ticks_to_ns(model.rel(first) - model.rel(model.first_tick())));
    check_fits(from.c_str(), 0);
    ImGui::TextDisabled("%s", from.c_str());
    ImGui::TableNextColumn();
    if (kind == ProblemKind::events_dropped) {
      ImGui::TextDisabled("%zu findings", rows.size());
    } else {
      ImGui::TextDisabled("%zu findings, longest %s", rows.size(),
                          format_duration(model.ticks_to_ns(static_cast<double>(worst))).c_str());
    }
    ImGui::TableNextColumn();
    ImGui::Text("%llu", static_cast<unsigned long long>(times));
    if (view.layout)
      view.layout->add("health_group", static_cast<int>(kind), static_cast<int>(worker),
                       static_cast<float>(rows.size()), 0, 0, 0);
    if (open) {
      for (const std::size_t i : rows) {
        if (shown >= kRowsPerKind) break;
        row(i, true);
      }
      ImGui::TreePop();
    }
  }
  ImGui::EndTable();
  std::uint64_t occurrences = 0;
  for (const std::size_t i : items) occurrences += list[i].occurrences;
  if (occurrences > shown) {
    ImGui::TextDisabled("(%s in all, merged where close together; %s shown)",
                        count_of(occurrences, "occurrence").c_str(), count_of(shown, "row").c_str());
  }
}

void HealthView::thresholds_section(Model& model) {
  if (!edit_loaded_) edit_ = model.health().thresholds(), edit_loaded_ = true;
  ImGui::PushItemWidth(120);
  ImGui::InputDouble("long task (ms)", &edit_.long_task_ms, 1, 10, "%.2f");
  ImGui::InputDouble("lane wait: x lane average", &edit_.lane_wait_factor, 1, 5, "%.1f");
  ImGui::InputDouble("lane wait: at least (ms)", &edit_.lane_wait_min_ms, 0.1, 1, "%.2f");
  ImGui::InputDouble("queued while asleep (us)", &edit_.queued_asleep_min_us, 10, 100, "%.0f");
  ImGui::InputDouble("searching without work (ms)", &edit_.spin_ms, 1, 5, "%.2f");
  ImGui::PopItemWidth();
  if (!recheck_allowed_) {
    ImGui::TextDisabled("Re-check waits for the scalability figures being computed");
    return;
  }
  if (ImGui::Button("Re-check the whole trace")) model.recheck_health(edit_);
}

void HealthView::draw(Model& model, ViewState& view, ImVec2 size) {
  ImGui::BeginChild("##health", size, false);
  data_section(model);
  ImGui::Separator();
  // What is happening at the playhead (a replay paused or playing), or at the newest
  // time (live, or the whole trace shown): the banner says which.
  const bool at_playhead = std::isfinite(view.limit);
  const Tick at = at_playhead ? model.abs(view.limit) : model.last_tick();
  const std::vector<Problem> now = model.health().ongoing(model.analysis(), at);
  const bool live = model.status().kind == SourceStatus::Kind::live;
  char when[64];
  if (at_playhead) {
    std::snprintf(when, sizeof when, "AT THE PLAYHEAD (%s)",
                  format_duration(model.ticks_to_ns(model.rel(at) - model.rel(model.first_tick()))).c_str());
  } else {
    std::snprintf(when, sizeof when, "%s", live ? "NOW" : "AT THE END");
  }
  if (view.layout) {
    for (const Problem& p : now)
      view.layout->add("ongoing", static_cast<int>(p.worker), static_cast<int>(p.kind),
                       static_cast<float>(model.ticks_to_ns(model.rel(at) - model.rel(model.first_tick())) / 1e3), 0, 0,
                       0);
  }
  for (const Problem& p : now) {
    ImGui::PushStyleColor(ImGuiCol_Text, palette::vec(palette::kWarning));
    char label[200];
    std::snprintf(label, sizeof label, "%s: worker %u %s for %s##now%u", when, p.worker,
                  p.kind == ProblemKind::long_task ? "busy on one task" : "searching without work",
                  format_duration(model.ticks_to_ns(static_cast<double>(p.value))).c_str(), p.worker);
    if (ImGui::Selectable(label)) focus(model, view, p);
    ImGui::PopStyleColor();
  }
  // At a playhead the panel shows what had happened by then (the findings that had ended,
  // and the ongoing ones above), like every other view; the badge counts the whole trace.
  const std::vector<Problem> ended = at_playhead ? model.health().ended_by(at) : std::vector<Problem>{};
  const auto& list = at_playhead ? ended : model.health().problems();
  const std::uint64_t whole = model.warning_count();  // THE warning count (badge, summary line, stats)
  const std::uint64_t total = at_playhead ? model.health().warning_count(model.analysis(), at) : whole;
  bool any = false;
  if (total > 0) {
    if (at_playhead) {
      ImGui::TextColored(palette::vec(palette::kWarning), "%s by the playhead", count_of(total, "warning").c_str());
      ImGui::SameLine();
      ImGui::TextDisabled("(%s in the whole trace)", format_count(whole).c_str());
    } else {
      ImGui::TextColored(palette::vec(palette::kWarning), "%s", count_of(total, "warning").c_str());
    }
    // The sort switch on a line of its own: beside the count it was cut at narrow widths.
    ImGui::TextDisabled("grouped by worker; sort by");
    ImGui::SameLine();
    if (ImGui::RadioButton("time", !sort_by_duration_)) sort_by_duration_ = false;
    ImGui::SameLine();
    if (ImGui::RadioButton("duration", sort_by_duration_)) sort_by_duration_ = true;
    if (view.layout && ImGui::GetItemRectMax().x > ImGui::GetWindowPos().x + ImGui::GetWindowWidth())
      view.layout->lines.push_back("health_clipped sort control");
  }
  if (view.layout) {
    std::uint64_t listed = 0;
    for (int k = 0; k < kProblemKindCount; ++k) listed += model.health().count(static_cast<ProblemKind>(k));
    view.layout->add("health_warnings", static_cast<int>(model.warning_count()), static_cast<int>(listed), 0, 0, 0, 0);
    view.layout->add("health_total", static_cast<int>(total), static_cast<int>(whole), 0, 0, 0, 0);
  }
  for (int k = 0; k < kProblemKindCount; ++k) {
    const auto kind = static_cast<ProblemKind>(k);
    std::uint64_t count = model.health().count(kind);
    if (at_playhead) {
      count = 0;
      for (const Problem& p : list) count += p.kind == kind ? p.occurrences : 0;
    }
    if (count == 0) continue;
    any = true;
    const auto rows = static_cast<std::uint64_t>(
        std::count_if(list.begin(), list.end(), [&](const Problem& p) { return p.kind == kind; }));
    char header[128];
    std::snprintf(header, sizeof header, "%s: %s, %s###kind%d", problem_kind_name(kind),
                  count_of(rows, "warning").c_str(), count_of(count, "occurrence").c_str(), k);
    if (view.layout) view.layout->lines.push_back(std::string("health_header ") + header);
    ImGui::PushStyleColor(ImGuiCol_Text,
                          palette::vec(kind == ProblemKind::events_dropped ? palette::kError : palette::kWarning));
    const bool open = ImGui::CollapsingHeader(header, ImGuiTreeNodeFlags_DefaultOpen);
    ImGui::PopStyleColor();
    if (!open) continue;
    ImGui::PushID(k);
    // Long tasks the kernel made long (their threads waited for a CPU most of the time)
    // get the advice about CPUs; the kind's advice is for the others, shown only if any.
    const std::size_t preempted_rows = static_cast<std::size_t>(
        std::count_if(list.begin(), list.end(), [&](const Problem& p) { return p.kind == kind && preempted(p); }));
    if (preempted_rows < rows) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      ImGui::TextWrapped("%s", problem_kind_advice(kind));
      ImGui::PopStyleColor();
    }
    if (preempted_rows > 0) {
      const auto first = std::find_if(list.begin(), list.end(), [&](const Problem& p) { return preempted(p); });
      ImGui::PushStyleColor(ImGuiCol_Text, palette::vec(palette::kWarning));
      ImGui::TextWrapped("%s %s",
                         preempted_rows == rows ? "All of them." : (format_count(preempted_rows) + " of them.").c_str(),
                         problem_advice(*first));
      ImGui::PopStyleColor();
      if (view.layout) view.layout->lines.push_back("health_preempted_advice " + std::to_string(preempted_rows));
    }
    problem_rows(model, view, kind, list);
    ImGui::PopID();
  }
  if (!any && now.empty()) {
    if (at_playhead && whole > 0) {
      ImGui::TextDisabled("No warnings by the playhead (%s in the whole trace).", format_count(whole).c_str());
    } else if (model.has_trace_errors()) {
      ImGui::TextDisabled("No warnings in what could be read.");
    } else {
      ImGui::TextColored(palette::vec(palette::kGood), "No warnings.");
    }
  }
  if (model.health().suppressed()) {
    ImGui::TextDisabled("%s not listed%s", count_of(model.health().suppressed(), "further warning").c_str(),
                        at_playhead ? " (anywhere in the trace: their times are not kept)" : "");
  }
  ImGui::Spacing();
  if (ImGui::CollapsingHeader("Thresholds")) thresholds_section(model);
  ImGui::EndChild();
}

}  // namespace lantern::viewer
