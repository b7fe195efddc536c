// SPDX-License-Identifier: Apache-2.0
// stealing.cpp - the steal round (README.md beside this file).
#include <utility>
#include <vector>

#include "lantern/detail/hot.hpp"
#include "lantern/detail/registry.hpp"
#include "lantern/detail/worker.hpp"

namespace lantern::detail {

void Worker::set_steal_order(std::vector<Victim> victims) {
  victims_ = std::move(victims);
  lone_seen_.assign(registry_->worker_count(), -1);
  far_begin_ = victims_.size();
  if (!victims_.empty() && victims_.front().distance != victims_.back().distance) {
    const Distance farthest = victims_.back().distance;
    while (far_begin_ > 0 && victims_[far_begin_ - 1].distance == farthest) --far_begin_;
  }
}

// steal: one round over the victims, nearest first. A round that lost races is retried
// (the work is there, someone was faster); a round that took nothing (every queue empty,
// or a deque's only task left to its owner: steal_from) is a failed round, reported once.
LANTERN_HOT Job* Worker::steal(TaskSource* source, bool* more_left) {
  // Every search that finds nothing ends here (find_work), so this is where its record of
  // a declined lone task starts, off the own-deque path.
  declined_from_ = kNoVictim;
  const std::size_t n = victims_.size();
  if (n == 0) return nullptr;
  std::uint64_t lost = 0;
  std::uint64_t probed = 0;
  if (steal_hint_ != SleepSink::kNowhere) {
    // Woken with a hint: the work is there, look there first.
    const std::uint32_t hinted = steal_hint_;
    steal_hint_ = SleepSink::kNowhere;
    for (const Victim& victim : victims_) {
      if (victim.worker != hinted) continue;
      ++probed;
      // We were woken for work there: take it even if it is the deque's only task.
      const bool take_lone = std::exchange(take_lone_, true);
      Job* job = steal_from(victim, &lost, source, more_left);
      take_lone_ = take_lone;
      if (job) return job;
      break;
    }
  }
  if (far_begin_ < n && ++steal_rounds_ % kFarProbeInterval == 0) {
    const Victim& far = victims_[far_begin_ + next_random() % (n - far_begin_)];
    ++probed;
    if (Job* job = steal_from(far, &lost, source, more_left)) return job;
  }
  for (int attempt = 0; attempt < 4; ++attempt) {
    lost = 0;
    for (const Victim& victim : victims_) {
      ++probed;
      if (Job* job = steal_from(victim, &lost, source, more_left)) return job;
    }
    if (lost == 0) break;
  }
  LANTERN_HOOK(*this, StealRoundFailedPayload{probed, lost});
  return nullptr;
}

Job* Worker::steal_from(const Victim& victim, std::uint64_t* lost_races, TaskSource* source, bool* more_left) {
  Worker& other = registry_->worker(victim.worker);
  found_at_ = victim.worker;
  Stolen<Job> stolen = DequeThief<Job>(other.deque).steal(take_lone_ ? nullptr : &lone_seen_[victim.worker]);
  // A join's marker (Observer::kJoinTasks, worker.hpp) is not a task: dropped, as if the
  // deque had been empty (the half below it was stolen before it: it is older).
  if (stolen.status == StealStatus::success && is_join_marker(stolen.value)) [[unlikely]]
    stolen.status = StealStatus::empty;
  if (stolen.status == StealStatus::success) {
    *source = TaskSource::stolen_deque;
    *more_left = other.deque.size() > 0;
    LANTERN_HOOK(*this, StealPayload{victim.worker, victim.distance, TaskSource::stolen_deque});
    return stolen.value;
  }
  if (stolen.status == StealStatus::lost_race) ++*lost_races;
  if (stolen.status == StealStatus::fresh) declined_from_ = victim.worker;
  if (Job* job = pop_lane(other.lane, victim.worker)) {
    *source = TaskSource::stolen_lane;
    *more_left = other.lane.size() > 0;
    LANTERN_HOOK(*this, StealPayload{victim.worker, victim.distance, TaskSource::stolen_lane});
    return job;
  }
  return nullptr;
}

// back_off: our search left a deque's only task to its owner (steal_from): probe no
// deque for a while (Sleep::kDeclineGapMinNs), still watching our latch, the lanes and
// our own IO.
void Worker::back_off(IdleState& idle, const Latch& latch, bool restart_spin) {
  const std::uint64_t until = sleep_->declined_work(idle, restart_spin);
  if (io_ && io_->in_flight() > 0) return;
  while (ticks_now() < until && !latch.probe() && !registry_->has_injected_work()) std::this_thread::yield();
}

bool Worker::declined_still_there() const noexcept {
  return declined_from_ != kNoVictim && registry_->worker(declined_from_).deque.size() > 0;
}

}  // namespace lantern::detail
