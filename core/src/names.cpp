// SPDX-License-Identifier: Apache-2.0
// names.cpp - the names of states, reasons, sources and hooks, from lantern/vocabulary.hpp.
#include "lantern/observer.hpp"
#include "lantern/options.hpp"
#include "lantern/topology.hpp"

namespace lantern {

static_assert(kDistanceLevels == kStealDistanceCount, "the vocabulary names every topology distance level");

const char* strategy_name(SleepStrategy s) noexcept { return s == SleepStrategy::io_uring ? "io_uring" : "condvar"; }

std::optional<SleepStrategy> parse_strategy(std::string_view name) noexcept {
  for (SleepStrategy s : {SleepStrategy::condvar, SleepStrategy::io_uring}) {
    if (name == strategy_name(s)) return s;
  }
  return std::nullopt;
}

// The vocabulary's names are string literals, so their data() is NUL-terminated.
const char* state_name(WorkerState s) noexcept { return valid(s) ? name_of(s).data() : "unknown"; }
const char* reason_name(StateReason r) noexcept { return valid(r) ? name_of(r).data() : "unknown"; }
const char* source_name(TaskSource s) noexcept { return valid(s) ? name_of(s).data() : "unknown"; }
const char* event_name(EventId h) noexcept { return valid(h) ? name_of(h).data() : "unknown"; }

}  // namespace lantern
