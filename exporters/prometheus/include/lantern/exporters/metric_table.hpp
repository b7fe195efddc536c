// SPDX-License-Identifier: Apache-2.0
// metric_table.hpp - THE list of the metrics the Prometheus exporter emits: name, type,
// labels and meaning, each written once. SchedulerCollectable builds its families from
// it (in this order), and a test checks that README.md's reference table and a real
// scrape say the same. Label *values* come from lantern/trace/event_table.hpp's state and
// distance names and from worker indices, so every label set is bounded.
//
// Names follow Prometheus conventions: base units (seconds, bytes), `_total` on counters,
// no unit on plain counts; the process_* rows are the names Prometheus's client libraries
// give the same figures, so dashboards made for them work. Histograms carry no worker
// label: three histograms of 178 series each stay cheap at any worker count, and a
// per-worker latency split is better read from a trace.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace lantern::exporters {

enum class MetricType : std::uint8_t { counter, gauge, histogram };

// X(id, name, type, labels, help)
#define LANTERN_PROMETHEUS_METRICS(X)                                                                                  \
  X(worker_state_seconds, "lantern_worker_state_seconds_total", counter, "worker, state",                              \
    "Time the worker spent in each state (active, idle, sleepy, sleeping).")                                           \
  X(workers, "lantern_workers", gauge, "state", "Workers now in each state, as each worker last published it.")        \
  X(tasks, "lantern_tasks_total", counter, "worker",                                                                   \
    "Tasks the worker ran from a queue (a join half run inline by its caller is not a separate task).")                \
  X(task_exceptions, "lantern_task_exceptions_total", counter, "worker",                                               \
    "Tasks that ended by throwing, whoever receives the exception (a Future, a TaskGroup, a TaskHandle, a "            \
    "graph's run(), or nobody); join halves run inline by their caller are not tasks.")                                \
  X(tasks_spawned, "lantern_tasks_spawned_total", counter, "worker",                                                   \
    "Tasks created on the worker (spawn, submit, task-group spawns); join's forks are not separate tasks.")            \
  X(tasks_submitted, "lantern_tasks_submitted_total", counter, "",                                                     \
    "Tasks created by threads outside the pool (submit, spawn, spawn_after, graph nodes). A ready one waits "          \
    "in a lane; one with dependencies is queued when they complete, on the releasing worker's deque if a "             \
    "worker released it, so this is not sum(lantern_lane_pops_total).")                                                \
  X(lane_pops, "lantern_lane_pops_total", counter, "worker",                                                           \
    "Tasks the worker took from a lane, its own or another's: ready outside submissions, tasks submitted to "          \
    "a chosen lane, tasks released from outside the pool and IO operations handed over by outside threads.")           \
  X(steals, "lantern_steals_total", counter, "worker, distance",                                                       \
    "Tasks the worker stole, by topology distance between thief and victim.")                                          \
  X(failed_steal_rounds, "lantern_failed_steal_rounds_total", counter, "worker",                                       \
    "Full steal rounds in which the worker found nothing.")                                                            \
  X(helps, "lantern_helps_total", counter, "worker",                                                                   \
    "Times the worker helped a lane whose head had waited too long (fairness-aware helping).")                         \
  X(sleeps, "lantern_sleeps_total", counter, "worker", "Times the worker fell asleep.")                                \
  X(wakes, "lantern_wakes_total", counter, "worker",                                                                   \
    "Times the worker left sleeping (woken by a worker, an outside thread or an IO completion).")                      \
  X(io_wakes, "lantern_io_wakes_total", counter, "worker",                                                             \
    "Wakes caused by an IO completion: no waker, so not in lantern_wake_latency_seconds.")                             \
  X(lane_depth, "lantern_lane_depth", gauge, "worker", "Tasks waiting in the worker's lane.")                          \
  X(deque_depth, "lantern_deque_depth", gauge, "worker", "Tasks in the worker's deque (a racy estimate).")             \
  X(releases, "lantern_releases_total", counter, "worker",                                                             \
    "Tasks the worker made ready by completing their last dependency (a task, a signal or an IO completion).")         \
  X(not_ready_tasks, "lantern_not_ready_tasks", gauge, "",                                                             \
    "Tasks waiting for dependencies: spawn_after tasks, task-graph nodes and IO callbacks not yet ready.")             \
  X(io_submitted, "lantern_io_submitted_total", counter, "worker", "Asynchronous IO operations the worker submitted.") \
  X(io_completed, "lantern_io_completed_total", counter, "worker",                                                     \
    "Asynchronous IO operations whose completion the worker reaped (their callbacks made ready).")                     \
  X(sleep_inactive_workers, "lantern_sleep_inactive_workers", gauge, "",                                               \
    "Workers the sleep protocol counts as inactive (idle, sleepy or sleeping).")                                       \
  X(sleep_sleeping_workers, "lantern_sleep_sleeping_workers", gauge, "",                                               \
    "Workers the sleep protocol counts as sleeping.")                                                                  \
  X(ready_wait, "lantern_ready_wait_seconds", histogram, "",                                                           \
    "How long a task waited in a lane before a worker took it.")                                                       \
  X(task_duration, "lantern_task_duration_seconds", histogram, "",                                                     \
    "How long each task ran, including the join children it ran inline.")                                              \
  X(wake_latency, "lantern_wake_latency_seconds", histogram, "",                                                       \
    "From a wake call to the woken worker running again. IO wakes are left out (no waker: "                            \
    "lantern_io_wakes_total counts them).")                                                                            \
  X(events_recorded, "lantern_events_recorded_total", counter, "worker",                                               \
    "The worker's trace events, its dropped markers included: what its trace holds when no sink loses any "            \
    "(0 at recording level off).")                                                                                     \
  X(events_dropped, "lantern_events_dropped_total", counter, "worker",                                                 \
    "Trace events lost because the worker's ring was full.")                                                           \
  X(unhandled_exceptions, "lantern_unhandled_exceptions_total", counter, "",                                           \
    "Spawned tasks that threw with nobody waiting for them.")                                                          \
  X(deadlocks, "lantern_deadlocks_total", counter, "worker",                                                           \
    "Suspected deadlocks the worker reported: every worker blocked in a wait or idle, nothing ready.")                 \
  X(build_info, "lantern_build_info", gauge, "version",                                                                \
    "Always 1; its version label is the Lantern library's version.")                                                   \
  X(process_cpu_seconds, "process_cpu_seconds_total", counter, "", "Total user and system CPU time spent in seconds.") \
  X(process_resident_memory, "process_resident_memory_bytes", gauge, "", "Resident memory size in bytes.")             \
  X(process_virtual_memory, "process_virtual_memory_bytes", gauge, "", "Virtual memory size in bytes.")                \
  X(process_open_fds, "process_open_fds", gauge, "", "Number of open file descriptors.")                               \
  X(process_max_fds, "process_max_fds", gauge, "", "Maximum number of open file descriptors.")                         \
  X(process_start_time, "process_start_time_seconds", gauge, "",                                                       \
    "Start time of the process since unix epoch in seconds.")                                                          \
  X(process_threads, "process_threads", gauge, "", "Threads in the process.")

enum class Metric : std::uint8_t {
#define LANTERN_X(id, name, type, labels, help) id,
  LANTERN_PROMETHEUS_METRICS(LANTERN_X)
#undef LANTERN_X
};

struct MetricInfo {
  Metric id;
  std::string_view name;
  MetricType type;
  std::string_view labels;  // comma-separated label names, "" for none
  std::string_view help;
};

inline constexpr MetricInfo kMetrics[] = {
#define LANTERN_X(id, name, type, labels, help) {Metric::id, name, MetricType::type, labels, help},
    LANTERN_PROMETHEUS_METRICS(LANTERN_X)
#undef LANTERN_X
};
inline constexpr std::size_t kMetricCount = sizeof(kMetrics) / sizeof(kMetrics[0]);

// info: the table row of a metric (ids are dense from 0).
constexpr const MetricInfo& info(Metric m) noexcept { return kMetrics[static_cast<std::size_t>(m)]; }

// Histogram buckets, in nanoseconds: eight per power of two, at 2^k x {1, 1.125, ...,
// 1.875} for k in [kFineFirstLog2, kFineLastLog2] (64 ns .. 126 ms), then one per power
// of two up to 2^kLastBucketLog2 (17.2 s), plus +Inf: 176 bounds. Adjacent bounds differ
// by at most 12.5 %, so histogram_quantile's linear interpolation inside a bucket lands
// within 10 % of the exact percentile across 100 ns .. 100 ms
// (tests/exporters/quantile_test.cpp). Four per power of two (25 % apart) put a p99 wake
// latency of a real run 10.7 % off; powers of two, up to 2x. The bounds are the edges of
// the recorder's log-linear histogram (8 sub-buckets per power of two), so each
// cumulative count is exact (trace::LatencyHistogram::count_below).
inline constexpr int kFineFirstLog2 = 6;
inline constexpr int kFineLastLog2 = 26;
inline constexpr int kLastBucketLog2 = 34;
inline constexpr std::size_t kBucketBounds =
    static_cast<std::size_t>(kFineLastLog2 - kFineFirstLog2 + 1) * 8 + (kLastBucketLog2 - kFineLastLog2);
inline constexpr std::array<std::uint64_t, kBucketBounds> kBucketBoundsNs = [] {
  std::array<std::uint64_t, kBucketBounds> bounds{};
  std::size_t i = 0;
  for (int k = kFineFirstLog2; k <= kFineLastLog2; ++k) {
    const std::uint64_t base = std::uint64_t{1} << k;
    for (std::uint64_t eighth = 8; eighth < 16; ++eighth) bounds[i++] = base * eighth / 8;
  }
  for (int k = kFineLastLog2 + 1; k <= kLastBucketLog2; ++k) bounds[i++] = std::uint64_t{1} << k;
  return bounds;
}();

}  // namespace lantern::exporters
