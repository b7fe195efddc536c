// SPDX-License-Identifier: Apache-2.0
// scheduler.cpp - the public Scheduler's out-of-line parts.
#include "lantern/scheduler.hpp"

#include <sstream>

#include "lantern/detail/registry.hpp"
#include "lantern/detail/worker.hpp"

namespace lantern {

Scheduler::Scheduler(SchedulerOptions options) : registry_(detail::Registry::create(std::move(options))) {}

Scheduler::~Scheduler() {
  registry_->shutdown();
  registry_->wait_for_shutdown_calls();
}

Scheduler::SleepSnapshot Scheduler::sleep_snapshot() const noexcept {
  const detail::CounterValue c = registry_->sleep().counters();
  return {c.inactive(), c.sleeping(), c.jec()};
}

std::string Scheduler::describe_state() const {
  std::ostringstream out;
  const SleepSnapshot c = sleep_snapshot();
  out << "scheduler: " << worker_count() << " workers, inactive=" << c.inactive << " sleeping=" << c.sleeping
      << " jec=" << c.jobs_event_counter << " live_jobs=" << registry_->live_jobs()
      << (registry_->stopping() ? " (stopping)" : "") << "\n";
  const std::uint32_t n = worker_count();
  std::uint32_t blocked = 0, out_of_work = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const detail::Worker& w = registry_->worker(i);
    out << "  worker " << i << ": " << state_name(worker_state(i)) << ", deque=" << deque_size(i)
        << ", lane=" << lane_size(i);
    if (w.pinned_cpu >= 0) out << ", on cpu " << w.pinned_cpu;
    const std::uint8_t s = w.out_of_work();
    out_of_work += s != detail::Worker::kWorking;
    if (s == detail::Worker::kBlockedInWait) {
      ++blocked;
      out << ", blocked in " << detail::wait_kind_name(w.wait_kind()) << " (task " << w.blocked_task() << ")";
    }
    out << "\n";
  }
  // The episode flag says a worker's final search found nothing while every worker was
  // out of work, some blocked in a wait; the flags re-read here say it still holds
  // (core/deadlock/README.md).
  if (registry_->deadlock_suspected() && out_of_work == n && blocked > 0) {
    out << (blocked == n ? "  deadlock suspected: every worker is blocked in a wait with nothing ready ("
                         : "  deadlock suspected: every worker is blocked in a wait or idle, with nothing ready (");
    for (std::uint32_t i = 0; i < n; ++i) {
      const detail::Worker& w = registry_->worker(i);
      out << (i ? ", " : "") << "worker " << i;
      if (w.blocked_in_wait()) {
        out << " in " << detail::wait_kind_name(w.wait_kind()) << " (task " << w.blocked_task() << ")";
      } else {
        out << " idle";
      }
    }
    out << "); only a thread outside the pool (Signal::set, an IO completion) can end it\n";
  }
  return out.str();
}

}  // namespace lantern
