// SPDX-License-Identifier: Apache-2.0
// The scheduler end to end: fork-join, spawn, submit, task groups and parallel_for for
// several worker counts; stress cycles through sleep and wake; bad use; shutdown from
// several threads; the observer. (The protocols' own tests: sleep_test.cpp,
// helping_test.cpp, stealing_test.cpp, deadlock_test.cpp.) Every test runs under a watchdog that dumps the
// workers' states instead of hanging.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include "lantern/graph.hpp"
#include "lantern/lantern.hpp"
#include "support/fib.hpp"
#include "support/pool_state.hpp"
#include "support/watchdog.hpp"

using lantern::testing::fib;

using namespace std::chrono_literals;
using lantern::Scheduler;
using lantern::testing::dump;
using lantern::testing::scaled;
using lantern::testing::wait_all_asleep;
using lantern::testing::Watchdog;

// Every scheduler test runs under both sleep strategies (condvar, io_uring).
class SchedulerP : public ::testing::TestWithParam<std::tuple<std::uint32_t, lantern::SleepStrategy>> {
 protected:
  lantern::SchedulerOptions options() const {
    return {.workers = std::get<0>(GetParam()), .sleep_strategy = std::get<1>(GetParam())};
  }
};

TEST_P(SchedulerP, JoinComputesFib) {
  Scheduler pool(options());
  Watchdog dog("fib(27)", 30s, dump(pool));
  EXPECT_EQ(pool.run([] { return fib(27); }), 196418u);
}

TEST_P(SchedulerP, ParallelForVisitsEveryIndexOnce) {
  Scheduler pool(options());
  Watchdog dog("parallel_for", 30s, dump(pool));
  const std::size_t n = 100000;
  std::vector<std::atomic<int>> hits(n);
  pool.run([&] { lantern::parallel_for(0, n, 7, [&](std::size_t i) { hits[i].fetch_add(1); }); });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  std::atomic<std::size_t> sum{0};
  pool.run([&] {
    lantern::parallel_for(0, n, 1000, [&](std::size_t b, std::size_t e) {
      ASSERT_LE(e - b, 1000u);
      std::size_t s = 0;
      for (std::size_t i = b; i < e; ++i) s += i;
      sum.fetch_add(s);
    });
  });
  EXPECT_EQ(sum.load(), n * (n - 1) / 2);
}

TEST_P(SchedulerP, SpawnSubmitAndTaskGroup) {
  Scheduler pool(options());
  Watchdog dog("spawn/submit/task group", 30s, dump(pool));
  std::atomic<int> count{0};
  {
    lantern::TaskGroup group(pool);
    for (int i = 0; i < 1000; ++i) {
      group.spawn([&] {
        count.fetch_add(1);
        // nested spawn into the same group from a worker
        if (count.load() % 10 == 0) pool.spawn([&] { count.fetch_add(0); });
      });
    }
    group.wait();
    EXPECT_EQ(count.load(), 1000);
  }
  std::vector<lantern::Future<int>> futures;
  for (int i = 0; i < 100; ++i) futures.push_back(pool.submit([i] { return i * i; }));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(futures[i].get(), i * i);
  // A task group waited on from inside a task: the worker keeps running other tasks.
  const int inner = pool.run([&] {
    std::atomic<int> c{0};
    lantern::TaskGroup g(pool);
    for (int i = 0; i < 64; ++i) g.spawn([&] { c.fetch_add(fib(12) == 144); });
    g.wait();
    return c.load();
  });
  EXPECT_EQ(inner, 64);
}

// tasks_run_total: Scheduler::tasks_run summed over the workers.
std::uint64_t tasks_run_total(const Scheduler& pool) {
  std::uint64_t n = 0;
  for (std::uint32_t i = 0; i < pool.worker_count(); ++i) n += pool.tasks_run(i);
  return n;
}

// tasks_run counts every task a worker takes and runs, exactly once, observed or not:
// 1000 TaskGroup spawns and 100 submits from this thread, one run() whose task spawns 50
// more (Scheduler::spawn from a worker, onto its deque) - 1151 tasks in all.
TEST_P(SchedulerP, TasksRunCountsEveryTaskOnce) {
  Scheduler pool(options());
  Watchdog dog("tasks_run", 30s, dump(pool));
  auto total = [&] { return tasks_run_total(pool); };
  EXPECT_EQ(total(), 0u);
  std::atomic<int> ran{0};
  {
    lantern::TaskGroup group(pool);
    for (int i = 0; i < 1000; ++i) group.spawn([&] { ran.fetch_add(1); });
    group.wait();
  }
  EXPECT_EQ(total(), 1000u);
  std::vector<lantern::Future<int>> futures;
  for (int i = 0; i < 100; ++i) futures.push_back(pool.submit([i] { return i; }));
  for (auto& f : futures) f.get();
  EXPECT_EQ(total(), 1100u);
  pool.run([&] {
    for (int i = 0; i < 50; ++i) {
      pool.spawn([&] {
        if (ran.fetch_add(1) + 1 == 1050) ran.notify_all();
      });
    }
    return 0;
  });
  // A task is counted before it runs, so once all 50 have run all are counted.
  for (int seen = ran.load(); seen != 1050; seen = ran.load()) ran.wait(seen);
  EXPECT_EQ(total(), 1151u);
}

// The jobs that carry outside work onto a worker are tasks too, in tasks_run as in an
// observer's task_begin: a TaskGraph run started outside the pool adds its starter, and
// an IO operation started outside the pool adds the job that submits it besides its
// completion. Started on a worker, neither needs such a job.
TEST_P(SchedulerP, TasksRunCountsTheJobsThatCarryOutsideWork) {
  Scheduler pool(options());
  Watchdog dog("tasks_run of outside work", 30s, dump(pool));
  auto total = [&] { return tasks_run_total(pool); };
  lantern::TaskGraph graph;
  auto a = graph.add([] {}), b = graph.add([] {}), c = graph.add([] {}), d = graph.add([] {});
  d.succeed(a, b, c);
  graph.run(pool);  // from outside: 4 graph tasks and the starter
  EXPECT_EQ(total(), 5u);
  pool.run([&] { graph.run(pool); });  // from a task: 1 + 4
  EXPECT_EQ(total(), 10u);

  std::atomic<int> done{0};
  auto wait_done = [&](int n) {
    for (int seen = done.load(); seen != n; seen = done.load()) done.wait(seen);
  };
  for (int i = 0; i < 10; ++i) {
    pool.io().timeout(std::chrono::microseconds(100), [&](lantern::IoResult) {
      done.fetch_add(1);
      done.notify_all();
    });
  }
  wait_done(10);  // a task is counted before it runs: all 20 are counted by now
  EXPECT_EQ(total(), 30u);
  pool.run([&] {
    for (int i = 0; i < 10; ++i) {
      lantern::io::timeout(std::chrono::microseconds(100), [&](lantern::IoResult) {
        done.fetch_add(1);
        done.notify_all();
      });
    }
  });
  wait_done(20);
  EXPECT_EQ(total(), 41u);  // the run's task and 10 completions
}

TEST_P(SchedulerP, StressJoinSpawnSubmitThroughSleepCycles) {
  Scheduler pool(options());
  Watchdog dog("stress cycles", 120s, dump(pool));
  const long cycles = scaled(2000, 100);
  std::uint64_t joins = 0;
  for (long c = 0; c < cycles; ++c) {
    // a burst of fork-join work (fib(16) = 1596 joins) ...
    EXPECT_EQ(pool.run([] { return fib(16); }), 987u);
    joins += 1596;
    // ... a burst of spawns and submits from outside ...
    std::atomic<int> spawned{0};
    lantern::TaskGroup group(pool);
    for (int i = 0; i < 50; ++i) group.spawn([&] { spawned.fetch_add(1); });
    auto f = pool.submit([] { return 7; });
    group.wait();
    ASSERT_EQ(spawned.load(), 50);
    ASSERT_EQ(f.get(), 7);
    // ... and every tenth cycle an idle gap long enough for the pool to fall asleep.
    if (c % 10 == 0) wait_all_asleep(pool);
  }
  // a final large fork-join run: millions of joins in the optimised build
  const int n = lantern::testing::sanitizer_slowdown() > 1 ? 28 : 31;  // 0.5M / 2.2M joins
  const std::uint64_t expected[] = {0,     1,     1,     2,     3,      5,      8,      13,     21,     34,     55,
                                    89,    144,   233,   377,   610,    987,    1597,   2584,   4181,   6765,   10946,
                                    17711, 28657, 46368, 75025, 121393, 196418, 317811, 514229, 832040, 1346269};
  EXPECT_EQ(pool.run([n] { return fib(n); }), expected[n]);
  (void)joins;
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<std::uint32_t, lantern::SleepStrategy>>& info) {
  return std::to_string(std::get<0>(info.param)) + "_workers_" + lantern::strategy_name(std::get<1>(info.param));
}
INSTANTIATE_TEST_SUITE_P(Workers, SchedulerP,
                         ::testing::Combine(::testing::Values(1u, 2u, 4u, 8u),
                                            ::testing::Values(lantern::SleepStrategy::condvar,
                                                              lantern::SleepStrategy::io_uring)),
                         param_name);

// --- bad use ---

TEST(BadUse, SubmitAfterShutdownThrows) {
  Scheduler pool({.workers = 2});
  pool.shutdown();
  EXPECT_THROW(pool.submit([] { return 1; }), lantern::ShutdownError);
  EXPECT_THROW(pool.spawn([] {}), lantern::ShutdownError);
  pool.shutdown();  // idempotent
}

// A Future without a task - default-constructed, or after get() took the result - is an
// error to wait on, not a null dereference.
TEST(BadUse, FutureWithoutATaskThrows) {
  Scheduler pool({.workers = 1});
  lantern::Future<int> none;
  EXPECT_FALSE(none.valid());
  EXPECT_THROW(none.wait(), std::logic_error);
  EXPECT_THROW(none.get(), std::logic_error);
  lantern::Future<int> f = pool.submit([] { return 7; });
  EXPECT_TRUE(f.valid());
  EXPECT_EQ(f.get(), 7);
  EXPECT_FALSE(f.valid()) << "get() takes the result";
  EXPECT_THROW(f.get(), std::logic_error);
  lantern::Future<void> v = pool.submit([] {});
  v.get();
  EXPECT_THROW(v.wait(), std::logic_error);
}

TEST(BadUse, WorkerCounts) {
  {
    Scheduler pool({.workers = 0});
    EXPECT_EQ(pool.worker_count(), std::max(1u, std::thread::hardware_concurrency()));
  }
  EXPECT_THROW(Scheduler({.workers = 100000}), std::invalid_argument);
  try {
    Scheduler s({.workers = 2, .topology = "2 sockets x banana"});
    FAIL() << "a bad topology spec was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("banana"), std::string::npos) << e.what();
  }
  // Many more workers than CPUs is legal (and runs).
  Scheduler many({.workers = 64, .topology = "2 sockets x 16 cores"});
  EXPECT_EQ(many.run([] { return fib(20); }), 6765u);
}

TEST(BadUse, ExceptionsReachTheWaiter) {
  std::atomic<int> handled{0};
  Scheduler pool({.workers = 2, .on_unhandled_exception = [&](std::exception_ptr) { handled.fetch_add(1); }});
  Watchdog dog("exceptions", 30s, dump(pool));
  // join: from either side
  EXPECT_THROW(pool.run([] { lantern::join([] { throw std::runtime_error("a"); }, [] {}); }), std::runtime_error);
  EXPECT_THROW(pool.run([] { lantern::join([] {}, [] { throw std::runtime_error("b"); }); }), std::runtime_error);
  // submit
  auto f = pool.submit([]() -> int { throw std::out_of_range("c"); });
  EXPECT_THROW(f.get(), std::out_of_range);
  // task group: the first exception, once
  lantern::TaskGroup group(pool);
  for (int i = 0; i < 10; ++i) group.spawn([] { throw std::runtime_error("d"); });
  EXPECT_THROW(group.wait(), std::runtime_error);
  EXPECT_NO_THROW(group.wait());
  // spawn: nobody waits, the handler sees it
  for (int i = 0; i < 5; ++i) pool.spawn([] { throw 42; });
  pool.shutdown();
  EXPECT_EQ(handled.load(), 5);
  EXPECT_EQ(pool.unhandled_exceptions(), 5u);
}

TEST(BadUse, WorkersSurviveThrowingTasks) {
  Scheduler pool({.workers = 2, .on_unhandled_exception = [](std::exception_ptr) {}});
  Watchdog dog("workers survive", 30s, dump(pool));
  for (int i = 0; i < 1000; ++i) pool.spawn([] { throw std::runtime_error("x"); });
  EXPECT_EQ(pool.run([] { return fib(15); }), 610u);
}

TEST(BadUse, DestructionRunsPendingWork) {
  std::atomic<int> ran{0};
  {
    Scheduler pool({.workers = 2});
    for (int i = 0; i < 2000; ++i) {
      pool.spawn([&] {
        ran.fetch_add(1);
        if (ran.load() % 100 == 0) {  // work spawned during the drain still runs
          lantern::join([&] { ran.fetch_add(0); }, [&] { ran.fetch_add(0); });
        }
      });
    }
    // destructor: drains
  }
  EXPECT_EQ(ran.load(), 2000);
}

// --- shutdown from several threads ---

// Several threads call shutdown() at once: each call returns only once the workers have
// stopped. (A call that returned while another was still joining would let its caller
// destroy the pool under that join.) A worker's last act is its `stopping` state event; the hook lingers there a little
// so that a call that did not wait for the join would see fewer than all of them.
TEST(Shutdown, ConcurrentCallsEachReturnAfterTheWorkersStopped) {
#if LANTERN_OBSERVER
  struct Stops final : lantern::Observer {
    std::atomic<std::uint32_t> stopped{0};
    void on_event(std::uint32_t, lantern::EventId h, std::uint64_t a, std::uint64_t b) noexcept override {
      if (h != lantern::EventId::state) return;
      if (lantern::StatePayload::decode(a, b).reason != lantern::StateReason::stopping) return;
      std::this_thread::sleep_for(2ms);  // widens the window; nothing waits on it
      stopped.fetch_add(1);
    }
  };
  Watchdog watchdog("ConcurrentCallsEachReturnAfterTheWorkersStopped", 120s);
  int early = 0;
  for (int round = 0; round < 40; ++round) {
    Stops stops;
    const std::uint32_t workers = 1 + round % 4;
    Scheduler pool({.workers = workers, .observer = &stops});
    std::atomic<int> pending{0};
    for (int i = 0; i < 100; ++i) pool.spawn([&] { pending.fetch_add(1); });
    std::atomic<int> ready{0};
    std::atomic<int> returned_early{0};
    auto call = [&] {
      ready.fetch_add(1);
      while (ready.load() < 3) std::this_thread::yield();
      pool.shutdown();
      if (stops.stopped.load() != workers) returned_early.fetch_add(1);
    };
    std::thread t1(call), t2(call);
    call();
    t1.join();
    t2.join();
    EXPECT_EQ(pending.load(), 100) << "round " << round;
    early += returned_early.load();
  }
  EXPECT_EQ(early, 0) << "shutdown() calls returned before every worker had stopped";
#else
  GTEST_SKIP() << "built with LANTERN_OBSERVER=OFF: no observer can be attached";
#endif
}

// A shutdown() on another thread that began before the destructor: the destructor waits
// for it to return before it frees the pool (freed under that call, about half the
// rounds crash or destroy a joinable std::thread).
TEST(Shutdown, DestructorWaitsForAShutdownCallThatBeganFirst) {
  Watchdog watchdog("DestructorWaitsForAShutdownCallThatBeganFirst", 120s);
  for (int round = 0; round < 100; ++round) {
    auto pool =
        std::make_unique<Scheduler>(lantern::SchedulerOptions{.workers = 1 + static_cast<std::uint32_t>(round % 3)});
    Scheduler* p = pool.get();
    std::atomic<bool> release{false};
    p->spawn([&] {  // keeps the drain of both shutdowns waiting until released
      while (!release.load()) std::this_thread::yield();
    });
    std::thread caller([p] { p->shutdown(); });
    // The caller's shutdown has begun once an outside spawn is refused.
    for (;;) {
      try {
        p->spawn([] {});
      } catch (const lantern::ShutdownError&) {
        break;
      }
      std::this_thread::yield();
    }
    release.store(true);
    pool.reset();  // races the caller's shutdown(), which began first
    caller.join();
  }
}

TEST(Observer, SeesStatesTasksAndSteals) {
  struct Counting final : lantern::Observer {
    std::atomic<long> hooks[lantern::kEventCount] = {};
    void on_event(std::uint32_t, lantern::EventId h, std::uint64_t, std::uint64_t) noexcept override {
      hooks[static_cast<int>(h)].fetch_add(1, std::memory_order_relaxed);
    }
  } counting;
  {
    Scheduler pool({.workers = 2, .observer = &counting});
    pool.run([] { return fib(20); });
    wait_all_asleep(pool);
    pool.submit([] {}).get();
  }
  auto n = [&](lantern::EventId h) { return counting.hooks[static_cast<int>(h)].load(); };
#if LANTERN_OBSERVER
  EXPECT_GT(n(lantern::EventId::task_begin), 0);
  EXPECT_EQ(n(lantern::EventId::task_begin), n(lantern::EventId::task_end));
  EXPECT_GT(n(lantern::EventId::state), 0);
  EXPECT_GT(n(lantern::EventId::push), 0);
  EXPECT_GT(n(lantern::EventId::lane_pop), 0);
#else
  EXPECT_EQ(n(lantern::EventId::task_begin), 0);
#endif
}

// tasks_run is the count the observer keeps (Observer::task_counter), less what that
// count held when the scheduler started, and it counts the tasks task_begin reports:
// stolen join halves included, a join half popped back by its own worker not.
TEST(Observer, TasksRunIsTheObserversTaskCount) {
#if LANTERN_OBSERVER
  struct Keeping final : lantern::Observer {
    std::atomic<std::uint64_t> counts[2] = {500, 7};  // counts left by an earlier scheduler
    std::atomic<std::uint64_t> begins{0};
    void on_event(std::uint32_t, lantern::EventId h, std::uint64_t, std::uint64_t) noexcept override {
      if (h == lantern::EventId::task_begin) begins.fetch_add(1, std::memory_order_relaxed);
    }
    std::atomic<std::uint64_t>* task_counter(std::uint32_t worker) noexcept override {
      return worker < 2 ? &counts[worker] : nullptr;
    }
  } keeping;
  for (int round = 0; round < 2; ++round) {
    const std::uint64_t before[2] = {keeping.counts[0].load(), keeping.counts[1].load()};
    const std::uint64_t begins_before = keeping.begins.load();
    Scheduler pool({.workers = 2, .observer = &keeping});
    Watchdog dog("tasks_run with an observer", 60s, dump(pool));
    EXPECT_EQ(pool.tasks_run(0) + pool.tasks_run(1), 0u);
    EXPECT_EQ(pool.run([] { return fib(22); }), fib(22));
    lantern::TaskGroup group(pool);
    for (int i = 0; i < 300; ++i) group.spawn([] {});
    group.wait();
    for (std::uint32_t w = 0; w < 2; ++w) EXPECT_EQ(pool.tasks_run(w), keeping.counts[w].load() - before[w]);
    const std::uint64_t run = pool.tasks_run(0) + pool.tasks_run(1);
    EXPECT_GE(run, 301u);  // the run() task and the group's 300, and any stolen join halves
    EXPECT_EQ(run, keeping.begins.load() - begins_before);
  }
#else
  GTEST_SKIP() << "built with LANTERN_OBSERVER=OFF: no observer can be attached";
#endif
}

// Every worker that reports `started` reports `stopping` as its last state event, even
// when the pool is shut down before the worker's first wait (its state is then still the
// idle it started in). The Recorder ends a worker's time per state, and the analysis its
// span, at that event, and hands over unmarked drops there. Pools destroyed at once make
// that case likely; the counts must match in every pool.
TEST(Observer, EveryWorkerThatStartedReportsStopping) {
  struct Bounds final : lantern::Observer {
    std::atomic<long> started{0}, stopping{0}, after_stopping{0};
    std::atomic<bool> stopped[4] = {};
    void on_event(std::uint32_t w, lantern::EventId h, std::uint64_t a, std::uint64_t b) noexcept override {
      if (w < 4 && stopped[w].load()) after_stopping.fetch_add(1);
      if (h != lantern::EventId::state) return;
      const auto p = lantern::StatePayload::decode(a, b);
      if (p.reason == lantern::StateReason::started) started.fetch_add(1);
      if (p.reason == lantern::StateReason::stopping && w < 4) {
        stopping.fetch_add(1);
        stopped[w].store(true);
      }
    }
  };
  Watchdog watchdog("EveryWorkerThatStartedReportsStopping", 60s);
  for (int i = 0; i < 40; ++i) {
    Bounds bounds;
    { Scheduler pool({.workers = 1 + static_cast<std::uint32_t>(i % 3), .observer = &bounds}); }
    ASSERT_EQ(bounds.started.load(), LANTERN_OBSERVER ? 1 + i % 3 : 0) << "pool " << i;
    ASSERT_EQ(bounds.stopping.load(), bounds.started.load()) << "pool " << i << ": a worker never reported stopping";
    ASSERT_EQ(bounds.after_stopping.load(), 0) << "pool " << i << ": an event after stopping";
  }
}

// Observer::interest reads and writes like an atomic word; each worker tests its own copy
// on the push and task hooks (Worker::hooks_), and every way of changing the word (store,
// assignment, exchange, fetch_or, fetch_and, set_interest) must reach those copies at
// once, or those hooks would disagree with the others about what the observer wants. One
// worker, every push reported: the counts are exact. A task changes the interest and then
// spawns, so each change lands between pushes deterministically.
TEST(Observer, EveryWayOfChangingTheInterestReachesTheWorkersAtOnce) {
  using lantern::EventId;
  struct Counting final : lantern::Observer {
    std::atomic<long> hooks[lantern::kEventCount] = {};
    Counting() { interest.store(0, std::memory_order_relaxed); }
    void on_event(std::uint32_t, EventId h, std::uint64_t, std::uint64_t) noexcept override {
      hooks[static_cast<int>(h)].fetch_add(1, std::memory_order_relaxed);
    }
    long take(EventId h) { return hooks[static_cast<int>(h)].exchange(0); }
  } counting;
  const auto bit = [](EventId h) { return lantern::Observer::bit(h); };
  const std::uint32_t task_hooks = bit(EventId::task_begin) | bit(EventId::task_end);
  constexpr int kSpawns = 5;
  auto spawn_some = [] {
    lantern::TaskGroup group;
    for (int i = 0; i < kSpawns; ++i) group.spawn([] {});
    group.wait();
  };
  struct Step {
    const char* how;
    long pushes, begins;  // expected for the kSpawns spawns made after the change
  };
  std::vector<Step> steps;
  std::vector<std::pair<long, long>> seen;
  {
    Scheduler pool({.workers = 1, .observer = &counting});
    Watchdog dog("interest changes", 60s, dump(pool));
    pool.run([&] {
      auto measure = [&](const char* how, long pushes, long begins) {
        counting.take(EventId::push);
        counting.take(EventId::task_begin);
        spawn_some();
        steps.push_back({how, pushes, begins});
        seen.emplace_back(counting.take(EventId::push), counting.take(EventId::task_begin));
      };
      measure("constructor store(0)", 0, 0);
      counting.interest.store(bit(EventId::push));
      measure("store", kSpawns, 0);
      counting.interest = bit(EventId::push) | task_hooks;
      measure("operator=", kSpawns, kSpawns);
      EXPECT_EQ(counting.interest.exchange(task_hooks), bit(EventId::push) | task_hooks);
      measure("exchange", 0, kSpawns);
      EXPECT_EQ(counting.interest.fetch_or(bit(EventId::push)), task_hooks);
      measure("fetch_or", kSpawns, kSpawns);
      EXPECT_EQ(counting.interest.fetch_and(~task_hooks), bit(EventId::push) | task_hooks);
      measure("fetch_and", kSpawns, 0);
      counting.set_interest(0);
      measure("set_interest", 0, 0);
      EXPECT_EQ(static_cast<std::uint32_t>(counting.interest), 0u);
    });
  }
  ASSERT_EQ(steps.size(), seen.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
#if LANTERN_OBSERVER
    EXPECT_EQ(seen[i].first, steps[i].pushes) << "pushes after " << steps[i].how;
    EXPECT_EQ(seen[i].second, steps[i].begins) << "task_begins after " << steps[i].how;
#else
    EXPECT_EQ(seen[i].first, 0) << steps[i].how;
#endif
  }
}
