// SPDX-License-Identifier: Apache-2.0
// deadlock_test.cpp - suspected deadlocks (core/deadlock/README.md): every worker
// blocked in a nested wait or idle, at least one in a wait, with nothing ready and no IO
// in flight, is reported once (the deadlock hook and describe_state), on any number of
// workers; ordinary nested fork-join and a wait for IO in flight never are.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "lantern/lantern.hpp"
#include "strategy.hpp"
#include "support/fib.hpp"
#include "support/pool_state.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;

namespace lantern::testing {
namespace {

// A waiting worker runs any task, including one that waits for something set only after
// the outer wait returns: every worker then sleeps with live jobs forever. Once every
// worker is blocked in a nested wait with nothing ready, the deadlock hook fires once and
// describe_state() says so, naming each wait; the test thread then rescues the pool by
// setting the Signal. Without the detection the bounded wait below fails.
class CountDeadlocks final : public lantern::Observer {
 public:
  CountDeadlocks() { interest.store(bit(lantern::EventId::deadlock), std::memory_order_relaxed); }
  void on_event(std::uint32_t, lantern::EventId hook, std::uint64_t a, std::uint64_t b) noexcept override {
    if (hook != lantern::EventId::deadlock) return;
    const auto p = lantern::DeadlockPayload::decode(a, b);
    blocked_workers = p.blocked_workers;
    unfinished_tasks = p.unfinished_tasks;
    reports.fetch_add(1);
  }
  std::atomic<int> reports{0};
  std::atomic<std::uint64_t> blocked_workers{0};
  std::atomic<std::uint64_t> unfinished_tasks{0};
};

// wait_for_state polls describe_state() (yielding, bounded by the caller's watchdog)
// until `pred` holds; returns the last dump.
template <class Pred>
std::string wait_for_state(const Scheduler& pool, Pred pred) {
  for (;;) {
    std::string s = pool.describe_state();
    if (pred(s)) return s;
    std::this_thread::yield();
  }
}

bool says_deadlock(const std::string& s) { return s.find("deadlock suspected") != std::string::npos; }

TEST_P(Strategy, NestedWaitsThatCanOnlyEndFromOutsideAreReportedAsASuspectedDeadlock) {
  for (std::uint32_t workers : {1u, 2u}) {
    CountDeadlocks observer;
    Scheduler pool(options(workers, &observer));
    // 10 s (100 s under TSan): fails loudly with the dump well inside ctest's 600 s.
    Watchdog dog("suspected deadlock", 10s, dump(pool));
    lantern::Signal gate;  // the outer tasks would set it after their TaskGroup wait returns
    std::atomic<std::uint32_t> started{0};
    std::atomic<int> inner_done{0};
    std::vector<lantern::Future<void>> outers;
    for (std::uint32_t i = 0; i < workers; ++i) {
      outers.push_back(pool.submit([&] {
        // One outer task per worker: each holds its worker until all have started (a
        // sleeper is woken for the others even if the worker counted on for them took
        // this one: AWorkerCountedOnThatTakesOtherWorkWakesASleeperForTheRest).
        started.fetch_add(1);
        while (started.load() < workers) std::this_thread::yield();
        lantern::TaskGroup group(pool);
        group.spawn([&] {
          gate.wait();  // set only after the outer wait below returns: never, alone
          inner_done.fetch_add(1);
        });
        group.wait();
        gate.set();
      }));
    }
    const std::string state = wait_for_state(pool, says_deadlock);
    // The hook fired once (before the flag describe_state reads was published).
    EXPECT_EQ(observer.reports.load(), 1) << state;
    EXPECT_EQ(observer.blocked_workers.load(), workers);
    EXPECT_GE(observer.unfinished_tasks.load(), 2u * workers) << state;  // outers and inners
    EXPECT_NE(state.find("every worker is blocked in a wait with nothing ready"), std::string::npos) << state;
    for (std::uint32_t i = 0; i < workers; ++i) {
      EXPECT_NE(state.find("worker " + std::to_string(i) + " in "), std::string::npos) << state;
    }
    // The innermost wait is the Signal's (the inner task ran on the waiting worker) or,
    // if another worker took the inner task, the TaskGroup's.
    EXPECT_NE(state.find("Signal::wait"), std::string::npos) << state;
    // Rescue from outside: everything finishes and the report ends.
    gate.set();
    for (auto& f : outers) f.get();
    EXPECT_EQ(inner_done.load(), static_cast<int>(workers));
    pool.run([] {});
    EXPECT_FALSE(says_deadlock(pool.describe_state())) << pool.describe_state();
    EXPECT_EQ(observer.reports.load(), 1);
  }
}

// Ordinary nested fork-join is never reported. When a worker finishes the stolen half of
// a join (or a TaskGroup's last task) it sets the owner's latch and goes back to its own
// wait; the owner, blocked in its wait, keeps its flag up until its next probe of the
// latch (or until it wakes, if it slept on it). A check that reads the flags only takes
// that moment for "every worker blocked with nothing ready": on 2 workers, 100 TaskGroup
// fib(16) give 300-470 reports and 100 join fib(18) 2-33. So the check also requires
// each blocked worker's latch to be unset (Worker::still_blocked), and no worker in the
// middle of a search (the search epochs). Nothing here waits on anything an outside
// thread sets, so any report is wrong. More workers than cores as well: a preempted
// owner keeps its stale flag up for longer.
long long fib_by_task_group(int n) {
  if (n < 2) return n;
  long long a = 0, b = 0;
  lantern::TaskGroup group;
  group.spawn([&] { a = fib_by_task_group(n - 1); });
  group.spawn([&] { b = fib_by_task_group(n - 2); });
  group.wait();
  return a + b;
}

TEST_P(Strategy, OrdinaryNestedForkJoinIsNeverReportedAsADeadlock) {
  for (std::uint32_t workers : {2u, 3u}) {
    CountDeadlocks observer;
    Scheduler pool(options(workers, &observer));
    Watchdog dog("nested fork-join, " + std::to_string(workers) + " workers", 60s, dump(pool));
    const long reps = scaled(100, 10);
    for (long rep = 0; rep < reps; ++rep) {
      ASSERT_EQ(pool.run([] { return fib_by_task_group(16); }), 987);
      ASSERT_EQ(pool.run([] { return lantern::testing::fib(18); }), 2584u);
    }
    EXPECT_EQ(observer.reports.load(), 0) << workers << " workers, " << reps << " repetitions of each\n"
                                          << pool.describe_state();
  }
}

// A task waiting on a Signal that the main thread will set is not a deadlock, but from
// inside the pool it looks the same as one: no worker can make progress (on two workers
// the other one is idle with nothing anywhere), so it is reported as suspected (the
// documented limit) on any number of workers.
TEST_P(Strategy, AnOutsideSignalWaitIsSuspectedWhenNoWorkerCanProgress) {
  for (std::uint32_t workers : {1u, 2u}) {
    CountDeadlocks observer;
    Scheduler pool(options(workers, &observer));
    Watchdog dog("outside signal wait", 10s, dump(pool));
    lantern::Signal from_main;
    auto waiter = pool.submit([&] { from_main.wait(); });
    const std::string state = wait_for_state(pool, [&](const std::string& s) {
      return s.find("blocked in Signal::wait") != std::string::npos && says_deadlock(s);
    });
    EXPECT_EQ(observer.reports.load(), 1) << state;
    EXPECT_EQ(observer.blocked_workers.load(), 1u) << state;  // the hook counts the waits
    if (workers == 2) {
      EXPECT_NE(state.find(" idle"), std::string::npos) << state;
    }
    from_main.set();
    waiter.get();
    pool.run([] {});
    EXPECT_FALSE(says_deadlock(pool.describe_state())) << pool.describe_state();
    EXPECT_EQ(observer.reports.load(), 1);
  }
}

// The deadlock of the issue that motivated counting idle workers: a task waits on a
// TaskGroup; while it waits, its worker runs the group's task, which waits on a Signal
// that only the first task sets after its wait. On one worker every worker is blocked in
// a wait; on two, the second worker is asleep with nothing anywhere, which is no more able
// to end it. Both are reported (without counting idle workers, two workers hang silently
// and the bounded wait below fails with the watchdog's dump).
TEST_P(Strategy, AWaitThatOnlyItsOwnTaskCanEndIsReportedOnAnyNumberOfWorkers) {
  for (std::uint32_t workers : {1u, 2u}) {
    CountDeadlocks observer;
    Scheduler pool(options(workers, &observer));
    Watchdog dog("deadlock with an idle worker, " + std::to_string(workers) + " workers", 10s, dump(pool));
    lantern::Signal gate;
    std::atomic<int> inner_done{0};
    auto outer = pool.submit([&] {
      lantern::TaskGroup group;
      group.spawn([&] {
        gate.wait();  // set only after the wait below returns
        inner_done.fetch_add(1);
      });
      group.wait();
      gate.set();
    });
    const std::string state = wait_for_state(pool, says_deadlock);
    EXPECT_EQ(observer.reports.load(), 1) << state;
    EXPECT_GE(observer.blocked_workers.load(), 1u) << state;
    EXPECT_NE(state.find("Signal::wait"), std::string::npos) << state;
    gate.set();  // the rescue from outside
    outer.get();
    EXPECT_EQ(inner_done.load(), 1);
    pool.run([] {});
    EXPECT_FALSE(says_deadlock(pool.describe_state())) << pool.describe_state();
    EXPECT_EQ(observer.reports.load(), 1);
  }
}

// An idle pool is no deadlock, and neither is a wait whose IO is in flight on the shared
// ring (the condvar strategy: the completer thread hands the completion to a lane) with
// the other worker idle: nothing is reported while a task waits on a pipe that the test
// thread writes only once both workers are asleep.
TEST_P(Strategy, AWaitForIOInFlightIsNotADeadlock) {
  CountDeadlocks observer;
  Scheduler pool(options(2, &observer));
  Watchdog dog("wait for IO with an idle worker", 10s, dump(pool));
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  char byte = 0;
  auto reader = pool.submit([&] {
    lantern::Signal read_done;
    lantern::io::read(fds[0], &byte, 1, [&](lantern::IoResult) { read_done.set(); });
    read_done.wait();
  });
  // Both workers asleep (their last searches ran their checks) with the read in flight.
  while (!all_asleep(pool)) std::this_thread::yield();
  const std::string state = pool.describe_state();
  EXPECT_FALSE(says_deadlock(state)) << state;
  EXPECT_EQ(observer.reports.load(), 0) << state;
  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  reader.get();
  EXPECT_EQ(byte, 'x');
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_EQ(observer.reports.load(), 0);
}

}  // namespace
}  // namespace lantern::testing
