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

// wait_all_asleep polls (yielding) until every worker is blocked. Polling a published
// counter is observation, not synchronisation: no test's correctness depends on it,
// only the condition "the pool is asleep" that lost-wakeup tests want to create.
inline void wait_all_asleep(const Scheduler& s) {
  while (s.sleep_snapshot().sleeping != s.worker_count()) std::this_thread::yield();
}

}  // namespace lantern::testing
