// SPDX-License-Identifier: Apache-2.0
// scheduler_collectable.cpp - published counters -> Prometheus metric families.
#include "lantern/exporters/scheduler_collectable.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include "lantern/exporters/metric_table.hpp"
#include "lantern/instrumentation/histogram.hpp"
#include "lantern/trace/latency_histogram.hpp"
#include "lantern/version.hpp"

namespace lantern::exporters {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using Labels = std::vector<ClientMetric::Label>;

prometheus::MetricType to_prometheus(MetricType type) {
  switch (type) {
    case MetricType::counter: return prometheus::MetricType::Counter;
    case MetricType::gauge: return prometheus::MetricType::Gauge;
    case MetricType::histogram: return prometheus::MetricType::Histogram;
  }
  return prometheus::MetricType::Untyped;
}

// add: one counter or gauge sample, whichever the family is.
void add(MetricFamily& family, Labels labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  if (family.type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  family.metric.push_back(std::move(m));
}

// to_prometheus: cumulative buckets at kBucketBoundsNs, in seconds.
ClientMetric::Histogram to_prometheus(const trace::LatencyHistogram& h) {
  ClientMetric::Histogram out;
  // The count is the sum of the copied buckets, not the histogram's own total: a writer
  // bumps a bucket before the total, so the two copies can disagree by a few values, and
  // Prometheus needs the +Inf bucket and _count to be the same number.
  std::uint64_t total = 0;
  for (int i = 0; i < trace::LatencyHistogram::kBuckets; ++i) total += h.bucket(i);
  out.sample_count = total;
  out.sample_sum = static_cast<double>(h.sum_ns()) / 1e9;
  out.bucket.reserve(kBucketBounds + 1);
  for (const std::uint64_t edge_ns : kBucketBoundsNs) {
    // Divide, not multiply by 1e-9: the quotient is correctly rounded, so bounds print as
    // 8.192e-06 rather than 8.192000000000001e-06.
    out.bucket.push_back({h.count_below(edge_ns), static_cast<double>(edge_ns) / 1e9});
  }
  out.bucket.push_back({total, std::numeric_limits<double>::infinity()});
  return out;
}

// ProcessFigures: the process_* families, as Prometheus's client libraries read them on
// Linux (/proc/self/stat, /proc/self/fd, getrlimit). A figure that cannot be read is -1
// and left out.
struct ProcessFigures {
  double cpu_seconds = -1, resident_bytes = -1, virtual_bytes = -1, open_fds = -1, max_fds = -1, start_time = -1,
         threads = -1;
};

// boot_time: /proc/stat's btime (seconds since the epoch), read once.
double boot_time() {
  static const double btime = [] {
    std::FILE* f = std::fopen("/proc/stat", "re");
    if (!f) return -1.0;
    char line[256];
    double value = -1;
    while (std::fgets(line, sizeof line, f)) {
      unsigned long long t = 0;
      if (std::sscanf(line, "btime %llu", &t) == 1) {
        value = static_cast<double>(t);
        break;
      }
    }
    std::fclose(f);
    return value;
  }();
  return btime;
}

ProcessFigures read_process() {
  ProcessFigures p;
  const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page_bytes = static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (std::FILE* f = std::fopen("/proc/self/stat", "re")) {
    char buffer[1024];
    const std::size_t n = std::fread(buffer, 1, sizeof buffer - 1, f);
    std::fclose(f);
    buffer[n] = '\0';
    // The fields after the command name, which is in parentheses and may hold anything.
    if (const char* after = std::strrchr(buffer, ')')) {
      unsigned long long utime = 0, stime = 0, threads = 0, start = 0, vsize = 0, rss = 0;
      // state(3) ... utime(14) stime(15) ... num_threads(20) itrealvalue(21) starttime(22) vsize(23) rss(24)
      if (std::sscanf(after + 1,
                      " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %llu %*d %llu %llu %llu",
                      &utime, &stime, &threads, &start, &vsize, &rss) == 6) {
        p.cpu_seconds = static_cast<double>(utime + stime) / ticks_per_second;
        p.threads = static_cast<double>(threads);
        p.virtual_bytes = static_cast<double>(vsize);
        p.resident_bytes = static_cast<double>(rss) * page_bytes;
        if (boot_time() >= 0) p.start_time = boot_time() + static_cast<double>(start) / ticks_per_second;
      }
    }
  }
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    double count = 0;
    while (const dirent* e = ::readdir(dir)) count += e->d_name[0] != '.';
    ::closedir(dir);
    p.open_fds = count - 1;  // less the descriptor reading the directory
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    p.max_fds = static_cast<double>(limit.rlim_cur);
  }
  return p;
}

}  // namespace

SchedulerCollectable::SchedulerCollectable(const Scheduler& scheduler, instrumentation::Recorder& recorder)
    : scheduler_(scheduler), recorder_(recorder) {
  if (recorder.worker_count() != scheduler.worker_count()) {
    throw std::invalid_argument("lantern::exporters::SchedulerCollectable: the Recorder has " +
                                std::to_string(recorder.worker_count()) + " workers but the Scheduler has " +
                                std::to_string(scheduler.worker_count()) +
                                "; pass the Recorder attached to this Scheduler (SchedulerOptions::observer)");
  }
  for (std::uint32_t w = 0; w < scheduler.worker_count(); ++w) worker_labels_.push_back(std::to_string(w));
  exported_state_seconds_.assign(scheduler.worker_count(), {});
  recorder_.time_tasks();
}

SchedulerCollectable::~SchedulerCollectable() { recorder_.stop_timing_tasks(); }

std::vector<MetricFamily> SchedulerCollectable::Collect() const {
  const std::uint32_t workers = scheduler_.worker_count();
  std::vector<MetricFamily> families(kMetricCount);
  for (const MetricInfo& m : kMetrics) {
    MetricFamily& f = families[static_cast<std::size_t>(m.id)];
    f.name = m.name;
    f.help = m.help;
    f.type = to_prometheus(m.type);
    f.metric.reserve(m.labels.empty() ? 1 : workers);
  }
  auto family = [&](Metric m) -> MetricFamily& { return families[static_cast<std::size_t>(m)]; };
  family(Metric::worker_state_seconds).metric.reserve(std::size_t{workers} * trace::kStateCount);
  family(Metric::steals).metric.reserve(std::size_t{workers} * trace::kDistanceCount);

  const double seconds_per_tick = recorder_.ns_per_tick() * 1e-9;
  std::array<std::uint32_t, trace::kStateCount> workers_in_state{};
  trace::LatencyHistogram ready_wait, task_duration, wake_latency;

  std::lock_guard<std::mutex> lock(mutex_);  // for exported_state_seconds_ (see the header)
  for (std::uint32_t w = 0; w < workers; ++w) {
    const std::string& worker = worker_labels_[w];
    const instrumentation::WorkerCountersSnapshot s = recorder_.snapshot(w);
    for (int state = 0; state < trace::kStateCount; ++state) {
      double& exported = exported_state_seconds_[w][state];
      exported = std::max(exported, static_cast<double>(s.state_ticks[state]) * seconds_per_tick);
      add(family(Metric::worker_state_seconds), {{"worker", worker}, {"state", std::string(trace::kStateNames[state])}},
          exported);
    }
    auto per_worker = [&](Metric m, double value) { add(family(m), {{"worker", worker}}, value); };
    per_worker(Metric::tasks, static_cast<double>(s.tasks));
    per_worker(Metric::task_exceptions, static_cast<double>(s.tasks_threw));
    per_worker(Metric::tasks_spawned, static_cast<double>(scheduler_.tasks_spawned(w)));
    per_worker(Metric::lane_pops, static_cast<double>(s.lane_pops));
    for (int d = 0; d < trace::kDistanceCount; ++d) {
      add(family(Metric::steals), {{"worker", worker}, {"distance", std::string(trace::kDistanceNames[d])}},
          static_cast<double>(s.steals[d]));
    }
    per_worker(Metric::failed_steal_rounds, static_cast<double>(s.steal_rounds_failed));
    per_worker(Metric::helps, static_cast<double>(s.helps));
    per_worker(Metric::sleeps, static_cast<double>(s.sleeps));
    per_worker(Metric::wakes, static_cast<double>(s.wakes_received));
    per_worker(Metric::io_wakes, static_cast<double>(s.io_wakes));
    per_worker(Metric::lane_depth, static_cast<double>(scheduler_.lane_size(w)));
    // deque_size is a racy difference of two indices and can dip below zero for a moment.
    per_worker(Metric::deque_depth, static_cast<double>(std::max<std::int64_t>(0, scheduler_.deque_size(w))));
    per_worker(Metric::releases, static_cast<double>(s.releases));
    per_worker(Metric::io_submitted, static_cast<double>(s.io_submitted));
    per_worker(Metric::io_completed, static_cast<double>(s.io_completed));
    per_worker(Metric::events_recorded, static_cast<double>(s.events_recorded));
    per_worker(Metric::events_dropped, static_cast<double>(s.events_dropped));
    per_worker(Metric::deadlocks, static_cast<double>(s.deadlocks));

    const auto state = static_cast<std::size_t>(scheduler_.worker_state(w));
    if (state < workers_in_state.size()) ++workers_in_state[state];
    const instrumentation::WorkerCounters& c = recorder_.counters(w);
    ready_wait.merge(c.ready_wait.snapshot());
    task_duration.merge(c.task_duration.snapshot());
    wake_latency.merge(c.wake_latency.snapshot());
  }

  for (int state = 0; state < trace::kStateCount; ++state) {
    add(family(Metric::workers), {{"state", std::string(trace::kStateNames[state])}},
        static_cast<double>(workers_in_state[state]));
  }
  const Scheduler::SleepSnapshot sleep = scheduler_.sleep_snapshot();
  add(family(Metric::sleep_inactive_workers), {}, static_cast<double>(sleep.inactive));
  add(family(Metric::sleep_sleeping_workers), {}, static_cast<double>(sleep.sleeping));
  add(family(Metric::tasks_submitted), {}, static_cast<double>(scheduler_.tasks_submitted_from_outside()));
  add(family(Metric::not_ready_tasks), {}, static_cast<double>(scheduler_.not_ready_tasks()));
  add(family(Metric::unhandled_exceptions), {}, static_cast<double>(scheduler_.unhandled_exceptions()));

  auto histogram = [&](Metric m, const trace::LatencyHistogram& h) {
    ClientMetric metric;
    metric.histogram = to_prometheus(h);
    family(m).metric.push_back(std::move(metric));
  };
  histogram(Metric::ready_wait, ready_wait);
  histogram(Metric::task_duration, task_duration);
  histogram(Metric::wake_latency, wake_latency);

  add(family(Metric::build_info), {{"version", std::string(kVersion)}}, 1);
  const ProcessFigures process = read_process();
  auto process_figure = [&](Metric m, double value) {
    if (value >= 0) add(family(m), {}, value);
  };
  process_figure(Metric::process_cpu_seconds, process.cpu_seconds);
  process_figure(Metric::process_resident_memory, process.resident_bytes);
  process_figure(Metric::process_virtual_memory, process.virtual_bytes);
  process_figure(Metric::process_open_fds, process.open_fds);
  process_figure(Metric::process_max_fds, process.max_fds);
  process_figure(Metric::process_start_time, process.start_time);
  process_figure(Metric::process_threads, process.threads);
  return families;
}

}  // namespace lantern::exporters
