// SPDX-License-Identifier: Apache-2.0
// lanes.cpp - a worker takes a task from a lane (README.md beside this file).
#include "lantern/detail/hot.hpp"
#include "lantern/detail/registry.hpp"
#include "lantern/detail/worker.hpp"

namespace lantern::detail {

LANTERN_HOT Job* Worker::pop_lane(Lane& from, std::uint32_t lane_index) {
  if (from.size() == 0) return nullptr;
  std::uint64_t waited = 0;
  Job* job = from.pop(ticks_now(), &waited);
  if (job) LANTERN_HOOK(*this, LanePopPayload{lane_index, waited});
  (void)lane_index;
  return job;
}

}  // namespace lantern::detail
