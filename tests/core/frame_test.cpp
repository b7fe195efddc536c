// SPDX-License-Identifier: Apache-2.0
// frame_test.cpp - task frames (detail/frame_pool.hpp) and TaskGroup's counting: frames
// freed on other workers go back to their owner, shutdown with frames outstanding, captures
// destroyed exactly once (also when a task throws), closures too large for the pool, and a
// group whose tasks are stolen, spawn into it from other workers, or throw.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "lantern/lantern.hpp"
#include "support/pool_state.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;
using lantern::Scheduler;
using lantern::detail::FramePool;
using lantern::testing::dump;
using lantern::testing::Watchdog;

namespace {

TEST(FramePool, ReusesLocalFramesAndTakesBackRemoteOnes) {
  FramePool pool;
  void* a = pool.allocate(0);
  void* b = pool.allocate(0);
  EXPECT_NE(a, b);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 64, 0u);
  pool.free_local(a, 0);
  EXPECT_EQ(pool.allocate(0), a);  // LIFO: the frame just freed, still in cache
  // Frames freed by another thread come back once the local list is dry.
  std::thread other([&] {
    pool.free_remote(a, 0);
    pool.free_remote(b, 0);
  });
  other.join();
  std::set<void*> got{pool.allocate(0), pool.allocate(0)};
  EXPECT_EQ(got, (std::set<void*>{a, b}));
  // Classes are separate and sized 64 / 128 / 256.
  EXPECT_EQ(FramePool::class_of(1), 0u);
  EXPECT_EQ(FramePool::class_of(64), 0u);
  EXPECT_EQ(FramePool::class_of(65), 1u);
  EXPECT_EQ(FramePool::class_of(256), 2u);
  void* big = pool.allocate(2);
  void* big2 = pool.allocate(2);
  EXPECT_GE(std::abs(static_cast<char*>(big2) - static_cast<char*>(big)), 256);
}

TEST(FramePool, RemoteFreesFromManyThreadsAreAllReturned) {
  FramePool pool;
  constexpr int kPerThread = 2000;
  constexpr int kThreads = 4;
  std::vector<void*> frames;
  for (int i = 0; i < kPerThread * kThreads; ++i) frames.push_back(pool.allocate(1));
  const std::size_t chunks = pool.chunk_count();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) pool.free_remote(frames[t * kPerThread + i], 1);
    });
  }
  for (auto& t : threads) t.join();
  std::set<void*> again;
  for (int i = 0; i < kPerThread * kThreads; ++i) again.insert(pool.allocate(1));
  EXPECT_EQ(again, std::set<void*>(frames.begin(), frames.end()));
  EXPECT_EQ(pool.chunk_count(), chunks);  // every frame came back; nothing new was carved
}

// StealShare makes the other worker steal: a task of the group running on the worker
// that spawned it holds that worker (yielding) until `want` of the group's tasks have
// run elsewhere or its deque is empty (nothing left to steal). Deterministic: only
// stealing, or running out of tasks, lets it go on.
struct StealShare {
  Scheduler* pool;
  lantern::detail::Worker* owner;
  std::atomic<long>* stolen_this_round;
  long want;
  void operator()() const {
    if (lantern::detail::tls_worker != owner) {
      stolen_this_round->fetch_add(1, std::memory_order_relaxed);
      return;
    }
    while (stolen_this_round->load(std::memory_order_relaxed) < want && pool->deque_size(owner->index) > 0) {
      std::this_thread::yield();
    }
  }
};

// Tasks spawned on one worker and run (and freed) on another: the spawner's pool must
// get its frames back, so its memory stays bounded however many rounds run.
TEST(Frames, CrossWorkerFreesReturnToTheOwner) {
  Scheduler pool({.workers = 2});
  Watchdog dog("cross-worker frees", 60s, dump(pool));
  std::atomic<long> ran{0}, stolen{0};
  const int rounds = lantern::testing::sanitizer_slowdown() > 1 ? 40 : 200;
  for (int r = 0; r < rounds; ++r) {
    pool.submit_to_lane(0,
                        [&] {
                          std::atomic<long> stolen_this_round{0};
                          const StealShare share{&pool, lantern::detail::tls_worker, &stolen_this_round, 100};
                          lantern::TaskGroup group;
                          for (int i = 0; i < 500; ++i) {
                            group.spawn([&, share] {
                              share();
                              ran.fetch_add(1, std::memory_order_relaxed);
                            });
                          }
                          group.wait();
                          stolen.fetch_add(stolen_this_round.load());
                        })
        .get();
  }
  EXPECT_EQ(ran.load(), 500L * rounds);
  EXPECT_GT(stolen.load(), 0);
  // Each round's 500 frames fit in a few chunks; without the remote return every stolen
  // frame would be lost to its owner and the chunk count would grow every round.
  for (std::uint32_t i = 0; i < 2; ++i) {
    EXPECT_LE(pool.registry().worker(i).frames.chunk_count(), 24u) << "worker " << i;
  }
  std::printf("  %ld of %ld tasks ran on the worker that did not spawn them\n", stolen.load(), ran.load());
}

// Destroying the scheduler while tasks keep spawning: every task runs, every capture is
// destroyed once, and (ASan) no frame is used after its pool is gone or leaked.
TEST(Frames, ShutdownWithFramesOutstanding) {
  for (int trial = 0; trial < 5; ++trial) {
    auto token = std::make_shared<int>(7);
    std::atomic<long> ran{0};
    {
      Scheduler pool({.workers = 2});
      Watchdog dog("shutdown with frames outstanding", 60s, dump(pool));
      struct Spawner {
        std::atomic<long>* ran;
        std::shared_ptr<int> token;
        void operator()(int depth) const {
          ran->fetch_add(1, std::memory_order_relaxed);
          if (depth == 0) return;
          for (int i = 0; i < 3; ++i) {
            Spawner next = *this;
            lantern::spawn([next, depth] { next(depth - 1); });
          }
        }
      };
      pool.spawn([s = Spawner{&ran, token}] { s(7); });
      // ~Scheduler drains: 3^0 + ... + 3^7 tasks
    }
    EXPECT_EQ(ran.load(), (6561 - 1) / 2);
    EXPECT_EQ(token.use_count(), 1) << "a capture was not destroyed";
  }
}

// Large closures (over the pool's biggest class) and throwing tasks: captures destroyed
// once, exceptions delivered, the pools stay consistent.
TEST(Frames, LargeClosuresAndExceptions) {
  std::atomic<int> handled{0};
  Scheduler pool({.workers = 2, .on_unhandled_exception = [&](std::exception_ptr) { handled.fetch_add(1); }});
  Watchdog dog("large closures and exceptions", 60s, dump(pool));
  auto token = std::make_shared<int>(1);
  std::atomic<long> sum{0};
  pool.run([&] {
    lantern::TaskGroup group;
    for (int i = 0; i < 1000; ++i) {
      std::array<long, 64> big{};  // 512 bytes: operator new, not the pool
      big[63] = i;
      group.spawn([big, token, &sum] { sum.fetch_add(big[63], std::memory_order_relaxed); });
      group.spawn([token, i] {
        if (i % 7 == 0) throw std::runtime_error("small");
      });
      group.spawn([big, token, i] {
        if (i % 11 == 0) throw std::logic_error("big");
      });
    }
    EXPECT_ANY_THROW(group.wait());
    EXPECT_NO_THROW(group.wait());  // the exception is reported once
  });
  EXPECT_EQ(sum.load(), 999L * 1000 / 2);
  // detached spawns that throw, from a worker (pooled frames) and from outside
  pool.run([&] {
    for (int i = 0; i < 100; ++i) lantern::spawn([token] { throw 1; });
  });
  for (int i = 0; i < 100; ++i) pool.spawn([token] { throw 2; });
  pool.shutdown();
  EXPECT_EQ(handled.load(), 200);
  EXPECT_EQ(token.use_count(), 1);
}

// TaskGroup counting: the owner's spawns are counted without atomics and folded in at
// wait(); tasks stolen by the other worker, spawning into the same group from there,
// a group reused for several rounds, and groups made outside the pool.
TEST(TaskGroupCounting, NestedSpawnsStealsAndReuse) {
  Scheduler pool({.workers = 2});
  Watchdog dog("task group counting", 60s, dump(pool));
  for (int round = 0; round < 20; ++round) {
    std::atomic<long> ran{0};
    pool.run([&] {
      lantern::TaskGroup group;
      for (int wave = 0; wave < 3; ++wave) {  // one group, waited three times
        std::atomic<long> stolen_this_round{0};
        const StealShare share{&pool, lantern::detail::tls_worker, &stolen_this_round, 20};
        for (int i = 0; i < 200; ++i) {
          group.spawn([&group, &ran, i, share] {
            share();
            ran.fetch_add(1, std::memory_order_relaxed);
            // a task of the group spawns into it, from either worker
            if (i % 4 == 0) group.spawn([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
          });
        }
        group.wait();
        ASSERT_EQ(ran.load(), 250L * (wave + 1));
        ASSERT_GT(stolen_this_round.load(), 0);
      }
    });
  }
  // A group made outside the pool, waited outside; tasks spawn into it from workers.
  std::atomic<long> ran{0};
  lantern::TaskGroup outside(pool);
  for (int i = 0; i < 1000; ++i) {
    outside.spawn([&] {
      ran.fetch_add(1);
      outside.spawn([&] { ran.fetch_add(1); });
    });
  }
  outside.wait();
  EXPECT_EQ(ran.load(), 2000);
}

// Outside threads' frames (Registry::outside_frame): spawns, submits and a TaskGroup's
// spawns from threads that are not workers take frames from the registry's outside
// shards, and the workers that run them give them back. Eight threads on four shards, so
// shards are also found taken and the threads fall back to operator new; each round
// waits for its tasks, so the frames live at once are bounded, and so must the chunks
// be: without the frames coming back every round would take new ones (8 threads x 300
// frames of 64 and 128 bytes: ~19 chunks a round, 60 rounds).
TEST(Frames, OutsideThreadsFramesAreReused) {
  auto token = std::make_shared<int>(3);
  Scheduler pool({.workers = 2});
  Watchdog dog("outside frames", 120s, dump(pool));
  const int rounds = lantern::testing::sanitizer_slowdown() > 1 ? 20 : 60;
  constexpr int kThreads = 8, kPerRound = 100;
  std::atomic<long> ran{0}, sum{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) {
        std::atomic<int> left{kPerRound};
        std::vector<lantern::Future<long>> futures;
        lantern::TaskGroup group(pool);
        for (int i = 0; i < kPerRound; ++i) {
          pool.spawn([&ran, &left, token] {
            ran.fetch_add(1, std::memory_order_relaxed);
            left.fetch_sub(1, std::memory_order_release);
          });
          futures.push_back(pool.submit([i, token] { return static_cast<long>(i); }));
          std::array<long, 8> payload{};  // a 128-byte frame
          payload[7] = t;
          group.spawn([payload, &sum, token] { sum.fetch_add(payload[7], std::memory_order_relaxed); });
        }
        group.wait();
        long got = 0;
        for (auto& f : futures) got += f.get();
        EXPECT_EQ(got, static_cast<long>(kPerRound) * (kPerRound - 1) / 2);
        while (left.load(std::memory_order_acquire) != 0) std::this_thread::yield();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ran.load(), static_cast<long>(kThreads) * rounds * kPerRound);
  EXPECT_EQ(sum.load(), static_cast<long>(rounds) * kPerRound * (kThreads * (kThreads - 1) / 2));
  const std::size_t chunks = pool.registry().outside_chunk_count();
  EXPECT_GT(chunks, 0u) << "outside spawns did not use the outside shards";
  // The worst case with reuse: all of a round's frames out at once from one shard, at
  // most 128 bytes each, on each of the shards in turn (frames never move between
  // shards), plus a partly used chunk per size class. Without reuse: ~19 chunks a round.
  constexpr std::size_t kFramesPerChunk = lantern::detail::FramePool::kChunkBytes / 128;
  constexpr std::size_t kBound =
      lantern::detail::Registry::kOutsideShards *
      ((3 * kThreads * kPerRound + 2) / kFramesPerChunk + 1 + lantern::detail::FramePool::kClasses);
  EXPECT_LE(chunks, kBound) << "outside frames were not given back";
  std::printf("  outside shards hold %zu chunks after %d frames\n", chunks, kThreads * rounds * kPerRound * 3);
  pool.shutdown();
  EXPECT_EQ(token.use_count(), 1) << "a capture was not destroyed";
}

// An outside spawn whose closure cannot be copied into its frame: the exception reaches
// the caller, nothing is queued or counted (the pool still drains), and the frame goes
// back to its shard (the same spawns again take no new chunk).
TEST(Frames, OutsideSpawnWhoseCopyThrowsGivesItsFrameBack) {
  struct Bomb {
    std::shared_ptr<int> token;
    bool armed = false;
    Bomb(std::shared_ptr<int> t, bool a) : token(std::move(t)), armed(a) {}
    Bomb(const Bomb& other) : token(other.token), armed(other.armed) {
      if (armed) throw std::runtime_error("copy");
    }
    void operator()() const {}
  };
  auto token = std::make_shared<int>(5);
  Scheduler pool({.workers = 1});
  Watchdog dog("outside copy throws", 60s, dump(pool));
  const Bomb bomb(token, true);
  for (int i = 0; i < 5000; ++i) EXPECT_THROW(pool.spawn(bomb), std::runtime_error);
  // 5000 frames of 64 bytes would need 20 chunks if none came back.
  EXPECT_LE(pool.registry().outside_chunk_count(), 4u);
  const Bomb dud(token, false);
  for (int i = 0; i < 100; ++i) pool.spawn(dud);
  pool.shutdown();                  // drains: only the 100 were counted
  EXPECT_EQ(token.use_count(), 3);  // token, bomb and dud
}

}  // namespace
