// SPDX-License-Identifier: Apache-2.0
// model.hpp - everything the viewer knows about one trace, live or replayed.
//
// One Model type, one way in: apply(chunk). A Session (session.hpp) feeds it from a
// trace file or a live socket through the same TraceDecoder, so the views draw from the
// same data whichever way it came, and never know which: a live view and a replay of its
// recording cannot differ.
//
// Every fact below is folded by lantern::analysis::Analysis (one fold for every view:
// lantern/analysis/analysis.hpp); the Model adds what only a viewer needs (time series,
// the source's status, trace problems, a memory limit). What it offers,
// per worker (events of one worker arrive in its time order):
//   - state intervals and task slices (WorkerTrack, each slice with the label its task
//     gave itself), steals, helps, wakes, lane pops, dependency releases (linked to the
//     releasing and the released task's slices), IO submissions and completions, and
//     drop markers, each in a time-sorted array;
// and for the whole trace:
//   - counters over time (TimeSeries): tasks started, steals, helps, failed steal rounds,
//     wakes, releases, IO submissions and completions, queue depth per lane (from each
//     lane pop's wait: the task sat in the lane from pop - wait to pop, which counts work
//     submitted from outside threads too), and the pool's not-ready tasks (the analysis'
//     not_ready samples in time order, each holding until the next);
//   - the task label names the chunks carried, and how often each label was used;
//   - the steal matrix (thief x victim), totals per topology distance;
//   - histograms of ready wait, task duration and wake latency;
//   - health problems (HealthChecker) and the trace's own problems (damage, truncation).
//
// Not thread-safe: a Session applies chunks under its mutex and views read under it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "lantern/analysis/analysis.hpp"
#include "lantern/trace/chunk_decoder.hpp"
#include "lantern/trace/label_names.hpp"
#include "lantern/trace/trace_error.hpp"
#include "lantern/trace/trace_header.hpp"
#include "lantern/viewer/time_series.hpp"

namespace lantern::viewer {

// The facts (WorkerTrack, TaskSlice, Steal, Wake, Release, IoEvent, LanePop, Drop, the
// histograms, HealthChecker and its Problems) are the analysis library's: the viewer
// draws what lantern::analysis folded, the same fold lantern-trace stats and the Chrome
// export read, so the numbers cannot differ.
using namespace ::lantern::analysis;

// Series of Model::series(), in this order; lane l's queue depth is kSeriesFirstLane + l.
enum SeriesId : int {
  kSeriesTasks = 0,
  kSeriesSteals,
  kSeriesHelps,
  kSeriesFailedRounds,
  kSeriesWakes,
  kSeriesReleases,
  kSeriesIoSubmits,
  kSeriesIoCompletions,
  kSeriesNotReady,   // the pool's not-ready tasks, from the analysis' samples (a level, like depths)
  kSeriesQueuedAll,  // queue depth summed over every lane
  kSeriesFirstLane,
};

// SourceStatus: where the data comes from and how that is going (set by the Session).
struct SourceStatus {
  enum class Kind : std::uint8_t { none, file, live };
  enum class Phase : std::uint8_t { connecting, loading, streaming, complete, disconnected, failed };
  Kind kind = Kind::none;
  Phase phase = Phase::loading;
  std::string name;     // the file, or host:port
  std::string message;  // a sentence for the status bar, e.g. why the connection ended
  std::uint64_t bytes = 0;
  std::uint64_t total_bytes = 0;  // file size, 0 when unknown (live)
};

class Model {
 public:
  static constexpr std::uint32_t kMaxWorkerId = 4096;  // larger ids are damage

  Model();
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // --- the one way in ---
  void apply_header(const trace::TraceHeader& header, bool intact);
  void apply(const trace::DecodedChunk& chunk);
  void apply(std::span<const trace::Event> events);
  void add_trace_problem(const trace::TraceError& problem);
  // finish: the source ended; checks that wait for every worker to catch up run to the end.
  void finish();
  SourceStatus& status() noexcept { return status_; }
  const SourceStatus& status() const noexcept { return status_; }
  // set_event_limit: past this many events the model stops growing (a live session left
  // running for hours must not exhaust memory: ~25 bytes are kept per event); later
  // events are counted in discarded_events() and the status says so.
  void set_event_limit(std::uint64_t events) noexcept { event_limit_ = events; }
  std::uint64_t discarded_events() const noexcept { return discarded_; }
  // generation: bumped by every apply, so views can cache derived data cheaply.
  std::uint64_t generation() const noexcept { return generation_; }

  // --- header and time ---
  bool has_header() const noexcept { return has_header_; }
  bool header_ok() const noexcept { return header_ok_; }
  const trace::TraceHeader& header() const noexcept { return header_; }
  bool empty() const noexcept { return analysis_.empty(); }
  Tick origin() const noexcept { return origin_; }  // the views' time zero
  Tick first_tick() const noexcept { return first_tick_; }
  Tick last_tick() const noexcept { return last_tick_; }  // open intervals end here
  double ns_per_tick() const noexcept { return ns_per_tick_; }
  double ticks_to_ns(double ticks) const noexcept { return ticks * ns_per_tick_; }
  double ns_to_ticks(double ns) const noexcept { return ns / ns_per_tick_; }
  // rel / abs: ticks relative to origin() (as the views use them) and back.
  double rel(Tick t) const noexcept { return static_cast<double>(static_cast<std::int64_t>(t - origin_)); }
  Tick abs(double rel_ticks) const noexcept;

  // --- per worker (the analysis' facts) ---
  const Analysis& analysis() const noexcept { return analysis_; }
  std::uint32_t worker_count() const noexcept { return analysis_.worker_count(); }
  const WorkerTrack& track(std::uint32_t w) const noexcept { return analysis_.track(w); }
  const std::vector<Steal>& steals(std::uint32_t w) const noexcept { return analysis_.steals(w); }
  const std::vector<Help>& helps(std::uint32_t w) const noexcept { return analysis_.helps(w); }
  const std::vector<Wake>& wakes(std::uint32_t w) const noexcept { return analysis_.wakes(w); }
  const std::vector<LanePop>& pops(std::uint32_t w) const noexcept { return analysis_.pops(w); }
  const std::vector<Drop>& drops(std::uint32_t w) const noexcept { return analysis_.drops(w); }
  const std::vector<Release>& releases(std::uint32_t w) const noexcept { return analysis_.releases(w); }
  const std::vector<IoEvent>& io(std::uint32_t w) const noexcept { return analysis_.io(w); }
  const TaskSlice& slice(const SliceRef& r) const noexcept { return analysis_.slice(r); }
  std::uint64_t dropped(std::uint32_t w) const noexcept { return analysis_.dropped(w); }
  std::uint64_t failed_rounds(std::uint32_t w) const noexcept { return analysis_.failed_rounds(w); }
  bool in_gap(int w, Tick a, Tick b) const noexcept { return analysis_.in_gap(w, a, b); }

  // --- whole trace ---
  std::uint64_t events() const noexcept { return analysis_.events(); }
  std::uint64_t events_of(EventId t) const noexcept { return analysis_.events_of(t); }
  std::uint64_t dropped_events() const noexcept { return analysis_.dropped_events(); }
  std::uint64_t dropped_events(DropReason reason) const noexcept { return analysis_.dropped_events(reason); }
  std::uint64_t rejected_events() const noexcept { return analysis_.rejected_events(); }
  std::uint64_t chunks() const noexcept { return chunks_; }
  std::uint64_t steal_count(std::uint32_t thief, std::uint32_t victim) const noexcept {
    return analysis_.steal_count(thief, victim);
  }
  std::uint64_t max_steal_count() const noexcept { return analysis_.max_steal_count(); }
  // steal_cells: the pairs with steals (Analysis::steal_cells), for views that sum them.
  const std::unordered_map<std::uint64_t, analysis::StealCell>& steal_cells() const noexcept {
    return analysis_.steal_cells();
  }
  const std::array<std::uint64_t, trace::kDistanceCount>& steals_by_distance() const noexcept {
    return analysis_.steals_by_distance();
  }
  const trace::LabelTable& labels() const noexcept { return analysis_.labels(); }
  const std::map<std::uint32_t, std::uint64_t>& label_uses() const noexcept { return analysis_.label_uses(); }
  std::string label_name(std::uint32_t id) const { return analysis_.labels().display_name(id); }
  // distance between two workers from the header's topology (worker i runs on CPU
  // i % cpus), or what their steals reported; -1 when neither says.
  int distance(std::uint32_t a, std::uint32_t b) const noexcept;
  // cpu_of: the header's topology row of worker w's CPU, if the header has one.
  const trace::CpuRow* cpu_of(std::uint32_t w) const noexcept;

  // series: prepared (prefix sums rebuilt) by prepare_series(); views call it per frame.
  const TimeSeries* series() const noexcept { return series_.get(); }
  void prepare_series();

  const LatencyHistogram& ready_wait() const noexcept { return analysis_.ready_wait(); }
  const LatencyHistogram& task_duration() const noexcept { return analysis_.task_duration(); }
  // wake_latency: IO wakes left out (they have no waker: see lantern/analysis/analysis.hpp);
  // io_wakes says how many.
  const LatencyHistogram& wake_latency() const noexcept { return analysis_.wake_latency(); }
  std::uint64_t io_wakes() const noexcept { return analysis_.io_wakes(); }

  const HealthChecker& health() const noexcept { return analysis_.health(); }
  void recheck_health(const HealthThresholds& thresholds);
  // warning_count: THE warning count (HealthChecker::warning_count), as every view shows it.
  std::uint64_t warning_count() const { return analysis_.health().warning_count(analysis_); }
  // trace_problems: damage, truncation, version and I/O problems, in stream order.
  const std::vector<trace::TraceError>& trace_problems() const noexcept { return trace_problems_; }
  bool has_trace_errors() const noexcept;

 private:
  void ensure_series(Tick first);
  void apply_one(const trace::Event& e);
  void add_not_ready_sample(Tick t);

  SourceStatus status_;
  std::uint64_t generation_ = 0;
  bool has_header_ = false;
  bool header_ok_ = false;
  trace::TraceHeader header_;
  double ns_per_tick_ = 1.0;
  Tick origin_ = 0;
  Tick first_tick_ = 0;
  Tick last_tick_ = 0;
  std::uint64_t chunks_ = 0;
  std::uint64_t event_limit_ = 100'000'000;
  std::uint64_t discarded_ = 0;
  std::uint32_t series_workers_ = 0;  // lanes the series have room for

  Analysis analysis_;
  std::unique_ptr<TimeSeries> series_;
  std::vector<trace::TraceError> trace_problems_;
};

}  // namespace lantern::viewer
