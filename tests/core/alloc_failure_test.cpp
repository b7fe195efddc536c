// SPDX-License-Identifier: Apache-2.0
// alloc_failure_test.cpp - a worker's deque that cannot grow (out of memory) loses
// nothing: every way of queueing work (Scheduler::spawn and lantern::spawn from a task,
// submit, a TaskGroup's spawn, join) still queues it, no exception escapes, every task
// runs exactly once and the pool drains and shuts down.
//
// This binary replaces the global array operator new: while `g_fail_big_arrays` is set,
// an array allocation of kFailFrom bytes or more throws std::bad_alloc. The deque's ring
// is the only such allocation the pool makes while a task spawns (a ring of 512 task
// pointers is 4 KiB; task frames come from the FramePool's aligned, non-array chunks).
// The pool has one worker, so nothing is stolen and the deque fills up.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "lantern/lantern.hpp"
#include "support/pool_state.hpp"
#include "support/watchdog.hpp"

namespace {
std::atomic<bool> g_fail_big_arrays{false};
std::atomic<int> g_failed{0};
constexpr std::size_t kFailFrom = 4096;
}  // namespace

void* operator new[](std::size_t n) {
  if (g_fail_big_arrays.load(std::memory_order_relaxed) && n >= kFailFrom) {
    g_failed.fetch_add(1, std::memory_order_relaxed);
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

using namespace std::chrono_literals;
using lantern::Scheduler;
using lantern::testing::dump;
using lantern::testing::Watchdog;

namespace {

// More tasks than the deque's first ring holds (256), so its push must grow - and fails.
constexpr int kTasks = 2000;

lantern::SchedulerOptions one_worker() {
  lantern::SchedulerOptions o;
  o.workers = 1;
  return o;
}

// Guarded: a one-worker pool under a watchdog that also covers its destructor, whose
// drain waits for every task that was counted: a task lost between being counted and
// being queued hangs there.
struct Guarded {
  std::atomic<int> phase{0};  // 0: running, 1: in the pool's destructor
  std::optional<Scheduler> pool;
  Watchdog dog;
  explicit Guarded(const char* what)
      : dog(what, 20s, [this] {
          return phase.load() == 1 ? std::string("in the pool's destructor: the drain waits for a task never queued")
                                   : dump(*pool)();
        }) {
    pool.emplace(one_worker());
  }
  ~Guarded() {
    phase = 1;
    pool.reset();
  }
};

// Armed: big array allocations fail for the life of this object.
struct Armed {
  Armed() {
    g_failed.store(0);
    g_fail_big_arrays.store(true);
  }
  ~Armed() { g_fail_big_arrays.store(false); }
};

TEST(AllocFailure, SpawnsFromATaskWhoseDequeCannotGrowAllRun) {
  std::atomic<int> ran{0};
  std::atomic<int> threw{0};
  std::int64_t deepest = 0;
  std::uint32_t lane_peak = 0;
  {
    Guarded guarded("spawns into a deque that cannot grow");
    Scheduler& pool = *guarded.pool;
    pool.run([&] {
      Armed armed;
      for (int i = 0; i < kTasks; ++i) {
        try {
          if (i % 2 == 0) {
            pool.spawn([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
          } else {
            lantern::spawn([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
          }
        } catch (...) {
          threw.fetch_add(1);
        }
      }
      deepest = pool.deque_size(0);
      lane_peak = pool.lane_size(0);
      EXPECT_GT(g_failed.load(), 0) << "the deque never tried to grow: the test does not test anything";
    });
    // run() returns once its own task is done; the spawned ones run before the pool's
    // destructor returns.
  }
  EXPECT_EQ(threw.load(), 0);
  EXPECT_EQ(ran.load(), kTasks);
  EXPECT_LE(deepest, 256);                                         // the deque stayed at its first ring...
  EXPECT_GE(lane_peak, static_cast<std::uint32_t>(kTasks - 256));  // ...the rest waited in the lane
}

TEST(AllocFailure, ATaskGroupWhoseDequeCannotGrowRunsEveryTask) {
  std::atomic<int> ran{0};
  int threw = 0;
  Guarded guarded("a TaskGroup spawning into a deque that cannot grow");
  Scheduler& pool = *guarded.pool;
  pool.run([&] {
    Armed armed;
    lantern::TaskGroup group(pool);
    for (int i = 0; i < kTasks; ++i) {
      try {
        group.spawn([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
      } catch (...) {
        ++threw;
      }
    }
    EXPECT_GT(g_failed.load(), 0);
    group.wait();
    EXPECT_EQ(ran.load(), kTasks);  // wait() returned only after every task ran
  });
  EXPECT_EQ(threw, 0);
  EXPECT_EQ(pool.tasks_spawned(0), static_cast<std::uint64_t>(kTasks));
}

TEST(AllocFailure, SubmitAndJoinOnAFullDequeStillComplete) {
  Guarded guarded("submit and join on a deque that cannot grow");
  Scheduler& pool = *guarded.pool;
  const long long total = pool.run([&] {
    std::vector<lantern::Future<long long>> futures;
    futures.reserve(kTasks);
    Armed armed;
    for (int i = 0; i < kTasks; ++i) futures.push_back(pool.submit([i] { return static_cast<long long>(i); }));
    // The deque is full now: join's second half goes to the lane, and join still
    // returns both halves' results.
    long long a = 0, b = 0;
    lantern::join([&] { a = 1; }, [&] { b = 2; });
    long long sum = a + b;
    for (auto& f : futures) sum += f.get();
    EXPECT_GT(g_failed.load(), 0);
    return sum;
  });
  EXPECT_EQ(total, 3 + static_cast<long long>(kTasks) * (kTasks - 1) / 2);
}

}  // namespace
