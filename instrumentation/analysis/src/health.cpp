// SPDX-License-Identifier: Apache-2.0
// health.cpp - incremental health checks over the model's stored arrays.
#include "lantern/analysis/health.hpp"

#include <algorithm>

#include "lantern/analysis/analysis.hpp"

namespace lantern::analysis {
namespace {
constexpr int kSleeping = state_slot(WorkerState::sleeping);
// searching: idle or sleepy, the states of a worker looking for work.
constexpr bool searching(int state) noexcept {
  return state == state_slot(WorkerState::idle) || state == state_slot(WorkerState::sleepy);
}
constexpr std::uint64_t kMinLaneSamples = 8;  // no "far above average" before there is an average
}  // namespace

const char* problem_kind_name(ProblemKind kind) noexcept {
  switch (kind) {
    case ProblemKind::long_task: return "long task";
    case ProblemKind::lane_wait: return "lane head waited";
    case ProblemKind::queued_while_asleep: return "work queued, all asleep";
    case ProblemKind::spinning: return "searching without work";
    case ProblemKind::events_dropped: return "events dropped";
    case ProblemKind::deadlock: return "deadlock suspected";
  }
  return "?";
}

const char* problem_kind_advice(ProblemKind kind) noexcept {
  switch (kind) {
    case ProblemKind::long_task:
      return "A task ran without a break, so nothing else ran on that worker: split it, or run blocking work "
             "elsewhere.";
    case ProblemKind::lane_wait:
      return "A submitted task waited far longer than its lane usually does: its worker was busy and nobody helped.";
    case ProblemKind::queued_while_asleep:
      return "Work sat in a lane while every worker slept: a wake-up was late or lost.";
    case ProblemKind::spinning:
      return "A worker searched long without finding work or sleeping. Lantern's workers get sleepy after 10 us "
             "(or 32 rounds) of searching, so either it was woken again and again for work others took (too many "
             "workers for the "
             "work?), or it was not given a CPU (more runnable threads than cores).";
    case ProblemKind::events_dropped:
      return "The recorder's ring (or the live stream) was full: the trace has a gap here. Counters stay exact.";
    case ProblemKind::deadlock:
      return "No worker could progress: each was blocked in a wait or idle, and no task was ready. Tasks wait on "
             "each other (or on work never submitted); core/deadlock/README.md shows how to restructure them.";
  }
  return "";
}

bool preempted(const Problem& p) noexcept {
  return p.kind == ProblemKind::long_task && p.task_ticks > 0 && p.off_cpu * 2 >= p.task_ticks;
}

const char* problem_advice(const Problem& p) noexcept {
  if (preempted(p)) {
    return "Preempted: the task's thread waited for a CPU for most of the task, so the kernel, not the task's "
           "code, made it long. More threads were runnable than there were CPUs (another program, or more workers "
           "than cores): give the pool fewer workers or CPUs of its own.";
  }
  return problem_kind_advice(p.kind);
}

void HealthChecker::reset() {
  const HealthThresholds keep = thresholds_;
  *this = HealthChecker();
  thresholds_ = keep;
}

void HealthChecker::report(const Analysis& m, Problem p, Tick merge_gap) {
  ++counts_[static_cast<int>(p.kind)];
  if (p.kind != ProblemKind::events_dropped) {
    // Work waiting while all sleep involves every worker; the others, one.
    const int who = p.kind == ProblemKind::queued_while_asleep || p.kind == ProblemKind::lane_wait
                        ? -1
                        : static_cast<int>(p.worker);
    p.uncertain = m.in_gap(who, p.start, p.end);
  }
  // Merge into a recent problem of the same kind and place: a burst of drops or a
  // flooded lane is one warning with a count, not a thousand rows.
  for (std::size_t k = problems_.size(), seen = 0; k > 0 && seen < 16; --k, ++seen) {
    Problem& q = problems_[k - 1];
    if (q.kind == p.kind && q.worker == p.worker && p.start <= q.end + merge_gap && q.start <= p.end + merge_gap) {
      q.start = std::min(q.start, p.start);
      q.end = std::max(q.end, p.end);
      if (p.value >= q.value) q.detail = p.detail, q.task_ticks = p.task_ticks, q.off_cpu = p.off_cpu;
      q.value = p.kind == ProblemKind::events_dropped ? q.value + p.value : std::max(q.value, p.value);
      q.occurrences += p.occurrences;
      q.uncertain = q.uncertain || p.uncertain;
      return;
    }
  }
  if (problems_.size() >= kMaxProblems) {
    ++suppressed_;
    return;
  }
  problems_.push_back(p);
}

void HealthChecker::check_slices(const Analysis& m, std::uint32_t w, Cursor& c, Tick threshold) {
  const WorkerTrack& track = m.track(w);
  c.slice.resize(static_cast<std::size_t>(track.depth_count()), 0);
  for (int d = 0; d < track.depth_count(); ++d) {
    const auto& row = track.slices(d);
    std::size_t& i = c.slice[static_cast<std::size_t>(d)];
    for (; i < row.size() && !row[i].open(); ++i) {
      const TaskSlice& s = row[i];
      if (s.end - s.start <= threshold) continue;
      // The longest stretch without a nested task: a task that joins and runs children
      // is not "busy on one task", its children are. Children (depth d+1) closed first.
      Tick cursor = s.start, best = 0, best_at = s.start;
      if (d + 1 < track.depth_count()) {
        const auto& kids = track.slices(d + 1);
        for (std::size_t k = track.first_slice_starting_at_or_after(d + 1, s.start);
             k < kids.size() && kids[k].start < s.end; ++k) {
          if (kids[k].start - cursor > best) best = kids[k].start - cursor, best_at = cursor;
          cursor = kids[k].open() ? s.end : std::max(cursor, kids[k].end);
        }
      }
      if (s.end > cursor && s.end - cursor > best) best = s.end - cursor, best_at = cursor;
      if (best > threshold) {
        Problem p{ProblemKind::long_task, w, best_at, best_at + best, best, s.id, 1};
        p.task_ticks = s.end - s.start;
        p.off_cpu = track.off_cpu(s);
        report(m, p, 0);
      }
    }
  }
}

void HealthChecker::check_intervals(const Analysis& m, std::uint32_t w, Cursor& c, Tick threshold) {
  const WorkerTrack& track = m.track(w);
  // A search is a run of consecutive idle and sleepy intervals: a worker flapping
  // between idle and sleepy (never reaching sleeping, never finding work) searches for
  // the whole run, however short each interval. A run ends where the next interval
  // begins, even when that one is the last (still open) interval of the track.
  for (; c.interval < track.interval_count(); ++c.interval) {
    if (searching(track.interval_state(c.interval))) {
      if (c.interval + 1 == track.interval_count()) break;  // open: the run may go on
      if (!c.searching) c.searching = true, c.search_start = track.interval_start(c.interval);
      continue;
    }
    if (!c.searching) continue;
    c.searching = false;
    const Tick a = c.search_start, b = track.interval_start(c.interval);
    if (b - a > threshold) report(m, Problem{ProblemKind::spinning, w, a, b, b - a, 0, 1}, 0);
  }
}

void HealthChecker::check_pops(const Analysis& m, std::uint32_t w, Cursor& c) {
  const auto& pops = m.pops(w);
  const Tick min_wait = static_cast<Tick>(m.ns_to_ticks(thresholds_.lane_wait_min_ms * 1e6));
  const Tick asleep_min = static_cast<Tick>(m.ns_to_ticks(thresholds_.queued_asleep_min_us * 1e3));
  for (; c.pop < pops.size(); ++c.pop) {
    const LanePop& p = pops[c.pop];
    if (p.lane >= lane_wait_sum_.size()) {
      lane_wait_sum_.resize(p.lane + 1, 0.0);
      lane_wait_count_.resize(p.lane + 1, 0);
    }
    const double wait = static_cast<double>(p.wait);
    const std::uint64_t n = lane_wait_count_[p.lane];
    const double average = n ? lane_wait_sum_[p.lane] / static_cast<double>(n) : 0.0;
    if (n >= kMinLaneSamples && p.wait > min_wait && wait > thresholds_.lane_wait_factor * average) {
      const Tick pushed = p.t > p.wait ? p.t - p.wait : 0;
      report(m, Problem{ProblemKind::lane_wait, p.lane, pushed, p.t, p.wait, static_cast<std::uint64_t>(average), 1},
             min_wait);
    }
    lane_wait_sum_[p.lane] += wait;
    ++lane_wait_count_[p.lane];
    if (p.wait >= asleep_min) candidates_.push_back(Candidate{p.t, p.wait, p.lane});
  }
}

void HealthChecker::sweep_asleep(const Analysis& m) {
  const std::uint32_t n = m.worker_count();
  if (n == 0) return;
  if (n != sweep_workers_) {
    // A worker appeared: restart the sweep (rare; the header normally says how many).
    sweep_workers_ = n;
    sweep_index_.assign(n, 0);
    sweep_state_.assign(n, kUnknownState);
    sweep_queue_ = {};
    asleep_ = 0;
    all_asleep_ = false;
    all_asleep_intervals_.clear();
  }
  // Horizon: every worker has reported up to here. A sleeping worker reports nothing
  // until it wakes, so it does not hold the horizon back; the slack covers the
  // collector's lag between draining one worker's ring and the next.
  const Tick slack = finished_ ? 0 : static_cast<Tick>(m.ns_to_ticks(20e6));
  const Tick newest = m.last_tick() > slack ? m.last_tick() - slack : 0;
  Tick horizon = newest;
  for (std::uint32_t w = 0; w < n; ++w) {
    const WorkerTrack& t = m.track(w);
    if (!t.seen()) return;  // a worker that never spoke: its state is unknown
    if (t.current_state() != kSleeping) horizon = std::min(horizon, t.last_tick());
  }
  // (Re)queue each worker's next interval; the queue holds at most one per worker.
  std::vector<bool> queued(n, false);
  {
    auto copy = sweep_queue_;
    while (!copy.empty()) queued[copy.top().worker] = true, copy.pop();
  }
  for (std::uint32_t w = 0; w < n; ++w) {
    if (!queued[w] && sweep_index_[w] < m.track(w).interval_count()) {
      sweep_queue_.push(Next{m.track(w).interval_start(sweep_index_[w]), w});
    }
  }
  while (!sweep_queue_.empty() && sweep_queue_.top().t <= horizon) {
    const Next next = sweep_queue_.top();
    sweep_queue_.pop();
    const WorkerTrack& t = m.track(next.worker);
    const int state = t.interval_state(sweep_index_[next.worker]);
    const Tick at = std::max(next.t, swept_to_);
    if (sweep_state_[next.worker] == kSleeping) --asleep_;
    if (state == kSleeping) ++asleep_;
    sweep_state_[next.worker] = state;
    swept_to_ = at;
    const bool all = asleep_ == static_cast<int>(n);
    if (all && !all_asleep_) asleep_since_ = at;
    if (!all && all_asleep_ && at > asleep_since_) all_asleep_intervals_.emplace_back(asleep_since_, at);
    all_asleep_ = all;
    if (++sweep_index_[next.worker] < t.interval_count()) {
      sweep_queue_.push(Next{t.interval_start(sweep_index_[next.worker]), next.worker});
    }
  }
  swept_to_ = std::max(swept_to_, horizon);
}

void HealthChecker::check_candidates(const Analysis& m) {
  const Tick min_overlap = static_cast<Tick>(m.ns_to_ticks(thresholds_.queued_asleep_min_us * 1e3));
  std::size_t kept = 0;
  for (const Candidate& c : candidates_) {
    if (c.t > swept_to_) {
      candidates_[kept++] = c;  // the sweep has not reached it yet
      continue;
    }
    const Tick pushed = c.t > c.wait ? c.t - c.wait : 0;
    auto check = [&](Tick a, Tick b) {
      const Tick lo = std::max(a, pushed), hi = std::min(b, c.t);
      if (hi > lo && hi - lo >= min_overlap) {
        report(m, Problem{ProblemKind::queued_while_asleep, c.lane, lo, hi, hi - lo, 0, 1}, min_overlap);
      }
    };
    auto it = std::lower_bound(all_asleep_intervals_.begin(), all_asleep_intervals_.end(), pushed,
                               [](const auto& iv, Tick v) { return iv.second < v; });
    for (; it != all_asleep_intervals_.end() && it->first < c.t; ++it) check(it->first, it->second);
    if (all_asleep_ && asleep_since_ < c.t) check(asleep_since_, c.t);
  }
  candidates_.resize(kept);
}

void HealthChecker::advance(const Analysis& m) {
  const std::uint32_t n = m.worker_count();
  if (cursors_.size() < n) cursors_.resize(n);
  const Tick long_task = static_cast<Tick>(m.ns_to_ticks(thresholds_.long_task_ms * 1e6));
  const Tick spin = static_cast<Tick>(m.ns_to_ticks(thresholds_.spin_ms * 1e6));
  const Tick drop_gap = static_cast<Tick>(m.ns_to_ticks(10e6));
  for (std::uint32_t w = 0; w < n; ++w) {
    Cursor& c = cursors_[w];
    check_slices(m, w, c, long_task);
    check_intervals(m, w, c, spin);
    check_pops(m, w, c);
    const auto& drops = m.drops(w);
    for (; c.drop < drops.size(); ++c.drop) {
      const Drop& d = drops[c.drop];
      report(m, Problem{ProblemKind::events_dropped, w, d.gap_start, d.t, d.count, 0, 1}, drop_gap);
    }
    const auto& deadlocks = m.deadlocks(w);
    for (; c.deadlock < deadlocks.size(); ++c.deadlock) {
      const Deadlock& d = deadlocks[c.deadlock];
      report(m, Problem{ProblemKind::deadlock, w, d.t, d.t, d.unfinished_tasks, d.blocked_workers, 1}, drop_gap);
    }
  }
  sweep_asleep(m);
  check_candidates(m);
}

void HealthChecker::finish(const Analysis& m) {
  finished_ = true;
  advance(m);
}

std::vector<Problem> HealthChecker::ongoing(const Analysis& m) const { return ongoing(m, m.last_tick()); }

std::vector<Problem> HealthChecker::by_time(const Analysis& m) const {
  std::vector<Problem> all = problems_;
  for (const Problem& p : ongoing(m)) all.push_back(p);
  std::stable_sort(all.begin(), all.end(), [](const Problem& x, const Problem& y) { return x.start < y.start; });
  return all;
}

std::vector<Problem> HealthChecker::ended_by(Tick at) const {
  std::vector<Problem> out;
  for (const Problem& p : problems_) {
    if (p.end <= at) out.push_back(p);
  }
  return out;
}

std::uint64_t HealthChecker::warning_count(const Analysis& m, Tick at) const {
  const auto ended = static_cast<std::uint64_t>(
      std::count_if(problems_.begin(), problems_.end(), [at](const Problem& p) { return p.end <= at; }));
  return ended + (at >= m.last_tick() ? suppressed_ : 0) + ongoing(m, at).size();
}

std::vector<Problem> HealthChecker::ongoing(const Analysis& m, Tick now) const {
  std::vector<Problem> out;
  const Tick long_task = static_cast<Tick>(m.ns_to_ticks(thresholds_.long_task_ms * 1e6));
  const Tick spin = static_cast<Tick>(m.ns_to_ticks(thresholds_.spin_ms * 1e6));
  for (std::uint32_t w = 0; w < m.worker_count(); ++w) {
    const WorkerTrack& t = m.track(w);
    if (!t.seen() || now < t.first_tick()) continue;
    // The innermost task running at `now`: busy since it began or since its last child
    // (one depth deeper, inside it) ended before `now`.
    const TaskSlice* running = nullptr;
    int depth = 0;
    for (int d = 0; d < t.depth_count(); ++d) {
      const std::size_t i = t.first_slice_ending_after(d, now);
      if (i >= t.slices(d).size() || t.slices(d)[i].start > now) break;
      running = &t.slices(d)[i], depth = d;
    }
    if (running) {
      Tick since = running->start;
      if (depth + 1 < t.depth_count()) {
        const auto& inner = t.slices(depth + 1);
        std::size_t i = t.first_slice_ending_after(depth + 1, now);  // the first inner one still running or after
        if (i > 0 && inner[i - 1].start >= running->start) since = std::max(since, inner[i - 1].end);
      }
      if (now > since && now - since > long_task) {
        out.push_back(Problem{ProblemKind::long_task, w, since, now, now - since, running->id, 1});
        out.back().task_ticks = now - since;
      }
    }
    // The search going on at `now`: the run of idle/sleepy intervals holding it, from
    // its first interval (a run ends where the next interval begins, open or not).
    // A worker that stopped (its `stopping` event: its thread ended) is not searching.
    if (t.stopped_at() != kOpenEnd && t.stopped_at() <= now) continue;
    const std::ptrdiff_t k = t.interval_at(now);
    if (k < 0) continue;
    std::size_t first = static_cast<std::size_t>(k);
    if (!searching(t.interval_state(first))) continue;
    while (first > 0 && searching(t.interval_state(first - 1))) --first;
    const Tick from = t.interval_start(first);
    if (now > from && now - from > spin) {
      out.push_back(Problem{ProblemKind::spinning, w, from, now, now - from, 0, 1});
    }
  }
  return out;
}

}  // namespace lantern::analysis
