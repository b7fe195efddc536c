// SPDX-License-Identifier: Apache-2.0
// vocabulary.hpp - THE one list of what Lantern's events mean: event ids, worker states,
// state-change reasons, task sources, steal distances, IO kinds, wake causes and drop
// reasons, each declared once with its name, and the typed payload codecs that are the
// only code allowed to pack or unpack an event's two payload words.
//
// It includes nothing but the standard library and depends on no other part of Lantern,
// so core (the producer: every hook of lantern/observer.hpp reports an EventId) and the trace format
// (the consumer's side: lantern/trace/event_table.hpp) both include it without either
// depending on the other. CMake target: lantern::vocabulary (header only).
//
// Rules (checked by tests/vocabulary/vocabulary_test.cpp):
//   - event ids are dense from 0 (the trace format's tag holds ids 0-14 itself and
//     escapes larger ones to a varint: format version 5);
//   - every name in every table is unique within its table;
//   - every codec round-trips: decode(encode(p)) == p for every valid value;
//   - a consumer never shifts or masks a payload word itself: it calls P::decode(a, b).
// Adding an event: append a row to LANTERN_EVENTS (next id), add its payload struct
// below with kEvent, encode and decode, and a row to the test. A new drop reason or wake
// cause is one row of its table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace lantern {

// --- worker states (core/sleep/README.md) ---
// X(name, meaning)
#define LANTERN_WORKER_STATES(X)                                              \
  X(active, "running a task")                                                 \
  X(idle, "searching for work (own deque and lane, steals, lanes of others)") \
  X(sleepy, "announced it is about to sleep; searches once more")             \
  X(sleeping, "blocked (futex/condvar, or io_uring) until woken")

enum class WorkerState : std::uint8_t {
#define LANTERN_X(name, text) name,
  LANTERN_WORKER_STATES(LANTERN_X)
#undef LANTERN_X
};
inline constexpr std::string_view kWorkerStateNames[] = {
#define LANTERN_X(name, text) #name,
    LANTERN_WORKER_STATES(LANTERN_X)
#undef LANTERN_X
};
inline constexpr int kWorkerStateCount = static_cast<int>(std::size(kWorkerStateNames));

// --- why a worker changed state ---
#define LANTERN_STATE_REASONS(X)                                                     \
  X(started, "the worker thread started")                                            \
  X(found_work, "found a task")                                                      \
  X(out_of_work, "no task in its own queues or any victim's")                        \
  X(searched_enough, "searched for several rounds without success: announces sleep") \
  X(fell_asleep, "blocked until woken")                                              \
  X(new_work_seen, "work was posted while it was sleepy: searches again")            \
  X(woken, "woken by another thread")                                                \
  X(stopping, "the scheduler is shutting down")

enum class StateReason : std::uint8_t {
#define LANTERN_X(name, text) name,
  LANTERN_STATE_REASONS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr std::string_view kStateReasonNames[] = {
#define LANTERN_X(name, text) #name,
    LANTERN_STATE_REASONS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr int kStateReasonCount = static_cast<int>(std::size(kStateReasonNames));

// --- where a task was found (task_begin's source, steal's source) ---
#define LANTERN_TASK_SOURCES(X)                                  \
  X(own_deque, "the worker's own deque (fork-join work)")        \
  X(own_lane, "the worker's own lane (submitted or woken work)") \
  X(stolen_deque, "another worker's deque")                      \
  X(stolen_lane, "another worker's lane")                        \
  X(help, "another worker's lane whose head waited too long")    \
  X(inline_call, "run inline by its caller")

enum class TaskSource : std::uint8_t {
#define LANTERN_X(name, text) name,
  LANTERN_TASK_SOURCES(LANTERN_X)
#undef LANTERN_X
};
inline constexpr std::string_view kTaskSourceNames[] = {
#define LANTERN_X(name, text) #name,
    LANTERN_TASK_SOURCES(LANTERN_X)
#undef LANTERN_X
};
inline constexpr int kTaskSourceCount = static_cast<int>(std::size(kTaskSourceNames));
// from_lane: the task waited in a lane (its lane_pop just before says how long).
constexpr bool from_lane(TaskSource s) noexcept {
  return s == TaskSource::own_lane || s == TaskSource::stolen_lane || s == TaskSource::help;
}
constexpr bool stolen(TaskSource s) noexcept { return s == TaskSource::stolen_deque || s == TaskSource::stolen_lane; }

// --- topology distance between a thief and its victim (lantern/topology.hpp's levels) ---
#define LANTERN_STEAL_DISTANCES(X)      \
  X(smt, "the same core (SMT sibling)") \
  X(l2, "the same L2 cache")            \
  X(llc, "the same last-level cache")   \
  X(numa, "the same NUMA node")         \
  X(remote, "another NUMA node")

enum class StealDistance : std::uint8_t {
#define LANTERN_X(name, text) name,
  LANTERN_STEAL_DISTANCES(LANTERN_X)
#undef LANTERN_X
};
inline constexpr std::string_view kStealDistanceNames[] = {
#define LANTERN_X(name, text) #name,
    LANTERN_STEAL_DISTANCES(LANTERN_X)
#undef LANTERN_X
};
inline constexpr int kStealDistanceCount = static_cast<int>(std::size(kStealDistanceNames));
// distance_between: THE rule for how far apart two logical CPUs are, for anything with
// the integer ids core, l2, llc and numa_node (equal ids: shared hardware): core's
// Topology::distance and the viewer's steal matrix (on a trace header's CPU rows) both
// call it.
template <class Cpu>
constexpr StealDistance distance_between(const Cpu& x, const Cpu& y) noexcept {
  if (x.core == y.core) return StealDistance::smt;
  if (x.l2 == y.l2) return StealDistance::l2;
  if (x.llc == y.llc) return StealDistance::llc;
  if (x.numa_node == y.numa_node) return StealDistance::numa;
  return StealDistance::remote;
}

// --- asynchronous IO operations (lantern/io.hpp) ---
#define LANTERN_IO_KINDS(X) \
  X(read, "read")           \
  X(write, "write or send") \
  X(accept, "accept")       \
  X(connect, "connect")     \
  X(timeout, "timer")

enum class IoKind : std::uint8_t {
#define LANTERN_X(name, text) name,
  LANTERN_IO_KINDS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr std::string_view kIoKindNames[] = {
#define LANTERN_X(name, text) #name,
    LANTERN_IO_KINDS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr int kIoKindCount = static_cast<int>(std::size(kIoKindNames));

// --- why a sleeping worker woke (the wake event's cause) ---
// An IO wake has no waker (the kernel completed an operation) and so no wake latency:
// every statistic of wake latency leaves IO wakes out (lantern/analysis, the Recorder's
// histogram, lantern_wake_latency_seconds), and says so.
#define LANTERN_WAKE_CAUSES(X)                        \
  X(work, "work was posted for it")                   \
  X(latch, "a latch or join it waited for completed") \
  X(io, "an IO completion arrived (no waker, no latency)")

enum class WakeCause : std::uint8_t {
#define LANTERN_X(name, text) name,
  LANTERN_WAKE_CAUSES(LANTERN_X)
#undef LANTERN_X
};
using WakeWhy = WakeCause;  // core's older name
inline constexpr std::string_view kWakeCauseNames[] = {
#define LANTERN_X(name, text) #name,
    LANTERN_WAKE_CAUSES(LANTERN_X)
#undef LANTERN_X
};
inline constexpr int kWakeCauseCount = static_cast<int>(std::size(kWakeCauseNames));
// has_latency: whether a wake of this cause was timed from a waker's call.
constexpr bool has_latency(WakeCause c) noexcept { return c != WakeCause::io; }
// kOutsideWaker: the waker of a wake that came from a thread outside the pool (or none).
inline constexpr std::uint32_t kOutsideWaker = 0xffff'ffffu;

// --- why events were lost (the dropped event's reason) ---
#define LANTERN_DROP_REASONS(X)                                                                                  \
  X(ring_full, "the worker's event ring was full (the consumer fell behind)")                                    \
  X(slow_viewer, "dropped by the live stream for this one viewer, which read too slowly; the app recorded them") \
  X(before_attach,                                                                                               \
    "streamed before this viewer connected, after the start of the run the stream keeps; the app recorded them")

enum class DropReason : std::uint8_t {
#define LANTERN_X(name, text) name,
  LANTERN_DROP_REASONS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr std::string_view kDropReasonNames[] = {
#define LANTERN_X(name, text) #name,
    LANTERN_DROP_REASONS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr int kDropReasonCount = static_cast<int>(std::size(kDropReasonNames));

// --- how a task came to be (the spawn event's kind): the task graph's spawn edges ---
// The parent is implicit: the task the reporting worker is running when it reports the
// spawn (none: the worker's loop, or a thread outside the pool, reports nothing).
#define LANTERN_SPAWN_KINDS(X)                                                                             \
  X(join, "join's second half (every join at level graph; at lower levels a stolen half shows as a task)") \
  X(task_group, "TaskGroup::spawn or run: the group's wait joins it")                                      \
  X(detached, "spawn(): a detached task nothing waits for")                                                \
  X(submit, "submit(): a Future's task")                                                                   \
  X(spawn_after,                                                                                           \
    "spawn_handle(), spawn_after() or a TaskGraph node: runs once its dependencies complete (see "         \
    "release)")

enum class SpawnKind : std::uint8_t {
#define LANTERN_X(name, text) name,
  LANTERN_SPAWN_KINDS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr std::string_view kSpawnKindNames[] = {
#define LANTERN_X(name, text) #name,
    LANTERN_SPAWN_KINDS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr int kSpawnKindCount = static_cast<int>(std::size(kSpawnKindNames));

// --- what a task waits for (wait_begin / wait_end): the task graph's join edges ---
// `none` is a worker's own loop (no task waits): core's deadlock report names it, no
// event carries it.
#define LANTERN_WAIT_KINDS(X)                                                        \
  X(none, "worker loop")                                                             \
  X(join, "join: its second half, which a thief took (a: that task's id)")           \
  X(task_group, "TaskGroup::wait: every task spawned into the group (a: the group)") \
  X(future, "Future::get: the submitted task (a: its id)")                           \
  X(task_handle, "TaskHandle::wait: the handle's task (a: its id)")                  \
  X(signal, "Signal::wait: the signal's set (a: the signal's id)")                   \
  X(graph, "TaskGraph::run: every node of the graph (a: the graph)")

enum class WaitKind : std::uint8_t {
#define LANTERN_X(name, text) name,
  LANTERN_WAIT_KINDS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr std::string_view kWaitKindNames[] = {
#define LANTERN_X(name, text) #name,
    LANTERN_WAIT_KINDS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr int kWaitKindCount = static_cast<int>(std::size(kWaitKindNames));

// --- recording levels, cumulative: each records its own events and those below ---
// graph: everything full records, plus every join's fork and its second half as a task,
// which is what rebuilds fork-join code's whole task graph (lantern::analysis's
// scalability figures); at lower levels a join shows only once its half is stolen.
// It costs per join what a task costs at tasks (instrumentation/README.md has figures).
enum class RecordLevel : std::uint8_t { off = 0, states = 1, tasks = 2, full = 3, graph = 4 };
inline constexpr std::string_view kRecordLevelNames[] = {"off", "states", "tasks", "full", "graph"};

// Units of a payload field, for display and export.
enum class PayloadUnit : std::uint8_t { none, id, worker, ticks, count, packed };

// --- the events ---
// X(name, id, level, a_name, a_unit, b_name, b_unit, description). The payload struct
// <Name>Payload below is the only code that packs or unpacks a and b.
#define LANTERN_EVENTS(X)                                                                                              \
  X(state, 0, states, "from_to", packed, "reason", id, "a worker changed state")                                       \
  X(task_begin, 1, tasks, "task", id, "source", id, "a worker started a task")                                         \
  X(task_end, 2, tasks, "task", id, "threw_off_cpu", packed,                                                           \
    "a worker finished a task (b: threw, and for a long task the time its thread waited for a CPU)")                   \
  X(push, 3, full, "task", id, "queue_depth", packed,                                                                  \
    "a task was queued (own deque: sampled, with the deque's depth; a lane: always)")                                  \
  X(steal, 4, tasks, "victim", worker, "distance_source", packed, "a task was stolen from a victim")                   \
  X(steal_round_failed, 5, full, "probed", count, "lost_races", count,                                                 \
    "a full steal round took nothing (every queue empty, races lost, or a deque's only task left to its owner)")       \
  X(help, 6, tasks, "lane", worker, "head_age", ticks, "a worker helped a lane whose head waited too long")            \
  X(wake, 7, states, "waker_cause", packed, "latency", ticks, "a worker woke up")                                      \
  X(lane_pop, 8, full, "lane", worker, "ready_wait", ticks, "a task left a lane after waiting")                        \
  X(release, 9, tasks, "task", id, "released_by", id, "a task's last dependency completed (b: task, signal or IO op)") \
  X(task_label, 10, tasks, "task", id, "label", id, "a task named itself (b: label id, see the trace's labels)")       \
  X(io_submit, 11, tasks, "op", id, "kind_fd", packed, "an asynchronous IO operation was submitted")                   \
  X(io_complete, 12, tasks, "op", id, "result", id, "an IO operation completed (b: bytes, fd or -errno)")              \
  X(not_ready, 13, states, "tasks", count, "unused", none,                                                             \
    "the pool's not-ready tasks, sampled by a worker (going idle, every 64th release)")                                \
  X(dropped, 14, off, "count", count, "reason", id, "events lost here (b: the drop reason)")                           \
  X(deadlock, 15, states, "blocked_workers", count, "unfinished_tasks", count,                                         \
    "no worker can progress: each is blocked in a wait or idle, nothing is ready")                                     \
  X(spawn, 16, tasks, "task", id, "kind_group", packed,                                                                \
    "the running task made a task (b: the spawn kind and the group it joins; join's halves at level graph)")           \
  X(wait_begin, 17, tasks, "on", id, "kind", id, "the running task starts waiting (b: the wait kind; a: what for)")    \
  X(wait_end, 18, tasks, "on", id, "kind", id, "the running task's wait is over: it continues")                        \
  X(signal_set, 19, tasks, "signal", id, "unused", none, "the running task set a signal (its waiters continue)")       \
  X(satisfy, 20, tasks, "task", id, "satisfied_by", id,                                                                \
    "one of a not-ready task's dependencies completed (b: task or signal; the last one is a release)")

enum class EventId : std::uint8_t {
#define LANTERN_X(name, id, level, an, au, bn, bu, text) name = id,
  LANTERN_EVENTS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr int kEventCount = 0
#define LANTERN_X(name, id, level, an, au, bn, bu, text) +1
    LANTERN_EVENTS(LANTERN_X)
#undef LANTERN_X
    ;

struct EventInfo {
  EventId type;  // its id
  std::string_view name;
  RecordLevel level;  // lowest level that records it (off: always, e.g. the drop marker)
  std::string_view a_name;
  PayloadUnit a_unit;
  std::string_view b_name;
  PayloadUnit b_unit;
  std::string_view description;
};
inline constexpr EventInfo kEventInfo[kEventCount] = {
#define LANTERN_X(name, id, level, an, au, bn, bu, text) \
  {EventId::name, #name, RecordLevel::level, an, PayloadUnit::au, bn, PayloadUnit::bu, text},
    LANTERN_EVENTS(LANTERN_X)
#undef LANTERN_X
};
constexpr bool valid_event(std::uint32_t raw) noexcept { return raw < static_cast<std::uint32_t>(kEventCount); }
constexpr const EventInfo& event_info(EventId e) noexcept { return kEventInfo[static_cast<int>(e)]; }

// name_of: a table's name for a value, or "" when the value is outside the table
// (damaged data); valid: whether it is inside.
template <std::size_t N>
constexpr std::string_view table_name(const std::string_view (&names)[N], std::uint64_t v) noexcept {
  return v < N ? names[v] : std::string_view{};
}
constexpr std::string_view name_of(EventId v) noexcept {
  return valid_event(static_cast<std::uint32_t>(v)) ? kEventInfo[static_cast<int>(v)].name : std::string_view{};
}
constexpr std::string_view name_of(WorkerState v) noexcept {
  return table_name(kWorkerStateNames, static_cast<std::uint64_t>(v));
}
constexpr std::string_view name_of(StateReason v) noexcept {
  return table_name(kStateReasonNames, static_cast<std::uint64_t>(v));
}
constexpr std::string_view name_of(TaskSource v) noexcept {
  return table_name(kTaskSourceNames, static_cast<std::uint64_t>(v));
}
constexpr std::string_view name_of(StealDistance v) noexcept {
  return table_name(kStealDistanceNames, static_cast<std::uint64_t>(v));
}
constexpr std::string_view name_of(IoKind v) noexcept {
  return table_name(kIoKindNames, static_cast<std::uint64_t>(v));
}
constexpr std::string_view name_of(WakeCause v) noexcept {
  return table_name(kWakeCauseNames, static_cast<std::uint64_t>(v));
}
constexpr std::string_view name_of(DropReason v) noexcept {
  return table_name(kDropReasonNames, static_cast<std::uint64_t>(v));
}
constexpr std::string_view name_of(SpawnKind v) noexcept {
  return table_name(kSpawnKindNames, static_cast<std::uint64_t>(v));
}
constexpr std::string_view name_of(WaitKind v) noexcept {
  return table_name(kWaitKindNames, static_cast<std::uint64_t>(v));
}
template <class E>
constexpr bool valid(E v) noexcept {
  return !name_of(v).empty();
}

// ============================ payload codecs ============================
// PayloadWords: an event's two payload words as they travel (hook, ring, file).
struct PayloadWords {
  std::uint64_t a = 0, b = 0;
  friend constexpr bool operator==(const PayloadWords&, const PayloadWords&) = default;
};

namespace vocabulary_detail {
// Narrowing that keeps damage visible: a value too large for the field becomes the
// field's largest value (outside every table), never a wrapped-around valid one.
template <class T>
constexpr T saturate(std::uint64_t v) noexcept {
  constexpr std::uint64_t max = static_cast<T>(~T{0});
  return static_cast<T>(v > max ? max : v);
}
template <class E>
constexpr E enum_of(std::uint64_t v) noexcept {
  return static_cast<E>(saturate<std::uint8_t>(v));
}
}  // namespace vocabulary_detail

// state: a = from << 8 | to, b = reason.
struct StatePayload {
  static constexpr EventId kEvent = EventId::state;
  WorkerState from{};
  WorkerState to{};
  StateReason reason{};
  constexpr PayloadWords encode() const noexcept {
    return {static_cast<std::uint64_t>(from) << 8 | static_cast<std::uint64_t>(to), static_cast<std::uint64_t>(reason)};
  }
  static constexpr StatePayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    using namespace vocabulary_detail;
    // Bits above the from byte make `from` invalid rather than being ignored.
    return {enum_of<WorkerState>(a >> 8), static_cast<WorkerState>(a & 0xFF), enum_of<StateReason>(b)};
  }
  friend constexpr bool operator==(const StatePayload&, const StatePayload&) = default;
};

// task_begin: a = task id, b = where it was found.
struct TaskBeginPayload {
  static constexpr EventId kEvent = EventId::task_begin;
  std::uint64_t task = 0;
  TaskSource source{};
  constexpr PayloadWords encode() const noexcept { return {task, static_cast<std::uint64_t>(source)}; }
  static constexpr TaskBeginPayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    return {a, vocabulary_detail::enum_of<TaskSource>(b)};
  }
  friend constexpr bool operator==(const TaskBeginPayload&, const TaskBeginPayload&) = default;
};

// task_end: a = task id, b = threw | off_cpu_ticks << 1: bit 0 is 1 if the task threw; the
// bits above are the ticks its thread spent runnable but not running (preempted: waiting
// in the kernel's run queue for a CPU) while the task ran. The recorder measures that for
// tasks of 1 ms or more only (0: none, or not measured); instrumentation/README.md says
// how. A trace whose task_end b is 0 or 1 reads as before.
struct TaskEndPayload {
  static constexpr EventId kEvent = EventId::task_end;
  std::uint64_t task = 0;
  bool threw = false;
  std::uint64_t off_cpu_ticks = 0;  // below 2^63
  constexpr PayloadWords encode() const noexcept {
    return {task, (threw ? 1u : 0u) | (off_cpu_ticks & (~std::uint64_t{0} >> 1)) << 1};
  }
  static constexpr TaskEndPayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    return {a, (b & 1) != 0, b >> 1};
  }
  friend constexpr bool operator==(const TaskEndPayload&, const TaskEndPayload&) = default;
};

// push: a = task id; b's low 32 bits: 0 for the pusher's own deque, lane + 1 for a lane;
// b's high 32 bits: the own deque's depth after the push (sampled pushes only).
struct PushPayload {
  static constexpr EventId kEvent = EventId::push;
  std::uint64_t task = 0;
  bool to_lane = false;
  std::uint32_t lane = 0;   // to_lane: which lane
  std::uint32_t depth = 0;  // !to_lane: the deque's depth after the push
  static constexpr PushPayload own_deque(std::uint64_t task, std::uint64_t depth) noexcept {
    return {task, false, 0, vocabulary_detail::saturate<std::uint32_t>(depth)};
  }
  static constexpr PushPayload into_lane(std::uint64_t task, std::uint32_t lane) noexcept {
    return {task, true, lane, 0};
  }
  constexpr PayloadWords encode() const noexcept {
    return {task, to_lane ? static_cast<std::uint64_t>(lane) + 1 : static_cast<std::uint64_t>(depth) << 32};
  }
  static constexpr PushPayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    const std::uint64_t queue = b & 0xFFFF'FFFFu;
    if (queue != 0) return {a, true, static_cast<std::uint32_t>(queue - 1), static_cast<std::uint32_t>(b >> 32)};
    return {a, false, 0, static_cast<std::uint32_t>(b >> 32)};
  }
  friend constexpr bool operator==(const PushPayload&, const PushPayload&) = default;
};

// steal: a = victim worker, b = distance | source << 8.
struct StealPayload {
  static constexpr EventId kEvent = EventId::steal;
  std::uint32_t victim = 0;
  StealDistance distance{};
  TaskSource source{};
  constexpr PayloadWords encode() const noexcept {
    return {victim, static_cast<std::uint64_t>(distance) | static_cast<std::uint64_t>(source) << 8};
  }
  static constexpr StealPayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    using namespace vocabulary_detail;
    return {saturate<std::uint32_t>(a), static_cast<StealDistance>(b & 0xFF), enum_of<TaskSource>(b >> 8)};
  }
  friend constexpr bool operator==(const StealPayload&, const StealPayload&) = default;
};

// steal_round_failed: a = victims probed, b = races lost.
struct StealRoundFailedPayload {
  static constexpr EventId kEvent = EventId::steal_round_failed;
  std::uint64_t probed = 0, lost_races = 0;
  constexpr PayloadWords encode() const noexcept { return {probed, lost_races}; }
  static constexpr StealRoundFailedPayload decode(std::uint64_t a, std::uint64_t b) noexcept { return {a, b}; }
  friend constexpr bool operator==(const StealRoundFailedPayload&, const StealRoundFailedPayload&) = default;
};

// help: a = the helped lane, b = its head's age in ticks.
struct HelpPayload {
  static constexpr EventId kEvent = EventId::help;
  std::uint32_t lane = 0;
  std::uint64_t head_age_ticks = 0;
  constexpr PayloadWords encode() const noexcept { return {lane, head_age_ticks}; }
  static constexpr HelpPayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    return {vocabulary_detail::saturate<std::uint32_t>(a), b};
  }
  friend constexpr bool operator==(const HelpPayload&, const HelpPayload&) = default;
};

// wake: reported by the woken worker; a = waker | cause << 32 (waker kOutsideWaker: a
// thread outside the pool, or none), b = latency in ticks from the wake call (0 for IO).
struct WakePayload {
  static constexpr EventId kEvent = EventId::wake;
  std::uint32_t waker = kOutsideWaker;
  WakeCause why{};
  std::uint64_t latency_ticks = 0;
  constexpr PayloadWords encode() const noexcept {
    return {static_cast<std::uint64_t>(waker) | static_cast<std::uint64_t>(why) << 32, latency_ticks};
  }
  static constexpr WakePayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    return {static_cast<std::uint32_t>(a & 0xFFFF'FFFFu), vocabulary_detail::enum_of<WakeCause>(a >> 32), b};
  }
  constexpr bool from_outside() const noexcept { return waker == kOutsideWaker; }
  friend constexpr bool operator==(const WakePayload&, const WakePayload&) = default;
};

// lane_pop: a = the lane, b = how long the task waited in it, in ticks.
struct LanePopPayload {
  static constexpr EventId kEvent = EventId::lane_pop;
  std::uint32_t lane = 0;
  std::uint64_t wait_ticks = 0;
  constexpr PayloadWords encode() const noexcept { return {lane, wait_ticks}; }
  static constexpr LanePopPayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    return {vocabulary_detail::saturate<std::uint32_t>(a), b};
  }
  friend constexpr bool operator==(const LanePopPayload&, const LanePopPayload&) = default;
};

// release: a = the task made ready, b = what completed its last dependency (a task id,
// a signal id or an IO operation id; core/dependencies/README.md).
struct ReleasePayload {
  static constexpr EventId kEvent = EventId::release;
  std::uint64_t released = 0, releaser = 0;
  constexpr PayloadWords encode() const noexcept { return {released, releaser}; }
  static constexpr ReleasePayload decode(std::uint64_t a, std::uint64_t b) noexcept { return {a, b}; }
  friend constexpr bool operator==(const ReleasePayload&, const ReleasePayload&) = default;
};

// task_label: a = task id, b = label id (lantern/label.hpp).
struct TaskLabelPayload {
  static constexpr EventId kEvent = EventId::task_label;
  std::uint64_t task = 0;
  std::uint32_t label = 0;
  constexpr PayloadWords encode() const noexcept { return {task, label}; }
  static constexpr TaskLabelPayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    return {a, vocabulary_detail::saturate<std::uint32_t>(b)};
  }
  friend constexpr bool operator==(const TaskLabelPayload&, const TaskLabelPayload&) = default;
};

// io_submit: a = operation id, b = kind | fd << 8 (fd sign-extended: -1 is "none").
struct IoSubmitPayload {
  static constexpr EventId kEvent = EventId::io_submit;
  std::uint64_t op = 0;
  IoKind kind{};
  std::int64_t fd = -1;
  constexpr PayloadWords encode() const noexcept {
    return {op, static_cast<std::uint64_t>(kind) | static_cast<std::uint64_t>(fd) << 8};
  }
  static constexpr IoSubmitPayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    return {a, static_cast<IoKind>(b & 0xFF), static_cast<std::int64_t>(b) >> 8};
  }
  friend constexpr bool operator==(const IoSubmitPayload&, const IoSubmitPayload&) = default;
};

// io_complete: a = operation id, b = the result (bytes, an fd, or -errno).
struct IoCompletePayload {
  static constexpr EventId kEvent = EventId::io_complete;
  std::uint64_t op = 0;
  std::int64_t result = 0;
  constexpr PayloadWords encode() const noexcept { return {op, static_cast<std::uint64_t>(result)}; }
  static constexpr IoCompletePayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    return {a, static_cast<std::int64_t>(b)};
  }
  constexpr bool failed() const noexcept { return result < 0; }
  friend constexpr bool operator==(const IoCompletePayload&, const IoCompletePayload&) = default;
};

// not_ready: a = the pool's not-ready tasks (a sample).
struct NotReadyPayload {
  static constexpr EventId kEvent = EventId::not_ready;
  std::uint64_t tasks = 0;
  constexpr PayloadWords encode() const noexcept { return {tasks, 0}; }
  static constexpr NotReadyPayload decode(std::uint64_t a, std::uint64_t) noexcept { return {a}; }
  friend constexpr bool operator==(const NotReadyPayload&, const NotReadyPayload&) = default;
};

// dropped: a = events lost, b = why (DropReason; 0 ring_full, what older traces carry).
struct DroppedPayload {
  static constexpr EventId kEvent = EventId::dropped;
  std::uint64_t count = 0;
  DropReason reason = DropReason::ring_full;
  constexpr PayloadWords encode() const noexcept { return {count, static_cast<std::uint64_t>(reason)}; }
  static constexpr DroppedPayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    return {a, vocabulary_detail::enum_of<DropReason>(b)};
  }
  friend constexpr bool operator==(const DroppedPayload&, const DroppedPayload&) = default;
};

// deadlock: no worker can progress (each is blocked in a wait or idle, some in a wait, and
// nothing is ready); a = workers blocked
// in waits, b = tasks not finished.
struct DeadlockPayload {
  static constexpr EventId kEvent = EventId::deadlock;
  std::uint64_t blocked_workers = 0, unfinished_tasks = 0;
  constexpr PayloadWords encode() const noexcept { return {blocked_workers, unfinished_tasks}; }
  static constexpr DeadlockPayload decode(std::uint64_t a, std::uint64_t b) noexcept { return {a, b}; }
  friend constexpr bool operator==(const DeadlockPayload&, const DeadlockPayload&) = default;
};

// spawn: a = the new task's id, b = kind | group << 8: the id of what the parent will
// wait on to join it (a TaskGroup's id for task_group, a TaskGraph's for its nodes; 0
// for the other kinds, whose wait names the task itself). Ids are addresses, below 2^56
// on every supported platform.
struct SpawnPayload {
  static constexpr EventId kEvent = EventId::spawn;
  std::uint64_t task = 0;
  SpawnKind kind{};
  std::uint64_t group = 0;  // below 2^56
  constexpr PayloadWords encode() const noexcept {
    return {task, static_cast<std::uint64_t>(kind) | (group & (~std::uint64_t{0} >> 8)) << 8};
  }
  static constexpr SpawnPayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    return {a, static_cast<SpawnKind>(b & 0xFF), b >> 8};
  }
  friend constexpr bool operator==(const SpawnPayload&, const SpawnPayload&) = default;
};

// wait_begin / wait_end: a = what the running task waits on (see WaitKind's table), b =
// the wait kind. Every wait reports both, also one that finds its work done and does not
// block: the pair marks where the task's own time stops and resumes (what the worker runs
// in between is other tasks' time, or idle), and wait_end is where the joined tasks'
// edges enter the task.
struct WaitBeginPayload {
  static constexpr EventId kEvent = EventId::wait_begin;
  std::uint64_t on = 0;
  WaitKind kind{};
  constexpr PayloadWords encode() const noexcept { return {on, static_cast<std::uint64_t>(kind)}; }
  static constexpr WaitBeginPayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    return {a, vocabulary_detail::enum_of<WaitKind>(b)};
  }
  friend constexpr bool operator==(const WaitBeginPayload&, const WaitBeginPayload&) = default;
};
struct WaitEndPayload {
  static constexpr EventId kEvent = EventId::wait_end;
  std::uint64_t on = 0;
  WaitKind kind{};
  constexpr PayloadWords encode() const noexcept { return {on, static_cast<std::uint64_t>(kind)}; }
  static constexpr WaitEndPayload decode(std::uint64_t a, std::uint64_t b) noexcept {
    return {a, vocabulary_detail::enum_of<WaitKind>(b)};
  }
  friend constexpr bool operator==(const WaitEndPayload&, const WaitEndPayload&) = default;
};

// signal_set: a = the signal's id (the one release's b and a signal wait's a carry).
struct SignalSetPayload {
  static constexpr EventId kEvent = EventId::signal_set;
  std::uint64_t signal = 0;
  constexpr PayloadWords encode() const noexcept { return {signal, 0}; }
  static constexpr SignalSetPayload decode(std::uint64_t a, std::uint64_t) noexcept { return {a}; }
  friend constexpr bool operator==(const SignalSetPayload&, const SignalSetPayload&) = default;
};

// satisfy: a = a not-ready task, b = what completed one of its dependencies (a task id
// or a signal id, as release's b). Reported before the count drops, for every dependency
// but the one a release reports (core/dependencies/README.md, "The task graph's record
// of every dependency").
struct SatisfyPayload {
  static constexpr EventId kEvent = EventId::satisfy;
  std::uint64_t task = 0, by = 0;
  constexpr PayloadWords encode() const noexcept { return {task, by}; }
  static constexpr SatisfyPayload decode(std::uint64_t a, std::uint64_t b) noexcept { return {a, b}; }
  friend constexpr bool operator==(const SatisfyPayload&, const SatisfyPayload&) = default;
};

// decode_payload<P>(a, b): the one way to read an event's payload.
template <class P>
constexpr P decode_payload(std::uint64_t a, std::uint64_t b) noexcept {
  return P::decode(a, b);
}

}  // namespace lantern
