// SPDX-License-Identifier: Apache-2.0
// pool_state.hpp - what concurrency tests print and wait for about a Scheduler.
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "lantern/scheduler.hpp"

namespace lantern::testing {

// dump: the text a Watchdog prints when the guarded scope hangs: every worker's state
// and queues, the sleep counters, and the not-ready count.
inline std::function<std::string()> dump(const Scheduler& s) {
  return [&s] { return s.describe_state() + "  not_ready_tasks=" + std::to_string(s.not_ready_tasks()) + "\n"; };
}

// all_asleep: every worker counted as sleeping and past its last look for work. The
// count alone is not enough: a worker counts itself before that last look
// (core/sleep/README.md, "Falling asleep", steps 3-5) and may still find a task posted
// meanwhile and leave; it publishes `sleeping` only after the look.
inline bool all_asleep(const Scheduler& s) {
  if (s.sleep_snapshot().sleeping != s.worker_count()) return false;
  for (std::uint32_t i = 0; i < s.worker_count(); ++i) {
    if (s.worker_state(i) != WorkerState::sleeping) return false;
  }
  return s.sleep_snapshot().sleeping == s.worker_count();
}

// wait_all_asleep polls (yielding) until all_asleep. Polling published state is
// observation, not synchronisation: no test's correctness depends on it, only the
// condition "the pool is asleep" that lost-wakeup tests want to create.
inline void wait_all_asleep(const Scheduler& s) {
  while (!all_asleep(s)) std::this_thread::yield();
}

}  // namespace lantern::testing
