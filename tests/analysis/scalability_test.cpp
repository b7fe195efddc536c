// SPDX-License-Identifier: Apache-2.0
// scalability_test.cpp - the scalability analysis on synthetic event streams whose task
// graphs have known answers (1 tick = 1 ns, so every figure is exact): a serial chain
// beside a fan-out, fib(n) by join at level graph, a skynet-shaped TaskGroup tree, a
// TaskGraph's release edges, a spawn_after chain, a Signal set by another branch; the
// simulator's sanity; what-if; and the honesty cases (no graph, dropped events, a cut
// window, a stolen join half below level graph).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "lantern/analysis/analysis.hpp"
#include "lantern/analysis/json_out.hpp"
#include "lantern/analysis/scalability.hpp"

namespace {

using namespace lantern;
using analysis::Analysis;
using analysis::EdgeKind;
using analysis::Scalability;
using analysis::ScaleOptions;
using trace::make_event;

// Stream: a synthetic recording, events added per worker in time order.
struct Stream {
  std::vector<trace::Event> events;
  std::uint32_t workers = 1;
  trace::Level level = trace::Level::graph;
  std::uint16_t version = trace::kFormatVersion;
  std::optional<double> event_cost_ns;  // the header's

  void begin(std::uint64_t t, std::uint32_t w, std::uint64_t id, TaskSource s = TaskSource::own_deque) {
    events.push_back(make_event(t, w, TaskBeginPayload{id, s}));
  }
  void end(std::uint64_t t, std::uint32_t w, std::uint64_t id) {
    events.push_back(make_event(t, w, TaskEndPayload{id, false, 0}));
  }
  void label(std::uint64_t t, std::uint32_t w, std::uint64_t id, std::uint32_t l) {
    events.push_back(make_event(t, w, TaskLabelPayload{id, l}));
  }
  void spawn(std::uint64_t t, std::uint32_t w, std::uint64_t child, SpawnKind k, std::uint64_t group = 0) {
    events.push_back(make_event(t, w, SpawnPayload{child, k, group}));
  }
  void wait(std::uint64_t t0, std::uint64_t t1, std::uint32_t w, std::uint64_t on, WaitKind k) {
    events.push_back(make_event(t0, w, WaitBeginPayload{on, k}));
    events.push_back(make_event(t1, w, WaitEndPayload{on, k}));
  }
  void wait_begin(std::uint64_t t, std::uint32_t w, std::uint64_t on, WaitKind k) {
    events.push_back(make_event(t, w, WaitBeginPayload{on, k}));
  }
  void wait_end(std::uint64_t t, std::uint32_t w, std::uint64_t on, WaitKind k) {
    events.push_back(make_event(t, w, WaitEndPayload{on, k}));
  }
  void release(std::uint64_t t, std::uint32_t w, std::uint64_t released, std::uint64_t releaser) {
    events.push_back(make_event(t, w, ReleasePayload{released, releaser}));
  }
  void satisfy(std::uint64_t t, std::uint32_t w, std::uint64_t task, std::uint64_t by) {
    events.push_back(make_event(t, w, SatisfyPayload{task, by}));
  }
  void steal(std::uint64_t t, std::uint32_t thief, std::uint32_t victim) {
    events.push_back(make_event(t, thief, StealPayload{victim, StealDistance::llc, TaskSource::stolen_deque}));
  }
  // feed: the events in time order (stable: a worker's order at one tick is kept).
  void feed(Analysis& a, bool finish = true) {
    trace::TraceHeader h;
    h.producer = "scalability_test";
    h.workers = workers;
    h.version = version;
    h.level = level;
    h.clock = trace::ClockCalibration{false, 1.0, 0, 0};
    h.event_cost_ns = event_cost_ns;
    a.set_header(h, true);
    a.define_label(1, "leaf");
    a.define_label(2, "chain");
    std::stable_sort(events.begin(), events.end(),
                     [](const trace::Event& x, const trace::Event& y) { return x.ticks < y.ticks; });
    for (const auto& e : events) a.add(e);
    if (finish) a.finish();
  }
};

ScaleOptions quick() {
  ScaleOptions o;
  o.workers = {1, 2, 4, 1024};
  return o;
}

std::vector<std::uint64_t> path_tasks(const Scalability& s) {
  std::vector<std::uint64_t> ids;
  for (const auto& p : s.critical_path)
    if (ids.empty() || ids.back() != p.task) ids.push_back(p.task);
  return ids;
}

double path_sum(const Scalability& s) {
  double sum = 0;
  for (const auto& p : s.critical_path) sum += p.own_ns + p.edge_ns;
  return sum;
}

// note_with: the first note that contains `words` ("" when none does).
std::string note_with(const Scalability& s, std::string_view words) {
  for (const auto& n : s.notes)
    if (n.find(words) != std::string::npos) return n;
  return "";
}

void check_simulator(const Scalability& s) {
  ASSERT_TRUE(s.work_ns && s.span_ns);
  for (const auto& c : s.curve) {
    ASSERT_TRUE(c.simulated_ns) << c.workers;
    EXPECT_GE(*c.simulated_ns, c.lower_ns - 1e-6) << "never below max(T1/P, span) at P=" << c.workers;
  }
}

// A serial chain of k tasks (each spawns the next at its end) beside a fan-out of m.
TEST(Scalability, ChainBesideFanOutHasTheChainAsItsSpan) {
  Stream st;
  st.workers = 2;
  const int k = 5, m = 4;
  // R on worker 0: 10 ticks, spawns the chain's head, then the fan-out, 1 tick each.
  st.begin(0, 0, 0x100);
  st.spawn(10, 0, 0x200, SpawnKind::detached);
  for (int j = 1; j <= m; ++j)
    st.spawn(10 + static_cast<std::uint64_t>(j), 0, 0x300 + static_cast<std::uint64_t>(j), SpawnKind::detached);
  st.end(15, 0, 0x100);
  // The chain on worker 0, 100 ticks each, 5 ticks apart.
  std::uint64_t t = 20;
  for (int i = 0; i < k; ++i) {
    const std::uint64_t id = 0x200 + static_cast<std::uint64_t>(i);
    st.begin(t, 0, id);
    st.label(t, 0, id, 2);
    if (i + 1 < k) st.spawn(t + 100, 0, id + 1, SpawnKind::detached);
    st.end(t + 100, 0, id);
    t += 105;
  }
  // The fan-out on worker 1, 50 ticks each.
  for (int j = 1; j <= m; ++j) {
    const std::uint64_t b = 30 + 60 * static_cast<std::uint64_t>(j);
    st.steal(b - 2, 1, 0);
    st.begin(b, 1, 0x300 + static_cast<std::uint64_t>(j), TaskSource::stolen_deque);
    st.label(b, 1, 0x300 + static_cast<std::uint64_t>(j), 1);
    st.end(b + 50, 1, 0x300 + static_cast<std::uint64_t>(j));
  }
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  EXPECT_TRUE(s.has_graph);
  EXPECT_EQ(s.tasks, 1u + k + m);
  EXPECT_DOUBLE_EQ(*s.work_ns, 15 + 100.0 * k + 50.0 * m);
  EXPECT_DOUBLE_EQ(*s.span_ns, 10 + 100.0 * k);
  EXPECT_DOUBLE_EQ(*s.parallelism, (15 + 100.0 * k + 50.0 * m) / (10 + 100.0 * k));
  EXPECT_EQ(path_tasks(s), (std::vector<std::uint64_t>{0x100, 0x200, 0x201, 0x202, 0x203, 0x204}));
  EXPECT_DOUBLE_EQ(path_sum(s), *s.span_ns);
  EXPECT_EQ(s.critical_path[1].entered_by, EdgeKind::spawn);
  EXPECT_DOUBLE_EQ(s.span_by_edge[static_cast<int>(EdgeKind::spawn)], 100.0 * k);
  ASSERT_FALSE(s.labels.empty());
  EXPECT_EQ(s.labels[0].name, "chain");
  EXPECT_DOUBLE_EQ(s.labels[0].span_share, 100.0 * k / (10 + 100.0 * k));
  ASSERT_TRUE(s.costs.steal_ns);
  EXPECT_DOUBLE_EQ(*s.costs.steal_ns, 2);
  check_simulator(s);
}

// fib(n) by join at level graph, run depth-first on one worker: each join costs c ticks
// before its fork, each leaf L; the first half runs inline (the parent's own time), the
// second half is a task the parent pops and runs nested while it waits.
struct Fib {
  Stream& st;
  std::uint64_t t = 0;
  std::uint64_t next_id = 0x1000;
  std::uint64_t c = 10, L = 100;
  std::uint64_t joins = 0, leaves = 0;
  void run(int n) {  // inside the current task
    if (n < 2) {
      t += L;
      ++leaves;
      return;
    }
    ++joins;
    t += c;
    const std::uint64_t child = next_id++;
    st.spawn(t, 0, child, SpawnKind::join);
    run(n - 1);
    st.wait_begin(t, 0, child, WaitKind::join);
    st.begin(t, 0, child);
    st.label(t, 0, child, 1);
    run(n - 2);
    st.end(t, 0, child);
    st.wait_end(t, 0, child, WaitKind::join);
  }
};

TEST(Scalability, FibByJoinAtLevelGraphHasKnownWorkAndSpan) {
  Stream st;
  Fib fib{st};
  const int n = 12;
  st.begin(0, 0, 0x1);
  fib.run(n);
  st.end(fib.t, 0, 0x1);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  EXPECT_EQ(s.tasks, 1 + fib.joins);
  EXPECT_DOUBLE_EQ(*s.work_ns, static_cast<double>(fib.joins * fib.c + fib.leaves * fib.L));
  EXPECT_DOUBLE_EQ(*s.span_ns, static_cast<double>((n - 1) * fib.c + fib.L));
  EXPECT_EQ(path_tasks(s), std::vector<std::uint64_t>{0x1}) << "the left spine runs inline in the root";
  EXPECT_DOUBLE_EQ(path_sum(s), *s.span_ns);
  check_simulator(s);
  // One worker replays the run: no steal, no wake, no cost measured above 0.
  EXPECT_NEAR(*s.curve.front().simulated_ns, *s.work_ns, 1e-6);
  // Many workers approach the span.
  EXPECT_LE(*s.curve.back().simulated_ns, *s.span_ns * 1.5);
  // Deterministic for a seed.
  const Scalability again = analysis::scalability(a, quick());
  for (std::size_t i = 0; i < s.curve.size(); ++i) EXPECT_EQ(s.curve[i].simulated_ns, again.curve[i].simulated_ns);
}

// skynet-shaped: a TaskGroup at each node, `branch` children per node, `depth` levels;
// each node works `pre` before its spawns and `post` after its wait.
struct Skynet {
  Stream& st;
  std::uint64_t t = 0;
  std::uint64_t next_id = 0x10000;
  std::uint64_t pre = 7, post = 3, leaf = 40;
  int branch = 3;
  std::uint64_t nodes = 0, leaves = 0;
  void node(std::uint64_t id, int depth) {  // begins and ends task `id`
    st.begin(t, 0, id);
    ++nodes;
    if (depth == 0) {
      st.label(t, 0, id, 1);
      t += leaf;
      ++leaves;
      st.end(t, 0, id);
      return;
    }
    t += pre;
    const std::uint64_t group = id + 0x8000'0000;
    std::vector<std::uint64_t> kids;
    for (int i = 0; i < branch; ++i) {
      kids.push_back(next_id++);
      st.spawn(t, 0, kids.back(), SpawnKind::task_group, group);
    }
    st.wait_begin(t, 0, group, WaitKind::task_group);
    for (auto k : kids) node(k, depth - 1);
    st.wait_end(t, 0, group, WaitKind::task_group);
    t += post;
    st.end(t, 0, id);
  }
};

TEST(Scalability, SkynetByTaskGroupHasKnownWorkAndSpan) {
  Stream st;
  Skynet sky{st};
  const int depth = 4;
  sky.node(0x1, depth);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  const std::uint64_t inner = sky.nodes - sky.leaves;
  EXPECT_EQ(s.tasks, sky.nodes);
  EXPECT_DOUBLE_EQ(*s.work_ns, static_cast<double>(inner * (sky.pre + sky.post) + sky.leaves * sky.leaf));
  EXPECT_DOUBLE_EQ(*s.span_ns, static_cast<double>(depth * (sky.pre + sky.post) + sky.leaf));
  // Its stretches with own time: each level's pre, a leaf, each level's post (zero-length
  // stretches between a node's spawns may lie on it too).
  std::vector<double> own;
  bool joined = false;
  for (const auto& p : s.critical_path) {
    if (p.own_ns > 0) own.push_back(p.own_ns);
    joined |= p.entered_by == EdgeKind::join;
  }
  std::vector<double> expected(static_cast<std::size_t>(depth), static_cast<double>(sky.pre));
  expected.push_back(static_cast<double>(sky.leaf));
  expected.insert(expected.end(), static_cast<std::size_t>(depth), static_cast<double>(sky.post));
  EXPECT_EQ(own, expected);
  EXPECT_TRUE(joined);
  EXPECT_DOUBLE_EQ(path_sum(s), *s.span_ns);
  check_simulator(s);
}

// A TaskGraph: R spawns A, B, C, D (spawn_after) and waits on the graph; A releases B and
// C, B (the last of D's dependencies to complete) releases D. Critical path R A B D R.
TEST(Scalability, TaskGraphReleasesGiveTheCriticalPath) {
  Stream st;
  st.workers = 2;
  const std::uint64_t R = 0x10, A = 0xA0, B = 0xB0, C = 0xC0, D = 0xD0, G = 0x6000;
  st.begin(0, 0, R);
  for (auto id : {A, B, C, D}) st.spawn(5, 0, id, SpawnKind::spawn_after, G);
  st.wait(5, 201, 0, G, WaitKind::graph);
  st.end(202, 0, R);
  st.begin(100, 1, A, TaskSource::own_lane);
  st.release(110, 1, B, A);
  st.release(110, 1, C, A);
  st.end(110, 1, A);
  st.begin(112, 1, C, TaskSource::own_lane);
  st.end(132, 1, C);
  st.begin(135, 1, B, TaskSource::own_lane);
  st.release(185, 1, D, B);
  st.end(185, 1, B);
  st.begin(190, 1, D, TaskSource::own_lane);
  st.end(195, 1, D);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  EXPECT_DOUBLE_EQ(*s.work_ns, 5 + 1 + 10 + 20 + 50 + 5);
  EXPECT_DOUBLE_EQ(*s.span_ns, 5 + 10 + 50 + 5 + 1);
  EXPECT_EQ(path_tasks(s), (std::vector<std::uint64_t>{R, A, B, D, R}));
  ASSERT_EQ(s.critical_path.size(), 5u);
  EXPECT_EQ(s.critical_path[1].entered_by, EdgeKind::spawn);
  EXPECT_EQ(s.critical_path[2].entered_by, EdgeKind::release);
  EXPECT_EQ(s.critical_path[3].entered_by, EdgeKind::release);
  EXPECT_EQ(s.critical_path[4].entered_by, EdgeKind::join);
  check_simulator(s);
}

// D waits for B (50 long) and C (20): B completes first (a satisfy), C last (the
// release). The longer branch is the critical path: R A B D R, 71, where the release
// alone gives R A C D R, 41.
TEST(Scalability, EveryDependencyIsAnEdgeNotOnlyTheLast) {
  Stream st;
  st.workers = 3;
  const std::uint64_t R = 0x10, A = 0xA0, B = 0xB0, C = 0xC0, D = 0xD0, G = 0x6000;
  st.begin(0, 0, R);
  for (auto id : {A, B, C, D}) st.spawn(5, 0, id, SpawnKind::spawn_after, G);
  st.wait(5, 201, 0, G, WaitKind::graph);
  st.end(202, 0, R);
  st.begin(100, 1, A, TaskSource::own_lane);
  st.release(110, 1, B, A);
  st.release(110, 1, C, A);
  st.end(110, 1, A);
  st.begin(112, 1, B, TaskSource::own_lane);
  st.satisfy(162, 1, D, B);
  st.end(162, 1, B);
  st.begin(150, 2, C, TaskSource::stolen_deque);
  st.release(170, 2, D, C);
  st.end(170, 2, C);
  st.begin(175, 2, D, TaskSource::own_deque);
  st.end(180, 2, D);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  EXPECT_DOUBLE_EQ(*s.span_ns, 5 + 10 + 50 + 5 + 1);
  EXPECT_EQ(path_tasks(s), (std::vector<std::uint64_t>{R, A, B, D, R}));
  ASSERT_EQ(s.critical_path.size(), 5u);
  EXPECT_EQ(s.critical_path[3].entered_by, EdgeKind::release);
  check_simulator(s);
}

// A dependency already complete when spawn_after registers it: the spawning task reports
// the satisfy, naming the finished task; the edge leaves that task's end.
TEST(Scalability, ASatisfyByAFinishedTaskLeavesItsEnd) {
  Stream st;
  st.workers = 2;
  const std::uint64_t R = 0x10, X = 0xA0, N = 0xB0;
  st.begin(0, 0, R);
  st.spawn(1, 0, X, SpawnKind::spawn_after);
  st.begin(2, 1, X, TaskSource::stolen_deque);
  st.end(62, 1, X);
  st.spawn(70, 0, N, SpawnKind::spawn_after);
  st.satisfy(71, 0, N, X);  // X done: the spawning task reports it
  st.end(72, 0, R);
  st.begin(80, 1, N, TaskSource::stolen_deque);
  st.end(90, 1, N);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  // R's three stretches (cut at each spawn) and their 2 continuations, R -> X, R -> N,
  // and X's end -> N: 5 edges. The path is R's own (1 + 69) and N: R saw X done.
  EXPECT_EQ(s.edges, 5u);
  EXPECT_DOUBLE_EQ(*s.span_ns, 1 + 69 + 10);
  EXPECT_EQ(path_tasks(s), (std::vector<std::uint64_t>{R, N}));
}

// The recording's cost: each stretch less one event's cost, never below 0; its share of
// the recorded time is reported, and past a quarter a note says the absolute figures
// are uncertain.
TEST(Scalability, TheRecordingsCostIsTakenOffAndItsShareReported) {
  for (const double cost : {2.0, 30.0}) {
    Stream st;
    st.workers = 1;
    st.event_cost_ns = cost;
    st.begin(0, 0, 0x1);  // stretches of 40 and 20 ns, cut by a spawn
    st.spawn(40, 0, 0x2, SpawnKind::detached);
    st.end(60, 0, 0x1);
    st.begin(60, 0, 0x2);  // 10 ns: less than 30, so 0 at that cost
    st.end(70, 0, 0x2);
    Analysis a;
    st.feed(a);
    const Scalability s = analysis::scalability(a, quick());
    ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
    const double own = std::max(0.0, 40 - cost) + std::max(0.0, 20 - cost) + std::max(0.0, 10 - cost);
    EXPECT_DOUBLE_EQ(*s.work_ns, own) << cost;
    EXPECT_DOUBLE_EQ(s.costs.recording_share, (70 - own) / 70) << cost;
    const bool noted = std::any_of(s.notes.begin(), s.notes.end(),
                                   [](const std::string& n) { return n.find("recording took") != std::string::npos; });
    EXPECT_EQ(noted, cost == 30.0) << cost;
  }
}

// The same, with the satisfy a moment before X's task_end (X completed its list inside
// its body, and the spawning task saw it): still X's edge, and no earlier task's.
TEST(Scalability, ASatisfyBeforeItsTasksEndTickIsStillItsEdge) {
  Stream st;
  st.workers = 2;
  const std::uint64_t R = 0x10, X = 0xA0, N = 0xB0;
  st.begin(0, 0, R);
  st.spawn(1, 0, X, SpawnKind::spawn_after);
  st.begin(2, 1, X, TaskSource::stolen_deque);
  st.spawn(40, 0, N, SpawnKind::spawn_after);
  st.satisfy(41, 0, N, X);  // X's list closed; its task_end comes at 45
  st.end(42, 0, R);
  st.end(45, 1, X);
  st.begin(50, 1, N, TaskSource::stolen_deque);
  st.end(60, 1, N);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  // R's 2 continuations, R -> X, R -> N, X -> N: X's 43 then N's 10 is the span.
  EXPECT_EQ(s.edges, 5u);
  EXPECT_DOUBLE_EQ(*s.span_ns, 1 + 43 + 10);
  EXPECT_EQ(path_tasks(s), (std::vector<std::uint64_t>{R, X, N}));
}

// The simulator pushes a stretch's released tasks in the order their events came, as
// the runtime pushed them, whatever event named each (a satisfy or a release): the
// newest runs first on the releasing worker. A completes two tasks: C (100 ns, also
// after Z, which ran later in the recording) and B (10 ns). Reported C first, B runs
// first on A's worker and C waits for it, or for the other worker's wake (50 ns);
// reported B first, C runs at once. The same graph, one tick apart.
double simulated_t2_with_order(bool c_first) {
  Stream st;
  st.workers = 2;
  const std::uint64_t R = 0x10, A = 0xA0, B = 0xB0, C = 0xC0, Z = 0xD0;
  st.begin(0, 0, R);
  for (auto id : {A, Z, B, C}) st.spawn(1, 0, id, SpawnKind::spawn_after);
  st.end(2, 0, R);
  st.begin(10, 0, A, TaskSource::own_lane);
  if (c_first) {
    st.satisfy(109, 0, C, A);
    st.release(110, 0, B, A);
  } else {
    st.release(109, 0, B, A);
    st.satisfy(110, 0, C, A);
  }
  st.end(110, 0, A);
  st.begin(112, 0, B, TaskSource::own_deque);
  st.end(122, 0, B);
  st.events.push_back(make_event(119, 1, WakePayload{0, WakeCause{}, 50}));
  st.begin(120, 1, Z, TaskSource::own_lane);
  st.release(130, 1, C, Z);
  st.end(130, 1, Z);
  st.begin(131, 1, C, TaskSource::own_deque);
  st.end(231, 1, C);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  EXPECT_TRUE(s.not_computed.empty());
  EXPECT_TRUE(s.costs.wake_ns.has_value());
  for (const analysis::CurvePoint& c : s.curve)
    if (c.workers == 2 && c.simulated_ns) return *c.simulated_ns;
  ADD_FAILURE() << "no simulated T_2";
  return 0;
}

TEST(Scalability, TheSimulatorPushesReleasedTasksInTheOrderTheyCame) {
  const double c_first = simulated_t2_with_order(true), b_first = simulated_t2_with_order(false);
  // C behind B: at least B's 10 ns later.
  EXPECT_GE(c_first, b_first + 9) << "C first " << c_first << ", B first " << b_first;
}

// spawn_after chain: R spawns X1..Xk; each Xi releases the next at its end.
TEST(Scalability, SpawnAfterChainIsTheSpan) {
  Stream st;
  st.workers = 2;
  const int k = 6;
  st.begin(0, 0, 0x1);
  for (int i = 0; i < k; ++i)
    st.spawn(3 + static_cast<std::uint64_t>(i), 0, 0x50 + static_cast<std::uint64_t>(i), SpawnKind::spawn_after);
  st.end(12, 0, 0x1);
  std::uint64_t t = 20;
  for (int i = 0; i < k; ++i) {
    const std::uint32_t w = static_cast<std::uint32_t>(i % 2);  // alternating workers
    const std::uint64_t id = 0x50 + static_cast<std::uint64_t>(i);
    st.begin(t, w, id, TaskSource::own_lane);
    if (i + 1 < k) st.release(t + 30, w, id + 1, id);
    st.end(t + 30, w, id);
    t += 40;
  }
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  EXPECT_DOUBLE_EQ(*s.work_ns, 12 + 30.0 * k);
  EXPECT_DOUBLE_EQ(*s.span_ns, 3 + 30.0 * k);
  const auto ids = path_tasks(s);
  ASSERT_EQ(ids.size(), static_cast<std::size_t>(k + 1));
  EXPECT_EQ(ids.back(), 0x50u + k - 1);
  EXPECT_DOUBLE_EQ(s.span_by_edge[static_cast<int>(EdgeKind::release)], 30.0 * (k - 1));
  check_simulator(s);
}

// A task waits on a Signal that another branch sets.
TEST(Scalability, SignalSetByAnotherBranchIsAnEdge) {
  Stream st;
  st.workers = 2;
  const std::uint64_t R = 0x1, P = 0x2, Q = 0x3, S = 0x5160;
  st.begin(0, 0, R);
  st.spawn(4, 0, P, SpawnKind::detached);
  st.spawn(6, 0, Q, SpawnKind::detached);
  st.end(8, 0, R);
  st.begin(10, 0, P);
  st.wait(20, 215, 0, S, WaitKind::signal);
  st.end(265, 0, P);  // 50 after the wait
  st.begin(9, 1, Q, TaskSource::stolen_deque);
  st.events.push_back(make_event(209, 1, SignalSetPayload{S}));
  st.end(239, 1, Q);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  EXPECT_DOUBLE_EQ(*s.work_ns, 8 + 10 + 50 + 230);
  EXPECT_DOUBLE_EQ(*s.span_ns, 6 + 200 + 50);
  EXPECT_EQ(path_tasks(s), (std::vector<std::uint64_t>{R, Q, P}));
  EXPECT_EQ(s.critical_path.back().entered_by, EdgeKind::signal);
  check_simulator(s);
}

// A TaskGroup's wait joins every task spawned into the group, also one that a child
// spawned into its parent's group: R waits on G; A (in G) spawns B into G; R's tail
// after the wait follows B.
TEST(Scalability, ATaskGroupWaitJoinsWhatChildrenSpawnIntoTheGroup) {
  Stream st;
  st.workers = 2;
  const std::uint64_t R = 0x1, A = 0x2, B = 0x3, G = 0x900;
  st.begin(0, 0, R);
  st.spawn(10, 0, A, SpawnKind::task_group, G);
  st.wait(20, 500, 0, G, WaitKind::task_group);
  st.end(700, 0, R);
  st.begin(30, 1, A, TaskSource::stolen_deque);
  st.spawn(40, 1, B, SpawnKind::task_group, G);
  st.end(50, 1, A);
  st.begin(60, 1, B, TaskSource::own_deque);
  st.end(400, 1, B);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  EXPECT_DOUBLE_EQ(*s.work_ns, 20 + 200 + 20 + 340);
  EXPECT_DOUBLE_EQ(*s.span_ns, 10 + 10 + 340 + 200);
  EXPECT_EQ(path_tasks(s), (std::vector<std::uint64_t>{R, A, B, R}));
  check_simulator(s);
}

// Workers' clocks may put a thief's task_begin a moment before the spawn's tick, and a
// task completes its waiter's latch before it reports its end, so a wait_end may come a
// moment before the joined task's task_end. Both are still edges.
TEST(Scalability, EdgesSurviveTheRacesOfTheirEvents) {
  Stream st;
  st.workers = 2;
  const std::uint64_t R = 0x1, C = 0x2;
  st.begin(0, 0, R);
  st.spawn(20, 0, C, SpawnKind::join);     // C's begin (19) is a tick earlier
  st.wait(30, 300, 0, C, WaitKind::join);  // ends before C reports its end (301)
  st.end(310, 0, R);
  st.begin(19, 1, C, TaskSource::stolen_deque);
  st.end(301, 1, C);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  EXPECT_EQ(path_tasks(s), (std::vector<std::uint64_t>{R, C, R}));
  EXPECT_DOUBLE_EQ(*s.span_ns, 20 + 282 + 10);
}

// A task run inline (nested outside any wait: a call) cuts its caller: the caller's own
// time leaves it out, and the path runs caller, callee, caller.
TEST(Scalability, AnInlineCallIsCutIntoItsCaller) {
  Stream st;
  st.begin(0, 0, 0x1);
  st.begin(30, 0, 0x2, TaskSource::inline_call);
  st.end(60, 0, 0x2);
  st.end(100, 0, 0x1);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  EXPECT_DOUBLE_EQ(*s.work_ns, 100);
  EXPECT_DOUBLE_EQ(*s.span_ns, 100);
  EXPECT_EQ(path_tasks(s), (std::vector<std::uint64_t>{0x1, 0x2, 0x1}));
  EXPECT_DOUBLE_EQ(*s.curve.front().simulated_ns, 100);
}

// An IO operation: the submitting stretch -> the task its completion released, weighted
// by the operation's latency.
TEST(Scalability, AnIoCompletionIsAnEdgeWeightedByItsLatency) {
  Stream st;
  st.workers = 2;
  const std::uint64_t T = 0x1, U = 0x2, op = 0x10'0000;
  st.begin(0, 0, T);
  st.events.push_back(make_event(10, 0, IoSubmitPayload{op, IoKind::read, 5}));
  st.end(30, 0, T);
  st.events.push_back(make_event(110, 1, IoCompletePayload{op, 64}));
  st.release(110, 1, U, op);
  st.begin(115, 1, U, TaskSource::own_lane);
  st.end(135, 1, U);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  EXPECT_DOUBLE_EQ(*s.work_ns, 50);
  EXPECT_DOUBLE_EQ(*s.span_ns, 10 + 100 + 20);
  EXPECT_EQ(path_tasks(s), (std::vector<std::uint64_t>{T, U}));
  EXPECT_EQ(s.critical_path.back().entered_by, EdgeKind::io);
  EXPECT_DOUBLE_EQ(s.critical_path.back().edge_ns, 100);
  EXPECT_DOUBLE_EQ(s.span_by_edge[static_cast<int>(EdgeKind::io)], 120);
  // One worker waits for the operation too.
  EXPECT_GE(*s.curve.front().simulated_ns, 130);
}

// At level graph a join's second half that its own worker runs is a task nested in the
// parent without a wait (source inline_call): spawned at the fork, so it runs beside the
// first half in the graph, and the parent resumes after it.
TEST(Scalability, AJoinHalfItsOwnWorkerRanIsSpawnedAtTheFork) {
  Stream st;
  st.begin(0, 0, 0x1);
  st.spawn(10, 0, 0x2, SpawnKind::join);  // then the first half runs inline: 100 ticks
  st.begin(110, 0, 0x2, TaskSource::inline_call);
  st.end(160, 0, 0x2);
  st.end(170, 0, 0x1);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.not_computed.empty()) << s.not_computed[0];
  EXPECT_DOUBLE_EQ(*s.work_ns, 10 + 100 + 50 + 10);
  EXPECT_DOUBLE_EQ(*s.span_ns, 10 + 100 + 10);
  EXPECT_EQ(path_tasks(s), std::vector<std::uint64_t>{0x1});
}

TEST(Scalability, WhatIfOnTheCriticalLabelLowersTheSimulatedTime) {
  Stream st;
  Skynet sky{st};
  sky.node(0x1, 3);
  Analysis a;
  st.feed(a);
  ScaleOptions o = quick();
  o.what_if_workers = {1, 1024};
  const Scalability s = analysis::scalability(a, o);
  ASSERT_FALSE(s.labels.empty());
  const auto& leaf = s.labels[0];
  EXPECT_EQ(leaf.name, "leaf");
  ASSERT_TRUE(leaf.what_if);
  ASSERT_EQ(leaf.what_if_ns.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_LT(leaf.what_if_ns[i], leaf.baseline_ns[i]);
  // At one worker a 50 % faster leaf saves half the leaves' work exactly.
  EXPECT_NEAR(leaf.baseline_ns[0] - leaf.what_if_ns[0], leaf.work_ns / 2, 1e-6);
}

TEST(Scalability, TopologyAndWhatIfParse) {
  std::string err;
  auto t = analysis::parse_topology("2 sockets x 32 cores x 2 threads", &err);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->cpus(), 128u);
  EXPECT_EQ(t->describe(), "2 sockets x 32 cores x 2 threads");
  EXPECT_EQ(analysis::parse_topology(t->describe(), &err), t);
  auto c = analysis::parse_topology("64 cores", &err);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->sockets, 1u);
  EXPECT_EQ(c->cores_per_socket, 64u);
  EXPECT_EQ(analysis::parse_topology("1 socket x 16 cores", &err)->cpus(), 16u);
  EXPECT_FALSE(analysis::parse_topology("2 sockets x lots", &err));
  EXPECT_NE(err.find("lots"), std::string::npos);
  EXPECT_FALSE(analysis::parse_topology("0 cores", &err));
  EXPECT_FALSE(analysis::parse_topology("4 cores x 2 cores", &err));
  auto w = analysis::parse_what_if("parse=30%", &err);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->label, "parse");
  EXPECT_DOUBLE_EQ(w->percent, 30);
  EXPECT_FALSE(analysis::parse_what_if("parse=0", &err));
  EXPECT_FALSE(analysis::parse_what_if("parse=101", &err));
  EXPECT_FALSE(analysis::parse_what_if("parse", &err));
  trace::TraceHeader h;
  for (int p = 0; p < 2; ++p)
    for (int core = 0; core < 4; ++core)
      for (int th = 0; th < 2; ++th) h.cpus.push_back(trace::CpuRow{0, p * 4 + core, 0, p, p, p});
  EXPECT_EQ(analysis::topology_of(h), (analysis::TopologySpec{2, 4, 2}));
  EXPECT_FALSE(analysis::topology_of(trace::TraceHeader{}));
}

// --- honesty ---

Stream small_graph() {
  Stream st;
  st.begin(0, 0, 0x1);
  st.spawn(10, 0, 0x2, SpawnKind::join);
  st.wait(20, 40, 0, 0x2, WaitKind::join);
  st.end(50, 0, 0x1);
  st.begin(21, 0, 0x2);
  st.end(39, 0, 0x2);
  return st;
}

TEST(ScalabilityHonesty, AnOldTraceHasNoGraph) {
  Stream st;
  st.version = 4;
  st.level = trace::Level::tasks;
  st.begin(0, 0, 0x1);
  st.end(10, 0, 0x1);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  EXPECT_FALSE(s.has_graph);
  EXPECT_FALSE(s.work_ns);
  EXPECT_FALSE(s.span_ns);
  EXPECT_TRUE(s.critical_path.empty());
  ASSERT_EQ(s.not_computed.size(), 1u);
  EXPECT_NE(
      s.not_computed[0].find("recorded without the task graph: record at level tasks (graph for join) with this build"),
      std::string::npos);
  EXPECT_NE(s.not_computed[0].find("version-4"), std::string::npos);
  EXPECT_TRUE(s.measured_ns);
}

// A version-5 trace at level tasks from a build that reports no graph events: a task
// nested in another (it ran during an unrecorded wait) gives it away.
TEST(ScalabilityHonesty, AVersion5TraceWithoutGraphEventsHasNoGraph) {
  Stream st;
  st.level = trace::Level::tasks;
  st.begin(0, 0, 0x1);
  st.begin(10, 0, 0x2, TaskSource::own_deque);
  st.end(20, 0, 0x2);
  st.end(30, 0, 0x1);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  EXPECT_FALSE(s.has_graph);
  EXPECT_FALSE(s.span_ns);
  ASSERT_EQ(s.not_computed.size(), 1u);
  // Tasks that only follow each other (submitted from outside) are a graph without edges.
  Stream flat;
  flat.level = trace::Level::tasks;
  flat.begin(0, 0, 0x1);
  flat.end(10, 0, 0x1);
  flat.begin(12, 0, 0x2);
  flat.end(20, 0, 0x2);
  Analysis b;
  flat.feed(b);
  const Scalability f = analysis::scalability(b, quick());
  EXPECT_TRUE(f.has_graph);
  EXPECT_DOUBLE_EQ(*f.work_ns, 18);
  EXPECT_DOUBLE_EQ(*f.span_ns, 10);
}

TEST(ScalabilityHonesty, DroppedEventsLeaveHolesAndNoSpan) {
  Stream st = small_graph();
  st.events.push_back(make_event(30, 0, DroppedPayload{17, DropReason::ring_full}));
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  EXPECT_FALSE(s.span_ns);
  EXPECT_FALSE(s.parallelism);
  ASSERT_EQ(s.not_computed.size(), 1u);
  EXPECT_NE(s.not_computed[0].find("17 events were dropped"), std::string::npos) << s.not_computed[0];
  EXPECT_NE(s.not_computed[0].find("holes"), std::string::npos);
  for (const auto& c : s.curve) EXPECT_FALSE(c.simulated_ns);
}

TEST(ScalabilityHonesty, AWindowThatCutsTasksIsSaid) {
  Stream st = small_graph();
  st.events.push_back(make_event(5, 0, TaskEndPayload{0x99, false, 0}));  // began before the window
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  EXPECT_FALSE(s.span_ns);
  ASSERT_EQ(s.not_computed.size(), 1u);
  EXPECT_NE(s.not_computed[0].find("cuts 1 task"), std::string::npos) << s.not_computed[0];
  // The same stream with a task that never ended, still live: left out, and said.
  Stream live = small_graph();
  live.begin(60, 0, 0x7);
  Analysis b;
  live.feed(b, false);
  const Scalability l = analysis::scalability(b, quick());
  ASSERT_TRUE(l.span_ns);
  EXPECT_DOUBLE_EQ(*l.work_ns, 10 + 10 + 10 + 18);
  bool said = false;
  for (const auto& n : l.notes) said |= n.find("1 task still runs") != std::string::npos;
  EXPECT_TRUE(said);
  // A window [from, to]: only tasks that began in it.
  const Scalability w = analysis::scalability(b, quick(), 15, 45);
  EXPECT_EQ(w.tasks, 1u);
  EXPECT_DOUBLE_EQ(*w.work_ns, 18);
}

TEST(ScalabilityHonesty, AStolenJoinHalfBelowLevelGraphGetsItsSpawnPlaced) {
  Stream st;
  st.workers = 2;
  st.level = trace::Level::tasks;
  // The parent: 30 ticks of its own (an unstolen join folded in), then waits on 0x2,
  // which worker 1 stole at 12 and ran for 100.
  st.begin(0, 0, 0x1);
  st.wait(30, 115, 0, 0x2, WaitKind::join);
  st.end(125, 0, 0x1);
  st.steal(12, 1, 0);
  st.begin(14, 1, 0x2, TaskSource::stolen_deque);
  st.end(114, 1, 0x2);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.span_ns);
  // The spawn sits at the start of the parent's stretch before the steal (tick 0), so
  // the path is the stolen half then the parent's last 10 ticks.
  EXPECT_DOUBLE_EQ(*s.span_ns, 100 + 10);
  EXPECT_EQ(path_tasks(s), (std::vector<std::uint64_t>{0x2, 0x1}));
  bool said = false;
  for (const auto& n : s.notes) said |= n.find("below graph") != std::string::npos;
  EXPECT_TRUE(said);
}

// Two phases of independent tasks with a long gap between them (a thread outside the
// pool submitted the second after waiting for the first): the graph has no edge across
// the gap, and a note says how long no task ran and what that does to the figures.
TEST(ScalabilityHonesty, TimeInNoTaskBetweenPhasesIsSaid) {
  Stream st;
  st.level = trace::Level::tasks;
  st.begin(0, 0, 0x1, TaskSource::own_lane);
  st.end(100, 0, 0x1);
  st.begin(1000, 0, 0x2, TaskSource::own_lane);  // 900 ticks in no task before it
  st.end(1100, 0, 0x2);
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.span_ns);
  EXPECT_DOUBLE_EQ(*s.span_ns, 100) << "two roots: both free at once";
  const std::string said = note_with(s, "no task ran");
  EXPECT_NE(said.find("no task ran and no edge was in flight for 900 ns of the run's 1.10 us"), std::string::npos)
      << said;
  EXPECT_NE(said.find("2 roots"), std::string::npos) << said;
  // Level tasks without a join: the note on join's halves counts no stolen half.
  EXPECT_EQ(note_with(s, "spawn placed"), "") << note_with(s, "spawn placed");
  // Back to back, the same two tasks leave nothing to say.
  Stream tight;
  tight.level = trace::Level::tasks;
  tight.begin(0, 0, 0x1, TaskSource::own_lane);
  tight.end(100, 0, 0x1);
  tight.begin(105, 0, 0x2, TaskSource::own_lane);
  tight.end(205, 0, 0x2);
  Analysis b;
  tight.feed(b);
  EXPECT_EQ(note_with(analysis::scalability(b, quick()), "no task ran"), "");
  // An IO operation in flight across the gap is in the graph: nothing to say either.
  Stream io;
  io.workers = 2;
  const std::uint64_t op = 0x10'0000;
  io.begin(0, 0, 0x1, TaskSource::own_lane);
  io.events.push_back(make_event(10, 0, IoSubmitPayload{op, IoKind::read, 5}));
  io.end(30, 0, 0x1);
  io.begin(0, 1, 0x3, TaskSource::own_lane);  // a second root
  io.end(20, 1, 0x3);
  io.events.push_back(make_event(1000, 1, IoCompletePayload{op, 64}));
  io.release(1000, 1, 0x2, op);
  io.begin(1005, 1, 0x2, TaskSource::own_lane);
  io.end(1100, 1, 0x2);
  Analysis c;
  io.feed(c);
  const Scalability with_io = analysis::scalability(c, quick());
  ASSERT_TRUE(with_io.span_ns);
  EXPECT_EQ(note_with(with_io, "no task ran"), "");
}

// A chunk the reader skipped (damaged or truncated) closes the tasks open in it with
// their ends lost: the reason names that, not a recording window.
TEST(ScalabilityHonesty, TasksWhoseEndWasLostInASkippedChunkAreSaid) {
  Stream st = small_graph();
  st.begin(60, 0, 0x7);
  Analysis a;
  st.feed(a, false);
  a.lose_record();  // the rest of the stream is lost: 0x7's end with it
  a.finish();
  const Scalability s = analysis::scalability(a, quick());
  EXPECT_FALSE(s.span_ns);
  ASSERT_EQ(s.not_computed.size(), 1u);
  EXPECT_NE(s.not_computed[0].find("1 task's end was lost (in a damaged or truncated part of the trace"),
            std::string::npos)
      << s.not_computed[0];
  EXPECT_EQ(s.why_not({"span"}).rfind("1 task's end was lost", 0), 0u) << s.why_not({"span"});
}

// A simulated machine with distances the run never stole across: they are charged the
// median steal, and a note says so.
TEST(ScalabilityHonesty, StealDistancesWithoutASampleAreSaid) {
  Stream st;
  st.workers = 2;
  st.begin(0, 0, 0x1);
  st.spawn(5, 0, 0x2, SpawnKind::detached);
  st.end(20, 0, 0x1);
  st.steal(6, 1, 0);  // at distance llc (Stream::steal)
  st.begin(8, 1, 0x2, TaskSource::stolen_deque);
  st.end(50, 1, 0x2);
  Analysis a;
  st.feed(a);
  ScaleOptions o = quick();
  o.topology = analysis::TopologySpec{2, 4, 2};
  const Scalability s = analysis::scalability(a, o);
  ASSERT_TRUE(s.costs.steal_ns);
  const std::string said = note_with(s, "has steals at distance");
  EXPECT_NE(said.find("the simulation (2 sockets x 4 cores x 2 threads, up to 1024 workers) has steals at "
                      "distance smt, remote, which the run has no sample of"),
            std::string::npos)
      << said;
  // Up to 4 workers on one socket of 4 cores: every steal at distance llc, which was
  // measured; nothing to say. Up to 8 workers: two share a core (smt).
  o.topology = analysis::TopologySpec{1, 4, 1};
  o.workers = {1, 2, 4};
  EXPECT_EQ(note_with(analysis::scalability(a, o), "has steals at distance"), "");
  o.workers = {1, 8};
  EXPECT_NE(note_with(analysis::scalability(a, o), "has steals at distance")
                .find("up to 8 workers) has steals at "
                      "distance smt, which"),
            std::string::npos);
}

// A task on the critical path whose thread was preempted while it ran: its task_end
// says how long it waited for a CPU, and a note gives that share of the span.
TEST(ScalabilityHonesty, PreemptionOnTheCriticalPathIsSaid) {
  Stream st;
  st.begin(0, 0, 0x1);
  st.events.push_back(make_event(100, 0, TaskEndPayload{0x1, false, 40}));  // 40 of its 100 ticks off the CPU
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  ASSERT_TRUE(s.span_ns);
  EXPECT_DOUBLE_EQ(*s.span_ns, 100) << "the figures keep the wall-clock time";
  EXPECT_DOUBLE_EQ(s.path_preempted_ns, 40);
  const std::string said = note_with(s, "for a CPU");
  EXPECT_NE(said.find("the critical path's tasks waited 40 ns (40 % of the span) for a CPU"), std::string::npos)
      << said;
}

TEST(Scalability, JsonHasEveryFigureAndNullForTheOnesNotComputed) {
  Stream st = small_graph();
  Analysis a;
  st.feed(a);
  const Scalability s = analysis::scalability(a, quick());
  std::FILE* f = std::tmpfile();
  {
    analysis::JsonOut out(f);
    analysis::write_json(out, s);
  }
  std::rewind(f);
  std::string text;
  char buf[4096];
  while (std::size_t got = std::fread(buf, 1, sizeof buf, f)) text.append(buf, got);
  std::fclose(f);
  for (const char* key : {"\"work_ns\":", "\"span_ns\":", "\"critical_path\":[", "\"curve\":[", "\"span_by_edge\":{"})
    EXPECT_NE(text.find(key), std::string::npos) << key;
  EXPECT_EQ(text.front(), '{');
  EXPECT_EQ(text.back(), '}');
}

// The simulator's speed on a large graph (fib by join at level graph): printed, and bounded
// generously (the machine is shared).
TEST(ScalabilitySpeed, AMillionStretchesAreAnalysed) {
  Stream st;
  Fib fib{st};
  st.begin(0, 0, 0x1);
  fib.run(27);
  st.end(fib.t, 0, 0x1);
  Analysis a;
  st.feed(a);
  auto timed = [&](std::vector<std::uint32_t> workers, Scalability* s) {
    ScaleOptions o;
    o.workers = std::move(workers);
    o.top_labels = 0;
    const auto t0 = std::chrono::steady_clock::now();
    *s = analysis::scalability(a, o);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  Scalability one, s;
  const double t1 = timed({1}, &one);
  const double secs = timed({1, 64, 256, 1024}, &s);
  ASSERT_TRUE(s.span_ns);
  const double sim = std::max(1e-9, (secs - t1) / 3);
  std::printf(
      "scalability: %llu stretches, %llu edges: graph and one simulation %.3f s; each further simulation "
      "%.3f s (%.2f M stretches/s)\n",
      static_cast<unsigned long long>(s.stretches), static_cast<unsigned long long>(s.edges), t1, sim,
      static_cast<double>(s.stretches) / sim / 1e6);
  // The time is printed, not asserted: speed is a benchmark's figure (a sanitizer build
  // runs this test too), not a test's.
  EXPECT_GT(s.stretches, 900'000u);
  EXPECT_EQ(s.stretches, one.stretches);
}

}  // namespace
