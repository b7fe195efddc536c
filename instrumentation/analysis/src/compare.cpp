// compare.cpp - the one comparison of two runs (see compare.hpp).
#include "lantern/analysis/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace lantern::analysis {
namespace {

constexpr double kShareNotable = 0.05;  // 5 percentage points
constexpr double kRatioNotable = 1.25;
constexpr std::uint64_t kMinSamples = 10;

SideFigures figures(const LatencyHistogram& h) {
  return SideFigures{h.count(), h.mean_ns(), h.quantile_ns(0.5), h.quantile_ns(0.9), h.quantile_ns(0.99), h.max_ns()};
}

bool ratio_notable(double a, double b, std::uint64_t na, std::uint64_t nb) {
  if (na < kMinSamples || nb < kMinSamples || !(a > 0) || !(b > 0)) return false;
  return b / a >= kRatioNotable || a / b >= kRatioNotable;
}

bool count_notable(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t hi = std::max(a, b), lo = std::min(a, b);
  return hi - lo >= 10 && static_cast<double>(hi - lo) >= 0.5 * static_cast<double>(std::max<std::uint64_t>(lo, 1));
}

Comparison::Run run_of(const Analysis& m, const std::string& name) {
  Comparison::Run r;
  r.name = name;
  r.workers = m.worker_count();
  r.events = m.events();
  r.duration_ns = m.empty() ? 0 : m.ticks_to_ns(static_cast<double>(m.last_tick() - m.first_tick()));
  r.tasks = m.events_of(trace::EventType::task_begin);
  for (const auto v : m.steals_by_distance()) r.steals += v;
  return r;
}

}  // namespace

std::size_t Comparison::notable_count() const {
  std::size_t n = 0;
  for (const auto& r : state_shares) n += r.notable;
  for (const auto& r : durations) n += r.notable;
  for (const auto& r : steal_cells) n += r.notable;
  for (const auto& r : steals_by_distance) n += r.notable;
  for (const auto& r : latencies) n += r.notable;
  return n;
}

Comparison compare(const Analysis& a, const std::string& a_name, const Analysis& b, const std::string& b_name) {
  Comparison c;
  c.a = run_of(a, a_name);
  c.b = run_of(b, b_name);
  // State shares: Analysis::state_shares, what lantern-trace stats prints for the same
  // worker (of its whole span, unknown time a share of its own: analysis.hpp). The
  // unknown row is there when either run has unknown time for the worker.
  auto shares = [](const Analysis& m, std::uint32_t w) { return w < m.worker_count() ? m.state_shares(w) : StateShares{}; };
  const std::uint32_t workers = std::max(a.worker_count(), b.worker_count());
  for (std::uint32_t w = 0; w < workers; ++w) {
    const StateShares sa = shares(a, w), sb = shares(b, w);
    for (int s = 0; s < kStateSlots; ++s) {
      if (s == kUnknownState && sa[s] == 0 && sb[s] == 0) continue;
      c.state_shares.push_back({w, s, sa[s], sb[s], std::fabs(sb[s] - sa[s]) >= kShareNotable});
    }
  }
  // Task durations per label, matched by name (ids are per trace).
  // (the analysis' per-label histograms: every task whose begin and end were recorded)
  const auto& da = a.duration_by_label();
  const auto& db = b.duration_by_label();
  std::map<std::string, std::pair<std::uint32_t, std::pair<const LatencyHistogram*, const LatencyHistogram*>>> by_name;
  auto name_of = [](const Analysis& m, std::uint32_t id) { return id == 0 ? std::string("(no label)") : m.labels().display_name(id); };
  for (const auto& [id, h] : da) by_name[name_of(a, id)].first = id, by_name[name_of(a, id)].second.first = &h;
  for (const auto& [id, h] : db) {
    auto& e = by_name[name_of(b, id)];
    if (!e.second.first) e.first = id;
    e.second.second = &h;
  }
  static const LatencyHistogram kEmpty;
  for (const auto& [name, entry] : by_name) {
    const LatencyHistogram& ha = entry.second.first ? *entry.second.first : kEmpty;
    const LatencyHistogram& hb = entry.second.second ? *entry.second.second : kEmpty;
    Comparison::LabelDurations r{entry.first, name, figures(ha), figures(hb), 0, false};
    if (r.a.mean_ns > 0 && r.b.mean_ns > 0) r.ratio = r.b.mean_ns / r.a.mean_ns;
    r.notable = ratio_notable(r.a.mean_ns, r.b.mean_ns, r.a.count, r.b.count) ||
                ratio_notable(r.a.p90_ns, r.b.p90_ns, r.a.count, r.b.count);
    c.durations.push_back(std::move(r));
  }
  // Steal matrices, cell by cell.
  for (std::uint32_t t = 0; t < workers; ++t) {
    for (std::uint32_t v = 0; v < workers; ++v) {
      const std::uint64_t na = t < a.worker_count() && v < a.worker_count() ? a.steal_count(t, v) : 0;
      const std::uint64_t nb = t < b.worker_count() && v < b.worker_count() ? b.steal_count(t, v) : 0;
      if (na || nb) c.steal_cells.push_back({t, v, na, nb, count_notable(na, nb)});
    }
  }
  for (int d = 0; d < trace::kDistanceCount; ++d) {
    const std::uint64_t na = a.steals_by_distance()[static_cast<std::size_t>(d)], nb = b.steals_by_distance()[static_cast<std::size_t>(d)];
    c.steals_by_distance.push_back({d, na, nb, count_notable(na, nb)});
  }
  // Latency histograms.
  const struct {
    const char* what;
    const LatencyHistogram& (Analysis::*get)() const noexcept;
  } kinds[] = {{"ready wait", &Analysis::ready_wait}, {"task duration", &Analysis::task_duration}, {"wake latency", &Analysis::wake_latency}};
  for (const auto& k : kinds) {
    Comparison::Latency r{k.what, figures((a.*k.get)()), figures((b.*k.get)()), 0, false};
    if (r.a.p50_ns > 0 && r.b.p50_ns > 0) r.ratio = r.b.p50_ns / r.a.p50_ns;
    r.notable = ratio_notable(r.a.p50_ns, r.b.p50_ns, r.a.count, r.b.count) ||
                ratio_notable(r.a.p90_ns, r.b.p90_ns, r.a.count, r.b.count);
    c.latencies.push_back(std::move(r));
  }
  return c;
}

namespace {

std::string dur(double ns) {
  char buf[32];
  const double v = std::fabs(ns);
  if (v < 1e3) std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (v < 1e6) std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else if (v < 1e9) std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  else std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  return buf;
}

std::string ratio_text(double r) {
  if (!(r > 0)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", r);
  return buf;
}

void json_string(std::FILE* out, const std::string& s) {
  std::fputc('"', out);
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') std::fprintf(out, "\\%c", ch);
    else if (c < 0x20) std::fprintf(out, "\\u%04x", c);
    else std::fputc(ch, out);
  }
  std::fputc('"', out);
}

void json_figures(std::FILE* out, const SideFigures& f) {
  std::fprintf(out, "{\"count\": %llu, \"mean_ns\": %.1f, \"p50_ns\": %.1f, \"p90_ns\": %.1f, \"p99_ns\": %.1f, \"max_ns\": %.1f}",
               static_cast<unsigned long long>(f.count), f.mean_ns, f.p50_ns, f.p90_ns, f.p99_ns, f.max_ns);
}

}  // namespace

void write_table(std::FILE* out, const Comparison& c, bool notable_only) {
  const char* mark[] = {" ", "*"};
  std::fprintf(out, "A: %s\n   %u workers, %llu events, %s, %llu tasks, %llu steals\n", c.a.name.c_str(), c.a.workers,
               static_cast<unsigned long long>(c.a.events), dur(c.a.duration_ns).c_str(),
               static_cast<unsigned long long>(c.a.tasks), static_cast<unsigned long long>(c.a.steals));
  std::fprintf(out, "B: %s\n   %u workers, %llu events, %s, %llu tasks, %llu steals\n", c.b.name.c_str(), c.b.workers,
               static_cast<unsigned long long>(c.b.events), dur(c.b.duration_ns).c_str(),
               static_cast<unsigned long long>(c.b.tasks), static_cast<unsigned long long>(c.b.steals));
  std::fprintf(out, "%zu notable differences (marked *)\n\n", c.notable_count());
  std::fprintf(out, "state shares (as lantern-trace stats prints them: of each worker's time from its start to its stop)\n"
               "  %-8s %-9s %8s %8s %9s\n", "worker", "state", "A", "B", "B-A");
  for (const auto& r : c.state_shares) {
    if (notable_only && !r.notable) continue;
    std::fprintf(out, "%s %-8u %-9s %7.1f%% %7.1f%% %+7.1fpp\n", mark[r.notable], r.worker, std::string(state_slot_name(r.state)).c_str(),
                 100 * r.a, 100 * r.b, 100 * (r.b - r.a));
  }
  std::fprintf(out, "\ntask durations by label\n  %-16s %9s %9s %10s %10s %10s %10s %7s\n", "label", "A tasks", "B tasks", "A mean",
               "B mean", "A p90", "B p90", "B/A");
  for (const auto& r : c.durations) {
    if (notable_only && !r.notable) continue;
    std::fprintf(out, "%s %-16s %9llu %9llu %10s %10s %10s %10s %7s\n", mark[r.notable], r.name.c_str(),
                 static_cast<unsigned long long>(r.a.count), static_cast<unsigned long long>(r.b.count), dur(r.a.mean_ns).c_str(),
                 dur(r.b.mean_ns).c_str(), dur(r.a.p90_ns).c_str(), dur(r.b.p90_ns).c_str(), ratio_text(r.ratio).c_str());
  }
  std::fprintf(out, "\nsteals by distance\n  %-8s %9s %9s\n", "distance", "A", "B");
  for (const auto& r : c.steals_by_distance) {
    if (notable_only && !r.notable) continue;
    std::fprintf(out, "%s %-8s %9llu %9llu\n", mark[r.notable], trace::kDistanceNames[r.distance].data(),
                 static_cast<unsigned long long>(r.a), static_cast<unsigned long long>(r.b));
  }
  std::fprintf(out, "\nsteal matrix (thief <- victim)\n  %-6s %-6s %9s %9s\n", "thief", "victim", "A", "B");
  for (const auto& r : c.steal_cells) {
    if (notable_only && !r.notable) continue;
    std::fprintf(out, "%s %-6u %-6u %9llu %9llu\n", mark[r.notable], r.thief, r.victim, static_cast<unsigned long long>(r.a),
                 static_cast<unsigned long long>(r.b));
  }
  std::fprintf(out, "\nlatency histograms\n  %-14s %9s %9s %10s %10s %10s %10s %10s %10s %7s\n", "what", "A n", "B n", "A p50", "B p50",
               "A p90", "B p90", "A p99", "B p99", "B/A p50");
  for (const auto& r : c.latencies) {
    if (notable_only && !r.notable) continue;
    std::fprintf(out, "%s %-14s %9llu %9llu %10s %10s %10s %10s %10s %10s %7s\n", mark[r.notable], r.what.c_str(),
                 static_cast<unsigned long long>(r.a.count), static_cast<unsigned long long>(r.b.count), dur(r.a.p50_ns).c_str(),
                 dur(r.b.p50_ns).c_str(), dur(r.a.p90_ns).c_str(), dur(r.b.p90_ns).c_str(), dur(r.a.p99_ns).c_str(),
                 dur(r.b.p99_ns).c_str(), ratio_text(r.ratio).c_str());
  }
}

void write_json(std::FILE* out, const Comparison& c) {
  auto run = [&](const char* key, const Comparison::Run& r) {
    std::fprintf(out, "  \"%s\": {\"name\": ", key);
    json_string(out, r.name);
    std::fprintf(out, ", \"workers\": %u, \"events\": %llu, \"duration_ns\": %.1f, \"tasks\": %llu, \"steals\": %llu},\n", r.workers,
                 static_cast<unsigned long long>(r.events), r.duration_ns, static_cast<unsigned long long>(r.tasks),
                 static_cast<unsigned long long>(r.steals));
  };
  std::fprintf(out, "{\n");
  run("a", c.a);
  run("b", c.b);
  std::fprintf(out, "  \"notable\": %zu,\n  \"state_shares\": [", c.notable_count());
  for (std::size_t i = 0; i < c.state_shares.size(); ++i) {
    const auto& r = c.state_shares[i];
    std::fprintf(out, "%s\n    {\"worker\": %u, \"state\": \"%s\", \"a\": %.6f, \"b\": %.6f, \"notable\": %s}", i ? "," : "", r.worker,
                 std::string(state_slot_name(r.state)).c_str(), r.a, r.b, r.notable ? "true" : "false");
  }
  std::fprintf(out, "\n  ],\n  \"task_durations\": [");
  for (std::size_t i = 0; i < c.durations.size(); ++i) {
    const auto& r = c.durations[i];
    std::fprintf(out, "%s\n    {\"label\": ", i ? "," : "");
    json_string(out, r.name);
    std::fprintf(out, ", \"a\": ");
    json_figures(out, r.a);
    std::fprintf(out, ", \"b\": ");
    json_figures(out, r.b);
    std::fprintf(out, ", \"ratio\": %.4f, \"notable\": %s}", r.ratio, r.notable ? "true" : "false");
  }
  std::fprintf(out, "\n  ],\n  \"steals_by_distance\": [");
  for (std::size_t i = 0; i < c.steals_by_distance.size(); ++i) {
    const auto& r = c.steals_by_distance[i];
    std::fprintf(out, "%s\n    {\"distance\": \"%s\", \"a\": %llu, \"b\": %llu, \"notable\": %s}", i ? "," : "",
                 trace::kDistanceNames[r.distance].data(), static_cast<unsigned long long>(r.a), static_cast<unsigned long long>(r.b),
                 r.notable ? "true" : "false");
  }
  std::fprintf(out, "\n  ],\n  \"steal_matrix\": [");
  for (std::size_t i = 0; i < c.steal_cells.size(); ++i) {
    const auto& r = c.steal_cells[i];
    std::fprintf(out, "%s\n    {\"thief\": %u, \"victim\": %u, \"a\": %llu, \"b\": %llu, \"notable\": %s}", i ? "," : "", r.thief,
                 r.victim, static_cast<unsigned long long>(r.a), static_cast<unsigned long long>(r.b), r.notable ? "true" : "false");
  }
  std::fprintf(out, "\n  ],\n  \"latency\": [");
  for (std::size_t i = 0; i < c.latencies.size(); ++i) {
    const auto& r = c.latencies[i];
    std::fprintf(out, "%s\n    {\"what\": \"%s\", \"a\": ", i ? "," : "", r.what.c_str());
    json_figures(out, r.a);
    std::fprintf(out, ", \"b\": ");
    json_figures(out, r.b);
    std::fprintf(out, ", \"ratio\": %.4f, \"notable\": %s}", r.ratio, r.notable ? "true" : "false");
  }
  std::fprintf(out, "\n  ]\n}\n");
}

}  // namespace lantern::analysis
