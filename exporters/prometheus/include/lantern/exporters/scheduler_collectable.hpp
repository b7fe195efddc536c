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
// Use it through PrometheusExporter, or register it on your own prometheus::Exposer or
// serialize Collect() yourself (the benchmark does, to time a scrape without HTTP).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "lantern/instrumentation/recorder.hpp"
#include "lantern/scheduler.hpp"
#include "lantern/trace/event_table.hpp"

namespace lantern::exporters {

class SchedulerCollectable final : public prometheus::Collectable {
 public:
  // SchedulerCollectable reads `scheduler` and `recorder` (the Recorder attached to it as
  // SchedulerOptions::observer); both must outlive it. Throws std::invalid_argument when
  // their worker counts differ (the recorder is then not this scheduler's).
  SchedulerCollectable(const Scheduler& scheduler, const instrumentation::Recorder& recorder);

  // Collect: one snapshot of every metric of metric_table.hpp, in table order. Safe to
  // call from several threads at once (concurrent scrapes take turns).
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const Scheduler& scheduler_;
  const instrumentation::Recorder& recorder_;
  std::vector<std::string> worker_labels_;  // "0", "1", ...: formatted once, not per scrape

  // A worker's time in its current state is open-ended and read racily against the
  // worker's next transition (see instrumentation::snapshot), so two scrapes could see a
  // state's seconds go down by part of an interval. Prometheus reads any decrease of a
  // counter as a restart, so each value is exported as at least the last one exported.
  mutable std::mutex mutex_;
  mutable std::vector<std::array<double, trace::kStateCount>> exported_state_seconds_;
};

}  // namespace lantern::exporters
