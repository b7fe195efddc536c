// event_table.hpp - THE table of Lantern's events. Every consumer derives from it: the
// recorder (which level records what), the trace writer and reader (ids, payload
// encoding), the Chrome export (names, categories), the viewer's legend and the metric
// names. Nothing else in the project lists events.
//
// This header is part of the trace-format leaf library: it includes nothing from the
// rest of Lantern. The first entries mirror core's hooks one for one (same order, same
// names: lantern/observer.hpp's LANTERN_CORE_HOOKS); instrumentation static_asserts that.
#pragma once

#include <cstdint>
#include <string_view>

namespace lantern::trace {

// Recording levels, cumulative: each level records its own events and those below.
enum class Level : std::uint8_t { off = 0, states = 1, tasks = 2, full = 3 };

inline constexpr std::string_view kLevelNames[] = {"off", "states", "tasks", "full"};

// Units of a payload word, for display and export.
enum class Unit : std::uint8_t { none, id, worker, ticks, count, packed };

// X(name, id, level, a_name, a_unit, b_name, b_unit, description)
#define LANTERN_EVENT_TABLE(X)                                                                                   \
  X(state, 0, states, "from_to", packed, "reason", id, "a worker changed state (from << 8 | to)")              \
  X(task_begin, 1, tasks, "task", id, "source", id, "a worker started a task")                                  \
  X(task_end, 2, tasks, "task", id, "threw", count, "a worker finished a task")                                 \
  X(push, 3, full, "task", id, "queue", id, "a task was queued (low 32 bits: 0 own deque, n lane n-1; own deque: depth << 32, sampled)")                    \
  X(steal, 4, tasks, "victim", worker, "distance_source", packed, "a task was stolen from a victim")            \
  X(steal_round_failed, 5, full, "probed", count, "lost_races", count, "a full steal round found nothing")     \
  X(help, 6, tasks, "lane", worker, "head_age", ticks, "a worker helped a lane whose head waited too long")      \
  X(wake, 7, states, "waker_why", packed, "latency", ticks, "a worker woke up (a: waker | why << 32; why 0 work, 1 latch, 2 IO)")         \
  X(lane_pop, 8, full, "lane", worker, "ready_wait", ticks, "a task left a lane after waiting")                  \
  X(release, 9, tasks, "task", id, "released_by", id, "a task's last dependency completed (b: task or signal)") \
  X(task_label, 10, tasks, "task", id, "label", id, "a task named itself (b: label id, see the trace's labels)") \
  X(io_submit, 11, tasks, "op", id, "kind_fd", packed, "an asynchronous IO operation was submitted (b: kind | fd << 8)") \
  X(io_complete, 12, tasks, "op", id, "result", id, "an IO operation completed (b: bytes, fd or -errno)") \
  X(not_ready, 13, states, "tasks", count, "unused", none, "the pool's not-ready tasks, sampled by a worker (going idle, every 64th release)") \
  X(dropped, 14, off, "count", count, "unused", none, "events lost because the worker's ring was full")

enum class EventType : std::uint8_t {
#define LANTERN_X(name, id, level, an, au, bn, bu, text) name = id,
  LANTERN_EVENT_TABLE(LANTERN_X)
#undef LANTERN_X
};

inline constexpr int kEventTypeCount = 0
#define LANTERN_X(name, id, level, an, au, bn, bu, text) +1
    LANTERN_EVENT_TABLE(LANTERN_X)
#undef LANTERN_X
    ;

struct EventInfo {
  EventType type;
  std::string_view name;
  Level level;  // lowest level that records it (off: always, e.g. the drop marker)
  std::string_view a_name;
  Unit a_unit;
  std::string_view b_name;
  Unit b_unit;
  std::string_view description;
};

inline constexpr EventInfo kEventInfo[kEventTypeCount] = {
#define LANTERN_X(name, id, level, an, au, bn, bu, text) \
  {EventType::name, #name, Level::level, an, Unit::au, bn, Unit::bu, text},
    LANTERN_EVENT_TABLE(LANTERN_X)
#undef LANTERN_X
};

// info: the table row of a type (types are dense from 0).
constexpr const EventInfo& info(EventType t) noexcept { return kEventInfo[static_cast<int>(t)]; }
constexpr bool valid_type(std::uint32_t raw) noexcept { return raw < static_cast<std::uint32_t>(kEventTypeCount); }

// The worker states and state-change reasons, by number (as core numbers them).
inline constexpr std::string_view kStateNames[] = {"active", "idle", "sleepy", "sleeping"};
inline constexpr int kStateCount = 4;
inline constexpr std::string_view kReasonNames[] = {"started",      "found_work",    "out_of_work", "searched_enough",
                                                    "fell_asleep",  "new_work_seen", "woken",       "stopping"};
inline constexpr std::string_view kSourceNames[] = {"own_deque", "own_lane", "stolen_deque",
                                                    "stolen_lane", "help",   "inline_call"};
inline constexpr std::string_view kDistanceNames[] = {"smt", "l2", "llc", "numa", "remote"};
inline constexpr int kDistanceCount = 5;
// io_submit's kind (b & 0xFF), as core numbers its IoKind.
inline constexpr std::string_view kIoKindNames[] = {"read", "write", "accept", "connect", "timeout"};

// Event is one recorded event in memory: 32 bytes, what a worker's ring holds.
struct Event {
  std::uint64_t ticks;  // clock ticks (see the trace header's calibration)
  std::uint32_t worker;
  EventType type;
  std::uint8_t reserved[3] = {0, 0, 0};
  std::uint64_t a;
  std::uint64_t b;
  friend bool operator==(const Event&, const Event&) = default;
};
static_assert(sizeof(Event) == 32);

}  // namespace lantern::trace
