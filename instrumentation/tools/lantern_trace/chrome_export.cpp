// chrome_export.cpp - replays the time-sorted events through per-worker state machines
// (current state, stack of open tasks) and emits slices as they close.
#include "chrome_export.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>

#include "json_out.hpp"

namespace lantern::trace::cli {
namespace {

constexpr int kPid = 1;

std::string state_name(std::uint64_t s) {
  return s < static_cast<std::uint64_t>(kStateCount) ? std::string(kStateNames[s]) : "state " + std::to_string(s);
}
template <std::size_t N>
std::string table_name(const std::string_view (&names)[N], std::uint64_t v) {
  return v < N ? std::string(names[v]) : std::to_string(v);
}

class Exporter {
 public:
  Exporter(JsonOut& json, const TraceHeader& header, const LabelTable& labels, ChromeExportCounts& counts)
      : json_(json),
        labels_(labels),
        ns_per_tick_(header.safe_ns_per_tick()),
        counts_(counts),
        process_name_(header.hostname.empty() ? "lantern" : "lantern on " + header.hostname) {}

  void run(const std::vector<Event>& events);

 private:
  struct OpenTask {
    std::uint64_t task, begin, source;
    std::uint64_t label = 0;  // task_label's b, 0 until the task names itself
  };
  struct OpenIo {
    std::uint64_t begin, kind_fd;
  };
  struct Worker {
    int state = -1;  // -1 until the first state event
    std::uint64_t state_since = 0, reason = 0, first_tick = 0;
    std::vector<OpenTask> tasks;
    // Lookahead for flow ends: this worker's task_begin and state ticks, in order.
    std::vector<std::uint64_t> begin_ticks, state_ticks;
    std::size_t next_begin = 0, next_state = 0;
  };
  struct Flow {
    std::uint64_t id;
    const char* name;
    std::uint64_t from_tid, to_tid, ns;
    bool bind_enclosing;
  };

  static std::uint64_t states_tid(std::uint32_t w) { return 2ull * w + 1; }
  static std::uint64_t tasks_tid(std::uint32_t w) { return 2ull * w + 2; }
  // ns: nanoseconds since the first event, rounded; monotonic in ticks, so slices that
  // nest or abut in ticks still do after rounding. Saturates instead of overflowing.
  std::uint64_t ns(std::uint64_t ticks) const {
    const double v = static_cast<double>(ticks - t0_) * ns_per_tick_ + 0.5;
    return v < 18446744073709549568.0 ? static_cast<std::uint64_t>(v) : ~0ull;
  }
  static bool has_at_or_after(const std::vector<std::uint64_t>& ticks, std::size_t& next, std::uint64_t t) {
    while (next < ticks.size() && ticks[next] < t) ++next;
    return next < ticks.size();
  }

  JsonOut& begin_event() {
    json_.raw(first_ ? "\n" : ",\n");
    first_ = false;
    return json_;
  }
  void slice(const std::string& name, const char* cat, std::uint64_t tid, std::uint64_t from, std::uint64_t to) {
    const std::uint64_t b = ns(from), e = ns(to);
    begin_event().raw("{\"name\":").string(name).raw(",\"cat\":\"").raw(cat).raw("\",\"ph\":\"X\",\"ts\":");
    json_.micros(b).raw(",\"dur\":").micros(e - b).raw(",\"pid\":").i64(kPid).raw(",\"tid\":").u64(tid);
  }
  void metadata(const char* what, std::uint64_t tid, const std::string& name, std::uint64_t sort_index);
  void state_slice(std::uint32_t id, std::uint64_t state, std::uint64_t from, std::uint64_t to, const std::string& why);
  void close_task(std::uint32_t id, const OpenTask& task, std::uint64_t now, const char* note);
  void counter(std::uint64_t lane, std::int64_t delta, std::uint64_t t);
  void flow(const char* name, std::uint32_t from, std::uint32_t to, std::uint64_t t, bool to_tasks);
  void io_slice(std::uint64_t op, const OpenIo& io, std::uint64_t end, const std::int64_t* result);
  std::string label_name(std::uint64_t label) const {
    return label <= 0xFFFF'FFFFu ? labels_.display_name(static_cast<std::uint32_t>(label)) : "label " + std::to_string(label);
  }
  void handle(const Event& e);

  JsonOut& json_;
  const LabelTable& labels_;
  double ns_per_tick_;
  ChromeExportCounts& counts_;
  std::string process_name_;
  bool first_ = true;
  std::uint64_t t0_ = 0;
  std::unordered_map<std::uint32_t, Worker> workers_;
  std::map<std::uint64_t, std::int64_t> lane_depth_;
  std::map<std::uint64_t, OpenIo> io_;  // submitted, not completed yet, by operation id
  std::vector<Flow> flows_;
};

void Exporter::metadata(const char* what, std::uint64_t tid, const std::string& name, std::uint64_t sort_index) {
  begin_event().raw("{\"name\":\"").raw(what).raw("\",\"ph\":\"M\",\"pid\":").i64(kPid).raw(",\"tid\":").u64(tid);
  json_.raw(",\"args\":{\"name\":").string(name).raw("}}");
  const std::string sort_what = std::string(what) == "process_name" ? "process_sort_index" : "thread_sort_index";
  begin_event().raw("{\"name\":\"").raw(sort_what).raw("\",\"ph\":\"M\",\"pid\":").i64(kPid);
  json_.raw(",\"tid\":").u64(tid).raw(",\"args\":{\"sort_index\":").u64(sort_index).raw("}}");
}

void Exporter::state_slice(std::uint32_t id, std::uint64_t state, std::uint64_t from, std::uint64_t to,
                           const std::string& why) {
  slice(state_name(state), "state", states_tid(id), from, to);
  json_.raw(",\"args\":{\"reason\":").string(why).raw("}}");
  ++counts_.state_slices;
}

void Exporter::close_task(std::uint32_t id, const OpenTask& task, std::uint64_t now, const char* note) {
  slice(task.label ? label_name(task.label) : "task", "task", tasks_tid(id), task.begin, now);
  char hex[24];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(task.task));
  json_.raw(",\"args\":{\"task\":\"").raw(hex).raw("\",\"source\":").string(table_name(kSourceNames, task.source));
  if (task.label) json_.raw(",\"label\":").string(label_name(task.label));
  if (note) json_.raw(",\"note\":").string(note);
  json_.raw("}}");
  ++counts_.task_slices;
}

void Exporter::counter(std::uint64_t lane, std::int64_t delta, std::uint64_t t) {
  std::int64_t& depth = lane_depth_[lane];
  depth = std::max<std::int64_t>(0, depth + delta);  // pops of tasks queued before the trace began
  begin_event().raw("{\"name\":\"lane ").u64(lane).raw("\",\"cat\":\"queue\",\"ph\":\"C\",\"ts\":").micros(ns(t));
  json_.raw(",\"pid\":").i64(kPid).raw(",\"args\":{\"depth\":").i64(depth).raw("}}");
  ++counts_.counter_samples;
}

// flow links `from`'s innermost open slice at t to `to`'s next task slice (steals) or
// next state slice (wakes); when `to` has none, to its current state slice. A flow
// whose ends cannot both be bound is left out rather than drawn dangling.
void Exporter::flow(const char* name, std::uint32_t from, std::uint32_t to, std::uint64_t t, bool to_tasks) {
  auto source = workers_.find(from), target = workers_.find(to);
  if (source == workers_.end() || target == workers_.end()) return;
  Worker& s = source->second;
  Worker& d = target->second;
  std::uint64_t from_tid;
  if (!s.tasks.empty()) from_tid = tasks_tid(from);
  else if (s.state >= 0) from_tid = states_tid(from);
  else return;
  Flow f{counts_.flows + 1, name, from_tid, 0, ns(t), false};
  if (to_tasks && has_at_or_after(d.begin_ticks, d.next_begin, t)) {
    f.to_tid = tasks_tid(to);
  } else if (!to_tasks && has_at_or_after(d.state_ticks, d.next_state, t)) {
    f.to_tid = states_tid(to);
  } else if (d.state >= 0) {
    f.to_tid = states_tid(to);
    f.bind_enclosing = true;
  } else {
    return;
  }
  flows_.push_back(f);
  ++counts_.flows;
}

// io_slice: an async slice from submit to completion (or to the end of the trace, when
// result is null), on its own track per operation in Perfetto.
void Exporter::io_slice(std::uint64_t op, const OpenIo& io, std::uint64_t end, const std::int64_t* result) {
  const std::uint64_t kind = io.kind_fd & 0xFF;
  const std::int64_t fd = static_cast<std::int64_t>(io.kind_fd) >> 8;
  std::string name = table_name(kIoKindNames, kind);
  if (fd >= 0) name += " fd " + std::to_string(fd);
  for (const bool begin : {true, false}) {
    begin_event().raw("{\"name\":").string(name).raw(",\"cat\":\"io\",\"ph\":\"").raw(begin ? "b" : "e");
    json_.raw("\",\"id\":").u64(op).raw(",\"ts\":").micros(ns(begin ? io.begin : end)).raw(",\"pid\":").i64(kPid);
    if (!begin) {
      json_.raw(",\"args\":{");
      if (result) json_.raw("\"result\":").i64(*result);
      else json_.raw("\"note\":\"still in flight at the end of the trace\"");
      json_.raw("}");
    }
    json_.raw("}");
  }
  ++counts_.io_slices;
}

void Exporter::handle(const Event& e) {
  Worker& w = workers_[e.worker];
  const std::uint64_t t = e.ticks;
  switch (e.type) {
    case EventType::state: {
      const std::uint64_t from = (e.a >> 8) & 0xFF, to = e.a & 0xFF;
      if (w.state >= 0) {
        state_slice(e.worker, static_cast<std::uint64_t>(w.state), w.state_since, t, table_name(kReasonNames, w.reason));
      } else if (w.first_tick < t) {
        // The first state event names the state before it: show it from the worker's first event.
        state_slice(e.worker, from, w.first_tick, t, "inferred (before the first state event)");
      }
      w.state = static_cast<int>(to);
      w.state_since = t;
      w.reason = e.b;
      ++w.next_state;
      break;
    }
    case EventType::task_begin:
      w.tasks.push_back({e.a, t, e.b});
      ++w.next_begin;
      break;
    case EventType::task_label: {
      auto it = std::find_if(w.tasks.rbegin(), w.tasks.rend(), [&](const OpenTask& o) { return o.task == e.a; });
      if (it != w.tasks.rend()) it->label = e.b;
      break;
    }
    case EventType::io_submit: io_[e.a] = OpenIo{t, e.b}; break;
    case EventType::io_complete: {
      // Events are sorted by time, so the submission came first (a completion without
      // one began before the trace did: left out).
      auto it = io_.find(e.a);
      if (it == io_.end()) break;
      const auto result = static_cast<std::int64_t>(e.b);
      io_slice(e.a, it->second, t, &result);
      io_.erase(it);
      break;
    }
    case EventType::task_end: {
      auto it = std::find_if(w.tasks.rbegin(), w.tasks.rend(), [&](const OpenTask& o) { return o.task == e.a; });
      if (it == w.tasks.rend()) {
        ++counts_.unmatched_task_ends;
        break;
      }
      const std::size_t keep = static_cast<std::size_t>(w.tasks.rend() - it) - 1;
      while (w.tasks.size() > keep + 1) {  // inner tasks whose end was not recorded
        close_task(e.worker, w.tasks.back(), t, "end not recorded; closed with its parent");
        w.tasks.pop_back();
      }
      close_task(e.worker, w.tasks.back(), t, nullptr);
      w.tasks.pop_back();
      break;
    }
    case EventType::push:
      if ((e.b & 0xFFFF'FFFFu) > 0) counter((e.b & 0xFFFF'FFFFu) - 1, +1, t);  // lanes; own-deque pushes are sampled
      break;
    case EventType::lane_pop: counter(e.a, -1, t); break;
    case EventType::not_ready:  // the pool's not-ready tasks: a counter track of its own
      begin_event().raw("{\"name\":\"not-ready tasks\",\"cat\":\"dependencies\",\"ph\":\"C\",\"ts\":").micros(ns(t));
      json_.raw(",\"pid\":").i64(kPid).raw(",\"args\":{\"tasks\":").u64(e.a).raw("}}");
      ++counts_.counter_samples;
      break;
    case EventType::steal:
      if (e.a <= 0xFFFF'FFFFu) flow("steal", static_cast<std::uint32_t>(e.a), e.worker, t, true);
      break;
    case EventType::wake:
      if (e.a <= 0xFFFF'FFFFu) flow("wake", e.worker, static_cast<std::uint32_t>(e.a), t, false);
      break;
    case EventType::help:
    case EventType::dropped: {
      const bool help = e.type == EventType::help;
      begin_event().raw("{\"name\":\"").raw(help ? "help" : "dropped").raw("\",\"cat\":\"");
      json_.raw(help ? "help" : "loss").raw("\",\"ph\":\"i\",\"s\":\"t\",\"ts\":").micros(ns(t));
      json_.raw(",\"pid\":").i64(kPid).raw(",\"tid\":").u64(states_tid(e.worker)).raw(",\"args\":{");
      if (help) json_.raw("\"lane\":").u64(e.a).raw(",\"head_age_ticks\":").u64(e.b).raw("}}");
      else json_.raw("\"events_lost\":").u64(e.a).raw("}}");
      ++counts_.instants;
      break;
    }
    default: break;
  }
}

void Exporter::run(const std::vector<Event>& events) {
  if (!events.empty()) t0_ = events.front().ticks;
  for (const Event& e : events) {
    auto [it, fresh] = workers_.try_emplace(e.worker);
    if (fresh) it->second.first_tick = e.ticks;
    if (e.type == EventType::task_begin) it->second.begin_ticks.push_back(e.ticks);
    if (e.type == EventType::state) it->second.state_ticks.push_back(e.ticks);
  }
  std::map<std::uint32_t, Worker*> sorted;
  for (auto& [id, w] : workers_) sorted[id] = &w;
  metadata("process_name", 0, process_name_, 0);
  for (const auto& [id, w] : sorted) {
    metadata("thread_name", states_tid(id), "worker " + std::to_string(id) + " states", states_tid(id));
    metadata("thread_name", tasks_tid(id), "worker " + std::to_string(id) + " tasks", tasks_tid(id));
  }
  for (const Event& e : events) handle(e);
  const std::uint64_t end = events.empty() ? 0 : events.back().ticks;
  for (auto& [id, w] : sorted) {
    if (w->state >= 0) state_slice(id, static_cast<std::uint64_t>(w->state), w->state_since, end, table_name(kReasonNames, w->reason));
    while (!w->tasks.empty()) {
      close_task(id, w->tasks.back(), end, "still running at the end of the trace");
      w->tasks.pop_back();
    }
  }
  for (const auto& [op, io] : io_) io_slice(op, io, end, nullptr);
  // Flows last: a viewer binds them to slices, which are then all known.
  for (const Flow& f : flows_) {
    for (const bool start : {true, false}) {
      begin_event().raw("{\"name\":\"").raw(f.name).raw("\",\"cat\":\"flow\",\"ph\":\"").raw(start ? "s" : "f");
      json_.raw("\",\"id\":").u64(f.id).raw(",\"ts\":").micros(f.ns).raw(",\"pid\":").i64(kPid);
      json_.raw(",\"tid\":").u64(start ? f.from_tid : f.to_tid);
      if (!start && f.bind_enclosing) json_.raw(",\"bp\":\"e\"");
      json_.raw("}");
    }
  }
}

}  // namespace

bool write_chrome_trace(std::FILE* out, const TraceHeader& header, const LabelTable& labels, std::vector<Event>& events,
                        std::size_t problem_count, ChromeExportCounts* counts) {
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.ticks < b.ticks; });
  JsonOut json(out);
  json.raw("{\"traceEvents\":[");
  Exporter(json, header, labels, *counts).run(events);
  json.raw("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":").string(header.producer);
  json.raw(",\"hostname\":").string(header.hostname).raw(",\"cpu_model\":").string(header.cpu_model);
  json.raw(",\"topology\":").string(header.topology).raw(",\"workers\":").u64(header.workers);
  json.raw(",\"clock\":\"").raw(header.clock.tsc ? "tsc" : "steady_clock_ns").raw("\",\"ns_per_tick\":");
  json.f64(header.safe_ns_per_tick()).raw(",\"format_version\":").u64(header.version);
  json.raw(",\"trace_problems\":").u64(problem_count).raw("}}\n");
  return json.flush();
}

}  // namespace lantern::trace::cli
