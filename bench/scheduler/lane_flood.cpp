// SPDX-License-Identifier: Apache-2.0
// lane_flood.cpp - lantern_bench's lane_flood row (opt-in): 4 outside threads each
// submit 20,000 tiny tasks (Scheduler::spawn / task_arena::enqueue) into a pool of W
// workers while a 5th outside thread spins (an oversubscribed machine). Figure: ms until
// every task ran.
#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "lantern_bench.hpp"

namespace bench::scheduler {
namespace {

constexpr int kFloodThreads = 4;
constexpr int kFloodPerThread = 20'000;

// flood_seconds: kFloodThreads outside threads submit kFloodPerThread tasks each through
// `submit` while one more outside thread spins, so the machine has more runnable threads
// than cores and a lock holder can be preempted. Seconds from the start signal until
// every task ran.
double flood_seconds(const std::function<void(std::function<void()>)>& submit) {
  std::atomic<int> ran{0};
  std::atomic<bool> go{false}, stop_spinner{false};
  constexpr int total = kFloodThreads * kFloodPerThread;
  std::thread spinner([&] {
    while (!stop_spinner.load(std::memory_order_relaxed)) {
    }
  });
  std::vector<std::thread> submitters;
  for (int t = 0; t < kFloodThreads; ++t) {
    submitters.emplace_back([&] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (int i = 0; i < kFloodPerThread; ++i) {
        submit([&ran] {
          if (ran.fetch_add(1, std::memory_order_acq_rel) + 1 == total) ran.notify_all();
        });
      }
    });
  }
  const auto start = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& t : submitters) t.join();
  for (int seen = ran.load(std::memory_order_acquire); seen != total; seen = ran.load(std::memory_order_acquire)) {
    ran.wait(seen, std::memory_order_acquire);
  }
  const double seconds = bench::seconds_between(start, Clock::now());
  stop_spinner.store(true, std::memory_order_relaxed);
  spinner.join();
  return seconds;
}

}  // namespace

void bench_lane_flood(Context& ctx, Pools& pools) {
  const Samples s = alternate(
      ctx, [&] { return flood_seconds([&](std::function<void()> f) { pools.lantern.spawn(std::move(f)); }); },
      [&] { return flood_seconds([&](std::function<void()> f) { pools.tbb_outside.enqueue(std::move(f)); }); });
  ctx.rows.push_back({"lane flood 4x20k", ctx.workers, "ms", bench::median(s.lantern) * 1e3, bench::median(s.tbb) * 1e3,
                      Target::ratio(1.0)});
}

}  // namespace bench::scheduler
