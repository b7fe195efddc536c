// SPDX-License-Identifier: Apache-2.0
// Chase-Lev deque (core/stealing/README.md): sequential semantics, growth, a lone task
// taken on its second sighting, and owner-vs-thieves races where every element must be
// taken exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "lantern/detail/ws_deque.hpp"
#include "support/watchdog.hpp"

using lantern::detail::DequeOwner;
using lantern::detail::DequeThief;
using lantern::detail::StealStatus;
using lantern::detail::WorkStealingDeque;

TEST(Deque, OwnerIsLifoThiefIsFifo) {
  WorkStealingDeque<int> deque(16);
  DequeOwner<int> owner(deque);
  DequeThief<int> thief(deque);
  int items[4] = {0, 1, 2, 3};
  for (int& i : items) owner.push(&i);
  EXPECT_EQ(owner.size(), 4);
  auto stolen = thief.steal();
  ASSERT_EQ(stolen.status, StealStatus::success);
  EXPECT_EQ(stolen.value, &items[0]);  // oldest
  EXPECT_EQ(owner.pop(), &items[3]);   // newest
  EXPECT_EQ(owner.pop(), &items[2]);
  EXPECT_EQ(owner.pop(), &items[1]);
  EXPECT_EQ(owner.pop(), nullptr);
  EXPECT_EQ(thief.steal().status, StealStatus::empty);
}

TEST(Deque, PushReportsSizeBefore) {
  WorkStealingDeque<int> deque;
  DequeOwner<int> owner(deque);
  int x = 0;
  EXPECT_EQ(owner.push(&x), 0);
  EXPECT_EQ(owner.push(&x), 1);
}

TEST(Deque, GrowsAndKeepsOrder) {
  WorkStealingDeque<int> deque(16);
  DequeOwner<int> owner(deque);
  std::vector<int> items(10000);
  for (int& i : items) owner.push(&i);
  for (int k = 9999; k >= 0; --k) ASSERT_EQ(owner.pop(), &items[k]);
  EXPECT_EQ(owner.pop(), nullptr);
}

// A thief passing seen_top leaves a deque's only task until its second sighting of the
// same top; the owner's pop of that task moves top, so the next lone task is fresh again.
TEST(Deque, ALoneTaskIsTakenOnItsSecondSighting) {
  WorkStealingDeque<int> deque(16);
  DequeOwner<int> owner(deque);
  DequeThief<int> thief(deque);
  std::int64_t seen = -1;
  int a = 0, b = 1, c = 2;
  EXPECT_EQ(thief.steal(&seen).status, StealStatus::empty);
  owner.push(&a);
  EXPECT_EQ(thief.steal(&seen).status, StealStatus::fresh);  // first sighting
  EXPECT_EQ(owner.pop(), &a);                                // the owner takes it back
  owner.push(&b);                                            // the next link of a chain
  EXPECT_EQ(thief.steal(&seen).status, StealStatus::fresh);  // a new task, not a second sighting
  auto second = thief.steal(&seen);
  ASSERT_EQ(second.status, StealStatus::success);  // the same task, still waiting
  EXPECT_EQ(second.value, &b);
  // More than one task: the oldest is taken at once.
  owner.push(&a);
  owner.push(&c);
  auto many = thief.steal(&seen);
  ASSERT_EQ(many.status, StealStatus::success);
  EXPECT_EQ(many.value, &a);
  // Without seen_top (the search before sleeping, a search a wake pointed at): at once.
  auto last = thief.steal();
  ASSERT_EQ(last.status, StealStatus::success);
  EXPECT_EQ(last.value, &c);
}

// Race: n items, a small deque (it grows under contention) and `thieves` threads
// stealing from it until finish(), which checks that every item was taken exactly once.
class Race {
 public:
  Race(int thieves, long n, const char* what)
      : items_(n), taken_(n), deque_(16), dog_(what, std::chrono::seconds(60)), thieves_(thieves) {
    for (int t = 0; t < thieves; ++t) {
      threads_.emplace_back([this] {
        DequeThief<int> thief(deque_);
        for (;;) {
          auto s = thief.steal();
          if (s.status == StealStatus::success) {
            take(s.value);
            stolen_.fetch_add(1, std::memory_order_relaxed);
          } else if (s.status == StealStatus::empty && done_.load(std::memory_order_acquire)) {
            return;
          }
        }
      });
    }
  }
  WorkStealingDeque<int>& deque() { return deque_; }
  int* item(long i) { return &items_[i]; }
  void take(int* p) { taken_[p - items_.data()].fetch_add(1, std::memory_order_relaxed); }
  long stolen() const { return stolen_.load(std::memory_order_relaxed); }
  // wait_for_a_steal: on a loaded machine a thief thread may not run at all during the
  // owner's few milliseconds; the tests mean to race owner and thieves, not to pass
  // without a steal. The caller has left something to steal.
  void wait_for_a_steal() const {
    while (stolen() == 0) std::this_thread::yield();
  }
  // finish: stops and joins the thieves, then checks the items.
  void finish() {
    done_.store(true, std::memory_order_release);
    for (auto& t : threads_) t.join();
    long missing = 0, duplicated = 0;
    for (auto& c : taken_) {
      missing += c.load() == 0;
      duplicated += c.load() > 1;
    }
    EXPECT_EQ(missing, 0);
    EXPECT_EQ(duplicated, 0);
    if (thieves_ > 0) {
      EXPECT_GT(stolen(), 0);
    }
  }

 private:
  std::vector<int> items_;
  std::vector<std::atomic<int>> taken_;
  WorkStealingDeque<int> deque_;
  lantern::testing::Watchdog dog_;
  int thieves_;
  std::atomic<bool> done_{false};
  std::atomic<long> stolen_{0};
  std::vector<std::thread> threads_;
};

class DequeRace : public ::testing::TestWithParam<int> {};

// Owner pushes and pops while thieves steal; every item is taken exactly once.
TEST_P(DequeRace, EveryItemTakenExactlyOnce) {
  const int thieves = GetParam();
  const long n = lantern::testing::scaled(400000, 20000);
  Race race(thieves, n, "deque race");
  DequeOwner<int> owner(race.deque());
  long pushed = 0;
  // The first items go to the thieves (wait_for_a_steal).
  if (thieves > 0) {
    while (pushed < 64) owner.push(race.item(pushed++));
    race.wait_for_a_steal();
  }
  while (pushed < n) {
    // bursts of pushes then some pops: exercises the last-element race in pop
    for (int k = 0; k < 7 && pushed < n; ++k) owner.push(race.item(pushed++));
    for (int k = 0; k < 5; ++k) {
      if (int* p = owner.pop()) race.take(p);
    }
  }
  while (int* p = owner.pop()) race.take(p);
  race.finish();
}

// A chain: the owner pushes one task and pops it back (sometimes two), so nearly every
// pop is of the deque's last task, which the owner takes with one CAS on top as a thief
// would (pop's fast path), racing the thieves' CAS for the same task.
TEST_P(DequeRace, EveryLastTaskTakenExactlyOnce) {
  const int thieves = GetParam();
  const long n = lantern::testing::scaled(400000, 20000);
  Race race(thieves, n, "deque last-task race");
  DequeOwner<int> owner(race.deque());
  long pushed = 0, popped = 0;
  auto pop = [&] {
    int* p = owner.pop();
    if (p) {
      race.take(p);
      ++popped;
    }
    return p != nullptr;
  };
  while (pushed < n) {
    const int burst = (pushed % 5 == 0) ? 2 : 1;
    for (int k = 0; k < burst && pushed < n; ++k) owner.push(race.item(pushed++));
    for (int k = 0; k < burst; ++k) pop();
    // Halfway through with no steal yet: one task left to the thieves (wait_for_a_steal).
    if (thieves > 0 && race.stolen() == 0 && pushed >= n / 2 && pushed < n) {
      owner.push(race.item(pushed++));
      race.wait_for_a_steal();
    }
  }
  while (pop()) {
  }
  EXPECT_EQ(owner.size(), 0);
  race.finish();
  EXPECT_EQ(popped + race.stolen(), n);
}

INSTANTIATE_TEST_SUITE_P(Thieves, DequeRace, ::testing::Values(0, 1, 3));
