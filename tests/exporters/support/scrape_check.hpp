// SPDX-License-Identifier: Apache-2.0
// scrape_check.hpp - compares a scrape, sample by sample, with what it is made from: the
// Recorder's counters and histograms and, for the families that are not Recorder
// counters, the Scheduler's own figures (a Reading, recorder_reading.hpp). Used on a
// scrape of /metrics (end_of_run_test.cpp) and on what a real Prometheus server stored
// (server_e2e_test.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <string_view>

#include "exporters/support/exposition.hpp"
#include "exporters/support/recorder_reading.hpp"
#include "lantern/exporters/metric_table.hpp"
#include "lantern/trace/event_table.hpp"
#include "lantern/version.hpp"

namespace lantern::exporters::testing {

namespace ins = lantern::instrumentation;

// Families on /metrics that are not Recorder counters: what each is read from. The test
// still checks each one, exactly, against that source (and against the Recorder where
// the two must agree at the end of a run).
struct Source {
  std::string_view family, from;
};
constexpr Source kSchedulerFamilies[] = {
    {"lantern_workers",
     "Scheduler::worker_state(w), counted by state; at the end of a run also the Recorder's current states"},
    {"lantern_tasks_spawned_total",
     "Scheduler::tasks_spawned(w): core counts created tasks (the Recorder does not count pushes)"},
    {"lantern_tasks_submitted_total", "Scheduler::tasks_submitted_from_outside()"},
    {"lantern_lane_depth", "Scheduler::lane_size(w), a gauge"},
    {"lantern_deque_depth", "Scheduler::deque_size(w), a gauge"},
    {"lantern_not_ready_tasks", "Scheduler::not_ready_tasks(), a gauge"},
    {"lantern_sleep_inactive_workers", "Scheduler::sleep_snapshot().inactive, a gauge"},
    {"lantern_sleep_sleeping_workers", "Scheduler::sleep_snapshot().sleeping, a gauge"},
    {"lantern_unhandled_exceptions_total", "Scheduler::unhandled_exceptions()"},
};
// Families about the process, not the scheduler: read from /proc/self and getrlimit when
// scraped (and the library's version), so checked for a plausible range, not a count.
constexpr Source kProcessFamilies[] = {
    {"lantern_build_info", "lantern::kVersion, always 1"},
    {"process_cpu_seconds_total", "/proc/self/stat utime + stime"},
    {"process_resident_memory_bytes", "/proc/self/stat rss x the page size"},
    {"process_virtual_memory_bytes", "/proc/self/stat vsize"},
    {"process_open_fds", "the entries of /proc/self/fd"},
    {"process_max_fds", "getrlimit(RLIMIT_NOFILE)"},
    {"process_start_time_seconds", "/proc/stat btime + /proc/self/stat starttime"},
    {"process_threads", "/proc/self/stat num_threads"},
};
// Families that are not Lantern's at all, on an app's endpoint beside Lantern's
// (register_on_test.cpp): the app's own counter, and what prometheus-cpp's Exposer adds.
constexpr std::string_view kNotLantern[] = {"app_requests_total", "exposer_scrapes_total",
                                            "exposer_transferred_bytes_total", "exposer_request_latencies"};
// Recorder figures that are deliberately not on /metrics. Warnings are not here: they are
// health findings of the analysis library (lantern-trace stats, the viewer), computed
// from a trace, not counters the Recorder keeps.
//   drop_markers     - the `dropped` markers among events_recorded (each carries a count
//                      of events_dropped): in the trace, where lantern-trace stats counts them.
//   events_produced  - events_recorded - drop_markers + events_dropped: the events the
//                      level selected.
//   state            - the current state: published through lantern_workers (checked).
//   state_since      - internal bookkeeping of the state time.
// A field added to WorkerCountersSnapshot must be published or added to this list: the
// size below changes, and this fails to compile until someone decides.
static_assert(sizeof(ins::WorkerCountersSnapshot) ==
                  sizeof(std::uint64_t) * (2 + trace::kDistanceCount + 5 + trace::kStateCount + 1 + 3 + 1 + 2 + 2 + 1),
              "a counter was added to WorkerCountersSnapshot: publish it in metric_table.hpp and check it in "
              "expected_samples() (tests/exporters/support/scrape_check.hpp), or say there why /metrics leaves it out");

// Want: what a sample must be. `exact`: a count, equal. `nanoseconds`: a sum in seconds
// that must round to exactly this many nanoseconds. `between`: a time still running while
// the scrape read it (a worker's current state), within [lo, hi] seconds.
struct Want {
  enum Kind { exact, nanoseconds, between } kind = exact;
  double lo = 0, hi = 0;
  std::uint64_t ns = 0;
  std::string describe() const {
    char buf[96];
    if (kind == exact) std::snprintf(buf, sizeof buf, "%.17g", lo);
    if (kind == nanoseconds) std::snprintf(buf, sizeof buf, "%llu ns", static_cast<unsigned long long>(ns));
    if (kind == between) std::snprintf(buf, sizeof buf, "in [%.17g, %.17g]", lo, hi);
    return buf;
  }
  bool matches(double v) const {
    switch (kind) {
      case exact: return v == lo;
      case nanoseconds: return std::llround(v * 1e9) == static_cast<long long>(ns);
      case between: return v >= lo * (1 - 1e-15) && v <= hi * (1 + 1e-15);  // 16 printed digits
    }
    return false;
  }
};
inline Want exact(std::uint64_t v) { return {Want::exact, static_cast<double>(v), static_cast<double>(v), 0}; }

// A sample's key: name{label="value",...}, labels sorted; `le` as the double it reads as.
inline std::string format_le(double le) {
  if (std::isinf(le)) return "+Inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.12g", le);
  return buf;
}
inline std::string key(const std::string& name, std::map<std::string, std::string> labels) {
  if (const auto it = labels.find("le"); it != labels.end())
    it->second = format_le(std::strtod(it->second.c_str(), nullptr));
  std::string k = name + "{";
  bool first = true;
  for (const auto& [l, v] : labels) {
    k += (first ? "" : ",") + l + "=\"" + v + "\"";
    first = false;
  }
  return k + "}";
}

// Expected: family -> sample key -> what it must be.
using Expected = std::map<std::string, std::map<std::string, Want>>;

// expected_samples: every sample /metrics must carry, from the readings taken just before
// (a) and just after (b) the scrape, which agree on every count (what_moved is "").
inline Expected expected_samples(const Reading& a, const Reading& b, double seconds_per_tick) {
  Expected out;
  const std::size_t workers = a.workers.size();
  for (std::size_t w = 0; w < workers; ++w) {
    const auto& c = a.workers[w];
    const std::string worker = std::to_string(w);
    auto put = [&](const char* family, std::uint64_t v) { out[family][key(family, {{"worker", worker}})] = exact(v); };
    // Recorder counters.
    put("lantern_tasks_total", c.tasks);
    put("lantern_task_exceptions_total", c.tasks_threw);
    put("lantern_lane_pops_total", c.lane_pops);
    for (int d = 0; d < trace::kDistanceCount; ++d) {
      out["lantern_steals_total"]
         [key("lantern_steals_total", {{"worker", worker}, {"distance", std::string(trace::kDistanceNames[d])}})] =
             exact(c.steals[static_cast<std::size_t>(d)]);
    }
    put("lantern_failed_steal_rounds_total", c.steal_rounds_failed);
    put("lantern_helps_total", c.helps);
    put("lantern_sleeps_total", c.sleeps);
    put("lantern_wakes_total", c.wakes_received);
    put("lantern_io_wakes_total", c.io_wakes);
    put("lantern_releases_total", c.releases);
    put("lantern_io_submitted_total", c.io_submitted);
    put("lantern_io_completed_total", c.io_completed);
    put("lantern_events_recorded_total", c.events_recorded);
    put("lantern_events_dropped_total", c.events_dropped);
    put("lantern_deadlocks_total", c.deadlocks);
    for (int s = 0; s < trace::kStateCount; ++s) {
      const double lo = static_cast<double>(a.workers[w].state_ticks[static_cast<std::size_t>(s)]) * seconds_per_tick;
      const double hi = static_cast<double>(b.workers[w].state_ticks[static_cast<std::size_t>(s)]) * seconds_per_tick;
      out["lantern_worker_state_seconds_total"][key(
          "lantern_worker_state_seconds_total", {{"worker", worker}, {"state", std::string(trace::kStateNames[s])}})] =
          {Want::between, lo, hi, 0};
    }
    // The Scheduler's own figures (kSchedulerFamilies).
    put("lantern_tasks_spawned_total", a.tasks_spawned[w]);
    put("lantern_lane_depth", a.lane_size[w]);
    put("lantern_deque_depth", static_cast<std::uint64_t>(std::max<std::int64_t>(0, a.deque_size[w])));
  }
  std::array<std::uint64_t, trace::kStateCount> in_state{};
  for (const WorkerState s : a.published_state) ++in_state[static_cast<std::size_t>(s)];
  for (int s = 0; s < trace::kStateCount; ++s) {
    out["lantern_workers"][key("lantern_workers", {{"state", std::string(trace::kStateNames[s])}})] =
        exact(in_state[static_cast<std::size_t>(s)]);
  }
  auto scalar = [&](const char* family, std::uint64_t v) { out[family][key(family, {})] = exact(v); };
  scalar("lantern_tasks_submitted_total", a.tasks_submitted);
  scalar("lantern_not_ready_tasks", a.not_ready);
  scalar("lantern_sleep_inactive_workers", a.sleep.inactive);
  scalar("lantern_sleep_sleeping_workers", a.sleep.sleeping);
  scalar("lantern_unhandled_exceptions_total", a.unhandled);
  // Histograms: every bucket, _count and _sum (nanoseconds, exactly).
  auto histogram = [&](const std::string& family, const trace::LatencyHistogram& h) {
    auto& f = out[family];
    for (const std::uint64_t edge : kBucketBoundsNs) {
      f[key(family + "_bucket", {{"le", format_le(static_cast<double>(edge) / 1e9)}})] = exact(h.count_below(edge));
    }
    f[key(family + "_bucket", {{"le", "+Inf"}})] = exact(h.count());
    f[key(family + "_count", {})] = exact(h.count());
    f[key(family + "_sum", {})] = {Want::nanoseconds, 0, 0, h.sum_ns()};
  };
  histogram("lantern_ready_wait_seconds", a.ready_wait);
  histogram("lantern_task_duration_seconds", a.task_duration);
  histogram("lantern_wake_latency_seconds", a.wake_latency);
  // kProcessFamilies: present, one sample each, in a range any live process is in.
  out["lantern_build_info"][key("lantern_build_info", {{"version", std::string(kVersion)}})] = exact(1);
  auto range = [&](const char* family, double lo, double hi) {
    out[family][key(family, {})] = {Want::between, lo, hi, 0};
  };
  range("process_cpu_seconds_total", 0, 1e7);
  range("process_resident_memory_bytes", 1 << 20, 1e12);
  range("process_virtual_memory_bytes", 1 << 20, 1e15);
  range("process_open_fds", 3, 1e7);
  range("process_max_fds", 16, 1e9);
  range("process_start_time_seconds", 1.6e9, 4e9);
  range("process_threads", 1, 1e5);
  return out;
}

// family_of: the family a sample belongs to (a histogram's _bucket, _sum, _count).
inline std::string family_of(const Exposition& scrape, const std::string& sample) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s(suffix);
    if (sample.size() > s.size() && sample.compare(sample.size() - s.size(), s.size(), s) == 0) {
      const std::string base = sample.substr(0, sample.size() - s.size());
      if (const auto it = scrape.types.find(base); it != scrape.types.end() && it->second == "histogram") return base;
    }
  }
  return sample;
}

inline bool contains(const auto& list, std::string_view name) {
  for (const auto& x : list) {
    if (std::string_view(x) == name) return true;
  }
  return false;
}

// diff: every disagreement between the scrape and `expected`, one line each; "" if none.
inline std::string diff(const Exposition& scrape, const Expected& expected) {
  std::ostringstream out;
  std::map<std::string, std::map<std::string, double>> got;  // family -> key -> value
  for (const Sample& s : scrape.samples) {
    const std::string family = family_of(scrape, s.name);
    if (contains(kNotLantern, family)) continue;
    const std::string k = key(s.name, s.labels);
    if (!got[family].emplace(k, s.value).second) out << "  duplicate sample " << k << "\n";
  }
  for (const auto& [family, type] : scrape.types) {
    if (contains(kNotLantern, family)) continue;
    if (!expected.count(family)) {
      out << "  family " << family << " (" << type
          << ") is on /metrics but this test does not check it: compare it with the Recorder counter it is made "
             "from in expected_samples(), or, if it is not a Recorder counter, add it to kSchedulerFamilies or "
             "kNotLantern saying what it is read from\n";
    }
  }
  for (const auto& [family, samples] : expected) {
    const auto g = got.find(family);
    if (g == got.end()) {
      out << "  family " << family << " is missing from /metrics\n";
      continue;
    }
    for (const auto& [k, want] : samples) {
      const auto it = g->second.find(k);
      if (it == g->second.end()) {
        out << "  " << k << ": missing from the scrape, recorder " << want.describe() << "\n";
      } else if (!want.matches(it->second)) {
        char v[40];
        std::snprintf(v, sizeof v, "%.17g", it->second);
        out << "  " << k << ": scrape " << v << ", recorder " << want.describe() << "\n";
      }
    }
    for (const auto& [k, value] : g->second) {
      if (!samples.count(k)) out << "  " << k << ": in the scrape (" << value << ") but not expected\n";
    }
  }
  return out.str();
}

}  // namespace lantern::exporters::testing
