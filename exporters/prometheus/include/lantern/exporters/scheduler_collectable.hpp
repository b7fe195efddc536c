// SPDX-License-Identifier: Apache-2.0
// scheduler_collectable.hpp - SchedulerCollectable: a prometheus::Collectable that reads a
// Scheduler's and a Recorder's published counters when it is scraped.
//
// Values are read at scrape time on the scraping thread: no background thread, no copy
// kept up to date. Everything read is published for readers: the Recorder's per-worker
// WorkerCounters and histograms (single-writer relaxed atomics, cache-line aligned) and
// the Scheduler's queue sizes, published worker states and sleep counters. Nothing
// touches a worker's hot path or its event ring, so the recording level does not matter:
// the counters are kept at every level, "off" included.
//
// Use it through PrometheusExporter (an endpoint of its own), through register_on (the
// endpoint the app already serves with prometheus-cpp), or serialize Collect() yourself
// (the benchmark does, to time a scrape without HTTP).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "lantern/instrumentation/recorder.hpp"
#include "lantern/scheduler.hpp"
#include "lantern/trace/event_table.hpp"

namespace prometheus {
class Exposer;
}

namespace lantern::exporters {

class SchedulerCollectable final : public prometheus::Collectable {
 public:
  // SchedulerCollectable reads `scheduler` and `recorder` (the Recorder attached to it as
  // SchedulerOptions::observer); both must outlive it. Throws std::invalid_argument when
  // their worker counts differ (the recorder is then not this scheduler's). While it
  // exists the recorder times every task (Recorder::time_tasks: two clock reads per
  // task), at every level, so lantern_task_duration_seconds is filled whatever
  // RecorderOptions the app chose.
  SchedulerCollectable(const Scheduler& scheduler, instrumentation::Recorder& recorder);
  ~SchedulerCollectable() override;
  SchedulerCollectable(const SchedulerCollectable&) = delete;
  SchedulerCollectable& operator=(const SchedulerCollectable&) = delete;

  // Collect: one snapshot of every metric of metric_table.hpp, in table order. Safe to
  // call from several threads at once (concurrent scrapes take turns).
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const Scheduler& scheduler_;
  instrumentation::Recorder& recorder_;
  std::vector<std::string> worker_labels_;  // "0", "1", ...: formatted once, not per scrape

  // A worker's time in its current state is open-ended and read racily against the
  // worker's next transition (see instrumentation::snapshot), so two scrapes could see a
  // state's seconds go down by part of an interval. Prometheus reads any decrease of a
  // counter as a restart, so each value is exported as at least the last one exported.
  mutable std::mutex mutex_;
  mutable std::vector<std::array<double, trace::kStateCount>> exported_state_seconds_;
};

// register_on adds Lantern's metrics to an endpoint the app already serves with
// prometheus-cpp: the same families and values as PrometheusExporter's /metrics, next to
// the app's own, on one port.
//
//   prometheus::Exposer exposer("127.0.0.1:8080");        // the app's, with its Registry
//   exposer.RegisterCollectable(registry);
//   auto lantern_metrics = lantern::exporters::register_on(exposer, pool, recorder);
//
// The Exposer keeps only a weak reference to what it serves: keep the returned pointer
// as long as the metrics should be served (and no longer than the scheduler and the
// recorder), or pass it to exposer.RemoveCollectable. It is the Exposer, not a
// prometheus::Registry, that takes it: a Registry in prometheus-cpp 1.0 holds only the
// families it creates itself and cannot hold another Collectable. Throws what
// SchedulerCollectable's constructor throws. The app's Exposer answers in the text
// format only (prometheus-cpp has no OpenMetrics).
std::shared_ptr<SchedulerCollectable> register_on(prometheus::Exposer& exposer, const Scheduler& scheduler,
                                                  instrumentation::Recorder& recorder,
                                                  const std::string& path = "/metrics");

}  // namespace lantern::exporters
