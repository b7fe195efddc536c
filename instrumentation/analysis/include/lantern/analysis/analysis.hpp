// SPDX-License-Identifier: Apache-2.0
// analysis.hpp - THE fold of Lantern's event stream: every view's facts and figures.
//
// lantern-trace stats, the Chrome export, the viewer's model and its Health panel all
// read one Analysis; none of them decodes a payload word or folds events itself, so no
// two views can print two numbers for one figure (the vocabulary, lantern/vocabulary.hpp,
// is the one place that packs and unpacks payloads). Feed it events from a file (a
// TraceReader's chunks), a live stream (TraceDecoder) or the collector, in any
// interleaving of workers as long as each worker's events come in that worker's order
// (a ring is FIFO); it keeps:
//   per worker (WorkerTrack and arrays, each time-sorted):
//     - state intervals (active, idle, sleepy, sleeping; reasons),
//     - task slices, nested as they ran, each with its label, source, ready wait, steal,
//     - steals (victim, distance, source), helps, wakes (waker, cause, latency), lane
//       waits (lane pops), releases (linked to the releasing and released slices), IO
//       submissions and completions, drops (with the gap they leave), deadlock reports;
//   for the whole stream:
//     - events by type, the steal matrix and steals by distance, label names and uses,
//     - IO operations paired with their completions in time order (whichever workers
//       reported them, in whichever order their batches arrive),
//     - latency histograms: ready wait, task duration, wake latency, IO latency,
//     - the pool's not-ready tasks as workers sampled them, in time order,
//     - health findings (HealthChecker: stuck worker, starving lane, work queued while
//       every worker sleeps, searching without work, deadlock suspected, events dropped).
// summary() turns it into the figures every output prints (Summary below).
//
// Decisions made once, here, and named by every output:
//   - Wake latency leaves IO wakes out: an IO completion has no waker to time it from
//     (its latency is 0). Wake counts include them; Summary says how many there were.
//     (The Recorder's histogram and lantern_wake_latency_seconds make the same choice.)
//   - Percentiles are the midpoint of the trace::LatencyBuckets bucket holding the q-th
//     value (within 6.25 %), the buckets of the Recorder's exact histograms and of
//     Prometheus, clamped to the smallest and largest sample (a bucket's midpoint can lie
//     beyond every sample in it: one task of 2.90 ms sits in [2.88, 3.15) ms, midpoint
//     3.01 ms), so no percentile is above the max or below the min it is printed with;
//     the clamp is LatencyBuckets::quantile_ns', which the Recorder's histograms use too.
//     Ticks become nanoseconds as the Recorder converts them (truncated).
//   - Time per state (WorkerFigures::state_ticks, state_time): a worker's time runs from
//     its first event (in a whole trace, its `started` state event: the thread began) to
//     its `stopping` state event (the scheduler shut it down: the thread ends), or to the
//     stream's last event while it has none (a live stream, a flight-recorder dump, a
//     cut-off file). The Recorder's counters count the same span (from `started` to
//     `stopping`, or to the moment they are read), so for a run without dropped events
//     the demo's table and lantern-trace stats show the same shares, to the tick. What
//     the timeline and the Chrome export draw ends there too: a worker's last interval
//     ends at its stop (WorkerTrack::interval_end), not at the stream's end.
//   - A state's share (state_shares) is its time over the worker's WHOLE span, the
//     unknown part included: the time before a worker's first state event whose state
//     no event says (the first state event names the state it left, which fills in the
//     time before it; what stays unknown is a worker whose window holds no state event
//     or task begin, or whose first state event names a state this reader does not
//     know). Unknown time is a share of its own, shown beside the four states wherever
//     it is not 0, so a row adds up to 100 %, the denominator is the span the Recorder's
//     counters cover, and no view extrapolates a state into time nobody recorded (a run
//     compared with a dump of itself shows the unknown part, not inflated shares).
//     Rejected: shares of the known time only: for a trace that starts mid-run they
//     read larger than the time the worker was seen in each state, and a view printing
//     them would disagree with one printing shares of the whole span. stats (per worker and
//     "all"), diff (table and JSON; an unknown row where either run has unknown time),
//     the viewer's Compare view and the timeline's tooltip all print state_shares.
//   - A figure without samples says why (no_samples_reason), from the trace header's
//     recording level: not recorded at that level (lane_pop, the ready wait's source, is
//     recorded at level full only), or recorded but none happened.
//   - A count of events the header's level does not record (tasks, steals and helps at
//     level states) is not 0 but unknown (counted): every view prints it as not recorded
//     ("-" in tables, null in JSON) and says from which level it is.
//   - An event rejected as damage (impossible worker id, type or state) is counted in
//     rejected_events only: events() and events by type count the events kept, so the
//     two add up to the events decoded.
//
// Not thread-safe: one thread adds and reads (the viewer's Session holds its mutex).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lantern/analysis/health.hpp"
#include "lantern/analysis/worker_track.hpp"
#include "lantern/trace/chunk_decoder.hpp"
#include "lantern/trace/label_names.hpp"
#include "lantern/trace/latency_histogram.hpp"
#include "lantern/trace/trace_header.hpp"

namespace lantern::analysis {

// The histograms below are the plain trace::LatencyHistogram every figure is read from.
using trace::LatencyHistogram;

// Steal and Wake keep vocabulary values as integers; their typed reads give the enum, and a
// value outside its table (damaged data) stays as it is: name_of() gives "" for it and
// valid() false.
struct Steal {
  Tick t;
  std::uint32_t victim;
  std::uint8_t distance;  // StealDistance (kDistanceCount and above: outside the table)
  std::uint8_t source;    // TaskSource: stolen_deque or stolen_lane
  StealDistance steal_distance() const noexcept { return static_cast<StealDistance>(distance); }
  TaskSource task_source() const noexcept { return static_cast<TaskSource>(source); }
};
struct Help {
  Tick t;
  std::uint32_t lane;
  Tick head_age;
};
// Wake: reported by the woken worker (the wakee: the worker whose array holds it).
struct Wake {
  Tick t;
  std::uint32_t waker;  // kOutsideWaker: a thread outside the pool, or none (IO)
  std::uint32_t why;    // WakeCause: 0 work, 1 latch, 2 IO completion
  Tick latency;
  // timed: counted in wake latency (every cause but IO, see the header comment).
  bool timed() const noexcept { return has_latency(static_cast<WakeCause>(why)); }
  // cause: saturated like the codec's enums: a large value stays outside the table.
  WakeCause cause() const noexcept { return static_cast<WakeCause>(why < 0xFF ? why : 0xFF); }
  // by_worker: the waker is one of the pool's `workers` (Summary::wake_arrows counts these;
  // every view draws its wake arrows for them).
  bool by_worker(std::uint32_t workers) const noexcept { return waker < workers; }
};
// SliceRef: one task slice, Analysis::track(worker).slices(depth)[index].
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
  bool completed;
  IoKind kind;         // submitted: the operation (completions: read from the pair)
  std::int64_t value;  // submitted: the fd; completed: the result (bytes, fd or -errno)
};
// IoOp: an operation paired with its completion (whichever workers reported them).
struct IoOp {
  std::uint64_t op = 0;
  IoKind kind{};
  std::int64_t fd = -1;
  Tick submitted = 0;
  Tick completed = 0;  // valid when done
  std::uint32_t submit_worker = 0, complete_worker = 0;
  std::int64_t result = 0;
  bool has_submit = false;
  bool done = false;
};
// GraphEvent: one of the task graph's events (spawn, wait_begin, wait_end, signal_set,
// satisfy, io_submit) as the reporting worker's innermost open task reported it, decoded once
// here (the scalability analysis reads these, never the payload words).
struct GraphEvent {
  Tick t;
  std::uint64_t on;     // spawn: the new task; waits: what for; signal_set: the signal; satisfy: the
                        // not-ready task; io_submit: the op
  std::uint64_t group;  // spawn: the group it joins (SpawnPayload::group); satisfy: what completed; else 0
  EventId type;         // spawn, wait_begin, wait_end, signal_set, satisfy or io_submit
  std::uint8_t kind;    // spawn: a SpawnKind; waits: a WaitKind; else 0
  SliceRef owner;       // the task running when it was reported (none: the worker's loop)
  SpawnKind spawn_kind() const noexcept { return static_cast<SpawnKind>(kind); }
  WaitKind wait_kind() const noexcept { return static_cast<WaitKind>(kind); }
};
struct LanePop {
  Tick t;
  std::uint32_t lane;
  Tick wait;
};
// Drop: a gap in one worker's events. The recorder writes its marker when the ring has
// room again, so the gap runs from that worker's previous event to the marker.
struct Drop {
  Tick t;  // the marker: the gap ends here
  std::uint64_t count;
  Tick gap_start;  // the worker's last event before the gap
  DropReason reason = DropReason::ring_full;
};
// Deadlock: core reported that no worker can progress: each is blocked in a wait or idle,
// some in a wait, and nothing is ready.
struct Deadlock {
  Tick t;
  std::uint64_t blocked_workers;
  std::uint64_t unfinished_tasks;
};

// StealCell: one thief -> victim pair of the steal matrix (Analysis::steal_cells).
struct StealCell {
  std::uint64_t count = 0;
  std::int8_t distance = -1;  // the distance its steals reported, or -1
};

// Percentiles: one latency statistic as every output prints it (nanoseconds).
struct Percentiles {
  std::uint64_t count = 0;
  double p50_ns = 0, p90_ns = 0, p99_ns = 0, max_ns = 0;
  std::string no_samples;  // count 0: why (Analysis::no_samples_reason), what every view prints
  friend bool operator==(const Percentiles&, const Percentiles&) = default;
};
Percentiles percentiles(const LatencyHistogram& h);

// format_duration_ns: a duration as the text outputs print it: "740 ns", "12.35 us",
// "4.56 ms", "1.230 s" (lantern-trace, diff and the demo's table).
std::string format_duration_ns(double ns);
// parse_duration_ns: what a user types for a time: "1.5ms", "200us", "3s", "120ns",
// "250000" (ns): lantern-view's --at/--window and lantern-trace export's --from/--to.
// NaN when it is not one.
double parse_duration_ns(const std::string& text);
// format_percentiles: "N samples, p50 X, p90 Y, p99 Z, max W", or for no samples
// "no samples: " and p.no_samples (or "no samples" when that is empty).
std::string format_percentiles(const Percentiles& p);

// StateShares: fractions of a span per slot - the four states, then (kUnknownState) the
// time whose state is unknown; they add up to 1, or are all 0 for an empty span.
using StateShares = std::array<double, kStateSlots>;
// state_shares: `ticks` per slot as shares of their sum, the worker's whole span (the
// decision in the header). Every share a view prints comes from here.
StateShares state_shares(const std::array<std::uint64_t, kStateSlots>& ticks) noexcept;
// state_slot_name: a slot's name as every view prints it ("active" ... "unknown").
std::string_view state_slot_name(int slot) noexcept;

// WorkerFigures: one worker's row.
struct WorkerFigures {
  // Ticks in each state over the worker's span (Analysis::state_ticks; the header says
  // which span); last slot: unknown, before the first state event. Shares: state_shares.
  std::array<std::uint64_t, kStateSlots> state_ticks{};
  std::uint64_t tasks = 0;   // task slices begun (task_begin events kept)
  std::uint64_t steals = 0;  // tasks this worker stole
  std::uint64_t helps = 0;
  std::uint64_t wakes = 0;            // times this worker was woken (wake events it reported)
  std::uint64_t wakes_performed = 0;  // wakes of other workers it caused
  std::uint64_t sleeps = 0;           // times it fell asleep (state changes to sleeping)
  std::uint64_t dropped = 0;
  friend bool operator==(const WorkerFigures&, const WorkerFigures&) = default;
};

// Summary: the figures the outputs show, computed one way for all of them.
struct Summary {
  std::optional<trace::Level> level;  // the trace header's recording level, if it says
  std::uint64_t events = 0;
  std::array<std::uint64_t, kEventCount> events_by_type{};
  std::uint64_t rejected_events = 0;  // impossible worker ids, types or states (not in `events`)
  // counted[t]: Analysis::counted(t). False: the trace's level does not record events of
  // type t, so a count of them (WorkerFigures::tasks, steals, helps...) is unknown, not 0.
  std::array<bool, kEventCount> counted{};
  bool counts(EventId t) const noexcept { return counted[static_cast<std::size_t>(t)]; }
  std::vector<WorkerFigures> workers;                                       // by worker id
  std::array<std::uint64_t, kStealDistanceCount + 1> steals_by_distance{};  // last: outside the table
  std::uint64_t wakes = 0;                                                  // every wake event
  std::uint64_t sleeps = 0;  // state changes to sleeping, all workers (WorkerFigures::sleeps)
  std::array<std::uint64_t, kWakeCauseCount + 1> wakes_by_cause{};  // last: outside the table
  std::uint64_t io_wakes = 0;     // wakes by an IO completion: left out of wake_latency
  std::uint64_t wake_arrows = 0;  // wakes with a waker in the pool (an arrow waker -> wakee)
  std::uint64_t tasks = 0;
  std::map<std::uint32_t, std::uint64_t> tasks_by_label;  // 0: no label
  std::map<std::uint32_t, Percentiles> duration_by_label;
  std::uint64_t unmatched_task_ends = 0;
  std::uint64_t unfinished_tasks =
      0;  // begun, never ended: open at the end of the stream, or open when a chunk was skipped (lose_record)
  std::uint64_t lane_pops = 0;
  std::uint64_t releases = 0;
  std::uint64_t io_submitted = 0, io_completed = 0, io_failed = 0;
  std::uint64_t io_unpaired = 0;  // IO events whose partner is not in the stream (Analysis::io_unpaired)
  std::uint64_t dropped_events = 0, drop_markers = 0;
  std::uint64_t dropped_by_reason[kDropReasonCount] = {};  // dropped_events split by DropReason
  std::uint64_t deadlocks = 0;
  Percentiles ready_wait, task_duration, wake_latency, io_latency;
  std::uint64_t warnings = 0;  // HealthChecker::warning_count: what the badge, stderr and Health show
  std::array<std::uint64_t, kProblemKindCount> warnings_by_kind{};
};

class Analysis {
 public:
  static constexpr std::uint32_t kMaxWorkerId =
      trace::kMaxWorkers;  // this and larger ids are damage (the format's bound)

  Analysis();
  ~Analysis();
  Analysis(const Analysis&) = delete;
  Analysis& operator=(const Analysis&) = delete;

  // --- in ---
  // set_header: the trace's clock (ns per tick) and worker count; `intact`: its CRC held.
  void set_header(const trace::TraceHeader& header, bool intact);
  // add: a chunk (its label names, then its events) or events. Returns false for an event
  // rejected as damage (impossible worker id, type or state), which is counted.
  void add(const trace::DecodedChunk& chunk);
  void add(std::span<const trace::Event> events);
  bool add(const trace::Event& e);
  void define_label(std::uint32_t id, const std::string& name) { labels_.define(id, name); }
  // lose_record: events were lost with a damaged or truncated chunk the reader skipped.
  // Tasks open now may have ended in it: each is closed where its worker's record stops,
  // flagged kSliceEndLost (WorkerTrack::lose_open). Releases still waiting for their
  // task's begin may have lost it too: they stay unlinked, so they cannot link to a later
  // task that reuses the id (a job's address) across the timeline.
  void lose_record();
  // advance_health: examine what arrived since the last call; finish: the stream ended:
  // health checks run to the newest event. Findings close to each other are merged in
  // the order they are found, so call advance_health after every chunk (as the viewer
  // and lantern-trace do) to get the same warnings for the same file.
  void advance_health();
  void finish();
  bool finished() const noexcept { return finished_; }
  void recheck_health(const HealthThresholds& thresholds);

  // --- time ---
  // level: the recording level the trace header says recording started at (nullopt: it
  // does not say).
  std::optional<trace::Level> level() const noexcept { return level_; }
  // format_version: the trace header's format version (0: no header was set); below 5 a
  // trace cannot hold the task graph's events.
  std::uint16_t format_version() const noexcept { return format_version_; }
  // event_cost_ns: what recording one event cost (the header's event_cost_ns; nullopt:
  // not measured). The scalability analysis takes it off own time.
  std::optional<double> event_cost_ns() const noexcept { return event_cost_ns_; }
  // cpus: the recording machine's logical CPUs (the header's rows; empty: not said).
  const std::vector<trace::CpuRow>& cpus() const noexcept { return cpus_; }
  // recorded_at_level: whether the header's level records events of type `source`
  // (nullopt: the header does not say its level).
  std::optional<bool> recorded_at_level(EventId source) const noexcept {
    if (!level_) return std::nullopt;
    return *level_ >= trace::info(source).level;
  }
  // no_samples_reason: why figures built from events of type `source` (lane_pop for the
  // ready wait, task_end for task durations, wake, io_complete) have no samples, as one
  // sentence: not recorded at the header's level, recorded but none happened, or the
  // header does not say its level. Every view that shows an empty figure prints it.
  std::string no_samples_reason(EventId source) const;
  // counted: whether a count of `source` events is a count. False when the header's level
  // does not record them and the trace holds none (the level can be raised while
  // recording; then what was recorded is counted): the count is unknown, and every view
  // prints it as not recorded, never as 0, with no_samples_reason(source) saying why.
  // True when the header does not say its level (nothing tells a 0 from an unknown).
  bool counted(EventId source) const noexcept {
    return recorded_at_level(source).value_or(true) || events_of(source) > 0;
  }
  double ns_per_tick() const noexcept { return ns_per_tick_; }
  double ticks_to_ns(double ticks) const noexcept { return ticks * ns_per_tick_; }
  double ns_to_ticks(double ns) const noexcept { return ns / ns_per_tick_; }
  // to_ns: ticks as a latency sample, converted exactly as the Recorder converts them.
  std::uint64_t to_ns(Tick ticks) const noexcept {
    return static_cast<std::uint64_t>(static_cast<double>(ticks) * ns_per_tick_);
  }
  bool empty() const noexcept { return events_ == 0; }
  Tick first_tick() const noexcept { return first_tick_; }
  Tick last_tick() const noexcept { return last_tick_; }  // open intervals end here

  // --- per worker ---
  std::uint32_t worker_count() const noexcept { return static_cast<std::uint32_t>(tracks_.size()); }
  void ensure_worker(std::uint32_t w);
  const WorkerTrack& track(std::uint32_t w) const noexcept { return *tracks_[w]; }
  const std::vector<Steal>& steals(std::uint32_t w) const noexcept { return per_worker_[w].steals; }
  const std::vector<Help>& helps(std::uint32_t w) const noexcept { return per_worker_[w].helps; }
  const std::vector<Wake>& wakes(std::uint32_t w) const noexcept { return per_worker_[w].wakes; }
  const std::vector<LanePop>& pops(std::uint32_t w) const noexcept { return per_worker_[w].pops; }
  const std::vector<Drop>& drops(std::uint32_t w) const noexcept { return per_worker_[w].drops; }
  const std::vector<Release>& releases(std::uint32_t w) const noexcept { return per_worker_[w].releases; }
  const std::vector<IoEvent>& io(std::uint32_t w) const noexcept { return per_worker_[w].io; }
  const std::vector<Deadlock>& deadlocks(std::uint32_t w) const noexcept { return per_worker_[w].deadlocks; }
  // graph_events: worker w's task-graph events in its time order (GraphEvent).
  const std::vector<GraphEvent>& graph_events(std::uint32_t w) const noexcept { return per_worker_[w].graph; }
  const TaskSlice& slice(const SliceRef& r) const noexcept {
    return track(static_cast<std::uint32_t>(r.worker)).slices(r.depth)[r.index];
  }
  // span_end: where worker w's time ends: its `stopping` state event, else the stream's
  // last event. state_time: ticks in each state over [its first event, span_end) - the
  // one definition of a worker's time per state (see the header). state_ticks: the same
  // in whole ticks, as Summary holds them; state_shares: those as shares of the span,
  // which stats, diff and the viewer's Compare view print.
  Tick span_end(std::uint32_t w) const noexcept;
  Occupancy state_time(std::uint32_t w) const noexcept;
  std::array<std::uint64_t, kStateSlots> state_ticks(std::uint32_t w) const noexcept;
  StateShares state_shares(std::uint32_t w) const noexcept;
  std::uint64_t dropped(std::uint32_t w) const noexcept { return per_worker_[w].dropped; }
  std::uint64_t failed_rounds(std::uint32_t w) const noexcept { return per_worker_[w].failed_rounds; }
  // in_gap: whether [a, b] overlaps a gap of lost events of worker w (every worker: -1).
  bool in_gap(int w, Tick a, Tick b) const noexcept;

  // --- whole stream ---
  std::uint64_t events() const noexcept { return events_; }
  std::uint64_t events_of(EventId t) const noexcept { return by_type_[static_cast<int>(t)]; }
  std::uint64_t dropped_events() const noexcept { return dropped_; }
  // dropped_events(reason): of those, the ones lost for `reason` (ring_full: the app's
  // rings; slow_viewer: the live stream dropped them for one viewer only).
  std::uint64_t dropped_events(DropReason reason) const noexcept {
    const auto r = static_cast<std::size_t>(reason);
    return r < kDropReasonCount ? dropped_by_reason_[r] : 0;
  }
  std::uint64_t rejected_events() const noexcept { return rejected_; }
  std::uint64_t steal_count(std::uint32_t thief, std::uint32_t victim) const noexcept;
  std::uint64_t max_steal_count() const noexcept { return max_steal_count_; }
  // steal_cells: the pairs with at least one steal, keyed thief << 32 | victim (steal_key),
  // in no order: a view summing the matrix reads these, never all W x W pairs.
  static constexpr std::uint64_t steal_key(std::uint32_t thief, std::uint32_t victim) noexcept {
    return static_cast<std::uint64_t>(thief) << 32 | victim;
  }
  static constexpr std::uint32_t steal_thief(std::uint64_t key) noexcept {
    return static_cast<std::uint32_t>(key >> 32);
  }
  static constexpr std::uint32_t steal_victim(std::uint64_t key) noexcept { return static_cast<std::uint32_t>(key); }
  const std::unordered_map<std::uint64_t, StealCell>& steal_cells() const noexcept { return steal_cells_; }
  // seen_distance: the distance the steals between a thief and a victim reported, or -1.
  int seen_distance(std::uint32_t thief, std::uint32_t victim) const noexcept;
  const std::array<std::uint64_t, kStealDistanceCount>& steals_by_distance() const noexcept { return by_distance_; }
  const trace::LabelTable& labels() const noexcept { return labels_; }
  trace::LabelTable& labels() noexcept { return labels_; }
  const std::map<std::uint32_t, std::uint64_t>& label_uses() const noexcept { return label_uses_; }
  // tasks_by_label: task slices begun, by label (0: none) - every view's tasks per label
  // (durations per label cover the ones that ended).
  std::map<std::uint32_t, std::uint64_t> tasks_by_label() const;
  // io_pairs: operations whose submission and completion were both seen, in the order
  // they completed; in_flight: submitted, no completion seen (yet). Paired by id in time
  // order, once every worker still running has reported past the event (so a live
  // stream pairs an operation once all workers have moved on; finish() pairs the rest).
  // io_unpaired: a completion without its submission, or a submission whose completion
  // never came before the next use of its id (events dropped, or before the stream).
  const std::vector<IoOp>& io_pairs() const noexcept { return io_pairs_; }
  const std::map<std::uint64_t, IoOp>& in_flight() const noexcept { return in_flight_; }
  std::uint64_t io_unpaired() const noexcept { return io_unpaired_; }

  // Histograms (nanoseconds, trace::LatencyBuckets).
  const LatencyHistogram& ready_wait() const noexcept { return ready_wait_; }
  const LatencyHistogram& task_duration() const noexcept { return task_duration_; }
  const LatencyHistogram& wake_latency() const noexcept { return wake_latency_; }  // IO wakes left out
  const LatencyHistogram& io_latency() const noexcept { return io_latency_; }
  // off_cpu_tasks: tasks whose task_end says their thread waited for a CPU while they ran
  // (preempted; WorkerTrack::off_cpu).
  std::uint64_t off_cpu_tasks() const noexcept { return off_cpu_tasks_; }
  const std::map<std::uint32_t, LatencyHistogram>& duration_by_label() const noexcept { return duration_by_label_; }
  std::uint64_t io_wakes() const noexcept { return io_wakes_; }
  // not_ready_samples: (time, the pool's not-ready tasks) as workers sampled them, in time
  // order across workers (a sample at the same time as others comes after them). The pool's
  // count is one gauge whichever worker samples it: each sample holds until the next.
  const std::vector<std::pair<Tick, std::uint64_t>>& not_ready_samples() const noexcept { return not_ready_; }

  HealthChecker& health() noexcept { return health_; }
  const HealthChecker& health() const noexcept { return health_; }

  // summary: the figures, as every output prints them.
  Summary summary() const;

 private:
  struct PerWorker {
    std::vector<Steal> steals;
    std::vector<Help> helps;
    std::vector<Wake> wakes;
    std::vector<LanePop> pops;
    std::vector<Drop> drops;
    std::vector<Release> releases;
    std::vector<IoEvent> io;
    std::vector<Deadlock> deadlocks;
    std::vector<GraphEvent> graph;
    std::uint64_t dropped = 0;
    std::uint64_t failed_rounds = 0;
  };
  void on_release(std::uint32_t w, Tick t, const ReleasePayload& p);
  void on_task_begun(std::uint32_t w, int depth, Tick t, std::uint64_t id);
  void on_io(std::uint32_t w, Tick t, const trace::Event& e);
  void on_graph_event(std::uint32_t w, Tick t, EventId type, std::uint64_t on, std::uint64_t group, std::uint8_t kind);

  double ns_per_tick_ = 1.0;
  std::optional<trace::Level> level_;
  std::uint16_t format_version_ = 0;
  std::optional<double> event_cost_ns_;
  std::vector<trace::CpuRow> cpus_;
  bool finished_ = false;
  Tick first_tick_ = 0;
  Tick last_tick_ = 0;
  std::vector<std::unique_ptr<WorkerTrack>> tracks_;
  std::vector<PerWorker> per_worker_;
  std::uint64_t events_ = 0;
  std::array<std::uint64_t, kEventCount> by_type_{};
  std::uint64_t dropped_ = 0;
  std::uint64_t dropped_by_reason_[kDropReasonCount] = {};
  std::uint64_t rejected_ = 0;
  // The steal matrix, sparse: only the pairs that stole, keyed thief << 32 | victim. A
  // dense W x W array costs W^2 whatever was stolen (16 M cells at the format's 4,096
  // workers), and re-laid out for each higher worker id a trace names it made reading
  // cubic in the workers whenever the header under-declares them.
  std::unordered_map<std::uint64_t, StealCell> steal_cells_;
  std::uint64_t max_steal_count_ = 0;
  std::array<std::uint64_t, kStealDistanceCount> by_distance_{};
  std::uint64_t steals_outside_table_ = 0;
  trace::LabelTable labels_;
  std::map<std::uint32_t, std::uint64_t> label_uses_;
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::size_t>> waiting_releases_;
  // begun_: the latest task begins by task id, for a release that arrives after its task
  // began on another worker (batches of workers interleave): a set-associative cache of
  // kBegunWays entries per bucket (a ring: begun_next_ is the next to replace), so a
  // release finds its task in O(1) instead of searching every worker's slices (O(W) per
  // release). A begin older than the cache holds has long been followed by its release
  // in any real trace.
  struct Begun {
    std::uint64_t id = 0;
    Tick start = 0;
    SliceRef slice;
  };
  static constexpr std::size_t kBegunBuckets = 1u << 14, kBegunWays = 4;
  std::vector<Begun> begun_;  // kBegunBuckets * kBegunWays, allocated with the first begin
  std::vector<std::uint8_t> begun_next_;
  static std::size_t begun_bucket(std::uint64_t id) noexcept;
  void remember_begin(std::uint32_t w, int depth, Tick t, std::uint64_t id);
  std::vector<IoOp> io_pairs_;
  std::map<std::uint64_t, IoOp> in_flight_;  // submitted, not completed
  // IO events not paired yet, a heap: earliest (tick, then arrival) on top (on_io). Each
  // names its IoEvent in per_worker_[worker].io, which holds the rest.
  struct WaitingIo {
    Tick t;
    std::uint64_t sequence;
    std::uint32_t worker;
    std::size_t index;
    static bool later(const WaitingIo& a, const WaitingIo& b) noexcept {
      return a.t != b.t ? a.t > b.t : a.sequence > b.sequence;
    }
  };
  std::vector<WaitingIo> io_waiting_;
  std::uint64_t io_sequence_ = 0;
  Tick io_watermark_ = 0;
  std::uint64_t io_unpaired_ = 0;
  // reported_: a min-tree over the workers' last ticks (a stopped worker: the largest
  // tick), leaves at [leaves_ + w], so the earliest is reported_[1] in O(1) and each event
  // updates it in O(log W), usually O(1): a rescan of every worker per event was O(W).
  // Kept only while IO events wait (rebuild_progress when the first comes).
  std::vector<Tick> reported_;
  std::size_t leaves_ = 0;
  void report_progress(std::uint32_t w);
  void rebuild_progress();
  Tick io_watermark() const noexcept;
  void pair_io(Tick up_to);
  std::uint64_t io_completed_ = 0, io_failed_ = 0;
  LatencyHistogram ready_wait_;
  LatencyHistogram task_duration_;
  LatencyHistogram wake_latency_;
  LatencyHistogram io_latency_;
  std::uint64_t off_cpu_tasks_ = 0;
  std::map<std::uint32_t, LatencyHistogram> duration_by_label_;
  std::uint64_t io_wakes_ = 0;
  std::uint64_t ends_lost_ = 0;  // tasks lose_record() closed: their end never arrived
  std::vector<std::pair<Tick, std::uint64_t>> not_ready_;
  HealthChecker health_;
};

}  // namespace lantern::analysis
