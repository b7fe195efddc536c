// SlotLock (lantern/detail/sleep.hpp), the sleep slot's mutex: mutual exclusion with more
// threads than cores (holders preempted inside, waiters blocked in the kernel), and an
// unlock that wakes a waiter blocked in the kernel.
#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lantern/detail/sleep.hpp"
#include "support/watchdog.hpp"

using lantern::detail::SlotLock;
using lantern::testing::Watchdog;

namespace {

// thread_state: the state letter /proc shows for thread `tid` ('S': asleep in the kernel).
char thread_state(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');  // the name may hold spaces and parentheses
  return close == std::string::npos || close + 2 >= stat.size() ? '?' : stat[close + 2];
}

// in_futex_wait: thread `tid` sleeps in the futex system call (/proc's syscall file names
// the call a blocked thread is in by its number).
bool in_futex_wait(pid_t tid) {
  if (thread_state(tid) != 'S') return false;
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/syscall");
  long number = -1;
  in >> number;
  return in && number == SYS_futex;
}

}  // namespace

TEST(SlotLock, ExcludesWithMoreThreadsThanCores) {
  constexpr int kThreads = 6;
  const long rounds = lantern::testing::scaled(200'000, 2'000);
  SlotLock lock;
  long counter = 0;  // plain: only the lock orders the threads' updates (TSan checks it)
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  Watchdog dog("SlotLock mutual exclusion", std::chrono::seconds(60));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (long i = 0; i < rounds; ++i) {
        std::lock_guard<SlotLock> guard(lock);
        if (inside.fetch_add(1, std::memory_order_relaxed) != 0) overlaps.fetch_add(1);
        ++counter;
        inside.fetch_sub(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(counter, kThreads * rounds);
}

// A waiter that found the lock held spins briefly, then blocks in the kernel; the
// holder's unlock must wake it (a lost wake here is a sleeper or waker stuck forever).
TEST(SlotLock, UnlockWakesAWaiterBlockedInTheKernel) {
  for (int round = 0; round < 20; ++round) {
    Watchdog dog("SlotLock waiter woken by unlock, round " + std::to_string(round), std::chrono::seconds(30));
    SlotLock lock;
    lock.lock();
    std::atomic<pid_t> waiter_tid{0};
    std::atomic<bool> acquired{false};
    std::thread waiter([&] {
      waiter_tid.store(static_cast<pid_t>(::syscall(SYS_gettid)));
      lock.lock();
      acquired.store(true);
      lock.unlock();
    });
    while (waiter_tid.load() == 0) std::this_thread::yield();
    // Until the waiter has given up spinning and sleeps in its futex wait.
    while (!in_futex_wait(waiter_tid.load())) std::this_thread::yield();
    EXPECT_FALSE(acquired.load());
    lock.unlock();
    waiter.join();
    EXPECT_TRUE(acquired.load());
    // Free again: an uncontended lock succeeds at once.
    lock.lock();
    lock.unlock();
  }
}
