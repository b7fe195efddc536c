// SPDX-License-Identifier: Apache-2.0
// task_graph_events_test.cpp - the task graph's events (core/README.md, "The task
// graph"): for every way a task makes a task and every way it waits, the exact spawn,
// wait_begin / wait_end and signal_set events and their ids: a spawn's child id is the id
// the child's task_begin reports, its parent (implicit) is the task its worker runs, and
// a wait's `a` is what lantern/vocabulary.hpp's WaitKind table says. Joins: under
// Observer::kJoinTasks every join reports its fork and runs its inline half as a task;
// without it a join reports nothing until a thief takes its half. On 1 and 2 workers.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "lantern/graph.hpp"
#include "lantern/lantern.hpp"
#include "support/pool_state.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;

namespace lantern::testing {
namespace {

struct Ev {
  std::uint32_t worker;
  EventId type;
  std::uint64_t a, b;
  std::uint64_t parent;  // the task the worker ran when it reported this (0: none)
};

// Collect: every event, in the order reported, each with the task its worker was running
// (from the worker's own task_begin / task_end nesting).
class Collect final : public Observer {
 public:
  Collect(std::uint32_t workers, bool join_tasks) : stacks_(workers) { interest.store(join_tasks ? ~0u : ~kJoinTasks); }
  void on_event(std::uint32_t worker, EventId type, std::uint64_t a, std::uint64_t b) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::uint64_t>& stack = stacks_[worker];
    const std::uint64_t parent = stack.empty() ? 0 : stack.back();
    if (type == EventId::task_begin) stack.push_back(a);
    if (type == EventId::task_end && !stack.empty()) stack.pop_back();
    events_.push_back({worker, type, a, b, parent});
  }
  std::vector<Ev> events() {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_;
  }
  std::vector<Ev> of(EventId type) {
    std::vector<Ev> out;
    for (const Ev& e : events())
      if (e.type == type) out.push_back(e);
    return out;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.clear();
  }

 private:
  std::mutex mutex_;
  std::vector<std::vector<std::uint64_t>> stacks_;
  std::vector<Ev> events_;
};

SchedulerOptions options(std::uint32_t workers, Observer* observer) {
  SchedulerOptions o;
  o.workers = workers;
  o.observer = observer;
  o.log = [](const std::string&) {};
  return o;
}

std::uint64_t id_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// begins: how many task_begin events report task `id`.
std::size_t begins(const std::vector<Ev>& events, std::uint64_t id) {
  return static_cast<std::size_t>(std::count_if(
      events.begin(), events.end(), [&](const Ev& e) { return e.type == EventId::task_begin && e.a == id; }));
}

// expect_spawns_begin: every spawn is followed by exactly one task_begin of its id
// before the next spawn of that id (ids are addresses: a finished task's frame is reused).
void expect_spawns_begin(const std::vector<Ev>& events) {
  std::map<std::uint64_t, int> open;
  for (const Ev& e : events) {
    if (e.type == EventId::spawn) {
      EXPECT_EQ(open[e.a], 0) << "a spawn of an id before the previous one's task began";
      open[e.a] = 1;
    }
    if (e.type == EventId::task_begin && open.count(e.a) && open[e.a] == 1) open[e.a] = 0;
  }
  for (const auto& [id, n] : open) EXPECT_EQ(n, 0) << "a spawned task never began";
}

// The one task the run's lambda ran in: the parent of the events it reported.
void expect_wait_pair(const std::vector<Ev>& events, WaitKind kind, std::uint64_t on, std::uint64_t parent,
                      const char* what) {
  std::size_t begin_at = events.size(), end_at = events.size();
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Ev& e = events[i];
    if (e.type == EventId::wait_begin && begin_at == events.size()) {
      const WaitBeginPayload p = WaitBeginPayload::decode(e.a, e.b);
      if (p.kind == kind && p.on == on) begin_at = i;
    }
    if (e.type == EventId::wait_end && begin_at < i) {
      const WaitEndPayload p = WaitEndPayload::decode(e.a, e.b);
      if (p.kind == kind && p.on == on) {
        end_at = i;
        break;
      }
    }
  }
  ASSERT_LT(begin_at, events.size()) << what << ": no wait_begin";
  ASSERT_LT(end_at, events.size()) << what << ": no wait_end";
  EXPECT_EQ(events[begin_at].parent, parent) << what;
  EXPECT_EQ(events[end_at].parent, parent) << what;
  EXPECT_EQ(events[begin_at].worker, events[end_at].worker) << what;
}

std::size_t count_kind(const std::vector<Ev>& events, EventId type, std::uint64_t kind_byte) {
  return static_cast<std::size_t>(std::count_if(events.begin(), events.end(), [&](const Ev& e) {
    return e.type == type && (type == EventId::spawn ? (e.b & 0xFF) : e.b) == kind_byte;
  }));
}

// The running task, as the collector sees it: the parent of a signal_set it reports.
class GraphEvents : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(GraphEvents, TaskGroupSpawnsAndItsWait) {
  const std::uint32_t workers = GetParam();
  Collect c(workers, false);
  Scheduler pool(options(workers, &c));
  Watchdog dog("TaskGroup events", 30s, dump(pool));
  std::uint64_t group_id = 0, empty_id = 0;
  std::atomic<int> ran{0};
  pool.run([&] {
    TaskGroup g;
    group_id = id_of(&g);
    for (int i = 0; i < 3; ++i) g.spawn([&] { ran.fetch_add(1); });
    g.wait();
    TaskGroup empty;  // a wait that joins nothing reports nothing
    empty_id = id_of(&empty);
    empty.wait();
    g.wait();  // nothing spawned since its last wait: nothing either
  });
  EXPECT_EQ(ran.load(), 3);
  const std::vector<Ev> ev = c.events();
  const std::vector<Ev> spawns = c.of(EventId::spawn);
  expect_spawns_begin(ev);
  ASSERT_EQ(spawns.size(), 3u);
  const std::uint64_t parent = spawns[0].parent;
  EXPECT_NE(parent, 0u);
  for (const Ev& s : spawns) {
    const SpawnPayload p = SpawnPayload::decode(s.a, s.b);
    EXPECT_EQ(p.kind, SpawnKind::task_group);
    EXPECT_EQ(p.group, group_id);
    EXPECT_EQ(s.parent, parent);
    EXPECT_GE(begins(ev, p.task), 1u) << "a spawned task's id is its task_begin's";
  }
  expect_wait_pair(ev, WaitKind::task_group, group_id, parent, "TaskGroup::wait");
  // One wait joined something: one pair (the empty group's wait, the second wait and the
  // destructors join nothing).
  EXPECT_EQ(c.of(EventId::wait_begin).size(), 1u);
  EXPECT_EQ(c.of(EventId::wait_end).size(), 1u);
  for (const Ev& e : c.of(EventId::wait_begin)) EXPECT_NE(e.a, empty_id);
}

TEST_P(GraphEvents, TaskGroupDestructorWaitReportsWhenItJoins) {
  const std::uint32_t workers = GetParam();
  Collect c(workers, false);
  Scheduler pool(options(workers, &c));
  Watchdog dog("TaskGroup destructor events", 30s, dump(pool));
  std::uint64_t group_id = 0;
  pool.run([&] {
    TaskGroup g;
    group_id = id_of(&g);
    g.spawn([] {});
  });  // no wait(): the destructor's wait joins the task
  expect_wait_pair(c.events(), WaitKind::task_group, group_id, c.of(EventId::spawn).at(0).parent, "~TaskGroup");
}

TEST_P(GraphEvents, SpawnAndSubmitFromAWorker) {
  const std::uint32_t workers = GetParam();
  Collect c(workers, false);
  Scheduler pool(options(workers, &c));
  Watchdog dog("spawn and submit events", 30s, dump(pool));
  std::atomic<int> detached{0};
  pool.run([&] {
    lantern::spawn([&] { detached.fetch_add(1); });
    pool.spawn([&] { detached.fetch_add(1); });
    auto f = pool.submit([] { return 7; });
    EXPECT_EQ(f.get(), 7);
    auto g = pool.submit_to_lane(0, [] { return 8; });
    EXPECT_EQ(g.get(), 8);
  });
  while (detached.load() != 2) std::this_thread::yield();  // bounded by the watchdog
  pool.shutdown();
  const std::vector<Ev> ev = c.events();
  const std::vector<Ev> spawns = c.of(EventId::spawn);
  expect_spawns_begin(ev);
  ASSERT_EQ(spawns.size(), 4u);
  const std::uint64_t parent = spawns[0].parent;
  EXPECT_NE(parent, 0u);
  const SpawnKind kinds[] = {SpawnKind::detached, SpawnKind::detached, SpawnKind::submit, SpawnKind::submit};
  for (std::size_t i = 0; i < 4; ++i) {
    const SpawnPayload p = SpawnPayload::decode(spawns[i].a, spawns[i].b);
    EXPECT_EQ(p.kind, kinds[i]) << i;
    EXPECT_EQ(p.group, 0u);
    EXPECT_EQ(spawns[i].parent, parent);
    EXPECT_GE(begins(ev, p.task), 1u) << i;
  }
  // Future::get waits on the submitted task's id (once each).
  expect_wait_pair(ev, WaitKind::future, spawns[2].a, parent, "Future::get");
  expect_wait_pair(ev, WaitKind::future, spawns[3].a, parent, "Future::get (lane)");
  EXPECT_EQ(count_kind(ev, EventId::wait_begin, static_cast<std::uint64_t>(WaitKind::future)), 2u);
}

TEST_P(GraphEvents, OutsideThePoolNothingIsReported) {
  const std::uint32_t workers = GetParam();
  Collect c(workers, false);
  Scheduler pool(options(workers, &c));
  Watchdog dog("outside events", 30s, dump(pool));
  auto f = pool.submit([] { return 1; });
  EXPECT_EQ(f.get(), 1);
  TaskGroup g(pool);
  g.spawn([] {});
  g.wait();
  Signal s;
  s.set();
  s.wait();
  pool.shutdown();
  EXPECT_EQ(c.of(EventId::spawn).size(), 0u);
  EXPECT_EQ(c.of(EventId::wait_begin).size(), 0u);
  EXPECT_EQ(c.of(EventId::wait_end).size(), 0u);
  EXPECT_EQ(c.of(EventId::signal_set).size(), 0u);
  EXPECT_EQ(c.of(EventId::task_begin).size(), 2u);  // the tasks still run as tasks
}

TEST_P(GraphEvents, HandlesSignalsAndTheirWaits) {
  const std::uint32_t workers = GetParam();
  Collect c(workers, false);
  Scheduler pool(options(workers, &c));
  Watchdog dog("handle and signal events", 30s, dump(pool));
  std::uint64_t signal_id = 0, first = 0, second = 0;
  pool.run([&] {
    Signal s;
    signal_id = s.id();
    TaskHandle h = pool.spawn_handle([&] { s.set(); });
    TaskHandle after = pool.spawn_after({h, s}, [] {});
    first = h.id();
    second = after.id();
    s.wait();  // set by h (nested here on 1 worker)
    after.wait();
    h.wait();  // done: reports its pair all the same
  });
  const std::vector<Ev> ev = c.events();
  const std::vector<Ev> spawns = c.of(EventId::spawn);
  expect_spawns_begin(ev);
  ASSERT_EQ(spawns.size(), 2u);
  const std::uint64_t parent = spawns[0].parent;
  for (const Ev& s : spawns) {
    const SpawnPayload p = SpawnPayload::decode(s.a, s.b);
    EXPECT_EQ(p.kind, SpawnKind::spawn_after);
    EXPECT_EQ(p.group, 0u);
    EXPECT_EQ(s.parent, parent);
    EXPECT_GE(begins(ev, p.task), 1u);
  }
  EXPECT_EQ(spawns[0].a, first);
  EXPECT_EQ(spawns[1].a, second);
  const std::vector<Ev> sets = c.of(EventId::signal_set);
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(SignalSetPayload::decode(sets[0].a, sets[0].b).signal, signal_id);
  EXPECT_EQ(sets[0].parent, first) << "the task that set it";
  expect_wait_pair(ev, WaitKind::signal, signal_id, parent, "Signal::wait");
  expect_wait_pair(ev, WaitKind::task_handle, second, parent, "TaskHandle::wait");
  expect_wait_pair(ev, WaitKind::task_handle, first, parent, "TaskHandle::wait (done)");
  // The release of `after` names the signal or the handle's task: the same ids.
  for (const Ev& r : c.of(EventId::release)) {
    const ReleasePayload p = ReleasePayload::decode(r.a, r.b);
    EXPECT_EQ(p.released, second);
    EXPECT_TRUE(p.releaser == signal_id || p.releaser == first);
  }
}

TEST_P(GraphEvents, TaskGraphNodesAndItsRun) {
  const std::uint32_t workers = GetParam();
  Collect c(workers, false);
  Scheduler pool(options(workers, &c));
  Watchdog dog("TaskGraph events", 30s, dump(pool));
  TaskGraph g;
  std::atomic<int> ran{0};
  auto a = g.add("a", [&] { ran.fetch_add(1); });
  auto b = g.add("b", [&] { ran.fetch_add(1); });
  auto d = g.add("d", [&] { ran.fetch_add(1); });
  a.precede(b, d);
  pool.run([&] { g.run(pool); });
  EXPECT_EQ(ran.load(), 3);
  const std::vector<Ev> ev = c.events();
  const std::vector<Ev> spawns = c.of(EventId::spawn);
  expect_spawns_begin(ev);
  ASSERT_EQ(spawns.size(), 3u);
  const std::uint64_t parent = spawns[0].parent;
  for (const Ev& s : spawns) {
    const SpawnPayload p = SpawnPayload::decode(s.a, s.b);
    EXPECT_EQ(p.kind, SpawnKind::spawn_after);
    EXPECT_EQ(p.group, id_of(&g)) << "a node's wait names the graph";
    EXPECT_GE(begins(ev, p.task), 1u);
  }
  expect_wait_pair(ev, WaitKind::graph, id_of(&g), parent, "TaskGraph::run");
}

// expect_dependencies: task `task` began once, after a satisfy or a release naming each
// of `deps` (every dependency is reported: a satisfy before the count drops, the last
// one's release as it makes the task ready; a stale count may report the last twice).
void expect_dependencies(const std::vector<Ev>& events, std::uint64_t task, const std::vector<std::uint64_t>& deps,
                         const char* what) {
  std::vector<std::uint64_t> named;
  bool begun = false;
  for (const Ev& e : events) {
    if (e.type == EventId::task_begin && e.a == task) {
      begun = true;
      break;
    }
    if (e.type == EventId::satisfy && SatisfyPayload::decode(e.a, e.b).task == task)
      named.push_back(SatisfyPayload::decode(e.a, e.b).by);
    if (e.type == EventId::release && ReleasePayload::decode(e.a, e.b).released == task)
      named.push_back(ReleasePayload::decode(e.a, e.b).releaser);
  }
  EXPECT_TRUE(begun) << what << ": never began";
  for (std::uint64_t d : deps)
    EXPECT_NE(std::find(named.begin(), named.end(), d), named.end()) << what << ": no satisfy or release by " << d;
  for (std::uint64_t n : named)
    EXPECT_NE(std::find(deps.begin(), deps.end(), n), deps.end()) << what << ": names " << n << ", not a dependency";
}

TEST_P(GraphEvents, EveryDependencyIsReportedBeforeItsTaskBegins) {
  const std::uint32_t workers = GetParam();
  Collect c(workers, false);
  Scheduler pool(options(workers, &c));
  Watchdog dog("dependency events", 30s, dump(pool));
  // A TaskGraph diamond: d waits for b and for e (b waits for a).
  TaskGraph g;
  auto a = g.add("a", [] {});
  auto b = g.add("b", [] {});
  auto e = g.add("e", [] {});
  auto d = g.add("d", [] {});
  a.precede(b);
  b.precede(d);
  e.precede(d);
  pool.run([&] { g.run(pool); });
  std::vector<Ev> ev = c.events();
  std::map<std::string, std::uint64_t> node;  // name -> id, from the spawns in add order
  {
    const std::vector<Ev> spawns = c.of(EventId::spawn);
    ASSERT_EQ(spawns.size(), 4u);
    const char* names[] = {"a", "b", "e", "d"};
    for (std::size_t i = 0; i < 4; ++i) node[names[i]] = spawns[i].a;
  }
  expect_dependencies(ev, node["d"], {node["b"], node["e"]}, "graph node d");
  expect_dependencies(ev, node["b"], {node["a"]}, "graph node b");
  EXPECT_EQ(c.of(EventId::satisfy).size() >= 1, true) << "d's first dependency is a satisfy";
  c.clear();
  // spawn_after on three: a task already done when it is registered, a running one, and
  // a signal set by a task.
  std::uint64_t done_id = 0, slow_id = 0, signal_id = 0, after_id = 0;
  pool.run([&] {
    TaskHandle done = pool.spawn_handle([] {});
    done.wait();
    Signal s;
    TaskHandle slow = pool.spawn_handle([] {});
    TaskHandle setter = pool.spawn_handle([&] { s.set(); });
    TaskHandle after = pool.spawn_after({done, slow, s}, [] {});
    done_id = done.id(), slow_id = slow.id(), signal_id = s.id(), after_id = after.id();
    after.wait();
    setter.wait();
  });
  ev = c.events();
  expect_dependencies(ev, after_id, {done_id, slow_id, signal_id}, "spawn_after");
  // The dependency already complete is reported by the spawning task, before its spawn's
  // guard is dropped: a satisfy naming it.
  bool done_reported = false;
  for (const Ev& x : c.of(EventId::satisfy)) done_reported |= SatisfyPayload::decode(x.a, x.b).by == done_id;
  EXPECT_TRUE(done_reported);
}

// fib by join, counting the joins it makes.
int fib(int n, std::atomic<int>& joins) {
  if (n < 2) return n;
  int x = 0, y = 0;
  joins.fetch_add(1, std::memory_order_relaxed);
  lantern::join([&] { x = fib(n - 1, joins); }, [&] { y = fib(n - 2, joins); });
  return x + y;
}

TEST_P(GraphEvents, EveryJoinUnderJoinTasks) {
  const std::uint32_t workers = GetParam();
  Collect c(workers, true);
  Scheduler pool(options(workers, &c));
  Watchdog dog("join events under kJoinTasks", 60s, dump(pool));
  std::atomic<int> joins{0};
  EXPECT_EQ(pool.run([&] { return fib(14, joins); }), 377);
  pool.shutdown();
  const std::vector<Ev> ev = c.events();
  const std::vector<Ev> spawns = c.of(EventId::spawn);
  expect_spawns_begin(ev);
  ASSERT_EQ(spawns.size(), static_cast<std::size_t>(joins.load()));
  std::size_t inline_halves = 0;
  std::map<std::uint64_t, std::size_t> spawned_at;  // a half's id -> its spawn's position
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const Ev& e = ev[i];
    if (e.type == EventId::spawn) {
      EXPECT_EQ(SpawnPayload::decode(e.a, e.b).kind, SpawnKind::join);
      EXPECT_NE(e.parent, 0u);
      spawned_at[e.a] = i;
    }
    if (e.type == EventId::task_begin && TaskBeginPayload::decode(e.a, e.b).source == TaskSource::inline_call) {
      ++inline_halves;
      ASSERT_TRUE(spawned_at.count(e.a)) << "an inline half's task_begin follows its fork";
      EXPECT_EQ(ev[spawned_at[e.a]].worker, e.worker);
    }
  }
  // A half that was not run inline was stolen: its join waited for it.
  const std::size_t waits = count_kind(ev, EventId::wait_begin, static_cast<std::uint64_t>(WaitKind::join));
  EXPECT_EQ(inline_halves + waits, spawns.size());
  if (workers == 1) {
    EXPECT_EQ(waits, 0u);
  }
  // Every task_begin is a task the workers counted (the markers are not).
  std::uint64_t run = 0;
  for (std::uint32_t i = 0; i < workers; ++i) run += pool.tasks_run(i);
  EXPECT_EQ(run, c.of(EventId::task_begin).size());
}

TEST_P(GraphEvents, JoinWithoutJoinTasksReportsOnlyStolenHalves) {
  const std::uint32_t workers = GetParam();
  Collect c(workers, false);
  Scheduler pool(options(workers, &c));
  Watchdog dog("join events", 60s, dump(pool));
  std::atomic<int> joins{0};
  EXPECT_EQ(pool.run([&] { return fib(14, joins); }), 377);
  pool.shutdown();
  const std::vector<Ev> ev = c.events();
  EXPECT_EQ(c.of(EventId::spawn).size(), 0u);
  const std::size_t stolen = static_cast<std::size_t>(std::count_if(ev.begin(), ev.end(), [](const Ev& e) {
    return e.type == EventId::task_begin && TaskBeginPayload::decode(e.a, e.b).source == TaskSource::stolen_deque;
  }));
  const std::size_t waits = count_kind(ev, EventId::wait_begin, static_cast<std::uint64_t>(WaitKind::join));
  EXPECT_EQ(waits, stolen) << "one join wait per stolen half";
  EXPECT_EQ(count_kind(ev, EventId::wait_end, static_cast<std::uint64_t>(WaitKind::join)), waits);
  if (workers == 1) {
    EXPECT_EQ(c.of(EventId::task_begin).size(), 1u) << "only the run's task";
    EXPECT_EQ(waits, 0u);
  }
  for (const Ev& e : ev) {
    if (e.type == EventId::task_begin) {
      EXPECT_NE(TaskBeginPayload::decode(e.a, e.b).source, TaskSource::inline_call);
    }
  }
}

// A nested wait's search pops a join's marker (TaskGroup::wait inside the first half):
// the half below it still runs once, as a task.
TEST_P(GraphEvents, NestedWaitPopsAJoinsMarker) {
  const std::uint32_t workers = GetParam();
  Collect c(workers, true);
  Scheduler pool(options(workers, &c));
  Watchdog dog("join marker in a nested wait", 60s, dump(pool));
  std::atomic<int> b_runs{0};
  for (int round = 0; round < 50; ++round) {
    pool.run([&] {
      lantern::join(
          [&] {
            // A future from a lane: its wait searches (find_work) and may pop the marker.
            auto f = pool.submit_to_lane(0, [] { return 1; });
            EXPECT_EQ(f.get(), 1);
          },
          [&] { b_runs.fetch_add(1); });
    });
  }
  EXPECT_EQ(b_runs.load(), 50);
  pool.shutdown();
  const std::vector<Ev> ev = c.events();
  std::size_t join_spawns = 0;
  for (const Ev& e : c.of(EventId::spawn))
    if (SpawnPayload::decode(e.a, e.b).kind == SpawnKind::join) {
      ++join_spawns;
      EXPECT_GE(begins(ev, e.a), 1u);
    }
  EXPECT_EQ(join_spawns, 50u);
  std::uint64_t run = 0;
  for (std::uint32_t i = 0; i < workers; ++i) run += pool.tasks_run(i);
  EXPECT_EQ(run, c.of(EventId::task_begin).size());
}

// A wait's pair is never split: an interest changed while a task waits (the Recorder's
// set_level does that) neither leaves a wait_begin without its end nor makes an end
// without its begin. The task that sets the signal changes the interest first; on 1
// worker it runs nested in the wait, so the change falls inside the wait.
TEST_P(GraphEvents, AWaitsPairIsNeverSplitByAnInterestChange) {
  const std::uint32_t workers = GetParam();
  constexpr std::uint32_t kWaits = Observer::bit(EventId::wait_begin) | Observer::bit(EventId::wait_end);
  for (const bool lower : {true, false}) {
    Collect c(workers, false);
    if (!lower) c.interest.fetch_and(~kWaits);
    Scheduler pool(options(workers, &c));
    Watchdog dog("a wait across an interest change", 30s, dump(pool));
    std::uint64_t signal_id = 0;
    pool.run([&] {
      Signal s;
      signal_id = s.id();
      TaskHandle h = pool.spawn_handle([&] {
        if (lower) {
          c.interest.fetch_and(~kWaits);
        } else {
          c.interest.fetch_or(kWaits);
        }
        s.set();
      });
      s.wait();
      h.wait();
    });
    pool.shutdown();
    std::size_t begun = 0, ended = 0;
    for (const Ev& e : c.of(EventId::wait_begin)) begun += WaitBeginPayload::decode(e.a, e.b).on == signal_id;
    for (const Ev& e : c.of(EventId::wait_end)) ended += WaitEndPayload::decode(e.a, e.b).on == signal_id;
    EXPECT_EQ(begun, ended) << (lower ? "interest lowered" : "interest raised") << " while the task waited";
    if (workers == 1) {
      EXPECT_EQ(begun, lower ? 1u : 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, GraphEvents, ::testing::Values(1u, 2u),
                         [](const ::testing::TestParamInfo<std::uint32_t>& info) {
                           return std::to_string(info.param) + "_workers";
                         });

}  // namespace
}  // namespace lantern::testing
