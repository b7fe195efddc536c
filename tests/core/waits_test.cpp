// SPDX-License-Identifier: Apache-2.0
// waits_test.cpp - waits on a worker (core/README.md, "Semantics worth knowing"): join
// runs its second half when the first throws, on and off the pool, and a chain of waits
// nested deeper than SchedulerOptions::max_wait_depth throws WaitDepthError instead of
// overflowing the worker's stack, also through TaskGroup (whose destructor cancels what
// has not started) and TaskGraph::run.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lantern/graph.hpp"
#include "lantern/lantern.hpp"
#include "strategy.hpp"
#include "support/pool_state.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;

namespace lantern::testing {
namespace {

// join(a, b) runs b when a throws, whether or not b was stolen, and rethrows a's
// exception after both finished (on one worker nobody steals b: a join that skips the
// unstolen half runs b 0 times in 200).
TEST_P(Strategy, JoinRunsTheSecondHalfWhenTheFirstThrows) {
  for (std::uint32_t workers : {1u, 2u}) {
    Scheduler pool(options(workers));
    Watchdog dog("join with a throwing first half", 30s, dump(pool));
    std::atomic<int> b_ran{0};
    int caught = 0;
    // Caught on the worker (as in the depth test: no other thread reads an exception
    // object whose reference count libstdc++ keeps uninstrumented).
    for (int i = 0; i < 200; ++i) {
      const bool ok = pool.run([&] {
        try {
          lantern::join([] { throw std::runtime_error("a failed"); }, [&] { b_ran.fetch_add(1); });
        } catch (const std::runtime_error& e) {
          return std::string(e.what()) == "a failed";
        }
        return false;
      });
      if (ok) ++caught;
    }
    EXPECT_EQ(caught, 200);
    EXPECT_EQ(b_ran.load(), 200) << workers << " worker(s)";
    // b throwing too: a's exception wins, b still ran to completion.
    std::atomic<int> b_done{0};
    EXPECT_TRUE(pool.run([&] {
      try {
        lantern::join([] { throw std::runtime_error("a"); },
                      [&] {
                        b_done.fetch_add(1);
                        throw std::logic_error("b");
                      });
      } catch (const std::runtime_error&) {
        return true;
      }
      return false;
    }));
    EXPECT_EQ(b_done.load(), 1);
  }
}

// The same promise off the pool, where join runs its halves serially on the calling
// thread: b still runs when a throws, and parallel_for, built on join, skips only the
// indices it would skip on a worker (here none: every chunk is one index).
TEST(Join, OffThePoolTheSecondHalfStillRunsWhenTheFirstThrows) {
  int b_ran = 0;
  EXPECT_THROW(lantern::join([] { throw std::runtime_error("a"); }, [&] { ++b_ran; }), std::runtime_error);
  EXPECT_EQ(b_ran, 1);
  // Both throw: a's exception wins, as on a worker.
  try {
    lantern::join([] { throw std::runtime_error("a"); },
                  [&] {
                    ++b_ran;
                    throw std::logic_error("b");
                  });
    ADD_FAILURE() << "join did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "a");
  }
  EXPECT_EQ(b_ran, 2);
  // Only b throws: b's exception.
  EXPECT_THROW(lantern::join([] {}, [] { throw std::logic_error("b"); }), std::logic_error);

  std::vector<int> seen(8, 0);
  EXPECT_THROW(lantern::parallel_for(0, 8, 1,
                                     [&](std::size_t i) {
                                       ++seen[i];
                                       if (i == 0) throw std::runtime_error("body 0");
                                     }),
               std::runtime_error);
  EXPECT_EQ(seen, std::vector<int>(8, 1)) << "off the pool, a throwing body stopped the other indices";
}

// Each task submits one child and waits for it; every wait runs the child on the same
// stack. About 30,000 levels overflow the worker's 8 MiB stack (SIGSEGV, no message);
// the wait past max_wait_depth throws WaitDepthError instead.
TEST_P(Strategy, DeeplyNestedWaitsThrowInsteadOfOverflowingTheStack) {
  for (std::uint32_t limit : {0u, 10u}) {  // 0: the default limit
    std::function<int(int)> level;         // declared before the pool: outlives its tasks
    auto o = options(1);                   // one worker: every level nests on one stack
    if (limit) o.max_wait_depth = limit;
    Scheduler pool(o);
    Watchdog dog("nested waits", 60s, dump(pool));
    std::atomic<std::uint32_t> deepest{0};
    std::atomic<bool> refused{false};  // the task left behind by the refused wait then returns at once
    level = [&](int d) -> int {
      const std::uint32_t depth = lantern::detail::tls_worker->wait_depth();
      if (depth > deepest.load()) deepest = depth;
      if (d == 0 || refused.load()) return 0;
      auto child = pool.submit([&level, d] { return level(d - 1); });
      try {
        return child.get() + 1;
      } catch (const lantern::WaitDepthError&) {
        refused = true;
        throw;
      }
    };
    const std::uint32_t max = limit ? limit : lantern::SchedulerOptions{}.max_wait_depth;
    // A chain within the limit completes.
    EXPECT_EQ(pool.run([&] { return level(static_cast<int>(max) - 1); }), static_cast<int>(max) - 1);
    // A chain far deeper than any stack allows fails with the documented exception.
    // Caught on the worker: the exception object is shared with the futures' states,
    // whose last reference a worker may drop while this thread reads it (libstdc++'s
    // uninstrumented reference count would then be a false ThreadSanitizer report).
    const std::string message = pool.run([&] {
      try {
        level(100000);
        return std::string("a 100,000-level chain of waits did not throw");
      } catch (const lantern::WaitDepthError& e) {
        return std::string(e.what());
      }
    });
    EXPECT_NE(message.find("max_wait_depth"), std::string::npos) << message;
    EXPECT_EQ(deepest.load(), max) << "the deepest wait a task ran in";
  }
  lantern::SchedulerOptions bad;
  bad.max_wait_depth = 0;
  EXPECT_THROW(Scheduler{bad}, std::invalid_argument);
}

// A chain of TaskGroups: each link makes a group, spawns the next link into it and waits.
// Every wait runs the next link on the same stack. The wait past max_wait_depth throws
// WaitDepthError; the group's destructor, which runs while that exception unwinds the link,
// must not run the next link on that stack either (it is cancelled), or every link of the
// chain runs, one stack level each, and a long chain overflows the stack (SIGSEGV).
struct GroupChain {
  long length = 0;
  std::atomic<long> ran{0};
  std::atomic<std::uint32_t> deepest{0};
  void link(long k) {
    ran.fetch_add(1);
    const std::uint32_t depth = lantern::detail::tls_worker->wait_depth();
    for (std::uint32_t d = deepest.load(); depth > d && !deepest.compare_exchange_weak(d, depth);) {
    }
    if (k + 1 == length) return;
    lantern::TaskGroup group;
    group.spawn([this, k] { link(k + 1); });
    group.wait();
  }
  // run: the whole chain from one task; the message of the WaitDepthError that reached it
  // (caught on the worker, as in DeeplyNestedWaitsThrowInsteadOfOverflowingTheStack).
  std::string run(Scheduler& pool) {
    return pool.run([this] {
      try {
        link(0);
        return std::string("the chain of ") + std::to_string(length) + " links did not throw";
      } catch (const lantern::WaitDepthError& e) {
        return std::string(e.what());
      }
    });
  }
};

// Bounded: with max_wait_depth 100, a 3,000-link chain stops near depth 100. Without the
// cancellation all 3,000 links run, each one level deeper than the last. Each worker's
// stack holds at most about max_wait_depth links (a link waits for the next until the
// chain ends), and a link a thief takes starts a new stack: at most workers x (max + a
// few) links run.
TEST_P(Strategy, ATaskGroupChainStopsAtMaxWaitDepth) {
  for (std::uint32_t workers : {1u, 2u}) {
    auto o = options(workers);
    o.max_wait_depth = 100;
    Scheduler pool(o);
    Watchdog dog("TaskGroup chain, " + std::to_string(workers) + " workers", 60s, dump(pool));
    GroupChain chain;
    chain.length = 3000;
    const std::string message = chain.run(pool);
    EXPECT_NE(message.find("max_wait_depth"), std::string::npos) << message;
    EXPECT_GE(chain.ran.load(), 100) << workers << " workers";
    EXPECT_LE(chain.ran.load(), static_cast<long>(workers) * 110) << workers << " workers: links ran past the limit";
    EXPECT_LE(chain.deepest.load(), 110u) << workers << " workers: the deepest wait a link ran in";
    // The pool is intact: the next round runs normally.
    EXPECT_EQ(pool.run([] {
      lantern::TaskGroup group;
      std::atomic<int> n{0};
      for (int i = 0; i < 10; ++i) group.spawn([&n] { n.fetch_add(1); });
      group.wait();
      return n.load();
    }),
              10);
  }
}

// With the default max_wait_depth (1000), 30,000 links: without the cancellation the
// unwinding runs every link one level deeper and the worker's 8 MiB stack overflows
// (SIGSEGV on 1 and 2 workers).
TEST_P(Strategy, ALongTaskGroupChainDoesNotOverflowTheStack) {
  for (std::uint32_t workers : {1u, 2u}) {
    Scheduler pool(options(workers));
    Watchdog dog("30,000-link TaskGroup chain, " + std::to_string(workers) + " workers", 60s, dump(pool));
    GroupChain chain;
    chain.length = 30000;
    const std::string message = chain.run(pool);
    EXPECT_NE(message.find("max_wait_depth"), std::string::npos) << message;
    const long max = lantern::SchedulerOptions{}.max_wait_depth;
    EXPECT_LE(chain.ran.load(), static_cast<long>(workers) * (max + 10)) << workers << " workers";
  }
}

// The group's own promise under cancellation: a task spawned into a group whose wait was
// refused never runs, a later wait() reports the refusal once every task finished, and
// the group is reusable.
TEST_P(Strategy, ARefusedTaskGroupWaitCancelsTheTasksNotStarted) {
  auto o = options(1);  // one worker: nothing of the group starts before the wait
  o.max_wait_depth = 1;
  Scheduler pool(o);
  Watchdog dog("refused TaskGroup wait", 60s, dump(pool));
  const std::string result = pool.run([] {
    // pool.run's task already runs at depth 1: every wait here would nest deeper.
    std::atomic<int> ran{0};
    std::string out;
    {
      lantern::TaskGroup group;
      for (int i = 0; i < 5; ++i) group.spawn([&ran] { ran.fetch_add(1); });
      try {
        group.wait();
        out += "no throw;";
      } catch (const lantern::WaitDepthError&) {
        out += "refused;";
      }
      out += "ran " + std::to_string(ran.load()) + ";";
    }  // the destructor runs the cancelled tasks: their bodies are skipped
    out += "after the destructor ran " + std::to_string(ran.load());
    return out;
  });
  EXPECT_EQ(result, "refused;ran 0;after the destructor ran 0");
}

// TaskGraph::run on a worker waits like the others, and refuses like them: a chain of 150
// graphs (each graph's task runs the next graph) with max_wait_depth 50 throws
// WaitDepthError before the run past the limit starts anything.
TEST_P(Strategy, AChainOfGraphRunsStopsAtMaxWaitDepth) {
  for (std::uint32_t workers : {1u, 2u}) {
    auto o = options(workers);
    o.max_wait_depth = 50;
    std::function<void(int)> level;  // declared before the pool: outlives its tasks
    Scheduler pool(o);
    Watchdog dog("chain of graph runs", 60s, dump(pool));
    std::atomic<int> runs{0};
    level = [&](int k) {
      runs.fetch_add(1);
      if (k == 0) return;
      lantern::TaskGraph graph;
      graph.add("next", [&level, k] { level(k - 1); });
      graph.run(pool);
    };
    const std::string message = pool.run([&] {
      try {
        level(150);
        return std::string("a chain of 150 graph runs did not throw");
      } catch (const lantern::WaitDepthError& e) {
        return std::string(e.what());
      }
    });
    EXPECT_NE(message.find("max_wait_depth"), std::string::npos) << message;
    EXPECT_LE(runs.load(), static_cast<int>(workers) * 52) << workers << " workers";
  }
}

}  // namespace
}  // namespace lantern::testing
