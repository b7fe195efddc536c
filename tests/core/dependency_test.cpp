// SPDX-License-Identifier: Apache-2.0
// Task dependencies (core/dependencies/README.md): TaskGraph (cycles, a large random DAG,
// exceptions, reuse, nesting), Signal (before/after/twice), the dynamic API
// (spawn_handle / spawn_after), the not-ready count, the release hook, and the rule
// that a not-ready task wakes no worker. Every test runs under a watchdog.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "lantern/graph.hpp"
#include "lantern/lantern.hpp"
#include "lantern/signal.hpp"
#include "support/pool_state.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;
using lantern::Scheduler;
using lantern::Signal;
using lantern::TaskGraph;
using lantern::TaskHandle;
using lantern::testing::dump;
using lantern::testing::scaled;
using lantern::testing::Watchdog;

namespace {

// all_asleep_within polls (observation only) until every worker is blocked.
bool all_asleep_within(const Scheduler& s, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (s.sleep_snapshot().sleeping != s.worker_count()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Counts hooks, and keeps the release events' payloads.
struct Recording final : lantern::Observer {
  std::atomic<long> hooks[lantern::kEventCount] = {};
  std::mutex mutex;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> releases;
  std::vector<std::uint64_t> not_ready;  // the not_ready samples, in the order they came
  void on_event(std::uint32_t, lantern::EventId h, std::uint64_t a, std::uint64_t b) noexcept override {
    hooks[static_cast<int>(h)].fetch_add(1, std::memory_order_relaxed);
    if (h == lantern::EventId::not_ready) {
      std::lock_guard<std::mutex> lock(mutex);
      not_ready.push_back(a);
    }
    if (h == lantern::EventId::release) {
      std::lock_guard<std::mutex> lock(mutex);
      releases.emplace_back(a, b);
    }
  }
  long count(lantern::EventId h) const { return hooks[static_cast<int>(h)].load(); }
};

}  // namespace

// ------------------------------------------------------------------------- TaskGraph

TEST(TaskGraph, CycleIsRefusedNamingItsTasks) {
  Scheduler pool({.workers = 2});
  Watchdog dog("cycle", 30s, dump(pool));
  TaskGraph g;
  std::atomic<int> ran{0};
  auto body = [&] { ran.fetch_add(1); };
  auto load = g.add("load", body), parse = g.add("parse", body), index = g.add("index", body);
  auto after = g.add("after", body);
  g.add("unrelated", body);
  load.precede(parse);
  parse.precede(index);
  index.precede(load, after);  // load -> parse -> index -> load; `after` is downstream, not on it
  try {
    g.run(pool);
    FAIL() << "a cyclic graph ran";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const char* name : {"'load'", "'parse'", "'index'"}) EXPECT_NE(what.find(name), std::string::npos) << what;
    EXPECT_EQ(what.find("'after'"), std::string::npos) << what;
  }
  EXPECT_EQ(ran.load(), 0) << "nothing runs when the graph is refused";
  EXPECT_THROW(g.validate(), std::invalid_argument);
  TaskGraph self;
  auto t = self.add([] {});
  t.precede(t);  // an unnamed task on a one-task cycle
  try {
    self.validate();
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("#0 -> #0"), std::string::npos) << e.what();
  }
}

// A random DAG: node i depends on up to 3 earlier nodes (mostly near, sometimes far).
// Nodes are added in a shuffled order, so the graph's order says nothing. Each node
// checks that every predecessor finished in this run, and counts its own runs.
void run_random_dag(std::uint32_t workers, long nodes, int runs) {
  Scheduler pool({.workers = workers});
  Watchdog dog("random DAG of " + std::to_string(nodes), 300s, dump(pool));
  const auto n = static_cast<std::size_t>(nodes);
  std::mt19937_64 rng(42 + workers);
  std::vector<std::uint32_t> first_pred(n + 1), preds;
  for (std::size_t i = 0; i < n; ++i) {
    first_pred[i] = static_cast<std::uint32_t>(preds.size());
    const int k = i == 0 ? 0 : static_cast<int>(rng() % 4);
    for (int j = 0; j < k; ++j) {
      const std::size_t span = rng() % 8 == 0 ? i : std::min<std::size_t>(i, 64);
      preds.push_back(static_cast<std::uint32_t>(i - 1 - rng() % span));
    }
  }
  first_pred[n] = static_cast<std::uint32_t>(preds.size());
  std::vector<std::atomic<int>> finished_in_run(n), run_count(n);
  std::atomic<long> violations{0};
  int current_run = 0;
  std::vector<std::uint32_t> add_order(n);
  std::iota(add_order.begin(), add_order.end(), 0u);
  std::shuffle(add_order.begin(), add_order.end(), rng);
  TaskGraph g;
  std::vector<lantern::GraphTask> task(n);
  for (std::uint32_t i : add_order) {
    task[i] = g.add([&, i] {
      for (std::uint32_t p = first_pred[i]; p < first_pred[i + 1]; ++p) {
        if (finished_in_run[preds[p]].load(std::memory_order_acquire) != current_run) violations.fetch_add(1);
      }
      run_count[i].fetch_add(1, std::memory_order_relaxed);
      finished_in_run[i].store(current_run, std::memory_order_release);
    });
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::uint32_t p = first_pred[i]; p < first_pred[i + 1]; ++p) task[preds[p]].precede(task[i]);
  }
  for (current_run = 1; current_run <= runs; ++current_run) {
    g.run(pool);
    ASSERT_EQ(violations.load(), 0) << "a node ran before one of its predecessors (run " << current_run << ")";
    EXPECT_EQ(pool.not_ready_tasks(), 0u);
  }
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(run_count[i].load(), runs) << "node " << i;
}

TEST(TaskGraph, MillionNodeRandomDagRunsEachNodeOnceInOrder) { run_random_dag(2, scaled(1'000'000, 50'000), 2); }

class GraphP : public ::testing::TestWithParam<std::uint32_t> {};
TEST_P(GraphP, RandomDagRepeatedRuns) { run_random_dag(GetParam(), scaled(20'000, 2'000), 5); }
INSTANTIATE_TEST_SUITE_P(Workers, GraphP, ::testing::Values(1u, 2u, 4u, 8u));

TEST(TaskGraph, ExceptionReachesTheWaiterAndSkipsOnlyDependents) {
  Scheduler pool({.workers = 2});
  Watchdog dog("graph exception", 30s, dump(pool));
  TaskGraph g;
  std::atomic<bool> fail{true};
  std::atomic<int> a{0}, b{0}, c{0}, d{0}, e{0}, f{0};
  auto ta = g.add("a", [&] {
    a++;
    if (fail) throw std::runtime_error("a failed");
  });
  auto tb = g.add("b", [&] { b++; });
  auto tc = g.add("c", [&] { c++; });
  auto td = g.add("d", [&] { d++; });
  auto te = g.add("e", [&] { e++; });
  auto tf = g.add("f", [&] { f++; });
  ta.precede(tb);
  tb.precede(tc);
  td.precede(te, tf);  // independent of a ...
  tb.precede(tf);      // ... but f also follows b
  EXPECT_THROW(g.run(pool), std::runtime_error);
  EXPECT_EQ(std::make_tuple(a.load(), b.load(), c.load(), d.load(), e.load(), f.load()),
            std::make_tuple(1, 0, 0, 1, 1, 0));
  // From inside a task, and then again without the failure: every flag was reset.
  pool.run([&] { EXPECT_THROW(g.run(pool), std::runtime_error); });
  fail = false;
  g.run(pool);
  EXPECT_EQ(std::make_tuple(a.load(), b.load(), c.load(), d.load(), e.load(), f.load()),
            std::make_tuple(3, 1, 1, 3, 3, 1));
}

TEST(TaskGraph, RunsManyTimesFromOutsideInsideAndNested) {
  Scheduler pool({.workers = 4});
  Watchdog dog("graph reuse", 60s, dump(pool));
  // A reduction tree: 256 leaves (sources: a run from outside goes through the starter).
  TaskGraph tree;
  std::vector<lantern::GraphTask> level;
  std::atomic<long> leaves{0}, inner{0};
  for (int i = 0; i < 256; ++i) level.push_back(tree.add([&] { leaves++; }));
  while (level.size() > 1) {
    std::vector<lantern::GraphTask> up;
    for (std::size_t i = 0; i < level.size(); i += 2) {
      up.push_back(tree.add([&] { inner++; }));
      up.back().succeed(level[i], level[i + 1]);
    }
    level = up;
  }
  // An outer graph whose middle task runs the tree as a nested graph.
  TaskGraph outer;
  std::atomic<int> before{0}, after{0};
  auto t0 = outer.add("before", [&] { before++; });
  auto t1 = outer.add("nested", [&] { tree.run(pool); });
  auto t2 = outer.add("after", [&] { after += leaves.load() % 256 == 0 ? 1 : 1000; });
  t0.precede(t1);
  t1.precede(t2);
  const long rounds = scaled(200, 20);
  for (long r = 0; r < rounds; ++r) {
    tree.run(pool);
    pool.run([&] { tree.run(pool); });
    outer.run(pool);
  }
  EXPECT_EQ(leaves.load(), 256 * 3 * rounds);
  EXPECT_EQ(inner.load(), 255 * 3 * rounds);
  EXPECT_EQ(before.load(), rounds);
  EXPECT_EQ(after.load(), rounds);
  TaskGraph empty;
  empty.run(pool);
  pool.shutdown();
  EXPECT_THROW(tree.run(pool), lantern::ShutdownError);
}

TEST(TaskGraph, BadUse) {
  Scheduler pool({.workers = 2});
  Watchdog dog("graph bad use", 30s, dump(pool));
  TaskGraph g, other;
  auto a = g.add("a", [] {});
  auto x = other.add("x", [] {});
  EXPECT_THROW(a.precede(x), std::invalid_argument);
  EXPECT_THROW(a.precede(lantern::GraphTask{}), std::invalid_argument);
  // A task that runs its own graph: refused with logic_error, which run() rethrows.
  TaskGraph self;
  self.add("recurse", [&] { self.run(pool); });
  EXPECT_THROW(self.run(pool), std::logic_error);
}

// ---------------------------------------------------------------------------- Signal

TEST(Signal, SetBeforeAfterOrTwiceBehavesAsDocumented) {
  Scheduler pool({.workers = 2});
  Watchdog dog("signal semantics", 30s, dump(pool));
  Signal early;
  EXPECT_FALSE(early.is_set());
  EXPECT_TRUE(early.set());
  EXPECT_FALSE(early.set()) << "the second set does nothing";
  EXPECT_TRUE(early.is_set());
  early.wait();  // returns at once
  std::atomic<int> ran{0};
  pool.spawn_after({early}, [&] { ran++; }).wait();  // ready at once
  EXPECT_EQ(ran.load(), 1);

  const long rounds = scaled(500, 50);
  for (long r = 0; r < rounds; ++r) {
    Signal late;
    int value = 0;
    auto task = pool.spawn_after({late}, [&] { ran++; });
    std::thread outside_waiter([&] {
      late.wait();
      EXPECT_EQ(value, 7);
    });
    auto worker_waiter = pool.submit([&] {
      late.wait();
      return value;
    });
    std::thread setter([&] {
      value = 7;
      EXPECT_TRUE(late.set());
      EXPECT_FALSE(late.set());
    });
    task.wait();
    EXPECT_EQ(worker_waiter.get(), 7);
    setter.join();
    outside_waiter.join();
  }
  EXPECT_EQ(ran.load(), 1 + rounds);
}

TEST(Signal, WaitingWorkerKeepsRunningOtherTasks) {
  Scheduler pool({.workers = 1});  // one worker: if the wait blocked it, nothing would set the signal
  Watchdog dog("worker waits on a signal", 30s, dump(pool));
  const bool seen = pool.run([&] {
    Signal s;
    pool.spawn([&] { s.set(); });
    s.wait();
    return s.is_set();
  });
  EXPECT_TRUE(seen);
}

// ---------------------------------------------------------------- dynamic dependencies

TEST(Dynamic, TaskSpawnedAfterTwoHandlesRunsAfterBoth) {
  Scheduler pool({.workers = 4});
  Watchdog dog("spawn_after", 60s, dump(pool));
  const long rounds = scaled(3000, 300);
  std::atomic<long> wrong{0};
  for (long r = 0; r < rounds; ++r) {
    std::atomic<bool> a_done{false}, c_done{false};
    auto spin = [](long n) {
      volatile long sink = 0;
      for (long i = 0; i < n; ++i) sink = sink + i;
    };
    TaskHandle ha = pool.spawn_handle([&, r] {
      spin(r % 7 * 50);
      a_done = true;
    });
    TaskHandle hc = pool.spawn_handle([&, r] {
      spin(r % 5 * 50);
      c_done = true;
    });
    TaskHandle hb = pool.spawn_after({ha, hc}, [&] {
      if (!a_done || !c_done) wrong++;
    });
    // Also from inside a task, after handles that may have completed already.
    pool.run([&] {
      pool.spawn_after({ha, hb},
                       [&] {
                         if (!a_done || !c_done) wrong++;
                       })
          .wait();
    });
    hb.wait();
    EXPECT_TRUE(ha.done() && hc.done() && hb.done());
  }
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(pool.not_ready_tasks(), 0u);
}

TEST(Dynamic, ExceptionsReachHandlesAndSkipDependents) {
  std::atomic<int> unhandled{0};
  Scheduler pool({.workers = 2, .on_unhandled_exception = [&](std::exception_ptr) { unhandled++; }});
  Watchdog dog("dynamic exceptions", 30s, dump(pool));
  std::atomic<int> ran{0};
  TaskHandle bad = pool.spawn_handle([] { throw std::out_of_range("bad"); });
  TaskHandle good = pool.spawn_handle([&] { ran++; });
  TaskHandle dependent = pool.spawn_after({good, bad}, [&] { ran += 100; });
  TaskHandle grandchild = pool.spawn_after({dependent}, [&] { ran += 100; });
  EXPECT_THROW(bad.wait(), std::out_of_range);
  EXPECT_THROW(bad.wait(), std::out_of_range) << "every wait rethrows";
  EXPECT_THROW(grandchild.wait(), std::out_of_range);
  EXPECT_TRUE(dependent.done());
  EXPECT_EQ(ran.load(), 1);
  // Nobody holds a handle, nothing depends on it: reported like a spawned task's.
  Signal go;
  (void)pool.spawn_after({go}, [] { throw 1; });
  go.set();
  pool.shutdown();
  EXPECT_EQ(unhandled.load(), 1);
  EXPECT_THROW(TaskHandle{}.wait(), std::logic_error);
  EXPECT_THROW(lantern::Dependency(TaskHandle{}), std::invalid_argument);
}

// What unhandled_exceptions() counts (scheduler.hpp): a failure nobody can observe goes to
// the handler once per task that completes with it. A task that threw, with three
// dependents and no handles anywhere: it hands its exception on, and each dependent,
// failed with it and observable by nobody, reports it: three reports of one exception.
// With a handle kept on one dependent, that one is observable: two.
TEST(Dynamic, UnhandledCountsEveryUnobservableFailedTask) {
  for (const bool keep_one : {false, true}) {
    std::atomic<int> reports{0};
    std::atomic<int> distinct{0};
    std::atomic<const void*> first{nullptr};  // the exception object's address, not a copy
    Scheduler pool({.workers = 2, .on_unhandled_exception = [&](std::exception_ptr e) {
                      const void* object = nullptr;
                      try {
                        std::rethrow_exception(e);
                      } catch (const std::exception& x) {
                        object = &x;
                      } catch (...) {
                      }
                      const void* expected_first = nullptr;
                      if (!first.compare_exchange_strong(expected_first, object) && expected_first != object)
                        distinct++;
                      reports++;
                    }});
    Watchdog dog("unhandled count", 30s, dump(pool));
    Signal go;
    std::vector<TaskHandle> kept;
    {
      TaskHandle origin = pool.spawn_after({go}, [] { throw std::runtime_error("origin"); });
      for (int i = 0; i < 3; ++i) {
        TaskHandle dependent = pool.spawn_after({origin}, [] { ADD_FAILURE() << "a dependent of a failed task ran"; });
        if (keep_one && i == 0) kept.push_back(std::move(dependent));
      }
    }  // no handle on the origin is left: only its dependents can carry the exception on
    go.set();
    if (keep_one) {
      EXPECT_THROW(kept[0].wait(), std::runtime_error);
    }
    pool.shutdown();
    const int expected = keep_one ? 2 : 3;
    EXPECT_EQ(reports.load(), expected) << (keep_one ? "one dependent kept" : "no handles");
    EXPECT_EQ(pool.unhandled_exceptions(), static_cast<std::uint64_t>(expected));
    EXPECT_EQ(distinct.load(), 0) << "the reports are not all of the origin's exception";
  }
}

// ------------------------------------------------------ not-ready count, wakes, hooks

TEST(NotReady, CountsTasksWaitingOnAnUnsetSignal) {
  Scheduler pool({.workers = 2});
  Watchdog dog("not-ready count", 30s, dump(pool));
  Signal s;
  std::vector<TaskHandle> handles;
  for (int i = 0; i < 10; ++i) handles.push_back(pool.spawn_after({s}, [] {}));
  pool.run([&] {
    for (int i = 0; i < 5; ++i) handles.push_back(pool.spawn_after({s, handles[i]}, [] {}));
  });
  EXPECT_EQ(pool.not_ready_tasks(), 15u);
  s.set();
  for (auto& h : handles) h.wait();
  EXPECT_EQ(pool.not_ready_tasks(), 0u);
  // In a graph: while task i of a chain runs, exactly the n - 1 - i after it wait.
  TaskGraph chain;
  std::vector<lantern::GraphTask> t;
  std::atomic<int> wrong{0};
  for (int i = 0; i < 50; ++i) {
    t.push_back(chain.add([&, i] {
      if (pool.not_ready_tasks() != static_cast<std::uint64_t>(49 - i)) wrong++;
    }));
    if (i > 0) t[i - 1].precede(t[i]);
  }
  chain.run(pool);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(pool.not_ready_tasks(), 0u);
}

TEST(NotReady, ANotReadyTaskWakesNoWorker) {
  for (std::uint32_t workers : {2u, 4u}) {
    Recording recording;
    Scheduler pool({.workers = workers, .observer = &recording});
    Watchdog dog("no wake for a not-ready task", 60s, dump(pool));
    // 5 s for the optimised build; the sanitizers slow the workers' way to sleep too.
    ASSERT_TRUE(all_asleep_within(
        pool, std::chrono::duration_cast<std::chrono::milliseconds>(5s * lantern::testing::sanitizer_slowdown())))
        << dump(pool)();
    const long wakes_before = recording.count(lantern::EventId::wake);
    Signal s;
    std::atomic<bool> ran{false};
    TaskHandle h = pool.spawn_after({s}, [&] { ran = true; });
    // Bounded settle: for 50 ms every worker must stay asleep, and none may wake.
    for (int i = 0; i < 50; ++i) {
      ASSERT_EQ(pool.sleep_snapshot().sleeping, workers) << dump(pool)();
      std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(pool.not_ready_tasks(), 1u);
    EXPECT_FALSE(ran.load());
#if LANTERN_OBSERVER
    EXPECT_EQ(recording.count(lantern::EventId::wake), wakes_before);
#endif
    s.set();  // from this (outside) thread: into a lane, waking one worker
    h.wait();
    EXPECT_TRUE(ran.load());
#if LANTERN_OBSERVER
    EXPECT_EQ(recording.count(lantern::EventId::wake), wakes_before + 1);
#endif
    (void)wakes_before;
  }
}

TEST(Observer, ReleaseEventsNameWhoMadeWhomReady) {
  Recording recording;
  Scheduler pool({.workers = 2, .observer = &recording});
  Watchdog dog("release hook", 30s, dump(pool));
  Signal s;
  TaskHandle first = pool.spawn_after({s}, [] {});
  TaskHandle second = pool.spawn_after({first}, [] {});
  s.set();  // outside: reported by the worker that runs `first`
  second.wait();
  TaskGraph chain;
  auto t0 = chain.add([] {}), t1 = chain.add([] {}), t2 = chain.add([] {});
  t0.precede(t1);
  t1.precede(t2);
  chain.run(pool);
  pool.shutdown();
#if LANTERN_OBSERVER
  std::lock_guard<std::mutex> lock(recording.mutex);
  auto& r = recording.releases;
  EXPECT_EQ(r.size(), 4u);
  EXPECT_NE(std::find(r.begin(), r.end(), std::make_pair(first.id(), s.id())), r.end());
  EXPECT_NE(std::find(r.begin(), r.end(), std::make_pair(second.id(), first.id())), r.end());
#endif
}

// The not_ready hook samples the pool's not-ready count as a worker goes idle: ten tasks
// waiting on a Signal show as 10 once the pool has gone idle, and 0 after they ran.
TEST(Observer, NotReadySamplesFollowThePoolsCount) {
  Recording recording;
  Scheduler pool({.workers = 2, .observer = &recording});
  Watchdog dog("not_ready samples", 30s, dump(pool));
  Signal s;
  std::vector<TaskHandle> waiting;
  for (int i = 0; i < 10; ++i) waiting.push_back(pool.spawn_after({s}, [] {}));
  pool.run([] {});  // a worker runs this and goes idle after it: a sample
  lantern::testing::wait_all_asleep(pool);
#if LANTERN_OBSERVER
  {
    std::lock_guard<std::mutex> lock(recording.mutex);
    ASSERT_FALSE(recording.not_ready.empty());
    EXPECT_EQ(recording.not_ready.back(), 10u);
  }
#endif
  std::size_t before_set = 0;
  {
    std::lock_guard<std::mutex> lock(recording.mutex);
    before_set = recording.not_ready.size();
  }
  s.set();
  for (auto& h : waiting) h.wait();
  lantern::testing::wait_all_asleep(pool);
#if LANTERN_OBSERVER
  // Samples taken while set() was still releasing may arrive in any order, so the last
  // one need not be 0; but 0 must have been reported, and nothing out of range.
  std::lock_guard<std::mutex> lock(recording.mutex);
  const auto& v = recording.not_ready;
  EXPECT_NE(std::find(v.begin() + static_cast<std::ptrdiff_t>(before_set), v.end(), 0u), v.end());
  for (std::uint64_t n : v) EXPECT_LE(n, 10u);
#endif
  (void)before_set;
}
