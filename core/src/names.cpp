// names.cpp - the names of states, reasons, sources and hooks, from their X-macro tables.
#include "lantern/observer.hpp"
#include "lantern/options.hpp"

namespace lantern {

const char* strategy_name(SleepStrategy s) noexcept {
  return s == SleepStrategy::io_uring ? "io_uring" : "condvar";
}

std::optional<SleepStrategy> parse_strategy(std::string_view name) noexcept {
  for (SleepStrategy s : {SleepStrategy::condvar, SleepStrategy::io_uring}) {
    if (name == strategy_name(s)) return s;
  }
  return std::nullopt;
}

const char* state_name(WorkerState s) noexcept {
  switch (s) {
#define LANTERN_X(name) \
  case WorkerState::name: return #name;
    LANTERN_WORKER_STATES(LANTERN_X)
#undef LANTERN_X
  }
  return "unknown";
}

const char* reason_name(StateReason r) noexcept {
  switch (r) {
#define LANTERN_X(name, text) \
  case StateReason::name: return #name;
    LANTERN_STATE_REASONS(LANTERN_X)
#undef LANTERN_X
  }
  return "unknown";
}

const char* source_name(TaskSource s) noexcept {
  switch (s) {
    case TaskSource::own_deque: return "own_deque";
    case TaskSource::own_lane: return "own_lane";
    case TaskSource::stolen_deque: return "stolen_deque";
    case TaskSource::stolen_lane: return "stolen_lane";
    case TaskSource::help: return "help";
    case TaskSource::inline_call: return "inline_call";
  }
  return "unknown";
}

const char* hook_name(Hook h) noexcept {
  switch (h) {
#define LANTERN_X(name, a, b) \
  case Hook::name: return #name;
    LANTERN_CORE_HOOKS(LANTERN_X)
#undef LANTERN_X
  }
  return "unknown";
}

}  // namespace lantern
