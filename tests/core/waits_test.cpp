// waits_test.cpp - waits on a worker (core/README.md, "Semantics worth knowing"): join
// runs its second half when the first throws, on and off the pool, and a chain of waits
// nested deeper than SchedulerOptions::max_wait_depth throws WaitDepthError instead of
// overflowing the worker's stack.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

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
    std::function<int(int)> level;          // declared before the pool: outlives its tasks
    auto o = options(1);                    // one worker: every level nests on one stack
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

}  // namespace
}  // namespace lantern::testing
