// trace_stats.cpp - state time shares, counts and latency percentiles.
#include "trace_stats.hpp"

#include <algorithm>

namespace lantern::trace::cli {

std::uint64_t WorkerSummary::total_state_ticks() const {
  std::uint64_t total = 0;
  for (std::uint64_t t : state_ticks) total += t;
  return total;
}

void StatsBuilder::close_state(WorkerSummary& summary, WorkerState& worker, std::uint64_t now) {
  if (worker.state < 0 || now < worker.since) return;  // unknown state, or a clock step back
  summary.state_ticks[std::min(worker.state, kStateCount)] += now - worker.since;
}

void StatsBuilder::add(const Event& e) {
  WorkerSummary& summary = stats_.workers[e.worker];
  WorkerState& worker = state_[e.worker];
  switch (e.type) {
    case EventType::state:
      close_state(summary, worker, e.ticks);
      worker.state = static_cast<int>(std::min<std::uint64_t>(e.a & 0xFF, kStateCount));
      worker.since = e.ticks;
      break;
    case EventType::task_begin:
      ++summary.tasks;
      worker.open_tasks.push_back({e.a, e.ticks});
      break;
    case EventType::task_label: {
      // The innermost open task with this id (a task labels itself while it runs).
      auto& open = worker.open_tasks;
      auto it = std::find_if(open.rbegin(), open.rend(), [&](const OpenTask& t) { return t.task == e.a; });
      if (it != open.rend()) it->label = e.b;
      break;
    }
    case EventType::io_submit:
    case EventType::io_complete: {
      const bool submit = e.type == EventType::io_submit;
      if (submit) {
        ++stats_.io_submitted;
      } else {
        ++stats_.io_completed;
        if (static_cast<std::int64_t>(e.b) < 0) ++stats_.io_failed;
      }
      auto& other = submit ? io_completed_at_ : io_submitted_at_;
      if (auto it = other.find(e.a); it != other.end()) {
        const std::uint64_t from = submit ? e.ticks : it->second, to = submit ? it->second : e.ticks;
        if (to >= from) io_ticks_.push_back(to - from);
        other.erase(it);
      } else {
        (submit ? io_submitted_at_ : io_completed_at_)[e.a] = e.ticks;
      }
      break;
    }
    case EventType::task_end: {
      // Tasks nest (a join runs other tasks inside the waiting one), so match the
      // innermost open task with this id; tasks inside it that never ended are dropped.
      auto& open = worker.open_tasks;
      auto it = std::find_if(open.rbegin(), open.rend(), [&](const OpenTask& t) { return t.task == e.a; });
      if (it == open.rend()) {
        ++stats_.unmatched_task_ends;
        break;
      }
      if (e.ticks >= it->begin) {
        task_ticks_.push_back(e.ticks - it->begin);
        label_ticks_[it->label].push_back(e.ticks - it->begin);
      }
      open.erase(std::prev(it.base()), open.end());
      break;
    }
    case EventType::steal:
      ++summary.steals;
      ++stats_.steals_by_distance[std::min<std::uint64_t>(e.b & 0xFF, kDistanceCount)];
      break;
    case EventType::help: ++summary.helps; break;
    case EventType::wake: ++summary.wakes; break;
    case EventType::lane_pop: ready_wait_ticks_.push_back(e.b); break;
    default: break;
  }
}

namespace {
// Nearest-rank percentiles, in nanoseconds.
Percentiles percentiles(std::vector<std::uint64_t>& ticks, const TraceHeader& header) {
  Percentiles p;
  p.count = ticks.size();
  if (ticks.empty()) return p;
  auto rank = [&](double q) {
    const std::size_t k = std::min(ticks.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ticks.size())));
    std::nth_element(ticks.begin(), ticks.begin() + static_cast<std::ptrdiff_t>(k), ticks.end());
    return header.ticks_to_ns(ticks[k]);
  };
  p.p50_ns = rank(0.50);
  p.p90_ns = rank(0.90);
  p.p99_ns = rank(0.99);
  p.max_ns = header.ticks_to_ns(*std::max_element(ticks.begin(), ticks.end()));
  return p;
}
}  // namespace

TraceStats StatsBuilder::finish(const TraceHeader& header, std::uint64_t end_tick) {
  for (auto& [id, worker] : state_) {
    close_state(stats_.workers[id], worker, end_tick);
    stats_.unfinished_tasks += worker.open_tasks.size();
  }
  stats_.ready_wait = percentiles(ready_wait_ticks_, header);
  stats_.task_duration = percentiles(task_ticks_, header);
  for (auto& [label, ticks] : label_ticks_) stats_.by_label[label] = percentiles(ticks, header);
  stats_.io_latency = percentiles(io_ticks_, header);
  return stats_;
}

}  // namespace lantern::trace::cli
