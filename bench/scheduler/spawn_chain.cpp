// SPDX-License-Identifier: Apache-2.0
// spawn_chain.cpp - lantern_bench's spawn_chain row: task i spawns task i + 1, 1000
// deep (Scheduler::spawn / task_group::run; the first task enters from the main thread
// by spawn / arena.enqueue), while the main thread blocks on an atomic the last task
// sets. Figure: ns per spawn, from the first task's start to the last task's start / 999.
#include <atomic>
#include <functional>

#include <tbb/task_group.h>

#include "lantern_bench.hpp"

namespace bench::scheduler {
namespace {

constexpr int kChainDepth = 1000;

// Chain: task i spawns task i + 1 through `spawn_next`; task 0 stamps `first`, the last
// task stamps `last` and wakes the main thread, which blocks on `done`. Task 0 also times
// its own spawn: in a pool that starts asleep that first spawn is the one that finds the
// other workers asleep and would wake one (on a VM, a cross-CPU wake of an idle vCPU costs
// the waker tens of microseconds; Lantern's fan-out credit has the poster wake it ahead),
// so the row's note can say how much of the chain it was.
struct Chain {
  std::function<void(Chain&, int)> spawn_next;  // makes a task that calls step(i)
  Clock::time_point first, last;
  double first_spawn_seconds = 0;
  std::atomic<int> done{0};
  std::atomic<int> steps{0};

  void step(int i) {
    if (i == 0) first = Clock::now();
    steps.fetch_add(1, std::memory_order_relaxed);
    if (i + 1 == kChainDepth) {
      last = Clock::now();
      done.store(1, std::memory_order_release);
      done.notify_one();
      return;
    }
    if (i == 0) {
      spawn_next(*this, 1);
      first_spawn_seconds = bench::seconds_between(first, Clock::now());
      return;
    }
    spawn_next(*this, i + 1);
  }
  void reset() {
    done.store(0);
    steps.store(0);
  }
  // wait: blocks until the last task ran; returns the seconds from first to last start.
  double wait() {
    done.wait(0, std::memory_order_acquire);
    return bench::seconds_between(first, last);
  }
};

}  // namespace

void bench_spawn_chain(Context& ctx, Pools& pools) {
  Chain lantern_chain{[&pools](Chain& c, int i) { pools.lantern.spawn([&c, i] { c.step(i); }); }};
  tbb::task_group tbb_group;
  Chain tbb_chain{[&tbb_group](Chain& c, int i) { tbb_group.run([&c, i] { c.step(i); }); }};
  auto check = [&](const char* side, Chain& c) {
    bench::check_equal("spawn_chain, " + side_label(side, ctx.workers), c.steps.load(), kChainDepth);
  };
  std::vector<double> lantern_first, tbb_first;  // task 0's spawn, seconds
  const Samples s = alternate(
      ctx,
      [&] {
        lantern_chain.reset();
        pools.lantern.spawn([&] { lantern_chain.step(0); });
        const double t = lantern_chain.wait();
        check("Lantern", lantern_chain);
        lantern_first.push_back(lantern_chain.first_spawn_seconds);
        return t;
      },
      [&] {
        tbb_chain.reset();
        pools.tbb_outside.enqueue([&] { tbb_chain.step(0); });
        const double t = tbb_chain.wait();
        pools.tbb_outside.execute([&] { tbb_group.wait(); });
        check("TBB", tbb_chain);
        tbb_first.push_back(tbb_chain.first_spawn_seconds);
        return t;
      });
  constexpr double kNsPerSpawn = 1e9 / (kChainDepth - 1);
  ctx.rows.push_back(
      {"spawn chain 1000",
       ctx.workers,
       "ns/spawn",
       bench::median(s.lantern) * kNsPerSpawn,
       bench::median(s.tbb) * kNsPerSpawn,
       Target::ratio(0.7),
       "task 0's own spawn (the first, which may find the other workers asleep and wake one) took a median of " +
           bench::format_number(bench::median(lantern_first) * 1e6) + " us of Lantern's " +
           bench::format_number(bench::median(s.lantern) * 1e6) + " us chain, " +
           bench::format_number(bench::median(tbb_first) * 1e6) + " us of TBB's " +
           bench::format_number(bench::median(s.tbb) * 1e6) + " us",
       {{"lantern_first_spawn_us", bench::median(lantern_first) * 1e6},
        {"tbb_first_spawn_us", bench::median(tbb_first) * 1e6}}});
}

}  // namespace bench::scheduler
