// model.hpp - everything the viewer knows about one trace, live or replayed.
//
// One Model type, one way in: apply(chunk). A Session (session.hpp) feeds it from a
// trace file or a live socket through the same TraceDecoder, so the views draw from the
// same data whichever way it came, and never know which (STYLE.md item 9).
//
// What it keeps, per worker (events of one worker arrive in its time order):
//   - state intervals and task slices (WorkerTrack, each slice with the label its task
//     gave itself), steals, helps, wakes, lane pops, dependency releases (linked to the
//     releasing and the released task's slices), IO submissions and completions, and
//     drop markers, each in a time-sorted array;
// and for the whole trace:
//   - counters over time (TimeSeries): tasks started, steals, helps, failed steal rounds,
//     wakes, releases, IO submissions and completions, and queue depth per lane (from
//     each lane pop's wait: the task sat in the lane from pop - wait to pop, which counts
//     work submitted from outside threads too);
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
#include <unordered_map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lantern/trace/chunk_decoder.hpp"
#include "lantern/trace/label_names.hpp"
#include "lantern/trace/trace_error.hpp"
#include "lantern/trace/trace_header.hpp"
#include "lantern/viewer/health.hpp"
#include "lantern/viewer/latency_histogram.hpp"
#include "lantern/viewer/time_series.hpp"
#include "lantern/viewer/worker_track.hpp"

namespace lantern::viewer {

struct Steal {
  Tick t;
  std::uint32_t victim;
  std::uint8_t distance;  // trace::kDistanceNames index
  std::uint8_t source;    // stolen_deque or stolen_lane
};
struct Help {
  Tick t;
  std::uint32_t lane;
  Tick head_age;
};
struct Wake {
  Tick t;
  std::uint32_t waker;  // kOutsideWaker: a thread outside the pool
  std::uint32_t why;    // 0: work, 1: latch, 2: IO completion
  Tick latency;
};
// SliceRef: one task slice, Model::track(worker).slices(depth)[index].
struct SliceRef {
  std::int32_t worker = -1;  // -1: none
  std::int32_t depth = 0;
  std::size_t index = 0;
  bool valid() const noexcept { return worker >= 0; }
};
// Release: a task made ready when its last dependency completed (core's release hook),
// reported by the worker that completed it.
struct Release {
  Tick t;
  std::uint64_t released;  // the task made ready
  std::uint64_t releaser;  // the task that completed, or a signal or IO operation id
  SliceRef from;           // the releasing task's slice, when a task of this worker released it
  SliceRef to;             // the released task's slice, once it began (on any worker)
};
// IoEvent: an asynchronous IO operation submitted or completed on this worker.
struct IoEvent {
  Tick t;
  std::uint64_t op;
  std::uint64_t value;  // submitted: kind | fd << 8; completed: the result (int64: bytes, fd or -errno)
  bool completed;
};
inline constexpr std::uint32_t kOutsideWaker = 0xffffffffu;
struct LanePop {
  Tick t;
  std::uint32_t lane;
  Tick wait;
};
// Drop: a gap in one worker's events. The recorder writes its marker when the ring has
// room again, so the gap runs from that worker's previous event to the marker.
struct Drop {
  Tick t;          // the marker: the gap ends here
  std::uint64_t count;
  Tick gap_start;  // the worker's last event before the gap
};

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
  kSeriesNotReady,   // the pool's not-ready tasks, from not_ready samples (a level, like depths)
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
  bool empty() const noexcept { return events_ == 0; }
  Tick origin() const noexcept { return origin_; }  // the views' time zero
  Tick first_tick() const noexcept { return first_tick_; }
  Tick last_tick() const noexcept { return last_tick_; }  // open intervals end here
  double ns_per_tick() const noexcept { return ns_per_tick_; }
  double ticks_to_ns(double ticks) const noexcept { return ticks * ns_per_tick_; }
  double ns_to_ticks(double ns) const noexcept { return ns / ns_per_tick_; }
  // rel / abs: ticks relative to origin() (as the views use them) and back.
  double rel(Tick t) const noexcept { return static_cast<double>(static_cast<std::int64_t>(t - origin_)); }
  Tick abs(double rel_ticks) const noexcept;

  // --- per worker ---
  std::uint32_t worker_count() const noexcept { return static_cast<std::uint32_t>(tracks_.size()); }
  const WorkerTrack& track(std::uint32_t w) const noexcept { return *tracks_[w]; }
  const std::vector<Steal>& steals(std::uint32_t w) const noexcept { return per_worker_[w].steals; }
  const std::vector<Help>& helps(std::uint32_t w) const noexcept { return per_worker_[w].helps; }
  const std::vector<Wake>& wakes(std::uint32_t w) const noexcept { return per_worker_[w].wakes; }
  const std::vector<LanePop>& pops(std::uint32_t w) const noexcept { return per_worker_[w].pops; }
  const std::vector<Drop>& drops(std::uint32_t w) const noexcept { return per_worker_[w].drops; }
  const std::vector<Release>& releases(std::uint32_t w) const noexcept { return per_worker_[w].releases; }
  const std::vector<IoEvent>& io(std::uint32_t w) const noexcept { return per_worker_[w].io; }
  const TaskSlice& slice(const SliceRef& r) const noexcept {
    return track(static_cast<std::uint32_t>(r.worker)).slices(r.depth)[r.index];
  }
  std::uint64_t dropped(std::uint32_t w) const noexcept { return per_worker_[w].dropped; }
  std::uint64_t failed_rounds(std::uint32_t w) const noexcept { return per_worker_[w].failed_rounds; }
  // in_gap: whether [a, b] overlaps a gap of lost events of worker w (every worker: -1),
  // i.e. whether what the model says about that span may be missing something.
  bool in_gap(int w, Tick a, Tick b) const noexcept;

  // --- whole trace ---
  std::uint64_t events() const noexcept { return events_; }
  std::uint64_t events_of(trace::EventType t) const noexcept { return by_type_[static_cast<int>(t)]; }
  std::uint64_t dropped_events() const noexcept { return dropped_; }
  std::uint64_t rejected_events() const noexcept { return rejected_; }  // impossible worker ids / states
  std::uint64_t chunks() const noexcept { return chunks_; }
  // The steal matrix: steals by `thief` from `victim` over the whole trace.
  std::uint64_t steal_count(std::uint32_t thief, std::uint32_t victim) const noexcept;
  std::uint64_t max_steal_count() const noexcept { return max_steal_count_; }
  const std::array<std::uint64_t, trace::kDistanceCount>& steals_by_distance() const noexcept { return by_distance_; }
  // labels: the names the trace gave its task labels; label_uses: task_label events per
  // label id (what a legend lists, most used first).
  const trace::LabelTable& labels() const noexcept { return labels_; }
  const std::map<std::uint32_t, std::uint64_t>& label_uses() const noexcept { return label_uses_; }
  std::string label_name(std::uint32_t id) const { return labels_.display_name(id); }
  // distance between two workers from the header's topology (worker i runs on CPU
  // i % cpus), or what their steals reported; -1 when neither says.
  int distance(std::uint32_t a, std::uint32_t b) const noexcept;
  // cpu_of: the header's topology row of worker w's CPU, if the header has one.
  const trace::CpuRow* cpu_of(std::uint32_t w) const noexcept;

  // series: prepared (prefix sums rebuilt) by prepare_series(); views call it per frame.
  const TimeSeries* series() const noexcept { return series_.get(); }
  void prepare_series();

  const LatencyHistogram& ready_wait() const noexcept { return ready_wait_; }
  const LatencyHistogram& task_duration() const noexcept { return task_duration_; }
  const LatencyHistogram& wake_latency() const noexcept { return wake_latency_; }

  HealthChecker& health() noexcept { return health_; }
  const HealthChecker& health() const noexcept { return health_; }
  void recheck_health(const HealthThresholds& thresholds);
  // trace_problems: damage, truncation, version and I/O problems, in stream order.
  const std::vector<trace::TraceError>& trace_problems() const noexcept { return trace_problems_; }
  bool has_trace_errors() const noexcept;

 private:
  struct PerWorker {
    std::vector<Steal> steals;
    std::vector<Help> helps;
    std::vector<Wake> wakes;
    std::vector<LanePop> pops;
    std::vector<Drop> drops;
    std::vector<Release> releases;
    std::vector<IoEvent> io;
    std::uint64_t dropped = 0;
    std::uint64_t failed_rounds = 0;
  };
  void ensure_worker(std::uint32_t w);
  void ensure_series(Tick first);
  void apply_one(const trace::Event& e);
  void on_release(std::uint32_t w, Tick t, const trace::Event& e);
  void on_task_begun(std::uint32_t w, int depth, Tick t, std::uint64_t id);

  SourceStatus status_;
  std::uint64_t generation_ = 0;
  bool finished_ = false;
  bool has_header_ = false;
  bool header_ok_ = false;
  trace::TraceHeader header_;
  double ns_per_tick_ = 1.0;
  Tick origin_ = 0;
  Tick first_tick_ = 0;
  Tick last_tick_ = 0;

  std::vector<std::unique_ptr<WorkerTrack>> tracks_;
  std::vector<PerWorker> per_worker_;
  std::uint64_t events_ = 0;
  std::array<std::uint64_t, trace::kEventTypeCount> by_type_{};
  Tick not_ready_since_ = 0;       // the last not_ready sample: when, and its value
  double not_ready_value_ = -1;    // -1: none yet
  std::uint64_t dropped_ = 0;
  std::uint64_t rejected_ = 0;
  std::uint64_t chunks_ = 0;
  std::uint64_t event_limit_ = 100'000'000;
  std::uint64_t discarded_ = 0;

  std::vector<std::uint64_t> steal_matrix_;  // [thief * matrix_side_ + victim]
  std::vector<std::int8_t> seen_distance_;   // same layout: distance the steals reported
  std::uint32_t matrix_side_ = 0;
  std::uint64_t max_steal_count_ = 0;
  std::array<std::uint64_t, trace::kDistanceCount> by_distance_{};
  trace::LabelTable labels_;
  std::map<std::uint32_t, std::uint64_t> label_uses_;
  // Releases whose released task has not begun yet: its id -> (worker, index into releases).
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::size_t>> waiting_releases_;

  std::unique_ptr<TimeSeries> series_;
  LatencyHistogram ready_wait_;
  LatencyHistogram task_duration_;
  LatencyHistogram wake_latency_;
  HealthChecker health_;
  std::vector<trace::TraceError> trace_problems_;
};

}  // namespace lantern::viewer
