// SPDX-License-Identifier: Apache-2.0
// helping.cpp - the help check (README.md beside this file).
#include <algorithm>

#include "lantern/detail/registry.hpp"
#include "lantern/detail/worker.hpp"

namespace lantern::detail {

// try_help: the fairness rule (README.md, "The helping rule"). One lane per call, round
// robin over all lanes including our own: if its head has waited far longer than our own
// lane's tasks usually wait, take it before any local work.
Job* Worker::try_help(TaskSource* source) {
  if (!registry_->options().helping) return nullptr;
  const std::uint32_t n = registry_->worker_count();
  const std::uint32_t target = help_cursor_;
  help_cursor_ = help_cursor_ + 1 == n ? 0 : help_cursor_ + 1;
  const std::uint64_t head = registry_->mirror(target).head_ticks.load(std::memory_order_relaxed);
  if (head == 0) return nullptr;
  const std::uint64_t now = ticks_now();
  if (now <= head) return nullptr;
  const std::uint64_t age = now - head;
  const std::uint64_t own_average = registry_->mirror(index).average_wait_ticks.load(std::memory_order_relaxed);
  // A remote lane is compared with our own lane's usual wait (kHelpBias); our own lane
  // only with the minimum, since comparing a lane with its own average would raise the
  // bar exactly as fast as its tasks wait longer.
  const std::uint64_t threshold = target == index ? registry_->help_min_wait_ticks()
                                                  : std::max(registry_->help_min_wait_ticks(), own_average * kHelpBias);
  if (age < threshold) return nullptr;
  Job* job = pop_lane(registry_->worker(target).lane, target);
  if (!job) return nullptr;  // someone else took it: the mirror was stale, which is fine
  LANTERN_HOOK(*this, HelpPayload{target, age});
  found_at_ = target;
  *source = target == index ? TaskSource::own_lane : TaskSource::help;
  return job;
}

void Worker::help_from_join() {
  join_help_countdown_ = kJoinHelpInterval;
  // Every lane once (a lane task due on any of them starts within one interval of joins);
  // try_help keeps its own round robin, so this is n ordinary help checks.
  const std::uint32_t n = registry_->worker_count();
  for (std::uint32_t i = 0; i < n; ++i) {
    TaskSource source;
    if (Job* job = try_help(&source)) {
      execute(job, source);
      return;
    }
  }
}

}  // namespace lantern::detail
