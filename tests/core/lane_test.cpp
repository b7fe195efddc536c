// SPDX-License-Identifier: Apache-2.0
// Lanes (core/lanes/README.md): FIFO order, the mirrored head timestamp and moving
// average, concurrent producers/consumers taking every job exactly once; and FutexLock,
// the lanes' lock, blocking instead of spinning.
#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "lantern/detail/lane.hpp"
#include "support/watchdog.hpp"

using lantern::detail::Job;
using lantern::detail::Lane;
using lantern::detail::LaneMirror;

namespace {
bool noop(Job*) noexcept { return false; }
}  // namespace

TEST(Lane, FifoAndMirror) {
  LaneMirror mirror;
  Lane lane(&mirror);
  Job a(noop), b(noop), c(noop);
  EXPECT_EQ(mirror.head_ticks.load(), 0u);
  EXPECT_EQ(lane.push(&a, 100), 0u);
  EXPECT_EQ(mirror.head_ticks.load(), 100u);  // head written on push into an empty lane
  EXPECT_EQ(lane.push(&b, 200), 1u);
  EXPECT_EQ(lane.push(&c, 300), 2u);
  EXPECT_EQ(mirror.head_ticks.load(), 100u);  // later pushes do not move the head
  EXPECT_EQ(lane.size(), 3u);

  std::uint64_t waited = 0;
  EXPECT_EQ(lane.pop(1100, &waited), &a);
  EXPECT_EQ(waited, 1000u);
  EXPECT_EQ(mirror.head_ticks.load(), 200u);
  EXPECT_EQ(mirror.average_wait_ticks.load(), 1000u >> Lane::kAverageShift);
  EXPECT_EQ(lane.pop(1200, &waited), &b);
  EXPECT_EQ(waited, 1000u);
  EXPECT_EQ(lane.pop(1300, &waited), &c);
  EXPECT_EQ(mirror.head_ticks.load(), 0u);  // empty again
  EXPECT_EQ(lane.pop(1400, &waited), nullptr);
  EXPECT_EQ(lane.size(), 0u);
}

TEST(Lane, AverageConvergesToSteadyWait) {
  LaneMirror mirror;
  Lane lane(&mirror);
  Job j(noop);
  std::uint64_t t = 1;
  for (int i = 0; i < 200; ++i) {
    lane.push(&j, t);
    t += 800;
    lane.pop(t, nullptr);
  }
  const auto avg = mirror.average_wait_ticks.load();
  EXPECT_GT(avg, 700u);
  EXPECT_LE(avg, 800u);
}

TEST(Lane, ConcurrentProducersConsumersTakeEachJobOnce) {
  LaneMirror mirror;
  Lane lane(&mirror);
  const int producers = 2, consumers = 2;
  const long per_producer = lantern::testing::scaled(100000, 5000);
  std::vector<Job> jobs(producers * per_producer, Job(noop));
  std::vector<std::atomic<int>> seen(jobs.size());
  std::atomic<long> consumed{0};
  lantern::testing::Watchdog dog("lane producers/consumers", std::chrono::seconds(60));
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (long i = 0; i < per_producer; ++i) lane.push(&jobs[p * per_producer + i], 1 + i);
    });
  }
  for (int c = 0; c < consumers; ++c) {
    threads.emplace_back([&] {
      while (consumed.load(std::memory_order_relaxed) < static_cast<long>(jobs.size())) {
        if (Job* j = lane.pop(1u << 30, nullptr)) {
          seen[j - jobs.data()].fetch_add(1, std::memory_order_relaxed);
          consumed.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& s : seen) ASSERT_EQ(s.load(), 1);
  EXPECT_EQ(lane.size(), 0u);
}

namespace {
// thread_state: the state letter of thread `tid` of this process (R running, S sleeping).
char thread_state(pid_t tid) {
  std::FILE* f = std::fopen(("/proc/self/task/" + std::to_string(tid) + "/stat").c_str(), "r");
  if (!f) return '?';
  char buf[512] = {};
  const std::size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  const char* close = std::strrchr(buf, ')');  // the name may contain spaces
  return (n > 0 && close && close[1] == ' ') ? close[2] : '?';
}
}  // namespace

// A lane's lock (and a sleep slot's: FutexLock, futex_lock.hpp) must not spin while its
// holder is off the CPU: a waiter spins a bounded number of times, then blocks in the
// kernel until the unlock wakes it. (A spinlock that never blocks never shows the waiter
// asleep: the first watchdog fails it. An unlock that does not wake the blocked waiter
// leaves the join waiting: the second watchdog fails it.)
TEST(FutexLock, AWaiterBlocksInsteadOfSpinning) {
  lantern::detail::FutexLock lock;
  lock.lock();
  std::atomic<pid_t> tid{0};
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
    lock.lock();
    got.store(true);
    lock.unlock();
  });
  {
    lantern::testing::Watchdog dog("a lane-lock waiter to block in the kernel", std::chrono::seconds(20));
    // Asleep *in the lock*: contended() is set just before the futex wait. A thread can
    // be 'S' for other reasons (a sanitizer runtime's internal lock, on a busy machine),
    // and the state alone would let the test go on before the waiter has even contended.
    while (tid.load() == 0 || !lock.contended() || thread_state(tid.load()) != 'S') std::this_thread::yield();
  }
  EXPECT_TRUE(lock.contended());
  EXPECT_FALSE(got.load());
  {
    lantern::testing::Watchdog dog("the unlock to wake the blocked waiter", std::chrono::seconds(20));
    lock.unlock();  // wakes it
    waiter.join();
  }
  EXPECT_TRUE(got.load());
}

// Many threads (more than cores) taking the lock: mutual exclusion holds and nobody is
// left blocked (every lock() returns).
TEST(FutexLock, MutualExclusionUnderOversubscription) {
  lantern::detail::FutexLock lock;
  long counter = 0;
  const int threads = 8;
  const long per_thread = lantern::testing::sanitizer_slowdown() > 1 ? 20000 : 200000;
  lantern::testing::Watchdog dog("lane lock under oversubscription", std::chrono::seconds(60));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (long i = 0; i < per_thread; ++i) {
        lock.lock();
        ++counter;
        lock.unlock();
      }
    });
  }
  for (auto& t : pool) t.join();
  EXPECT_EQ(counter, threads * per_thread);
}
