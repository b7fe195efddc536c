// SPDX-License-Identifier: Apache-2.0
// scalability.cpp - the task graph rebuilt from one Analysis, its work, span and critical
// path, the greedy bounds, a work-stealing simulator and the what-if figures
// (scalability.hpp states the definitions; instrumentation/README.md has the details).
#include "lantern/analysis/scalability.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "lantern/analysis/json_out.hpp"

namespace lantern::analysis {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// The task graph, laid out for the simulator: stretches as parallel arrays, edges as
// compressed rows (a stretch's successors are succ[succ_off[s] .. succ_off[s + 1])).
// A million stretches take some 60 MB and every pass over them is sequential.
struct Graph {
  // tasks (one per task slice kept)
  std::vector<SliceRef> task_slice;
  std::vector<std::uint32_t> task_first;  // its first stretch; its stretches are contiguous
  std::vector<std::uint32_t> task_stretches;
  std::vector<std::uint32_t> task_label;
  // stretches
  std::vector<double> own;  // ns
  std::vector<std::uint32_t> task;
  std::vector<Tick> begin, end;
  // edges
  struct Edge {
    std::uint32_t from, to;
    EdgeKind kind;
    double weight;  // ns (an IO operation's latency)
  };
  std::vector<Edge> edges;
  std::vector<std::uint32_t> succ_off, succ;
  std::vector<EdgeKind> succ_kind;
  std::vector<double> succ_weight;
  std::vector<std::uint32_t> indeg;
  std::vector<std::uint32_t> roots;  // stretches without predecessors, by begin time

  std::size_t size() const noexcept { return own.size(); }
  void add_edge(std::uint32_t from, std::uint32_t to, EdgeKind kind, double weight = 0) {
    if (from == kNone || to == kNone || from == to) return;
    edges.push_back(Edge{from, to, kind, weight});
  }
  void finish_edges() {
    const std::size_t n = size();
    succ_off.assign(n + 1, 0);
    indeg.assign(n, 0);
    for (const Edge& e : edges) ++succ_off[e.from + 1], ++indeg[e.to];
    for (std::size_t i = 0; i < n; ++i) succ_off[i + 1] += succ_off[i];
    succ.resize(edges.size());
    succ_kind.resize(edges.size());
    succ_weight.resize(edges.size());
    std::vector<std::uint32_t> at(succ_off.begin(), succ_off.end() - 1);
    for (const Edge& e : edges) {
      const std::uint32_t k = at[e.from]++;
      succ[k] = e.to, succ_kind[k] = e.kind, succ_weight[k] = e.weight;
    }
    for (std::uint32_t s = 0; s < n; ++s)
      if (indeg[s] == 0) roots.push_back(s);
    std::stable_sort(roots.begin(), roots.end(), [&](std::uint32_t a, std::uint32_t b) { return begin[a] < begin[b]; });
  }
};

double median(std::vector<double>& v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  const double hi = *mid;
  const double lo = *std::max_element(v.begin(), mid);
  return (lo + hi) / 2;
}

std::string plural(std::uint64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// Where a simulated worker sits: cores are filled first, SMT siblings after.
struct Placement {
  TopologySpec topo;
  std::uint32_t core_of(std::uint32_t w) const noexcept {
    const std::uint32_t cores = std::max(1u, topo.sockets * topo.cores_per_socket);
    return w % cores;
  }
  int distance(std::uint32_t a, std::uint32_t b) const noexcept {
    const std::uint32_t ca = core_of(a), cb = core_of(b);
    if (ca == cb) return static_cast<int>(StealDistance::smt);
    const std::uint32_t per = std::max(1u, topo.cores_per_socket);
    if (ca / per == cb / per) return static_cast<int>(StealDistance::llc);
    return static_cast<int>(StealDistance::remote);
  }
};

// SplitMix64: the simulator's victim choices (deterministic for a seed).
struct Rng {
  std::uint64_t s;
  std::uint64_t next() noexcept {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

struct SimCosts {
  double spawn = 0, wake = 0;
  std::array<double, kStealDistanceCount> steal{};
};

// simulate: the graph on P workers (the model in scalability.hpp and the README). Returns
// the makespan in ns, or nullopt when some stretch never became ready (a cycle).
std::optional<double> simulate(const Graph& g, const std::vector<double>& dur, std::uint32_t P, const Placement& place,
                               const SimCosts& c, std::uint64_t seed) {
  const std::size_t n = g.size();
  if (n == 0) return 0.0;
  P = std::max(1u, P);
  std::vector<std::uint32_t> indeg(g.indeg);
  // Deques: a vector per worker with a head index (steals take the head, the owner the back).
  std::vector<std::vector<std::uint32_t>> dq(P);
  std::vector<std::uint32_t> head(P, 0);
  std::vector<std::uint32_t> nonempty;  // workers whose deque holds work; pos_ indexes it
  std::vector<std::uint32_t> pos(P, kNone);
  std::vector<std::uint32_t> sleepers;
  std::vector<char> asleep(P, 0);
  std::size_t inject = 0;  // the roots, taken in order of their recorded begin
  Rng rng{seed * 0x2545F4914F6CDD1Dull + 1};
  enum Kind : std::uint32_t { kEnd, kLook, kArrive };
  struct Ev {
    double t;
    std::uint64_t seq;
    std::uint32_t kind, worker, stretch;
  };
  auto later = [](const Ev& a, const Ev& b) { return a.t != b.t ? a.t > b.t : a.seq > b.seq; };
  std::vector<Ev> heap;
  heap.reserve(2 * P + 16);
  std::uint64_t seq = 0;
  auto schedule = [&](double t, std::uint32_t kind, std::uint32_t w, std::uint32_t s) {
    heap.push_back(Ev{t, seq++, kind, w, s});
    std::push_heap(heap.begin(), heap.end(), later);
  };
  auto mark = [&](std::uint32_t w) {
    const bool has = head[w] < dq[w].size();
    if (has && pos[w] == kNone) {
      pos[w] = static_cast<std::uint32_t>(nonempty.size());
      nonempty.push_back(w);
    } else if (!has && pos[w] != kNone) {
      const std::uint32_t last = nonempty.back();
      nonempty[pos[w]] = last;
      pos[last] = pos[w];
      nonempty.pop_back();
      pos[w] = kNone;
      dq[w].clear();
      head[w] = 0;
    }
  };
  auto push = [&](std::uint32_t w, std::uint32_t s, double t) {
    dq[w].push_back(s);
    mark(w);
    if (!sleepers.empty()) {
      const std::uint32_t k = sleepers.back();
      sleepers.pop_back();
      asleep[k] = 0;
      schedule(t + c.wake, kLook, k, kNone);
    }
  };
  std::size_t done = 0;
  double makespan = 0;
  auto start = [&](std::uint32_t w, std::uint32_t s, double t) { schedule(t + dur[s], kEnd, w, s); };
  auto look = [&](std::uint32_t w, double t) {
    if (head[w] < dq[w].size()) {  // own work, newest first
      const std::uint32_t s = dq[w].back();
      dq[w].pop_back();
      mark(w);
      start(w, s, t + c.spawn);
      return;
    }
    if (inject < g.roots.size()) {
      start(w, g.roots[inject++], t);
      return;
    }
    if (!nonempty.empty()) {
      // Random victims, the nearest of a few candidates first.
      std::uint32_t victim = kNone;
      int best = 1 << 30;
      const std::size_t tries = std::min<std::size_t>(nonempty.size(), 4);
      for (std::size_t k = 0; k < tries; ++k) {
        const std::uint32_t v = nonempty[rng.next() % nonempty.size()];
        const int d = place.distance(w, v);
        if (d < best) best = d, victim = v;
      }
      const std::uint32_t s = dq[victim][head[victim]++];
      mark(victim);
      start(w, s, t + c.steal[static_cast<std::size_t>(best)]);
      return;
    }
    asleep[w] = 1;
    sleepers.push_back(w);
  };
  for (std::uint32_t w = 0; w < P; ++w) schedule(0, kLook, w, kNone);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Ev ev = heap.back();
    heap.pop_back();
    if (ev.kind == kLook) {
      look(ev.worker, ev.t);
      continue;
    }
    if (ev.kind == kArrive) {
      if (--indeg[ev.stretch] == 0) push(ev.worker, ev.stretch, ev.t);
      continue;
    }
    // kEnd: the stretch is done; its successors may be ready.
    ++done;
    makespan = std::max(makespan, ev.t);
    const std::uint32_t s = ev.stretch;
    std::uint32_t next = kNone;
    for (std::uint32_t k = g.succ_off[s]; k < g.succ_off[s + 1]; ++k) {
      const std::uint32_t v = g.succ[k];
      if (g.succ_weight[k] > 0) {
        schedule(ev.t + g.succ_weight[k], kArrive, ev.worker, v);
        continue;
      }
      if (--indeg[v] != 0) continue;
      if (g.succ_kind[k] == EdgeKind::continuation && next == kNone)
        next = v;  // the task goes on where it is
      else
        push(ev.worker, v, ev.t);
    }
    if (next != kNone)
      start(ev.worker, next, ev.t);
    else
      look(ev.worker, ev.t);
  }
  if (done != n) return std::nullopt;
  return makespan;
}

// The events of one task, in order, as the graph's builder needs them.
struct Cut {
  EventId type;
  std::uint8_t kind;
  std::uint32_t stretch;  // spawn, signal_set, io_submit: the stretch it ends or lies in; wait_end: the stretch after
  std::uint32_t task;
  Tick t;
  std::uint64_t on, group;
};

}  // namespace

std::string Scalability::why_not(std::initializer_list<std::string_view> words) const {
  const auto lower = [](std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
  };
  if (not_computed.empty()) return "the analysis gave no reason";
  const std::string* found = &not_computed.front();
  for (const std::string& sentence : not_computed) {
    const std::string text = lower(sentence);
    if (std::any_of(words.begin(), words.end(),
                    [&](std::string_view w) { return text.find(w) != std::string::npos; })) {
      found = &sentence;
      break;
    }
  }
  constexpr std::string_view kMarker = "not computed: ";
  const std::size_t at = found->find(kMarker);
  return at == std::string::npos ? *found : found->substr(at + kMarker.size());
}

bool Scalability::simulated() const noexcept {
  return std::any_of(curve.begin(), curve.end(), [](const CurvePoint& p) { return p.simulated_ns.has_value(); });
}

std::optional<double> Scalability::speedup_measured() const noexcept {
  if (!work_ns || !measured_ns || !(*measured_ns > 0)) return std::nullopt;
  return *work_ns / *measured_ns;
}

std::string cost_text(const Scalability& s, const std::optional<double>& ns, std::uint64_t samples, bool from_graph) {
  if (ns) return format_duration_ns(*ns) + " (median of " + std::to_string(samples) + ")";
  if (from_graph && s.edges == 0 && !s.not_computed.empty()) return "not computed: " + s.why_not({"span"});
  return "not computed: no sample in this run (the simulator counts it as 0)";
}

double CurvePoint::speedup_lower() const noexcept { return upper_ns > 0 ? work_ns / upper_ns : 0; }
double CurvePoint::speedup_upper() const noexcept { return lower_ns > 0 ? work_ns / lower_ns : 0; }
std::optional<double> CurvePoint::speedup_simulated() const noexcept {
  if (!simulated_ns || !(*simulated_ns > 0)) return std::nullopt;
  return work_ns / *simulated_ns;
}
std::optional<double> CurvePoint::speedup_measured() const noexcept {
  if (!measured_ns || !(*measured_ns > 0)) return std::nullopt;
  return work_ns / *measured_ns;
}

std::string TopologySpec::describe() const {
  auto part = [](std::uint32_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  return part(sockets, "socket", "sockets") + " x " + part(cores_per_socket, "core", "cores") + " x " +
         part(threads_per_core, "thread", "threads");
}

std::optional<TopologySpec> parse_topology(std::string_view text, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<TopologySpec> {
    if (error) *error = "topology \"" + std::string(text) + "\": " + why;
    return std::nullopt;
  };
  TopologySpec spec;
  bool seen[3] = {false, false, false};
  std::size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  bool any = false;
  while (true) {
    skip();
    std::uint64_t n = 0;
    const std::size_t digits = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && n < (1u << 20))
      n = n * 10 + static_cast<std::uint64_t>(text[i++] - '0');
    if (i == digits) return fail("expected a number, as in \"2 sockets x 32 cores x 2 threads\"");
    if (n == 0 || n >= (1u << 20)) return fail("counts run from 1 to 1048575");
    skip();
    const std::size_t word = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    const std::string_view unit = text.substr(word, i - word);
    int slot = -1;
    if (unit == "socket" || unit == "sockets") slot = 0;
    if (unit == "core" || unit == "cores") slot = 1;
    if (unit == "thread" || unit == "threads") slot = 2;
    if (slot < 0) return fail("\"" + std::string(unit) + "\" is not sockets, cores or threads");
    if (seen[slot]) return fail("names " + std::string(unit) + " twice");
    seen[slot] = true;
    (slot == 0   ? spec.sockets
     : slot == 1 ? spec.cores_per_socket
                 : spec.threads_per_core) = static_cast<std::uint32_t>(n);
    any = true;
    skip();
    if (i == text.size()) break;
    if (text[i] != 'x' && text[i] != 'X') return fail("parts are separated by \"x\"");
    ++i;
  }
  if (!any) return fail("empty");
  if (static_cast<std::uint64_t>(spec.sockets) * spec.cores_per_socket * spec.threads_per_core > (1u << 20))
    return fail("more than 1048576 CPUs");
  return spec;
}

std::optional<TopologySpec> topology_of(const trace::TraceHeader& header) {
  if (header.cpus.empty()) return std::nullopt;
  std::set<std::int32_t> packages;
  std::set<std::pair<std::int32_t, std::int32_t>> cores;
  for (const trace::CpuRow& c : header.cpus) packages.insert(c.package), cores.emplace(c.package, c.core);
  TopologySpec spec;
  spec.sockets = static_cast<std::uint32_t>(packages.size());
  spec.cores_per_socket = static_cast<std::uint32_t>(std::max<std::size_t>(1, cores.size() / packages.size()));
  spec.threads_per_core = static_cast<std::uint32_t>(std::max<std::size_t>(1, header.cpus.size() / cores.size()));
  return spec;
}

std::optional<WhatIf> parse_what_if(std::string_view text, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<WhatIf> {
    if (error) *error = "what-if \"" + std::string(text) + "\": " + why;
    return std::nullopt;
  };
  const std::size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0) return fail("expected LABEL=PCT, as in \"parse=30\"");
  std::string pct(text.substr(eq + 1));
  if (!pct.empty() && pct.back() == '%') pct.pop_back();
  char* end = nullptr;
  const double v = std::strtod(pct.c_str(), &end);
  if (pct.empty() || end != pct.c_str() + pct.size() || !std::isfinite(v) || !(v > 0 && v <= 100))
    return fail("the percentage must be a number in (0, 100]");
  return WhatIf{std::string(text.substr(0, eq)), v};
}

Scalability scalability(const Analysis& a, const ScaleOptions& options, Tick from, Tick to) {
  Scalability out;
  const std::uint32_t W = a.worker_count();
  const double npt = a.ns_per_tick();
  out.measured_workers = W;
  const bool whole = from == 0 && to == kOpenEnd;

  // --- run costs, measured from the run's own events ---
  RunCosts& costs = out.costs;
  costs.event_ns = a.event_cost_ns().value_or(0);
  {
    std::vector<double> steal_all;
    std::array<std::vector<double>, kStealDistanceCount> by_d;
    for (std::uint32_t w = 0; w < W; ++w) {
      const WorkerTrack& t = a.track(w);
      const auto& steals = a.steals(w);
      for (int d = 0; d < t.depth_count(); ++d) {
        const auto& slices = t.slices(d);
        for (std::size_t i = t.first_slice_starting_at_or_after(d, from); i < slices.size() && slices[i].start <= to;
             ++i) {
          const TaskSlice& s = slices[i];
          if (s.steal < 0 || static_cast<std::size_t>(s.steal) >= steals.size()) continue;
          const Steal& st = steals[static_cast<std::size_t>(s.steal)];
          if (st.t < from || st.t > to || s.start < st.t) continue;
          // Less one event's cost: the steal's after its tick, the begin's before its own.
          const double ns = std::max(0.0, static_cast<double>(s.start - st.t) * npt - costs.event_ns);
          steal_all.push_back(ns);
          if (st.distance < kStealDistanceCount) by_d[st.distance].push_back(ns);
        }
      }
    }
    costs.steal_samples = steal_all.size();
    if (!steal_all.empty()) costs.steal_ns = median(steal_all);
    for (int d = 0; d < kStealDistanceCount; ++d)
      if (!by_d[static_cast<std::size_t>(d)].empty())
        costs.steal_by_distance_ns[static_cast<std::size_t>(d)] = median(by_d[static_cast<std::size_t>(d)]);
    costs.wake_samples = a.wake_latency().count();
    if (costs.wake_samples > 0) costs.wake_ns = a.wake_latency().quantile_ns(0.5);
  }

  // --- the tasks: every slice that began inside the window and ended ---
  std::uint64_t open = 0, lost = 0, unmatched = 0;
  Tick first_begin = kOpenEnd, last_end = 0;
  Graph g;
  std::vector<std::vector<std::uint32_t>> base(W);  // base[w][d]: offset into slot
  std::vector<std::uint32_t> slot;                  // slice -> task, kNone: not kept
  std::size_t total = 0;
  for (std::uint32_t w = 0; w < W; ++w) {
    const WorkerTrack& t = a.track(w);
    base[w].resize(static_cast<std::size_t>(t.depth_count()));
    for (int d = 0; d < t.depth_count(); ++d) {
      base[w][static_cast<std::size_t>(d)] = static_cast<std::uint32_t>(total);
      total += t.slices(d).size();
    }
  }
  slot.assign(total, kNone);
  for (std::uint32_t w = 0; w < W; ++w) {
    const WorkerTrack& t = a.track(w);
    unmatched += t.unmatched_ends();
    for (int d = 0; d < t.depth_count(); ++d) {
      const auto& slices = t.slices(d);
      // Only the slices that began in the window (a live view asks for the last seconds).
      for (std::size_t i = t.first_slice_starting_at_or_after(d, from); i < slices.size() && slices[i].start <= to;
           ++i) {
        const TaskSlice& s = slices[i];
        if (s.open()) {
          ++open;
        } else if (s.flags & kSliceEndLost) {
          ++lost;
        } else {
          slot[base[w][static_cast<std::size_t>(d)] + i] = static_cast<std::uint32_t>(g.task_slice.size());
          g.task_slice.push_back(SliceRef{static_cast<std::int32_t>(w), d, i});
          g.task_label.push_back(s.label);
          first_begin = std::min(first_begin, s.start);
          last_end = std::max(last_end, s.end);
        }
      }
    }
  }
  out.tasks = g.task_slice.size();
  if (first_begin < last_end) out.measured_ns = static_cast<double>(last_end - first_begin) * npt;
  auto task_of = [&](const SliceRef& r) -> std::uint32_t {
    if (!r.valid() || static_cast<std::uint32_t>(r.worker) >= W) return kNone;
    const auto& b = base[static_cast<std::size_t>(r.worker)];
    if (static_cast<std::size_t>(r.depth) >= b.size()) return kNone;
    return slot[b[static_cast<std::size_t>(r.depth)] + r.index];
  };

  // --- honesty: what the trace cannot support ---
  std::uint64_t graph_events = 0;
  for (EventId e : {EventId::spawn, EventId::wait_begin, EventId::wait_end, EventId::signal_set, EventId::satisfy})
    graph_events += a.events_of(e);
  const bool v5 = a.format_version() == 0 || a.format_version() >= 5;
  const bool level_ok = !a.level() || *a.level() >= trace::Level::tasks;
  // A version-5 trace at level tasks without a single graph event has a graph only if
  // nothing in it nests (a task nested outside an inline call ran during a wait that
  // was not recorded: the recording build reports no graph events).
  bool nests = false;
  for (std::uint32_t w = 0; w < W && !nests; ++w) {
    const WorkerTrack& t = a.track(w);
    for (int d = 1; d < t.depth_count() && !nests; ++d)
      for (const TaskSlice& s : t.slices(d))
        if (s.task_source() != TaskSource::inline_call) {
          nests = true;
          break;
        }
  }
  out.has_graph = graph_events > 0 || (v5 && a.level() && level_ok && !nests);
  static constexpr const char* kFigures =
      "work, span, parallelism, burdened span, the critical path, the bounds and simulated T_P";
  if (!out.has_graph) {
    std::string why = "recorded without the task graph: record at level tasks (graph for join) with this build";
    if (!v5) why += " (this is a version-" + std::to_string(a.format_version()) + " trace, which has no task graph)";
    out.not_computed.push_back(std::string(kFigures) + " are not computed: the trace was " + why);
    return out;
  }
  std::uint64_t dropped = 0, gaps = 0;
  for (std::uint32_t w = 0; w < W; ++w)
    for (const Drop& d : a.drops(w))
      if (d.t >= from && d.gap_start <= to) dropped += d.count, ++gaps;
  if (dropped > 0) {
    out.not_computed.push_back(std::string(kFigures) +
                               " are not computed: " + plural(dropped, "event was", "events were") +
                               " dropped while recording (" + plural(gaps, "gap", "gaps") +
                               "), so the task graph has holes; record with larger rings or a lower level");
    return out;
  }
  if (lost > 0) {  // in a window too: a skipped chunk's events are gone from every window it spans
    out.not_computed.push_back(std::string(kFigures) +
                               " are not computed: " + plural(lost, "task's end was", "tasks' ends were") +
                               " lost (in a damaged or truncated part of the trace that the reader skipped, or with "
                               "events dropped while recording), so the task graph is incomplete");
    return out;
  }
  const std::uint64_t cut = unmatched + (a.finished() ? open : 0);
  if (cut > 0 && whole) {
    out.not_computed.push_back(std::string(kFigures) + " are not computed: the trace's window cuts " +
                               plural(cut, "task", "tasks") +
                               " (begun before the recording's window, or never ended in it), so the task graph is "
                               "incomplete");
    return out;
  }
  if (!whole)
    out.notes.push_back("figures cover the tasks that began in the window; edges to tasks outside it are left out");
  if (open > 0 && !a.finished())
    out.notes.push_back(plural(open, "task still runs", "tasks still run") + " and " + (open == 1 ? "is" : "are") +
                        " left out");

  // --- the stretches: each task cut at its spawns and waits ---
  // The graph events of each task, grouped by task (counting sort: they arrive per worker in time order).
  std::vector<std::uint32_t> ev_off(g.task_slice.size() + 1, 0);
  // A task's events come at or after its begin, so a window's start bounds them.
  auto graph_from = [&](std::uint32_t w) {
    const auto& v = a.graph_events(w);
    return std::lower_bound(v.begin(), v.end(), from, [](const GraphEvent& e, Tick t) { return e.t < t; });
  };
  for (std::uint32_t w = 0; w < W; ++w)
    for (auto it = graph_from(w); it != a.graph_events(w).end(); ++it)
      if (const std::uint32_t t = task_of(it->owner); t != kNone) ++ev_off[t + 1];
  for (std::size_t i = 0; i < g.task_slice.size(); ++i) ev_off[i + 1] += ev_off[i];
  std::vector<const GraphEvent*> evs(ev_off.back());
  {
    std::vector<std::uint32_t> at(ev_off.begin(), ev_off.end() - 1);
    for (std::uint32_t w = 0; w < W; ++w)
      for (auto it = graph_from(w); it != a.graph_events(w).end(); ++it)
        if (const std::uint32_t t = task_of(it->owner); t != kNone) evs[at[t]++] = &*it;
  }
  std::vector<Cut> cuts;
  double recorded_ns = 0, own_ns = 0;  // the stretches' time as recorded, and less event_cost
  // Satisfy events (one dependency of a not-ready task completed), with the task that
  // reported it: they cut nothing (a task completes its dependents at its end).
  struct Satisfied {
    Tick t;
    std::uint64_t task, by;
    std::uint32_t owner;
  };
  std::vector<Satisfied> satisfied;
  struct Call {
    std::uint32_t before, task;  // the piece before an inline call (the one after is before + 1), the callee
  };
  std::vector<Call> calls;
  g.task_first.resize(g.task_slice.size());
  g.task_stretches.resize(g.task_slice.size());
  for (std::uint32_t task = 0; task < g.task_slice.size(); ++task) {
    const SliceRef r = g.task_slice[task];
    const TaskSlice& s = a.slice(r);
    const auto w = static_cast<std::uint32_t>(r.worker);
    const WorkerTrack& track = a.track(w);
    g.task_first[task] = static_cast<std::uint32_t>(g.size());
    Tick cur = s.start;
    bool waiting = false;
    // The recording's cost: one event per stretch, the one that opened it (task_begin, a
    // spawn, a wait_end...), whose cost lands after its timestamp.
    const double event_cost = costs.event_ns;
    auto last = [&] { return static_cast<std::uint32_t>(g.size() - 1); };
    auto piece = [&](Tick b, Tick e, Tick skipped) {
      const Tick ticks = e - b;
      const double recorded = static_cast<double>(ticks - std::min(ticks, skipped)) * npt;
      const double own = std::max(0.0, recorded - event_cost);
      recorded_ns += recorded;
      own_ns += own;
      g.own.push_back(own);
      g.task.push_back(task);
      g.begin.push_back(b);
      g.end.push_back(e);
    };
    // close: the stretch from `cur` to e. A task nested in it (not in a wait: run inline,
    // as a call) cuts it too: the call's edges leave the piece before it and enter the
    // piece after it; a nested slice the graph leaves out (open, cut off) is taken off.
    auto close = [&](Tick e) {
      e = std::max(e, cur);
      const int nd = r.depth + 1;
      Tick skipped = 0;
      if (nd < track.depth_count()) {
        const auto& kids = track.slices(nd);
        const std::size_t kb = base[w][static_cast<std::size_t>(nd)];
        for (std::size_t k = track.first_slice_starting_at_or_after(nd, cur); k < kids.size() && kids[k].start < e;
             ++k) {
          const TaskSlice& c = kids[k];
          const Tick c_end = c.open() ? e : std::min(c.end, e);
          const std::uint32_t ct = slot[kb + k];
          if (ct == kNone || c.start < cur) {
            skipped += c_end - std::min(c_end, std::max(c.start, cur));
            continue;
          }
          piece(cur, c.start, skipped);
          skipped = 0;
          calls.push_back({static_cast<std::uint32_t>(g.size() - 1), ct});
          cur = std::max(cur, c_end);
        }
      }
      piece(cur, e, skipped);
    };
    for (std::uint32_t k = ev_off[task]; k < ev_off[task + 1]; ++k) {
      const GraphEvent& e = *evs[k];
      switch (e.type) {
        case EventId::spawn:
        case EventId::signal_set:
        case EventId::io_submit:
          // Each cuts the stretch: a child, a signal's waiter or an operation's task
          // waits for the task up to here, not for its whole slice.
          if (waiting) break;
          close(e.t);
          cuts.push_back(Cut{e.type, e.kind, last(), task, e.t, e.on, e.group});
          cur = e.t;
          break;
        case EventId::wait_begin:
          if (waiting) break;
          close(e.t);
          waiting = true;
          break;
        case EventId::satisfy: satisfied.push_back({e.t, e.on, e.group, task}); break;
        case EventId::wait_end:
          if (!waiting) close(e.t);  // a wait_end without its begin: cut here all the same
          waiting = false;
          cur = e.t;
          cuts.push_back(Cut{e.type, e.kind, static_cast<std::uint32_t>(g.size()), task, e.t, e.on, e.group});
          break;
        default: break;
      }
    }
    if (waiting) cur = s.end;  // ended inside a wait: a last empty stretch
    close(s.end);
    g.task_stretches[task] = static_cast<std::uint32_t>(g.size()) - g.task_first[task];
    for (std::uint32_t k = g.task_first[task] + 1; k < g.size(); ++k) g.add_edge(k - 1, k, EdgeKind::continuation);
  }
  out.stretches = g.size();
  if (recorded_ns > 0) costs.recording_share = (recorded_ns - own_ns) / recorded_ns;
  if (costs.recording_share > 0.25) {
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.0f", 100 * costs.recording_share);
    out.notes.push_back(std::string("recording took ") + pct +
                        " % of the tasks' recorded time (each stretch less one event's cost, never below 0): "
                        "tasks this short cost about as much to record as to run, so the absolute work, span and "
                        "T_P are uncertain by about as much; the speedups T_1 / T_P, which a cost spread over the "
                        "tasks leaves alone, are the figures to read");
  }
  auto last_of = [&](std::uint32_t task) { return g.task_first[task] + g.task_stretches[task] - 1; };
  // stretch_at: the stretch of `task` that holds tick t (the last one beginning at or before it).
  auto stretch_at = [&](std::uint32_t task, Tick t) {
    std::uint32_t k = g.task_first[task];
    const std::uint32_t end = k + g.task_stretches[task];
    const auto it = std::upper_bound(g.begin.begin() + k, g.begin.begin() + end, t);
    const auto idx = static_cast<std::uint32_t>(it - g.begin.begin());
    return idx == k ? k : idx - 1;
  };

  // --- matching ids: begins (a spawn's child) and ends (a join's task) by id, in time order ---
  struct ById {
    std::uint64_t id;
    Tick t;
    std::uint32_t task;
    bool operator<(const ById& o) const noexcept { return id != o.id ? id < o.id : t < o.t; }
  };
  std::vector<ById> begins(g.task_slice.size()), ends(g.task_slice.size());
  for (std::uint32_t task = 0; task < g.task_slice.size(); ++task) {
    const TaskSlice& s = a.slice(g.task_slice[task]);
    begins[task] = ById{s.id, s.start, task};
    ends[task] = ById{s.id, s.end, task};
  }
  std::sort(begins.begin(), begins.end());
  std::sort(ends.begin(), ends.end());
  auto first_begin_after = [&](std::uint64_t id, Tick t) {
    const auto it = std::lower_bound(begins.begin(), begins.end(), ById{id, t, 0});
    return it != begins.end() && it->id == id ? it->task : kNone;
  };
  auto last_begin_before = [&](std::uint64_t id, Tick t) {
    auto it = std::upper_bound(begins.begin(), begins.end(), ById{id, t, kNone});
    if (it == begins.begin()) return kNone;
    --it;
    return it->id == id ? it->task : kNone;
  };
  auto last_end_before = [&](std::uint64_t id, Tick t) {
    auto it = std::upper_bound(ends.begin(), ends.end(), ById{id, t, kNone});
    if (it == ends.begin()) return kNone;
    --it;
    return it->id == id ? it->task : kNone;
  };
  // Signals and IO submissions by id, in time order.
  std::vector<ById> signals, submits;
  for (const Cut& c : cuts) {
    if (c.type == EventId::signal_set) signals.push_back(ById{c.on, c.t, c.stretch});
    if (c.type == EventId::io_submit) submits.push_back(ById{c.on, c.t, c.stretch});
  }
  std::sort(signals.begin(), signals.end());
  std::sort(submits.begin(), submits.end());
  auto last_before = [](const std::vector<ById>& v, std::uint64_t id, Tick t) {
    auto it = std::upper_bound(v.begin(), v.end(), ById{id, t, kNone});
    if (it == v.begin()) return kNone;
    --it;
    return it->id == id ? it->task : kNone;
  };

  // --- edges: spawn, join, signal (per task, in its order) ---
  std::vector<char> spawned(g.task_slice.size(), 0);
  std::vector<std::uint32_t> spawn_src(g.task_slice.size(), kNone);  // the stretch that spawned each task
  struct Pending {
    std::uint64_t group;
    std::uint32_t child;
    SpawnKind kind;
  };
  std::vector<Pending> pending;  // the current task's children a graph wait joins
  // A TaskGroup's wait joins every task spawned into the group before it, by any task (a
  // child may spawn into its parent's group) and not joined by an earlier wait on it:
  // matched per group id in time order below, after every task's cuts are read.
  struct GroupEvent {
    std::uint64_t group;
    Tick t;
    std::uint32_t index;  // spawns: the child task; waits: the stretch after the wait
    bool operator<(const GroupEvent& o) const noexcept { return group != o.group ? group < o.group : t < o.t; }
  };
  std::vector<GroupEvent> group_spawns, group_waits;
  std::uint32_t current = kNone;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stolen_joins;  // (waiting stretch, joined task)
  for (const Cut& c : cuts) {
    if (c.task != current) pending.clear(), current = c.task;
    if (c.type == EventId::spawn) {
      // The child: the first begin of its id since the spawning stretch began. Not since
      // the spawn event: core reports a spawn before it pushes the task, but two
      // workers' clocks may put a thief's begin a moment before the spawn's tick; an id
      // is an address, but no other live task holds it between the stretch's start and
      // the push.
      const std::uint32_t child = first_begin_after(c.on, g.begin[c.stretch]);
      if (child == kNone || child == c.task) continue;
      g.add_edge(c.stretch, g.task_first[child], EdgeKind::spawn);
      spawned[child] = 1;
      spawn_src[child] = c.stretch;
      const auto kind = static_cast<SpawnKind>(c.kind);
      if (kind == SpawnKind::task_group) group_spawns.push_back({c.group, c.t, child});
      if (kind == SpawnKind::spawn_after) pending.push_back({c.group, child, kind});
    } else if (c.type == EventId::wait_end) {
      const auto kind = static_cast<WaitKind>(c.kind);
      if (kind == WaitKind::join || kind == WaitKind::future || kind == WaitKind::task_handle) {
        // The joined task of a join or a handle: the last one of that id to begin before
        // the wait ended. Not the last to end: a task completes its latch inside its
        // body, so its waiter may report wait_end a moment before the task reports
        // task_end; and a join's half and a handle's task keep their address while they
        // are waited for. A Future's task may not (its frame is freed when it ends and
        // another task may begin there before the wait ends): the last to end before the
        // wait, else (it ended a moment after) the last to begin.
        std::uint32_t joined = kind == WaitKind::future ? last_end_before(c.on, c.t) : kNone;
        if (joined == kNone) joined = last_begin_before(c.on, c.t);
        if (joined != kNone && joined != c.task) {
          g.add_edge(last_of(joined), c.stretch, EdgeKind::join);
          if (kind == WaitKind::join && !spawned[joined]) stolen_joins.emplace_back(c.stretch, joined);
        }
      } else if (kind == WaitKind::task_group) {
        group_waits.push_back({c.on, c.t, c.stretch});
      } else if (kind == WaitKind::graph) {
        auto keep = pending.begin();
        for (const Pending& p : pending) {
          const bool joins =
              p.group == c.on || (kind == WaitKind::graph && p.kind == SpawnKind::spawn_after && p.group == 0);
          if (joins)
            g.add_edge(last_of(p.child), c.stretch, EdgeKind::join);
          else
            *keep++ = p;
        }
        pending.erase(keep, pending.end());
      } else if (kind == WaitKind::signal) {
        g.add_edge(last_before(signals, c.on, c.t), c.stretch, EdgeKind::signal);
      }
    }
  }
  std::sort(group_spawns.begin(), group_spawns.end());
  std::sort(group_waits.begin(), group_waits.end());
  for (std::size_t si = 0, wi = 0; wi < group_waits.size(); ++wi) {
    const GroupEvent& w = group_waits[wi];
    while (si < group_spawns.size() &&
           (group_spawns[si].group < w.group || (group_spawns[si].group == w.group && group_spawns[si].t <= w.t))) {
      const GroupEvent& sp = group_spawns[si++];
      if (sp.group == w.group && g.task[w.index] != sp.index) g.add_edge(last_of(sp.index), w.index, EdgeKind::join);
    }
  }
  // A nested task its caller waits for without a wait event: the caller resumes after it
  // (a join). Unless a spawn event made it (a join's second half its own worker ran), it
  // is a call, made where it began.
  for (const Call& c : calls) {
    g.add_edge(last_of(c.task), c.before + 1, EdgeKind::join);
    if (spawned[c.task]) continue;
    g.add_edge(c.before, g.task_first[c.task], EdgeKind::spawn);
    spawned[c.task] = 1, spawn_src[c.task] = c.before;
  }
  // Below level graph a join's stolen half has no spawn event: its spawn is placed at the
  // start of the parent's stretch before the steal (the edge leaves the stretch before it).
  std::uint64_t placed = 0;
  for (const auto& [waiting, joined] : stolen_joins) {
    if (spawned[joined]) continue;
    const TaskSlice& child = a.slice(g.task_slice[joined]);
    const std::uint32_t parent = g.task[waiting];
    Tick at = child.start;
    const auto cw = static_cast<std::uint32_t>(g.task_slice[joined].worker);
    if (child.steal >= 0 && static_cast<std::size_t>(child.steal) < a.steals(cw).size())
      at = a.steals(cw)[static_cast<std::size_t>(child.steal)].t;
    // At the start of stretch k: after the stretch before it, or, for the parent's first
    // stretch, where the parent itself was spawned (a root: nothing before it).
    const std::uint32_t k = stretch_at(parent, at);
    g.add_edge(k > g.task_first[parent] ? k - 1 : spawn_src[parent], g.task_first[joined], EdgeKind::spawn);
    spawned[joined] = 1;
    ++placed;
  }
  if (placed > 0 || (a.level() && *a.level() < trace::Level::graph && a.events_of(EventId::task_begin) > 0)) {
    const std::string level(a.level() ? trace::kLevelNames[static_cast<int>(*a.level())] : "unknown");
    std::string note = "recorded at level " + level +
                       ", below graph: join's unstolen halves are folded into their parent (their time is the "
                       "parent's own time)";
    if (placed > 0)
      note += std::string(", and ") + (placed == 1 ? "the stolen half has its" : "each of the ") +
              (placed == 1 ? std::string() : std::to_string(placed) + " stolen halves has its") +
              " spawn placed at the start of its parent's stretch before the steal";
    out.notes.push_back(note);
  }
  // Releases: releasing slice -> released slice; a signal's or an IO operation's release
  // leaves the signal_set or the submission. Releases and satisfies are added in the
  // order their events came (by tick): a stretch's successors are pushed in the order
  // of its edges, and the simulator's deques then hold them in the order the runtime
  // pushed them (the newest first for the worker that released them, the oldest for a
  // thief), whatever event named them.
  struct TimedEdge {
    Tick t;
    std::uint32_t from, to;
    EdgeKind kind;
    double weight;
  };
  std::vector<TimedEdge> timed;
  auto later = [&](Tick t, std::uint32_t from, std::uint32_t to, EdgeKind kind, double weight = 0) {
    timed.push_back(TimedEdge{t, from, to, kind, weight});
  };
  std::vector<ById> io_done;
  for (const IoOp& op : a.io_pairs())
    io_done.push_back(ById{op.op, op.completed, static_cast<std::uint32_t>(&op - a.io_pairs().data())});
  std::sort(io_done.begin(), io_done.end());
  for (std::uint32_t w = 0; w < W; ++w) {
    for (const Release& r : a.releases(w)) {
      const std::uint32_t to_task = task_of(r.to);
      if (to_task == kNone) continue;
      const std::uint32_t target = g.task_first[to_task];
      if (const std::uint32_t from_task = task_of(r.from); from_task != kNone) {
        later(r.t, stretch_at(from_task, r.t), target, EdgeKind::release);
      } else if (const std::uint32_t sig = last_before(signals, r.releaser, r.t); sig != kNone) {
        later(r.t, sig, target, EdgeKind::signal);
      } else if (const std::uint32_t op = last_before(io_done, r.releaser, r.t); op != kNone) {
        const IoOp& io = a.io_pairs()[op];
        const std::uint32_t sub = last_before(submits, io.op, io.submitted);
        later(r.t, sub, target, EdgeKind::io, static_cast<double>(io.completed - io.submitted) * npt);
      }
    }
  }
  // Satisfies: every dependency but the last (the release above), to the task's first
  // stretch: the first begin of its id after the satisfy's tick (every such edge goes
  // forward in time; matching from the stretch's start, as a spawn's child is, could
  // find an earlier task at a reused address). From the reporting task's stretch when
  // it is the dependency; else from the signal's set; else from the last stretch of the
  // task with that id that began last before it: a dependency already complete when
  // spawn_after registered it. Not the last to end: a task completes its dependents'
  // list inside its body, before its task_end's tick, and its address is live while a
  // Dependency names it.
  for (const Satisfied& s : satisfied) {
    const std::uint32_t to_task = first_begin_after(s.task, s.t);
    if (to_task == kNone) continue;
    const std::uint32_t target = g.task_first[to_task];
    if (a.slice(g.task_slice[s.owner]).id == s.by) {
      later(s.t, stretch_at(s.owner, s.t), target, EdgeKind::release);
    } else if (const std::uint32_t sig = last_before(signals, s.by, s.t); sig != kNone) {
      later(s.t, sig, target, EdgeKind::signal);
    } else if (const std::uint32_t done = last_begin_before(s.by, s.t); done != kNone) {
      later(s.t, last_of(done), target, EdgeKind::release);
    }
  }
  std::stable_sort(timed.begin(), timed.end(), [](const TimedEdge& x, const TimedEdge& y) { return x.t < y.t; });
  for (const TimedEdge& e : timed) g.add_edge(e.from, e.to, e.kind, e.weight);
  g.finish_edges();
  out.edges = g.edges.size();

  // --- spawn cost: a spawn to its child's begin on the same worker, from when the worker was free ---
  {
    std::vector<std::vector<Tick>> ends_by_worker(W);
    for (std::uint32_t s = 0; s < g.size(); ++s)
      ends_by_worker[static_cast<std::uint32_t>(g.task_slice[g.task[s]].worker)].push_back(g.end[s]);
    for (auto& v : ends_by_worker) std::sort(v.begin(), v.end());
    std::vector<double> samples;
    for (const Graph::Edge& e : g.edges) {
      if (e.kind != EdgeKind::spawn) continue;
      const std::uint32_t pw = static_cast<std::uint32_t>(g.task_slice[g.task[e.from]].worker);
      const std::uint32_t cw = static_cast<std::uint32_t>(g.task_slice[g.task[e.to]].worker);
      const TaskSlice& child = a.slice(g.task_slice[g.task[e.to]]);
      if (pw != cw || child.source != static_cast<std::uint8_t>(TaskSource::own_deque)) continue;
      const auto& v = ends_by_worker[pw];
      auto it = std::upper_bound(v.begin(), v.end(), child.start);
      Tick free_at = g.end[e.from];
      if (it != v.begin()) free_at = std::max(free_at, *(it - 1));
      // Less one event's cost (the previous end's after its tick, the begin's before its
      // own), as each stretch is: the gap is the scheduler's, not the recorder's.
      if (child.start >= free_at)
        samples.push_back(std::max(0.0, static_cast<double>(child.start - free_at) * npt - costs.event_ns));
    }
    costs.spawn_samples = samples.size();
    if (!samples.empty()) costs.spawn_ns = median(samples);
  }

  // --- time in no task: gaps between phases that something outside the pool ordered ---
  // The graph holds what the pool's tasks did. A program that ran phases one after
  // another from a thread outside the pool (submit, wait, submit the next) or idled
  // between them has, between the phases, time in no task and no edge: its phases'
  // roots are all free at once in the graph, so the span is the longest phase's, not
  // their sum, and the simulated T_P leaves the gaps out.
  if (out.measured_ns && g.roots.size() > 1) {
    // Covered: a task runs, or an edge is in flight (an IO operation between the task
    // that submitted it and the one its completion released is in the graph).
    std::vector<std::pair<Tick, Tick>> busy;
    busy.reserve(g.task_slice.size() + g.edges.size());
    for (const SliceRef& r : g.task_slice) {
      const TaskSlice& slice = a.slice(r);
      busy.emplace_back(slice.start, slice.end);
    }
    for (const Graph::Edge& e : g.edges)
      if (g.begin[e.to] > g.end[e.from]) busy.emplace_back(g.end[e.from], g.begin[e.to]);
    std::sort(busy.begin(), busy.end());
    double idle_ticks = 0;
    Tick reach = busy.empty() ? 0 : busy.front().second;
    for (const auto& [b, e] : busy) {
      if (b > reach) idle_ticks += static_cast<double>(b - reach);
      reach = std::max(reach, e);
    }
    const double idle_ns = idle_ticks * npt;
    if (idle_ns > 0.1 * *out.measured_ns) {
      char note[560];
      std::snprintf(note, sizeof note,
                    "no task ran and no edge was in flight for %s of the run's %s: nothing in the graph spans those "
                    "gaps, so its %zu roots "
                    "(tasks nothing in the pool spawned or released: submitted from outside it) are all free at once, "
                    "and the span and simulated T_P leave the gaps out. Where a thread outside the pool ran phases one "
                    "after another, analyse one phase at a time (lantern-trace scale --from/--to)",
                    format_duration_ns(idle_ns).c_str(), format_duration_ns(*out.measured_ns).c_str(), g.roots.size());
      out.notes.push_back(note);
    }
  }

  // --- work, span, burdened span: the heaviest paths, in topological order ---
  const std::size_t n = g.size();
  double work = 0;
  for (double v : g.own) work += v;
  const double steal_cost = costs.steal_ns.value_or(0), wake_cost = costs.wake_ns.value_or(0);
  std::vector<double> dist(n, 0), bdist(n, 0);
  std::vector<std::uint32_t> pred(n, kNone);
  std::vector<EdgeKind> pred_kind(n, EdgeKind::continuation);
  std::vector<double> pred_w(n, 0);
  std::vector<double> in_best(n, 0), in_bbest(n, 0);
  std::vector<std::uint32_t> indeg(g.indeg), order;
  order.reserve(n);
  for (std::uint32_t s : g.roots) order.push_back(s);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::uint32_t s = order[i];
    dist[s] = in_best[s] + g.own[s];
    bdist[s] = in_bbest[s] + g.own[s];
    for (std::uint32_t k = g.succ_off[s]; k < g.succ_off[s + 1]; ++k) {
      const std::uint32_t v = g.succ[k];
      const EdgeKind kind = g.succ_kind[k];
      const double via = dist[s] + g.succ_weight[k];
      if (pred[v] == kNone || via > in_best[v])
        in_best[v] = via, pred[v] = s, pred_kind[v] = kind, pred_w[v] = g.succ_weight[k];
      double burden = 0;
      if (kind == EdgeKind::spawn) burden = steal_cost;
      if (kind == EdgeKind::release || kind == EdgeKind::signal || kind == EdgeKind::io) burden = wake_cost;
      in_bbest[v] = std::max(in_bbest[v], bdist[s] + g.succ_weight[k] + burden);
      if (--indeg[v] == 0) order.push_back(v);
    }
  }
  if (order.size() != n) {
    out.not_computed.push_back(
        "span, the critical path and simulated T_P are not computed: the task graph has a cycle "
        "(" +
        plural(n - order.size(), "stretch", "stretches") + " on it: clocks that disagree across workers)");
    out.work_ns = work;
    return out;
  }
  std::uint32_t tail = kNone;
  double span = 0, bspan = 0;
  for (std::uint32_t s = 0; s < n; ++s) {
    if (tail == kNone || dist[s] > span) span = dist[s], tail = s;
    bspan = std::max(bspan, bdist[s]);
  }
  out.work_ns = work;
  if (n > 0) {
    out.span_ns = span;
    out.burdened_span_ns = bspan;
    if (span > 0) out.parallelism = work / span;
    if (bspan > 0) out.burdened_parallelism = work / bspan;
  }
  // The critical path, back from its heaviest end.
  for (std::uint32_t s = tail; s != kNone; s = pred[s]) {
    PathStretch p;
    const std::uint32_t task = g.task[s];
    p.slice = g.task_slice[task];
    const TaskSlice& slice = a.slice(p.slice);
    p.task = slice.id;
    p.worker = static_cast<std::uint32_t>(p.slice.worker);
    p.begin = g.begin[s];
    p.end = g.end[s];
    p.own_ns = g.own[s];
    p.label = slice.label;
    p.entered_by = pred[s] == kNone ? EdgeKind::continuation : pred_kind[s];
    p.edge_ns = pred[s] == kNone ? 0 : pred_w[s];
    out.span_by_edge[static_cast<std::size_t>(p.entered_by)] += p.own_ns + p.edge_ns;
    out.critical_path.push_back(p);
  }
  std::reverse(out.critical_path.begin(), out.critical_path.end());
  // Preemption on the path: a task whose thread waited for a CPU while it ran (another
  // thread had it: more runnable threads than CPUs) has that wait in its own time, and
  // on the critical path it lengthens the span by as much. Each task counts once, at
  // most its own time on the path (the recorder measures tasks of 1 ms or more). A
  // parent's wait includes what a task nested in it waited, so with both on the path the
  // sum is an upper bound.
  {
    std::map<std::tuple<std::int32_t, int, std::size_t>, std::pair<double, double>> on_path;  // off-CPU, own
    for (const PathStretch& p : out.critical_path) {
      const TaskSlice& slice = a.slice(p.slice);
      if (!(slice.flags & kSliceOffCpu)) continue;
      auto& [off, own] = on_path[{p.slice.worker, p.slice.depth, p.slice.index}];
      off = static_cast<double>(a.track(static_cast<std::uint32_t>(p.slice.worker)).off_cpu(slice)) * npt;
      own += p.own_ns;
    }
    double preempted = 0;
    for (const auto& [slice, figures] : on_path) preempted += std::min(figures.first, figures.second);
    preempted = std::min(preempted, span);  // a parent's wait includes its nested task's, if both are on the path
    out.path_preempted_ns = preempted;
    if (span > 0 && preempted >= 0.05 * span)
      out.notes.push_back("the critical path's tasks waited " + format_duration_ns(preempted) + " (" +
                          std::to_string(static_cast<int>(100 * preempted / span + 0.5)) +
                          " % of the span) for a CPU while they ran: their threads were preempted (more runnable "
                          "threads than CPUs), and that wait counts as their own time; on a machine to itself the "
                          "span would be that much shorter");
  }

  // --- labels ---
  std::map<std::uint32_t, LabelFigure> by_label;
  for (std::uint32_t task = 0; task < g.task_slice.size(); ++task) {
    LabelFigure& f = by_label[g.task_label[task]];
    ++f.tasks;
    for (std::uint32_t k = g.task_first[task]; k < g.task_first[task] + g.task_stretches[task]; ++k)
      f.work_ns += g.own[k];
  }
  for (const PathStretch& p : out.critical_path) by_label[p.label].span_ns += p.own_ns;
  for (auto& [label, f] : by_label) {
    f.label = label;
    f.name = label == 0 ? std::string("(no label)") : a.labels().display_name(label);
    f.span_share = span > 0 ? f.span_ns / span : 0;
    out.labels.push_back(f);
  }
  std::stable_sort(out.labels.begin(), out.labels.end(), [](const LabelFigure& x, const LabelFigure& y) {
    return x.span_ns != y.span_ns ? x.span_ns > y.span_ns : x.work_ns > y.work_ns;
  });

  // --- the simulator's machine and costs ---
  // The machine: the one asked for, else the recording machine's, else one socket with a
  // core for each worker of the largest count simulated.
  std::vector<std::uint32_t> workers = options.workers;
  if (workers.empty()) {
    for (std::uint32_t p = 1; p <= 1024; p *= 2) workers.push_back(p);
    if (W > 0) workers.push_back(W);
  }
  workers.erase(std::remove(workers.begin(), workers.end(), 0u), workers.end());
  std::sort(workers.begin(), workers.end());
  workers.erase(std::unique(workers.begin(), workers.end()), workers.end());
  if (options.topology) {
    out.topology = *options.topology;
  } else {
    trace::TraceHeader h;
    h.cpus = a.cpus();
    out.topology = topology_of(h).value_or(TopologySpec{1, workers.empty() ? 1 : workers.back(), 1});
  }
  const Placement place{out.topology};
  SimCosts sc;
  sc.spawn = costs.spawn_ns.value_or(0);
  sc.wake = wake_cost;
  for (int d = 0; d < kStealDistanceCount; ++d)
    sc.steal[static_cast<std::size_t>(d)] =
        costs.steal_by_distance_ns[static_cast<std::size_t>(d)].value_or(steal_cost);
  // Distances the simulation uses (Placement: smt, llc, remote) that the run never stole
  // across take the median steal: the topology then changes T_P only through which
  // worker is near which, and the note says so rather than pretending to have measured
  // it. Placement fills cores first (worker w on core w % cores): the largest P simulated
  // shares a core past sockets x cores, a socket from 2 workers when sockets have 2
  // cores or more, and crosses sockets past one socket's cores.
  if (costs.steal_ns) {
    std::string borrowed;
    std::uint32_t most = workers.empty() ? 1 : workers.back();
    for (std::uint32_t p : options.what_if_workers) most = std::max(most, p);
    const TopologySpec& m = out.topology;
    const bool has[] = {most > m.sockets * m.cores_per_socket, m.cores_per_socket > 1 && most > 1,
                        m.sockets > 1 && most > m.cores_per_socket};
    const StealDistance at[] = {StealDistance::smt, StealDistance::llc, StealDistance::remote};
    for (int i = 0; i < 3; ++i)
      if (has[i] && !costs.steal_by_distance_ns[static_cast<std::size_t>(at[i])])
        borrowed +=
            std::string(borrowed.empty() ? "" : ", ") + std::string(kStealDistanceNames[static_cast<int>(at[i])]);
    if (!borrowed.empty())
      out.notes.push_back("the simulation (" + out.topology.describe() + ", up to " + std::to_string(most) +
                          " workers) has steals at distance " + borrowed +
                          ", which the run has no sample of (its machine had no such distance, or no steal crossed "
                          "it): the simulator charges them the run's median steal, " +
                          format_duration_ns(*costs.steal_ns));
  }
  std::vector<std::string> unmeasured;
  if (!costs.spawn_ns) unmeasured.push_back("spawn");
  if (!costs.steal_ns) unmeasured.push_back("steal");
  if (!costs.wake_ns) unmeasured.push_back("wake");
  if (!unmeasured.empty()) {
    std::string list;
    for (std::size_t i = 0; i < unmeasured.size(); ++i) list += (i ? " or a " : "") + unmeasured[i];
    out.notes.push_back("the run has no sample of the cost of a " + list +
                        ": the simulator and the burdened span count it as 0");
  }

  // --- the curve ---
  std::map<std::uint32_t, std::optional<double>> baseline;
  for (std::uint32_t p : workers) {
    CurvePoint c;
    c.workers = p;
    c.work_ns = work;
    c.lower_ns = std::max(work / p, span);
    c.upper_ns = work / p + span;
    c.simulated_ns = simulate(g, g.own, p, place, sc, options.seed);
    baseline[p] = c.simulated_ns;
    if (p == W && out.measured_ns) c.measured_ns = out.measured_ns;
    out.curve.push_back(c);
  }

  // --- what-if: the top labels by span share, and the ones asked for ---
  std::vector<std::uint32_t> at = options.what_if_workers;
  if (at.empty()) {
    if (!workers.empty()) at.push_back(workers.back());
    if (W > 0 && std::find(at.begin(), at.end(), W) == at.end()) at.push_back(W);
    std::sort(at.begin(), at.end());
  }
  auto run_what_if = [&](LabelFigure& f, const WhatIf& wi) {
    std::vector<double> dur(g.own);
    const double factor = 1 - wi.percent / 100;
    for (std::uint32_t s = 0; s < n; ++s)
      if (g.task_label[g.task[s]] == f.label) dur[s] *= factor;
    f.what_if = wi;
    f.what_if_workers.clear(), f.what_if_ns.clear(), f.baseline_ns.clear();
    for (std::uint32_t p : at) {
      auto it = baseline.find(p);
      std::optional<double> before = it != baseline.end() ? it->second : simulate(g, g.own, p, place, sc, options.seed);
      std::optional<double> with = simulate(g, dur, p, place, sc, options.seed);
      if (!before || !with) continue;
      f.what_if_workers.push_back(p);
      f.what_if_ns.push_back(*with);
      f.baseline_ns.push_back(*before);
    }
  };
  std::size_t given = 0;
  for (LabelFigure& f : out.labels) {
    if (given >= options.top_labels) break;
    if (f.label == 0 || f.span_ns <= 0) continue;
    run_what_if(f, WhatIf{f.name, options.top_label_percent});
    ++given;
  }
  for (const WhatIf& wi : options.what_if) {
    auto it =
        std::find_if(out.labels.begin(), out.labels.end(), [&](const LabelFigure& f) { return f.name == wi.label; });
    if (it == out.labels.end()) {
      out.notes.push_back("what-if " + wi.label + ": no task in the run has that label");
      continue;
    }
    run_what_if(*it, wi);
  }
  return out;
}

void write_json(JsonOut& o, const Scalability& s) {
  auto opt = [&](const std::optional<double>& v) -> JsonOut& { return v ? o.f64(*v) : o.raw("null"); };
  auto strings = [&](const std::vector<std::string>& v) {
    o.raw("[");
    for (std::size_t i = 0; i < v.size(); ++i) (i ? o.raw(",") : o).string(v[i]);
    o.raw("]");
  };
  o.raw("{\"has_graph\":").boolean(s.has_graph);
  o.raw(",\"not_computed\":");
  strings(s.not_computed);
  o.raw(",\"notes\":");
  strings(s.notes);
  o.raw(",\"tasks\":").u64(s.tasks).raw(",\"stretches\":").u64(s.stretches).raw(",\"edges\":").u64(s.edges);
  o.raw(",\"work_ns\":");
  opt(s.work_ns).raw(",\"span_ns\":");
  opt(s.span_ns).raw(",\"parallelism\":");
  opt(s.parallelism).raw(",\"burdened_span_ns\":");
  opt(s.burdened_span_ns).raw(",\"burdened_parallelism\":");
  opt(s.burdened_parallelism);
  o.raw(",\"measured_workers\":").u64(s.measured_workers).raw(",\"measured_ns\":");
  opt(s.measured_ns);
  o.raw(",\"costs\":{\"spawn_ns\":");
  opt(s.costs.spawn_ns).raw(",\"spawn_samples\":").u64(s.costs.spawn_samples).raw(",\"steal_ns\":");
  opt(s.costs.steal_ns).raw(",\"steal_samples\":").u64(s.costs.steal_samples).raw(",\"steal_by_distance_ns\":{");
  for (int d = 0; d < kStealDistanceCount; ++d) {
    (d ? o.raw(",") : o).string(kStealDistanceNames[d]).raw(":");
    opt(s.costs.steal_by_distance_ns[static_cast<std::size_t>(d)]);
  }
  o.raw("},\"wake_ns\":");
  opt(s.costs.wake_ns).raw(",\"wake_samples\":").u64(s.costs.wake_samples).raw(",\"event_ns\":").f64(s.costs.event_ns);
  o.raw(",\"recording_share\":").f64(s.costs.recording_share);
  // The machine simulated, and the span by edge kind: null when nothing was simulated or
  // the span was not computed (not zeros that read as measured).
  o.raw("},\"topology\":");
  s.simulated() ? o.string(s.topology.describe()) : o.raw("null");
  o.raw(",\"path_preempted_ns\":").f64(s.path_preempted_ns);
  o.raw(",\"span_by_edge\":");
  if (s.span_ns) {
    o.raw("{");
    for (int k = 0; k < kEdgeKindCount; ++k)
      (k ? o.raw(",") : o).string(kEdgeKindNames[k]).raw(":").f64(s.span_by_edge[static_cast<std::size_t>(k)]);
    o.raw("}");
  } else {
    o.raw("null");
  }
  o.raw(",\"critical_path\":[");
  for (std::size_t i = 0; i < s.critical_path.size(); ++i) {
    const PathStretch& p = s.critical_path[i];
    (i ? o.raw(",") : o).raw("{\"task\":").u64(p.task).raw(",\"worker\":").u64(p.worker);
    o.raw(",\"depth\":").i64(p.slice.depth).raw(",\"index\":").u64(p.slice.index);
    o.raw(",\"begin\":").u64(p.begin).raw(",\"end\":").u64(p.end).raw(",\"own_ns\":").f64(p.own_ns);
    o.raw(",\"label\":").u64(p.label).raw(",\"entered_by\":").string(kEdgeKindNames[static_cast<int>(p.entered_by)]);
    o.raw(",\"edge_ns\":").f64(p.edge_ns).raw("}");
  }
  o.raw("],\"labels\":[");
  for (std::size_t i = 0; i < s.labels.size(); ++i) {
    const LabelFigure& f = s.labels[i];
    (i ? o.raw(",") : o).raw("{\"label\":").u64(f.label).raw(",\"name\":").string(f.name);
    o.raw(",\"tasks\":").u64(f.tasks).raw(",\"work_ns\":").f64(f.work_ns).raw(",\"span_ns\":").f64(f.span_ns);
    o.raw(",\"span_share\":").f64(f.span_share).raw(",\"what_if\":");
    if (!f.what_if) {
      o.raw("null");
    } else {
      o.raw("{\"percent\":").f64(f.what_if->percent).raw(",\"points\":[");
      for (std::size_t k = 0; k < f.what_if_workers.size(); ++k) {
        (k ? o.raw(",") : o).raw("{\"workers\":").u64(f.what_if_workers[k]).raw(",\"simulated_ns\":");
        o.f64(f.what_if_ns[k]).raw(",\"baseline_ns\":").f64(f.baseline_ns[k]).raw("}");
      }
      o.raw("]}");
    }
    o.raw("}");
  }
  o.raw("],\"curve\":[");
  const bool bounds = s.work_ns && s.span_ns;
  for (std::size_t i = 0; i < s.curve.size(); ++i) {
    const CurvePoint& c = s.curve[i];
    (i ? o.raw(",") : o).raw("{\"workers\":").u64(c.workers).raw(",\"lower_ns\":");
    (bounds ? o.f64(c.lower_ns) : o.raw("null")).raw(",\"upper_ns\":");
    (bounds ? o.f64(c.upper_ns) : o.raw("null")).raw(",\"simulated_ns\":");
    opt(c.simulated_ns).raw(",\"measured_ns\":");
    opt(c.measured_ns).raw("}");
  }
  o.raw("]}");
}

}  // namespace lantern::analysis
