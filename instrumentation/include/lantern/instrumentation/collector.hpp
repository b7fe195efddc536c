// SPDX-License-Identifier: Apache-2.0
// collector.hpp - the thread that drains every worker's ring and fans events out.
//
// Workers never wait for the collector: if it falls behind, rings fill and events are
// dropped (and counted). Sinks can be attached and detached while the scheduler runs;
// a detached sink receives nothing after detach() returns.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/sink.hpp"

namespace lantern::instrumentation {

struct CollectorOptions {
  // How often the rings are drained: the period adapts between these two. After a pass
  // that found a ring at least a quarter full, the next comes after min_period (a busy
  // fork-join run at level full makes ~30M events/s per worker: a 32k ring fills in
  // ~1 ms). After a pass that found some events, the next comes when the busiest ring
  // would be a quarter full again at the rate just seen (at most twice the last wait);
  // each pass that found none doubles the wait, up to max_period: an idle program, or a
  // busy one at level states, costs ~50 wake-ups a second (a 2 ms cap would make ~500,
  // which on a 2-core machine costs fork-join code several % of a core's time slices).
  // A ring that passes half full asks for a pass at once (drain_request.hpp), so a burst
  // after a quiet spell does not wait for max_period; a ring that fills all the same
  // (the Collector got no CPU in time) drops events, counted and marked as always.
  std::chrono::microseconds min_period{100};
  std::chrono::microseconds max_period{20'000};
  std::size_t batch_per_worker = 4096;  // events taken from one ring per pass
};

class Collector {
 public:
  explicit Collector(Recorder& recorder, CollectorOptions options = {});
  ~Collector();  // stop(): drains what is left, flushes sinks
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  void attach(std::shared_ptr<Sink> sink);
  void detach(const Sink* sink);

  void start();  // starts the thread (idempotent)
  // stop: final drain, on_flush to every sink, joins the thread (idempotent). Stop the
  // Scheduler first: the final drain then also delivers the `dropped` marker for events
  // a worker lost at the very end of its run (Recorder::drain).
  void stop();
  // drain_now: one synchronous pass over every ring (for tests, and flush-on-demand);
  // returns the most events taken from one ring (0: every ring was empty).
  // Safe while the thread runs: passes are serialised.
  std::uint64_t drain_now();

  // failures: Sink::failure() of every attached sink that has failed (empty: all fine).
  std::vector<std::string> failures() const;

  std::uint64_t events_collected() const noexcept { return collected_.load(std::memory_order_relaxed); }
  std::uint64_t passes() const noexcept { return passes_.load(std::memory_order_relaxed); }

 private:
  void run();
  // pass: requires drain_mutex_; returns the most taken from one ring. Periodic passes
  // leave a half-written cache line for next time; final ones take everything.
  std::uint64_t pass(bool everything = false);

  Recorder& recorder_;
  CollectorOptions options_;
  std::uint64_t ring_capacity_;
  std::mutex drain_mutex_;  // one pass at a time; guards batch_ and sinks_ use
  std::vector<trace::Event> batch_;
  mutable std::mutex sinks_mutex_;
  std::vector<std::shared_ptr<Sink>> sinks_;
  bool stopping_ = false;  // guarded by the Recorder's DrainRequest::mutex(), which the thread waits on
  std::thread thread_;
  std::atomic<std::uint64_t> collected_{0};
  std::atomic<std::uint64_t> passes_{0};
};

}  // namespace lantern::instrumentation
