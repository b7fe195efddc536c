// SPDX-License-Identifier: Apache-2.0
// instrumented_pool.hpp - a Scheduler with a Recorder attached, set up the way an
// application does it, and a workload whose counts are known exactly.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "lantern/instrumentation/recorder.hpp"
#include "lantern/lantern.hpp"
#include "lantern/signal.hpp"
#include "lantern/task_handle.hpp"

namespace lantern::exporters::testing {

struct InstrumentedPool {
  InstrumentedPool(std::uint32_t workers, trace::Level level, std::string topology = {})
      : recorder(workers, {.level = level, .time_tasks = true}),
        pool(options(workers, &recorder, std::move(topology))) {}

  static SchedulerOptions options(std::uint32_t workers, instrumentation::Recorder* observer, std::string topology) {
    SchedulerOptions o;
    o.workers = workers;
    o.topology = std::move(topology);
    o.observer = observer;
    return o;
  }

  // Declared in this order so the scheduler stops before the recorder it reports to goes.
  instrumentation::Recorder recorder;
  Scheduler pool;
};

// counted_task_ends: tasks whose end the recorder has counted (one task_duration value each).
inline std::uint64_t counted_task_ends(const instrumentation::Recorder& recorder) {
  std::uint64_t n = 0;
  for (std::uint32_t w = 0; w < recorder.worker_count(); ++w) n += recorder.counters(w).task_duration.count();
  return n;
}
inline std::uint64_t counted_tasks(const instrumentation::Recorder& recorder) {
  std::uint64_t n = 0;
  for (std::uint32_t w = 0; w < recorder.worker_count(); ++w) n += recorder.counters(w).tasks.get();
  return n;
}

// submit_and_wait submits exactly `n` small tasks from this (outside) thread, so each goes
// through a lane, and waits for all of them. A future is ready just before its task's
// end is counted, so it then waits (bounded) until the recorder has counted every end:
// afterwards, every count a scrape reports is final.
inline void submit_and_wait(Scheduler& pool, const instrumentation::Recorder& recorder, int n) {
  const std::uint64_t ends_before = counted_task_ends(recorder);
  std::vector<Future<int>> futures;
  futures.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    futures.push_back(pool.submit([i] {
      volatile int x = 0;
      for (int k = 0; k < 100; ++k) x = x + k;
      return i;
    }));
  }
  for (int i = 0; i < n; ++i) {
    if (futures[static_cast<std::size_t>(i)].get() != i) throw std::logic_error("submit_and_wait: wrong task result");
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (counted_task_ends(recorder) < ends_before + static_cast<std::uint64_t>(n)) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("submit_and_wait: the recorder counted " +
                               std::to_string(counted_task_ends(recorder) - ends_before) + " of " + std::to_string(n) +
                               " task ends within 30 s\n" + pool.describe_state());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// release_chain runs, from this (outside) thread, a chain of `n` tasks, each spawned after
// the previous one (spawn_after) and the first after a Signal set once the whole chain is
// built: exactly n releases, the first by the signal, each other by its predecessor. While
// the signal is unset all n tasks are not ready; *not_ready_while_gated gets that count.
// Waits, like submit_and_wait, until the recorder has counted every task's end.
inline void release_chain(Scheduler& pool, const instrumentation::Recorder& recorder, int n,
                          std::uint64_t* not_ready_while_gated = nullptr) {
  const std::uint64_t ends_before = counted_task_ends(recorder);
  Signal go;
  TaskHandle last = pool.spawn_after({go}, [] {});
  for (int i = 1; i < n; ++i) last = pool.spawn_after({last}, [] {});
  if (not_ready_while_gated) *not_ready_while_gated = pool.not_ready_tasks();
  go.set();
  last.wait();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (counted_task_ends(recorder) < ends_before + static_cast<std::uint64_t>(n)) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("release_chain: the recorder did not count every task end within 30 s\n" +
                               pool.describe_state());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace lantern::exporters::testing
