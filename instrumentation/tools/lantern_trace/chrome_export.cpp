// SPDX-License-Identifier: Apache-2.0
// chrome_export.cpp - the analysis' facts as Chrome trace-event JSON.
#include "chrome_export.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "lantern/analysis/json_out.hpp"

namespace lantern::trace::cli {
namespace {

using analysis::Analysis;
using analysis::JsonOut;
using analysis::Tick;
constexpr int kPid = 1;

std::string name_or_number(std::string_view name, std::uint64_t v) {
  return name.empty() ? std::to_string(v) : std::string(name);
}

class Exporter {
 public:
  Exporter(JsonOut& json, const TraceHeader& header, const Analysis& a, ChromeExportCounts& counts,
           const ExportWindow& window)
      : json_(json),
        a_(a),
        counts_(counts),
        t0_(a.first_tick()),
        end_(a.last_tick()),
        lo_(window.from),
        hi_(window.to),
        windowed_(!window.whole()),
        process_name_(header.hostname.empty() ? "lantern" : "lantern on " + header.hostname) {}
  void run();

 private:
  static std::uint64_t states_tid(std::uint32_t w) { return 2ull * w + 1; }
  static std::uint64_t tasks_tid(std::uint32_t w) { return 2ull * w + 2; }
  // q: ticks since the first event in 1/1024 us, rounded; monotonic in ticks, so slices
  // that nest or abut in ticks still do.
  std::uint64_t q(Tick t) const {
    const double v = static_cast<double>(t > t0_ ? t - t0_ : 0) * a_.ns_per_tick() * 1.024 + 0.5;
    return v < 9.0e15 ? static_cast<std::uint64_t>(v) : 9'000'000'000'000'000ull;
  }
  JsonOut& begin_event() {
    json_.raw(first_ ? "\n" : ",\n");
    first_ = false;
    return json_;
  }
  // inside: t is in the window; overlaps: [from, to] meets it.
  bool inside(Tick t) const { return t >= lo_ && t <= hi_; }
  bool overlaps(Tick from, Tick to) const { return from <= hi_ && to >= lo_; }
  // slice: a complete slice, cut at the window's edges; returns whether it was cut.
  bool slice(const std::string& name, const char* cat, std::uint64_t tid, Tick from, Tick to) {
    const bool clipped = from < lo_ || to > hi_;
    const std::uint64_t b = q(std::max(from, lo_)), e = q(std::min(to, hi_));
    begin_event().raw("{\"name\":").string(name).raw(",\"cat\":\"").raw(cat).raw("\",\"ph\":\"X\",\"ts\":");
    json_.binary_micros(b).raw(",\"dur\":").binary_micros(e - b).raw(",\"pid\":").i64(kPid).raw(",\"tid\":").u64(tid);
    return clipped;
  }
  void instant(const char* name, const char* cat, std::uint32_t w, Tick t) {
    begin_event()
        .raw("{\"name\":\"")
        .raw(name)
        .raw("\",\"cat\":\"")
        .raw(cat)
        .raw("\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
    json_.binary_micros(q(t)).raw(",\"pid\":").i64(kPid).raw(",\"tid\":").u64(states_tid(w)).raw(",\"args\":{");
    ++counts_.instants;
  }
  void metadata(const char* what, std::uint64_t tid, const std::string& name, std::uint64_t sort_index);
  // known_state_at: whether worker w has a drawn state slice covering t.
  bool known_state_at(std::uint32_t w, Tick t) const;
  bool flow(const char* name, std::uint32_t from, Tick from_t, std::uint32_t to, Tick to_t);
  void states(std::uint32_t w);
  void tasks(std::uint32_t w);
  void counters();
  void io();

  JsonOut& json_;
  const Analysis& a_;
  ChromeExportCounts& counts_;
  Tick t0_, end_;
  Tick lo_, hi_;  // the window (ExportWindow)
  bool windowed_;
  std::string process_name_;
  bool first_ = true;
  struct Flow {
    const char* name;
    std::uint64_t from_tid, to_tid, from_q, to_q;
  };
  std::vector<Flow> flows_;
};

void Exporter::metadata(const char* what, std::uint64_t tid, const std::string& name, std::uint64_t sort_index) {
  begin_event().raw("{\"name\":\"").raw(what).raw("\",\"ph\":\"M\",\"pid\":").i64(kPid).raw(",\"tid\":").u64(tid);
  json_.raw(",\"args\":{\"name\":").string(name).raw("}}");
  const std::string sort_what = std::string(what) == "process_name" ? "process_sort_index" : "thread_sort_index";
  begin_event().raw("{\"name\":\"").raw(sort_what).raw("\",\"ph\":\"M\",\"pid\":").i64(kPid);
  json_.raw(",\"tid\":").u64(tid).raw(",\"args\":{\"sort_index\":").u64(sort_index).raw("}}");
}

bool Exporter::known_state_at(std::uint32_t w, Tick t) const {
  if (w >= a_.worker_count()) return false;
  const analysis::WorkerTrack& track = a_.track(w);
  const std::ptrdiff_t i = track.interval_at(t);
  if (i < 0 || track.interval_state(static_cast<std::size_t>(i)) == analysis::kUnknownState) return false;
  // The slice drawn for it (states()): up to the next interval, the last one up to the
  // worker's stop - after its stop a worker has no slice to bind to.
  const Tick end = track.interval_end(static_cast<std::size_t>(i), a_.span_end(w));
  return end > track.interval_start(static_cast<std::size_t>(i)) && t <= end;
}

bool Exporter::flow(const char* name, std::uint32_t from, Tick from_t, std::uint32_t to, Tick to_t) {
  if (!known_state_at(from, from_t) || !known_state_at(to, to_t) || !inside(from_t) || !inside(to_t)) return false;
  flows_.push_back(Flow{name, states_tid(from), states_tid(to), q(from_t), q(to_t)});
  return true;
}

void Exporter::states(std::uint32_t w) {
  const analysis::WorkerTrack& track = a_.track(w);
  // The last slice ends where the worker's time does: its stop, else the trace's end
  // (Analysis::span_end, the span stats counts), never later.
  const Tick span_end = a_.span_end(w);
  for (std::size_t i = 0; i < track.interval_count(); ++i) {
    const int state = track.interval_state(i);
    const Tick from = track.interval_start(i), to = track.interval_end(i, span_end);
    if (state == analysis::kUnknownState || to <= from || !overlaps(from, to)) continue;
    const bool clipped = slice(std::string(kWorkerStateNames[state]), "state", states_tid(w), from, to);
    json_.raw(",\"args\":{\"reason\":")
        .string(
            name_or_number(name_of(track.interval_reason(i)), static_cast<std::uint64_t>(track.interval_reason(i))));
    json_.raw(clipped ? ",\"clipped\":true}}" : "}}");
    ++counts_.state_slices;
  }
  for (const analysis::Wake& k : a_.wakes(w)) {
    if (!inside(k.t)) continue;
    instant("wake", "state", w, k.t);
    if (k.waker == kOutsideWaker)
      json_.raw("\"waker\":\"outside the pool\"");
    else
      json_.raw("\"waker\":").u64(k.waker);
    json_.raw(",\"cause\":").string(name_or_number(name_of(k.cause()), k.why));
    json_.raw(",\"latency_ns\":").u64(a_.to_ns(k.latency)).raw("}}");
    ++counts_.wakes;
    if (k.by_worker(a_.worker_count())) {
      // A waker in the pool, as Summary::wake_arrows counts them: an arrow from the waker
      // at the wake call to the woken worker as it wakes, if both ends have a state slice.
      const Tick call = k.latency <= k.t ? k.t - k.latency : 0;
      if (flow("wake", k.waker, std::max(call, a_.track(k.waker).first_tick()), w, k.t))
        ++counts_.wake_flows;
      else
        ++counts_.wakes_unbound;
    } else if (!k.timed()) {
      ++counts_.wakes_by_io;
    } else {
      ++counts_.wakes_from_outside;
    }
  }
  for (const analysis::Steal& s : a_.steals(w)) {
    if (!inside(s.t)) continue;
    if (flow("steal", s.victim, s.t, w, s.t))
      ++counts_.steal_flows;
    else
      ++counts_.steals_unbound;
  }
  for (const analysis::Help& h : a_.helps(w)) {
    if (!inside(h.t)) continue;
    instant("help", "help", w, h.t);
    json_.raw("\"lane\":").u64(h.lane).raw(",\"head_age_ns\":").u64(a_.to_ns(h.head_age)).raw("}}");
  }
  for (const analysis::Drop& d : a_.drops(w)) {
    if (!inside(d.t)) continue;
    instant("dropped", "loss", w, d.t);
    json_.raw("\"events_lost\":")
        .u64(d.count)
        .raw(",\"reason\":")
        .string(name_or_number(name_of(d.reason), static_cast<std::uint64_t>(d.reason)));
    json_.raw("}}");
  }
  for (const analysis::Deadlock& d : a_.deadlocks(w)) {
    if (!inside(d.t)) continue;
    instant("deadlock suspected", "health", w, d.t);
    json_.raw("\"blocked_workers\":")
        .u64(d.blocked_workers)
        .raw(",\"unfinished_tasks\":")
        .u64(d.unfinished_tasks)
        .raw("}}");
  }
}

void Exporter::tasks(std::uint32_t w) {
  const analysis::WorkerTrack& track = a_.track(w);
  for (int d = 0; d < track.depth_count(); ++d) {
    for (const analysis::TaskSlice& s : track.slices(d)) {
      const Tick to = s.open() ? std::max(end_, s.start) : s.end;
      if (!overlaps(s.start, to)) continue;
      const bool clipped =
          slice(s.label ? a_.labels().display_name(s.label) : "task", "task", tasks_tid(w), s.start, to);
      char hex[24];
      std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(s.id));
      json_.raw(",\"args\":{\"task\":\"").raw(hex).raw("\",\"source\":");
      json_.string(name_or_number(name_of(s.task_source()), s.source));
      if (s.label) json_.raw(",\"label\":").string(a_.labels().display_name(s.label));
      if (s.flags & analysis::kSliceThrew) json_.raw(",\"threw\":true");
      if (s.flags & analysis::kSliceOffCpu) json_.raw(",\"waited_for_cpu_ns\":").u64(a_.to_ns(track.off_cpu(s)));
      if (clipped) json_.raw(",\"clipped\":true");
      if (s.open())
        json_.raw(",\"note\":\"still running at the end of the trace\"");
      else if (s.flags & analysis::kSliceEndLost)
        json_.raw(",\"note\":\"end not recorded; closed with its parent\"");
      json_.raw("}}");
      ++counts_.task_slices;
    }
  }
  counts_.unmatched_task_ends += track.unmatched_ends();
}

void Exporter::counters() {
  // Every counter's samples, merged in time order (so the file's counter events never go
  // back in time): lane depths from each pop's wait (+1 when the task entered the lane,
  // -1 when it left) and the pool's not-ready tasks, sampled by the workers.
  struct Sample {
    Tick t;
    std::uint32_t lane;  // kNotReady: the not-ready counter
    std::int64_t value;  // lanes: a step (+1/-1) until summed below; not-ready: the sample (as u64)
  };
  constexpr std::uint32_t kNotReady = ~0u;
  std::vector<Sample> samples;
  for (std::uint32_t w = 0; w < a_.worker_count(); ++w) {
    for (const analysis::LanePop& p : a_.pops(w)) {
      samples.push_back({p.wait < p.t ? p.t - p.wait : 0, p.lane, +1});
      samples.push_back({p.t, p.lane, -1});
    }
  }
  for (const auto& [t, tasks] : a_.not_ready_samples())
    samples.push_back({t, kNotReady, static_cast<std::int64_t>(tasks)});
  std::stable_sort(samples.begin(), samples.end(), [](const Sample& x, const Sample& y) { return x.t < y.t; });
  std::map<std::uint32_t, std::int64_t> value;  // each counter's value so far
  auto write = [&](std::uint32_t lane, Tick t, std::int64_t v) {
    if (lane == kNotReady) {
      begin_event()
          .raw("{\"name\":\"not-ready tasks\",\"cat\":\"dependencies\",\"ph\":\"C\",\"ts\":")
          .binary_micros(q(t));
      json_.raw(",\"pid\":").i64(kPid).raw(",\"args\":{\"tasks\":").u64(static_cast<std::uint64_t>(v)).raw("}}");
    } else {
      begin_event()
          .raw("{\"name\":\"lane ")
          .u64(lane)
          .raw("\",\"cat\":\"queue\",\"ph\":\"C\",\"ts\":")
          .binary_micros(q(t));
      json_.raw(",\"pid\":").i64(kPid).raw(",\"args\":{\"depth\":").i64(v).raw("}}");
    }
    ++counts_.counter_samples;
  };
  auto step = [](std::int64_t& v, const Sample& x) { v = x.lane == kNotReady ? x.value : v + x.value; };
  // Before the window: only each counter's value as the window opens, written at its start.
  std::size_t i = 0;
  for (; i < samples.size() && samples[i].t < lo_; ++i) step(value[samples[i].lane], samples[i]);
  for (const auto& [lane, v] : value) write(lane, lo_, v);
  for (; i < samples.size() && samples[i].t <= hi_; ++i) {
    std::int64_t& v = value[samples[i].lane];
    step(v, samples[i]);
    write(samples[i].lane, samples[i].t, v);
  }
}

void Exporter::io() {
  std::uint64_t id = 0;
  auto emit = [&](const analysis::IoOp& op, Tick end, bool done) {
    if (!overlaps(op.submitted, end)) return;
    const bool clipped = op.submitted < lo_ || end > hi_;
    std::string name = name_or_number(name_of(op.kind), static_cast<std::uint64_t>(op.kind));
    if (op.fd >= 0) name += " fd " + std::to_string(op.fd);
    ++id;  // operation ids are addresses, reused: each slice gets its own
    for (const bool begin : {true, false}) {
      begin_event().raw("{\"name\":").string(name).raw(",\"cat\":\"io\",\"ph\":\"").raw(begin ? "b" : "e");
      json_.raw("\",\"id\":")
          .u64(id)
          .raw(",\"ts\":")
          .binary_micros(q(begin ? std::max(op.submitted, lo_) : std::min(end, hi_)))
          .raw(",\"pid\":")
          .i64(kPid)
          .raw(",\"tid\":")
          .u64(tasks_tid(op.has_submit ? op.submit_worker : op.complete_worker));
      if (!begin) {
        json_.raw(",\"args\":{");
        if (done)
          json_.raw("\"result\":").i64(op.result);
        else
          json_.raw("\"note\":\"still in flight at the end of the trace\"");
        if (clipped) json_.raw(",\"clipped\":true");
        json_.raw("}");
      }
      json_.raw("}");
    }
    ++counts_.io_slices;
  };
  for (const analysis::IoOp& op : a_.io_pairs()) emit(op, op.completed, true);
  for (const auto& [key, op] : a_.in_flight()) emit(op, std::max(end_, op.submitted), false);
}

void Exporter::run() {
  metadata("process_name", 0, process_name_, 0);
  for (std::uint32_t w = 0; w < a_.worker_count(); ++w) {
    if (!a_.track(w).seen()) continue;
    metadata("thread_name", states_tid(w), "worker " + std::to_string(w) + " states", states_tid(w));
    metadata("thread_name", tasks_tid(w), "worker " + std::to_string(w) + " tasks", tasks_tid(w));
  }
  for (std::uint32_t w = 0; w < a_.worker_count(); ++w) {
    states(w);
    tasks(w);
  }
  counters();
  io();
  // Flows last: a viewer binds them to slices, which are then all known.
  std::uint64_t id = 0;
  for (const Flow& f : flows_) {
    ++id;
    for (const bool start : {true, false}) {
      begin_event().raw("{\"name\":\"").raw(f.name).raw("\",\"cat\":\"state\",\"ph\":\"").raw(start ? "s" : "f");
      json_.raw("\",\"id\":")
          .u64(id)
          .raw(",\"ts\":")
          .binary_micros(start ? f.from_q : f.to_q)
          .raw(",\"pid\":")
          .i64(kPid);
      json_.raw(",\"tid\":").u64(start ? f.from_tid : f.to_tid);
      if (!start) json_.raw(",\"bp\":\"e\"");
      json_.raw("}");
    }
  }
  counts_.flows = flows_.size();
}

}  // namespace

bool write_chrome_trace(std::FILE* out, const TraceHeader& header, const Analysis& analysis, std::size_t problem_count,
                        ChromeExportCounts* counts, const ExportWindow& window) {
  JsonOut json(out);
  json.raw("{\"traceEvents\":[");
  Exporter(json, header, analysis, *counts, window).run();
  counts->wake_arrows = analysis.summary().wake_arrows;
  json.raw("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":").string(header.producer);
  json.raw(",\"hostname\":").string(header.hostname).raw(",\"cpu_model\":").string(header.cpu_model);
  json.raw(",\"topology\":").string(header.topology).raw(",\"workers\":").u64(header.workers);
  json.raw(",\"clock\":\"").raw(header.clock.tsc ? "tsc" : "steady_clock_ns").raw("\",\"ns_per_tick\":");
  json.f64(header.safe_ns_per_tick()).raw(",\"format_version\":").u64(header.version);
  json.raw(",\"trace_problems\":").u64(problem_count);
  // Every wake is an instant. wake_arrows: the analysis' number (Summary::wake_arrows,
  // stats' "by a worker of the pool"); wake_arrows_drawn: the flows here. The wakes with
  // no flow are counted by why: wakes = wake_arrows_drawn + wakes_without_arrow's three,
  // and wake_arrows = wake_arrows_drawn + an_end_has_no_state_slice.
  json.raw(",\"wakes\":").u64(counts->wakes).raw(",\"wake_arrows\":").u64(counts->wake_arrows);
  json.raw(",\"wake_arrows_drawn\":").u64(counts->wake_flows);
  json.raw(",\"wakes_without_arrow\":{\"waker_outside_the_pool\":").u64(counts->wakes_from_outside);
  json.raw(",\"io_completion_no_waker\":").u64(counts->wakes_by_io);
  json.raw(",\"an_end_has_no_state_slice\":").u64(counts->wakes_unbound).raw("}");
  // Steals the trace's level does not record are unknown, not 0 (Analysis::counted).
  json.raw(",\"steals\":");
  if (analysis.counted(EventId::steal))
    json.u64(counts->steal_flows + counts->steals_unbound);
  else
    json.raw("null");
  json.raw(",\"steal_arrows\":").u64(counts->steal_flows);
  json.raw("}}\n");
  return json.flush();
}

}  // namespace lantern::trace::cli
