// SPDX-License-Identifier: Apache-2.0
// wake.hpp - one wake sample, as lantern_bench's wake row (wake.cpp) and the wake
// diagnostics (bench/diagnostics/) take it: the pool idles for kIdle (Lantern's workers
// verified asleep), then the main thread submits one task that stamps its start, and
// blocks until it has; the latency is from just before the submit to the stamp.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <tbb/task_arena.h>

#include "harness.hpp"
#include "lantern/lantern.hpp"

namespace bench::wake {

constexpr std::chrono::milliseconds kIdle{20};  // long enough for every worker of both pools to sleep

// asleep_now: every worker counted as sleeping and past its last look for work (it
// counts itself before that look and publishes `sleeping` after it, core/sleep/README.md "Falling
// asleep"): a sample posted earlier could be found by that look, without a wake.
inline bool asleep_now(const lantern::Scheduler& pool) {
  if (pool.sleep_snapshot().sleeping != pool.worker_count()) return false;
  for (std::uint32_t i = 0; i < pool.worker_count(); ++i) {
    if (pool.worker_state(i) != lantern::WorkerState::sleeping) return false;
  }
  return true;
}

// all_asleep waits (at most 1 s) until every Lantern worker is blocked.
inline bool all_asleep(const lantern::Scheduler& pool) {
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  while (!asleep_now(pool)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Probe is one task's start stamp, and the flag the main thread blocks on. With
// record_tid the task also notes the thread that ran it.
struct Probe {
  Clock::time_point started;
  std::atomic<int> done{0};
  bool record_tid = false;
  pid_t tid = 0;

  void fire() {
    started = Clock::now();
    if (record_tid) tid = static_cast<pid_t>(gettid());
    done.store(1, std::memory_order_release);
    done.notify_one();
  }
  // sample: `before()`, then a task that fires through `submit`; the latency in us.
  template <class Submit, class Before>
  double sample(Submit&& submit, Before&& before) {
    done.store(0);
    before();
    const auto submitted = Clock::now();
    submit();
    done.wait(0, std::memory_order_acquire);
    return bench::seconds_between(submitted, started) * 1e6;
  }
};

// sample_lantern: one sample of Lantern's pool after kIdle; *was_asleep says whether
// every worker was asleep when it was posted (Scheduler::spawn).
template <class Before>
double sample_lantern(lantern::Scheduler& pool, Probe& probe, bool* was_asleep, Before&& before) {
  std::this_thread::sleep_for(kIdle);
  *was_asleep = all_asleep(pool);
  return probe.sample([&] { pool.spawn([&probe] { probe.fire(); }); }, before);
}

// sample_tbb: one sample of an arena the main thread stays outside of, after kIdle
// (task_arena::enqueue).
template <class Before>
double sample_tbb(tbb::task_arena& arena, Probe& probe, Before&& before) {
  std::this_thread::sleep_for(kIdle);
  return probe.sample([&] { arena.enqueue([&probe] { probe.fire(); }); }, before);
}

}  // namespace bench::wake
