// scheduler.cpp - the public Scheduler's out-of-line parts.
#include "lantern/scheduler.hpp"

#include <sstream>

namespace lantern {

Scheduler::Scheduler(SchedulerOptions options) : registry_(std::make_unique<detail::Registry>(std::move(options))) {}

Scheduler::~Scheduler() { registry_->shutdown(); }

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
  for (std::uint32_t i = 0; i < worker_count(); ++i) {
    out << "  worker " << i << ": " << state_name(worker_state(i)) << ", deque=" << deque_size(i)
        << ", lane=" << lane_size(i) << "\n";
  }
  return out.str();
}

}  // namespace lantern
