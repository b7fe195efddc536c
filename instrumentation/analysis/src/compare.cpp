// SPDX-License-Identifier: Apache-2.0
// compare.cpp - the one comparison of two runs (see compare.hpp).
#include "lantern/analysis/compare.hpp"

#include "lantern/analysis/json_out.hpp"
#include "lantern/analysis/scalability.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <tuple>

namespace lantern::analysis {
namespace {

constexpr double kShareNotable = 0.05;  // 5 percentage points
constexpr double kRatioNotable = 1.25;
constexpr std::uint64_t kMinSamples = 10;

SideFigures figures(const LatencyHistogram& h, std::string no_samples = {}) {
  SideFigures f{h.count(),
                h.mean_ns(),
                h.quantile_ns(0.5),
                h.quantile_ns(0.9),
                h.quantile_ns(0.99),
                static_cast<double>(h.max_ns()),
                {}};
  if (f.count == 0) f.no_samples = std::move(no_samples);
  return f;
}

bool ratio_notable(double a, double b, std::uint64_t na, std::uint64_t nb) {
  if (na < kMinSamples || nb < kMinSamples || !(a > 0) || !(b > 0)) return false;
  return b / a >= kRatioNotable || a / b >= kRatioNotable;
}

bool count_notable(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t hi = std::max(a, b), lo = std::min(a, b);
  return hi - lo >= 10 && static_cast<double>(hi - lo) >= 0.5 * static_cast<double>(std::max<std::uint64_t>(lo, 1));
}

// graph_figures: the run's work, span and parallelism, as scalability() gives them. The
// curve is not printed here: one point (1 worker) and no what-ifs keep it short.
void graph_figures(const Analysis& m, Comparison::Run& r) {
  ScaleOptions options;
  options.workers = {1};
  options.top_labels = 0;
  const Scalability s = scalability(m, options);
  r.work_ns = s.work_ns;
  r.span_ns = s.span_ns;
  r.parallelism = s.parallelism;
  if (r.work_ns && r.span_ns && r.parallelism) return;
  for (const std::string& why : s.not_computed)
    r.graph_not_computed += (r.graph_not_computed.empty() ? "" : "; ") + why;
}

Comparison::Run run_of(const Analysis& m, const std::string& name) {
  Comparison::Run r;
  r.name = name;
  r.workers = m.worker_count();
  r.events = m.events();
  r.duration_ns = m.empty() ? 0 : m.ticks_to_ns(static_cast<double>(m.last_tick() - m.first_tick()));
  // Counts as stats prints them (its tasks and per-worker steals), unknown below their level.
  if (m.counted(EventId::task_begin))
    r.tasks = m.events_of(EventId::task_begin);
  else
    r.tasks_not_recorded = m.no_samples_reason(EventId::task_begin);
  if (m.counted(EventId::steal))
    r.steals = m.events_of(EventId::steal);
  else
    r.steals_not_recorded = m.no_samples_reason(EventId::steal);
  graph_figures(m, r);
  return r;
}

bool count_notable(const Count& a, const Count& b) { return a && b && count_notable(*a, *b); }

// compare_counts: every count lantern-trace stats prints, from the two runs' Summary (the
// figures stats reads), each unknown (nullopt) where a run's level does not record the
// events it counts.
void compare_counts(const Analysis& a, const Analysis& b, Comparison& c) {
  const Summary sa = a.summary(), sb = b.summary();
  auto row = [&](std::string what, EventId source, std::uint64_t va, std::uint64_t vb) {
    const Count ca = sa.counts(source) ? Count(va) : std::nullopt;
    const Count cb = sb.counts(source) ? Count(vb) : std::nullopt;
    c.counts.push_back({std::move(what), ca, cb, count_notable(ca, cb)});
  };
  // Counts every level keeps (drops, warnings): the drop marker's level, `off`.
  constexpr EventId kAlways = EventId::dropped;
  row("events", kAlways, sa.events, sb.events);
  // Events by type, but those a row below counts by its own name (tasks, steals...).
  constexpr EventId kNamedBelow[] = {EventId::task_begin, EventId::steal,   EventId::help,     EventId::wake,
                                     EventId::lane_pop,   EventId::release, EventId::io_submit};
  for (int t = 0; t < kEventCount; ++t) {
    const auto e = static_cast<EventId>(t);
    if (std::find(std::begin(kNamedBelow), std::end(kNamedBelow), e) != std::end(kNamedBelow)) continue;
    row("events: " + std::string(trace::kEventInfo[t].name), e, sa.events_by_type[static_cast<std::size_t>(t)],
        sb.events_by_type[static_cast<std::size_t>(t)]);
  }
  row("tasks", EventId::task_begin, sa.tasks, sb.tasks);
  row("unfinished tasks", EventId::task_begin, sa.unfinished_tasks, sb.unfinished_tasks);
  row("task ends without a begin", EventId::task_end, sa.unmatched_task_ends, sb.unmatched_task_ends);
  row("steals", EventId::steal, a.events_of(EventId::steal), b.events_of(EventId::steal));
  auto total = [](const Summary& s, std::uint64_t WorkerFigures::*f) {
    std::uint64_t n = 0;
    for (const WorkerFigures& w : s.workers) n += w.*f;
    return n;
  };
  row("helps", EventId::help, total(sa, &WorkerFigures::helps), total(sb, &WorkerFigures::helps));
  row("wakes", EventId::wake, sa.wakes, sb.wakes);
  for (int k = 0; k < kWakeCauseCount; ++k) {
    row("wakes (" + std::string(kWakeCauseNames[k]) + ")", EventId::wake,
        sa.wakes_by_cause[static_cast<std::size_t>(k)], sb.wakes_by_cause[static_cast<std::size_t>(k)]);
  }
  row("wakes by a worker of the pool", EventId::wake, sa.wake_arrows, sb.wake_arrows);
  row("sleeps", EventId::state, sa.sleeps, sb.sleeps);
  row("lane pops", EventId::lane_pop, sa.lane_pops, sb.lane_pops);
  row("releases", EventId::release, sa.releases, sb.releases);
  row("IO submitted", EventId::io_submit, sa.io_submitted, sb.io_submitted);
  row("IO completed", EventId::io_complete, sa.io_completed, sb.io_completed);
  row("IO failed", EventId::io_complete, sa.io_failed, sb.io_failed);
  row("IO unpaired", EventId::io_complete, sa.io_unpaired, sb.io_unpaired);
  row("events dropped", kAlways, sa.dropped_events, sb.dropped_events);
  for (int r = 0; r < kDropReasonCount; ++r) {
    row("events dropped (" + std::string(kDropReasonNames[r]) + ")", kAlways, sa.dropped_by_reason[r],
        sb.dropped_by_reason[r]);
  }
  row("warnings", kAlways, sa.warnings, sb.warnings);
  for (int k = 0; k < kProblemKindCount; ++k) {
    row(std::string("warnings (") + problem_kind_name(static_cast<ProblemKind>(k)) + ")", kAlways,
        sa.warnings_by_kind[static_cast<std::size_t>(k)], sb.warnings_by_kind[static_cast<std::size_t>(k)]);
  }
  // Per worker, the columns of stats' table (and sleeps).
  const std::size_t workers = std::max(sa.workers.size(), sb.workers.size());
  const struct {
    const char* name;
    EventId source;
    std::uint64_t WorkerFigures::*value;
  } kColumns[] = {{"tasks", EventId::task_begin, &WorkerFigures::tasks},
                  {"steals", EventId::steal, &WorkerFigures::steals},
                  {"helps", EventId::help, &WorkerFigures::helps},
                  {"wakes", EventId::wake, &WorkerFigures::wakes},
                  {"sleeps", EventId::state, &WorkerFigures::sleeps}};
  for (std::size_t w = 0; w < workers; ++w) {
    for (const auto& col : kColumns) {
      const std::uint64_t va = w < sa.workers.size() ? sa.workers[w].*col.value : 0;
      const std::uint64_t vb = w < sb.workers.size() ? sb.workers[w].*col.value : 0;
      row("worker " + std::to_string(w) + ": " + col.name, col.source, va, vb);
    }
  }
}

}  // namespace

std::string Comparison::GraphFigure::text(const std::optional<double>& v) const {
  if (!v) return "-";
  if (what != "parallelism") return format_duration_ns(*v);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", *v);
  return buf;
}

std::size_t Comparison::notable_count() const {
  std::size_t n = 0;
  for (const auto& r : state_shares) n += r.notable;
  for (const auto& r : durations) n += r.notable;
  for (const auto& r : steal_cells) n += r.notable;
  for (const auto& r : steals_by_distance) n += r.notable;
  for (const auto& r : latencies) n += r.notable;
  for (const auto& r : counts) n += r.notable;
  for (const auto& r : graph) n += r.notable;
  return n;
}

Comparison compare(const Analysis& a, const std::string& a_name, const Analysis& b, const std::string& b_name) {
  Comparison c;
  c.a = run_of(a, a_name);
  c.b = run_of(b, b_name);
  for (const auto& [what, pa, pb] :
       {std::tuple{"work", &c.a.work_ns, &c.b.work_ns}, std::tuple{"span", &c.a.span_ns, &c.b.span_ns},
        std::tuple{"parallelism", &c.a.parallelism, &c.b.parallelism}}) {
    const bool both = *pa && *pb && **pa > 0 && **pb > 0;
    c.graph.push_back({what, *pa, *pb, both && (**pb / **pa >= kRatioNotable || **pa / **pb >= kRatioNotable)});
  }
  // State shares: Analysis::state_shares, what lantern-trace stats prints for the same
  // worker (of its whole span, unknown time a share of its own: analysis.hpp). The
  // unknown row is there when either run has unknown time for the worker.
  auto shares = [](const Analysis& m, std::uint32_t w) {
    return w < m.worker_count() ? m.state_shares(w) : StateShares{};
  };
  const std::uint32_t workers = std::max(a.worker_count(), b.worker_count());
  for (std::uint32_t w = 0; w < workers; ++w) {
    const StateShares sa = shares(a, w), sb = shares(b, w);
    for (int s = 0; s < kStateSlots; ++s) {
      if (s == kUnknownState && sa[s] == 0 && sb[s] == 0) continue;
      const bool in_a = w < a.worker_count(), in_b = w < b.worker_count();
      c.state_shares.push_back(
          {w, s, sa[s], sb[s], in_a && in_b && std::fabs(sb[s] - sa[s]) >= kShareNotable, in_a, in_b});
    }
  }
  // Per label, matched by name (ids are per trace): the tasks begun (what stats and the
  // Chrome export count) and the durations of those that ended.
  struct Side {
    std::uint64_t tasks = 0;
    const LatencyHistogram* durations = nullptr;
  };
  struct Entry {
    std::uint32_t id = 0;
    Side a, b;
  };
  std::map<std::string, Entry> by_name;
  auto name_of = [](const Analysis& m, std::uint32_t id) {
    return id == 0 ? std::string("(no label)") : m.labels().display_name(id);
  };
  for (int k = 0; k < 2; ++k) {
    const Analysis& m = k ? b : a;
    auto side = [&](std::uint32_t id) -> Side& {
      Entry& e = by_name[name_of(m, id)];
      if (!k || !(e.a.tasks || e.a.durations)) e.id = id;
      return k ? e.b : e.a;
    };
    for (const auto& [id, n] : m.tasks_by_label()) side(id).tasks = n;
    for (const auto& [id, h] : m.duration_by_label()) side(id).durations = &h;
  }
  static const LatencyHistogram kEmpty;
  const bool tasks_a = a.counted(EventId::task_begin), tasks_b = b.counted(EventId::task_begin);
  for (const auto& [name, e] : by_name) {
    Comparison::LabelDurations r{e.id,
                                 name,
                                 tasks_a ? Count(e.a.tasks) : std::nullopt,
                                 tasks_b ? Count(e.b.tasks) : std::nullopt,
                                 figures(e.a.durations ? *e.a.durations : kEmpty),
                                 figures(e.b.durations ? *e.b.durations : kEmpty),
                                 0,
                                 false};
    if (r.a.mean_ns > 0 && r.b.mean_ns > 0) r.ratio = r.b.mean_ns / r.a.mean_ns;
    r.notable = ratio_notable(r.a.mean_ns, r.b.mean_ns, r.a.count, r.b.count) ||
                ratio_notable(r.a.p90_ns, r.b.p90_ns, r.a.count, r.b.count);
    c.durations.push_back(std::move(r));
  }
  // Steal matrices, cell by cell; a run whose level does not record steals has none to
  // compare (nullopt), not zero.
  const bool steals_a = a.counted(EventId::steal), steals_b = b.counted(EventId::steal);
  auto count = [](bool counted, std::uint64_t n) { return counted ? Count(n) : std::nullopt; };
  for (std::uint32_t t = 0; t < workers; ++t) {
    for (std::uint32_t v = 0; v < workers; ++v) {
      const std::uint64_t na = t < a.worker_count() && v < a.worker_count() ? a.steal_count(t, v) : 0;
      const std::uint64_t nb = t < b.worker_count() && v < b.worker_count() ? b.steal_count(t, v) : 0;
      const Count ca = count(steals_a, na), cb = count(steals_b, nb);
      if (na || nb) c.steal_cells.push_back({t, v, ca, cb, count_notable(ca, cb)});
    }
  }
  for (int d = 0; d < trace::kDistanceCount; ++d) {
    const Count ca = count(steals_a, a.steals_by_distance()[static_cast<std::size_t>(d)]);
    const Count cb = count(steals_b, b.steals_by_distance()[static_cast<std::size_t>(d)]);
    c.steals_by_distance.push_back({d, ca, cb, count_notable(ca, cb)});
  }
  // Latency histograms; an empty one says why, named by the events it is built from (as
  // Analysis::summary does).
  const struct {
    const char* what;
    const LatencyHistogram& (Analysis::*get)() const noexcept;
    EventId source;
  } kinds[] = {{"ready wait", &Analysis::ready_wait, EventId::lane_pop},
               {"task duration", &Analysis::task_duration, EventId::task_end},
               {"wake latency", &Analysis::wake_latency, EventId::wake},
               {"IO latency", &Analysis::io_latency, EventId::io_complete}};
  for (const auto& k : kinds) {
    Comparison::Latency r{k.what, figures((a.*k.get)(), a.no_samples_reason(k.source)),
                          figures((b.*k.get)(), b.no_samples_reason(k.source)), 0, false};
    if (r.a.p50_ns > 0 && r.b.p50_ns > 0) r.ratio = r.b.p50_ns / r.a.p50_ns;
    r.notable = ratio_notable(r.a.p50_ns, r.b.p50_ns, r.a.count, r.b.count) ||
                ratio_notable(r.a.p90_ns, r.b.p90_ns, r.a.count, r.b.count);
    c.latencies.push_back(std::move(r));
  }
  compare_counts(a, b, c);
  return c;
}

namespace {

std::string dur(double ns) { return format_duration_ns(ns); }
// figure: a duration of a side with samples, "-" for a side without.
std::string figure(const SideFigures& f, double ns) { return f.count ? dur(ns) : "-"; }
std::string count_text(const Count& n) { return n ? std::to_string(*n) : "-"; }

std::string ratio_text(double r) {
  if (!(r > 0)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", r);
  return buf;
}

void json_count(JsonOut& j, const Count& n) {
  if (n)
    j.u64(*n);
  else
    j.raw("null");
}

// json_figures: a side's figures; `tasks` (label rows): the tasks begun (null: not
// recorded); no_samples: why a side has none.
void json_figures(JsonOut& j, const SideFigures& f, const Count* tasks = nullptr) {
  j.raw("{");
  if (tasks) {
    j.raw("\"tasks\": ");
    json_count(j, *tasks);
    j.raw(", ");
  }
  j.raw("\"count\": ").u64(f.count);
  j.raw(", \"mean_ns\": ").fixed(f.mean_ns, 1);
  j.raw(", \"p50_ns\": ").fixed(f.p50_ns, 1);
  j.raw(", \"p90_ns\": ").fixed(f.p90_ns, 1);
  j.raw(", \"p99_ns\": ").fixed(f.p99_ns, 1);
  j.raw(", \"max_ns\": ").fixed(f.max_ns, 1);
  if (f.count == 0 && !f.no_samples.empty()) j.raw(", \"no_samples\": ").string(f.no_samples);
  j.raw("}");
}

void write_run(std::FILE* out, const char* side, const Comparison::Run& r) {
  std::fprintf(out, "%s: %s\n   %u workers, %llu events, %s, %s tasks, %s steals\n", side, r.name.c_str(), r.workers,
               static_cast<unsigned long long>(r.events), dur(r.duration_ns).c_str(), count_text(r.tasks).c_str(),
               count_text(r.steals).c_str());
  if (!r.tasks) std::fprintf(out, "   - tasks: %s\n", r.tasks_not_recorded.c_str());
  if (!r.steals) std::fprintf(out, "   - steals: %s\n", r.steals_not_recorded.c_str());
  if (!r.work_ns && !r.span_ns && !r.parallelism) {
    std::fprintf(out, "   %s\n", r.graph_not_computed.c_str());  // "work, span, ... are not computed: WHY"
    return;
  }
  char parallelism[32] = "not computed";
  if (r.parallelism) std::snprintf(parallelism, sizeof parallelism, "%.2f", *r.parallelism);
  std::fprintf(out, "   work %s, span %s, parallelism %s\n", r.work_ns ? dur(*r.work_ns).c_str() : "not computed",
               r.span_ns ? dur(*r.span_ns).c_str() : "not computed", parallelism);
  if (!r.graph_not_computed.empty()) std::fprintf(out, "   - not computed: %s\n", r.graph_not_computed.c_str());
}

}  // namespace

void write_table(std::FILE* out, const Comparison& c, bool notable_only) {
  const char* mark[] = {" ", "*"};
  write_run(out, "A", c.a);
  write_run(out, "B", c.b);
  std::fprintf(out, "%zu notable differences (marked *)\n\n", c.notable_count());
  if (std::any_of(c.graph.begin(), c.graph.end(), [](const auto& r) { return r.a || r.b; })) {
    std::fprintf(out, "task graph (lantern-trace scale)\n  %-12s %10s %10s %7s\n", "figure", "A", "B", "B/A");
    for (const auto& r : c.graph) {
      if (notable_only && !r.notable) continue;
      char quotient[32] = "-";
      if (r.a && r.b && *r.a > 0) std::snprintf(quotient, sizeof quotient, "%.2f", *r.b / *r.a);
      std::fprintf(out, "%s %-12s %10s %10s %7s\n", mark[r.notable], r.what.c_str(), r.text(r.a).c_str(),
                   r.text(r.b).c_str(), quotient);
    }
    std::fprintf(out, "\n");
  }
  std::fprintf(out,
               "state shares (as lantern-trace stats prints them: of each worker's time from its start to its stop)\n"
               "  %-8s %-9s %8s %8s %9s\n",
               "worker", "state", "A", "B", "B-A");
  for (const auto& r : c.state_shares) {
    if (notable_only && !r.notable) continue;
    auto share = [](bool in, double v) {
      char buf[32] = "-";
      if (in) std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
      return std::string(buf);
    };
    char delta[32] = "-";
    if (r.in_a && r.in_b) std::snprintf(delta, sizeof delta, "%+.1fpp", 100 * (r.b - r.a));
    std::fprintf(out, "%s %-8u %-9s %8s %8s %9s\n", mark[r.notable], r.worker,
                 std::string(state_slot_name(r.state)).c_str(), share(r.in_a, r.a).c_str(), share(r.in_b, r.b).c_str(),
                 delta);
  }
  std::fprintf(out,
               "\ntask durations by label (tasks: begun; mean and p90: of those that ended)\n"
               "  %-16s %9s %9s %10s %10s %10s %10s %7s\n",
               "label", "A tasks", "B tasks", "A mean", "B mean", "A p90", "B p90", "B/A");
  for (const auto& r : c.durations) {
    if (notable_only && !r.notable) continue;
    std::fprintf(out, "%s %-16s %9s %9s %10s %10s %10s %10s %7s\n", mark[r.notable], r.name.c_str(),
                 count_text(r.tasks_a).c_str(), count_text(r.tasks_b).c_str(), figure(r.a, r.a.mean_ns).c_str(),
                 figure(r.b, r.b.mean_ns).c_str(), figure(r.a, r.a.p90_ns).c_str(), figure(r.b, r.b.p90_ns).c_str(),
                 ratio_text(r.ratio).c_str());
  }
  std::fprintf(out, "\nsteals by distance\n  %-8s %9s %9s\n", "distance", "A", "B");
  for (const auto& r : c.steals_by_distance) {
    if (notable_only && !r.notable) continue;
    std::fprintf(out, "%s %-8s %9s %9s\n", mark[r.notable], trace::kDistanceNames[r.distance].data(),
                 count_text(r.a).c_str(), count_text(r.b).c_str());
  }
  std::fprintf(out, "\nsteal matrix (thief <- victim)\n  %-6s %-6s %9s %9s\n", "thief", "victim", "A", "B");
  for (const auto& r : c.steal_cells) {
    if (notable_only && !r.notable) continue;
    std::fprintf(out, "%s %-6u %-6u %9s %9s\n", mark[r.notable], r.thief, r.victim, count_text(r.a).c_str(),
                 count_text(r.b).c_str());
  }
  std::fprintf(out, "\nlatency histograms\n  %-14s %9s %9s %10s %10s %10s %10s %10s %10s %7s\n", "what", "A n", "B n",
               "A p50", "B p50", "A p90", "B p90", "A p99", "B p99", "B/A p50");
  std::string why;  // the empty figures' reasons, below the table
  for (const auto& r : c.latencies) {
    if (notable_only && !r.notable) continue;
    std::fprintf(out, "%s %-14s %9llu %9llu %10s %10s %10s %10s %10s %10s %7s\n", mark[r.notable], r.what.c_str(),
                 static_cast<unsigned long long>(r.a.count), static_cast<unsigned long long>(r.b.count),
                 figure(r.a, r.a.p50_ns).c_str(), figure(r.b, r.b.p50_ns).c_str(), figure(r.a, r.a.p90_ns).c_str(),
                 figure(r.b, r.b.p90_ns).c_str(), figure(r.a, r.a.p99_ns).c_str(), figure(r.b, r.b.p99_ns).c_str(),
                 ratio_text(r.ratio).c_str());
    for (const auto& [side, f] : {std::pair{"A", &r.a}, std::pair{"B", &r.b}}) {
      if (f->count == 0) why += std::string("  ") + side + " " + r.what + ": no samples: " + f->no_samples + "\n";
    }
  }
  std::fputs(why.c_str(), out);
  std::fprintf(out, "\ncounts (as lantern-trace stats prints them)\n  %-34s %12s %12s %9s\n", "what", "A", "B", "B/A");
  for (const auto& r : c.counts) {
    if (notable_only && !r.notable) continue;
    const double ratio = r.a && r.b && *r.a > 0 ? static_cast<double>(*r.b) / static_cast<double>(*r.a) : 0;
    std::fprintf(out, "%s %-34s %12s %12s %9s\n", mark[r.notable], r.what.c_str(), count_text(r.a).c_str(),
                 count_text(r.b).c_str(), ratio_text(ratio).c_str());
  }
}

void write_json(std::FILE* out, const Comparison& c) {
  JsonOut j(out);
  auto run = [&](const char* key, const Comparison::Run& r) {
    j.raw("  \"").raw(key).raw("\": {\"name\": ").string(r.name);
    j.raw(", \"workers\": ").u64(r.workers).raw(", \"events\": ").u64(r.events);
    j.raw(", \"duration_ns\": ").fixed(r.duration_ns, 1).raw(", \"tasks\": ");
    json_count(j, r.tasks);
    j.raw(", \"steals\": ");
    json_count(j, r.steals);
    if (!r.tasks) j.raw(", \"tasks_not_recorded\": ").string(r.tasks_not_recorded);
    if (!r.steals) j.raw(", \"steals_not_recorded\": ").string(r.steals_not_recorded);
    for (const auto& [field, value] : {std::pair{"work_ns", &r.work_ns}, std::pair{"span_ns", &r.span_ns},
                                       std::pair{"parallelism", &r.parallelism}}) {
      j.raw(", \"").raw(field).raw("\": ");
      if (*value)
        j.f64(**value);
      else
        j.raw("null");
    }
    if (!r.graph_not_computed.empty()) j.raw(", \"graph_not_computed\": ").string(r.graph_not_computed);
    j.raw("},\n");
  };
  // row: the separator before the i-th row of an array.
  auto row = [&](std::size_t i) -> JsonOut& { return j.raw(i ? ",\n    {" : "\n    {"); };
  j.raw("{\n");
  run("a", c.a);
  run("b", c.b);
  j.raw("  \"notable\": ").u64(c.notable_count()).raw(",\n  \"state_shares\": [");
  for (std::size_t i = 0; i < c.state_shares.size(); ++i) {
    const auto& r = c.state_shares[i];
    row(i).raw("\"worker\": ").u64(r.worker).raw(", \"state\": ").string(state_slot_name(r.state));
    j.raw(", \"a\": ");
    r.in_a ? j.fixed(r.a, 6) : j.raw("null");
    j.raw(", \"b\": ");
    r.in_b ? j.fixed(r.b, 6) : j.raw("null");
    j.raw(", \"notable\": ").boolean(r.notable).raw("}");
  }
  j.raw("\n  ],\n  \"graph\": [");
  for (std::size_t i = 0; i < c.graph.size(); ++i) {
    const auto& r = c.graph[i];
    row(i).raw("\"figure\": ").string(r.what).raw(", \"a\": ");
    r.a ? j.f64(*r.a) : j.raw("null");
    j.raw(", \"b\": ");
    r.b ? j.f64(*r.b) : j.raw("null");
    j.raw(", \"notable\": ").boolean(r.notable).raw("}");
  }
  j.raw("\n  ],\n  \"task_durations\": [");
  for (std::size_t i = 0; i < c.durations.size(); ++i) {
    const auto& r = c.durations[i];
    row(i).raw("\"label\": ").string(r.name).raw(", \"a\": ");
    json_figures(j, r.a, &r.tasks_a);
    j.raw(", \"b\": ");
    json_figures(j, r.b, &r.tasks_b);
    j.raw(", \"ratio\": ").fixed(r.ratio, 4).raw(", \"notable\": ").boolean(r.notable).raw("}");
  }
  j.raw("\n  ],\n  \"steals_by_distance\": [");
  for (std::size_t i = 0; i < c.steals_by_distance.size(); ++i) {
    const auto& r = c.steals_by_distance[i];
    row(i).raw("\"distance\": ").string(trace::kDistanceNames[r.distance]).raw(", \"a\": ");
    json_count(j, r.a);
    j.raw(", \"b\": ");
    json_count(j, r.b);
    j.raw(", \"notable\": ").boolean(r.notable).raw("}");
  }
  j.raw("\n  ],\n  \"steal_matrix\": [");
  for (std::size_t i = 0; i < c.steal_cells.size(); ++i) {
    const auto& r = c.steal_cells[i];
    row(i).raw("\"thief\": ").u64(r.thief).raw(", \"victim\": ").u64(r.victim).raw(", \"a\": ");
    json_count(j, r.a);
    j.raw(", \"b\": ");
    json_count(j, r.b);
    j.raw(", \"notable\": ").boolean(r.notable).raw("}");
  }
  j.raw("\n  ],\n  \"latency\": [");
  for (std::size_t i = 0; i < c.latencies.size(); ++i) {
    const auto& r = c.latencies[i];
    row(i).raw("\"what\": ").string(r.what).raw(", \"a\": ");
    json_figures(j, r.a);
    j.raw(", \"b\": ");
    json_figures(j, r.b);
    j.raw(", \"ratio\": ").fixed(r.ratio, 4).raw(", \"notable\": ").boolean(r.notable).raw("}");
  }
  j.raw("\n  ],\n  \"counts\": [");
  for (std::size_t i = 0; i < c.counts.size(); ++i) {
    const auto& r = c.counts[i];
    row(i).raw("\"what\": ").string(r.what).raw(", \"a\": ");
    json_count(j, r.a);
    j.raw(", \"b\": ");
    json_count(j, r.b);
    j.raw(", \"notable\": ").boolean(r.notable).raw("}");
  }
  j.raw("\n  ]\n}\n");
}

}  // namespace lantern::analysis
