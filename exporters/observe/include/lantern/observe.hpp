// SPDX-License-Identifier: Apache-2.0
// observe.hpp - lantern::observe: all of Lantern's observability with one call.
//
//   #include <lantern/observe.hpp>
//
//   int main() {
//     auto obs = lantern::observe({.workers = 4}, {.program = "my_app"});
//     lantern::Scheduler& pool = obs.scheduler();
//     pool.run([] { /* ... */ });
//     return obs.finish();   // 0, or 1 when something the app asked for failed
//   }
//
// and then, without changing the code:
//
//   LANTERN_TRACE=run.trace LANTERN_LEVEL=full ./my_app         # a trace for lantern-view
//   LANTERN_METRICS=127.0.0.1:9464 ./my_app                      # /metrics for Prometheus
//   LANTERN_STREAM=127.0.0.1:7777 ./my_app                       # lantern-view --attach
//   LANTERN_FLIGHT=30s ./my_app & kill -USR2 $!                  # the last 30 s, on demand
//
// An app that owns its Scheduler already gives it a Recorder when it builds it, and
// observes it with the same settings (see observe(Scheduler&, ...) below):
//
//   lantern::instrumentation::Recorder recorder(4);
//   lantern::Scheduler pool({.workers = 4, .observer = &recorder});
//   auto obs = lantern::observe(pool, {.program = "my_app"});
//
// observe() builds the Scheduler with a Recorder attached (an observer is given to a
// scheduler when it is built and must outlive it, so the handle owns both, in the right
// order), a Collector, and the sinks asked for: trace file, flight recorder, Prometheus
// /metrics, live stream, the viewer. The handle owns them all and takes them down in
// order: finish() (or the destructor) stops serving metrics, shuts the scheduler down,
// drains the last events into every sink, lets the viewers receive them, and reports.
//
// Where each setting comes from (first wins):
//   1. ObserveOptions::settings - what the app decided, e.g. from its own command line;
//   2. the environment: LANTERN_TRACE, LANTERN_LEVEL, LANTERN_METRICS, LANTERN_STREAM,
//      LANTERN_FLIGHT, LANTERN_FLIGHT_DIR, LANTERN_FLIGHT_SIGNAL (unless
//      ObserveOptions::environment is false);
//   3. ObserveOptions::defaults - the app's defaults.
// "" turns a sink off: in settings, whatever the environment says; in the environment
// (LANTERN_FLIGHT= ./app), whatever the defaults say. An empty level or flight directory
// means the default (tasks; the current directory).
//
// Failures never stop the app and are never silent: a bad value, a port in use, a trace
// path that cannot be written, a trace that fails later (disk full), a flight dump that
// fails - each is printed on stderr at once (one line, "lantern: ..."), and kept in
// problems(); finish() returns non-zero when there was any, so `return obs.finish();`
// makes the program's exit status say whether its observability worked.
//
// Layering: this library sits above instrumentation and the exporters and links both;
// instrumentation never depends on an exporter.
#pragma once

#include <cstddef>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lantern/options.hpp"

namespace lantern {
class Scheduler;
namespace instrumentation {
class Recorder;
class Collector;
class TraceFileSink;
class FlightRecorder;
class StreamServer;
}  // namespace instrumentation
namespace exporters {
class PrometheusExporter;
}

// ObserveSettings: what to observe. Every field is optional: unset means "not decided
// here" (see the order above); "" means "off".
struct ObserveSettings {
  std::optional<std::string> trace;    // LANTERN_TRACE: write a trace file at this path
  std::optional<std::string> level;    // LANTERN_LEVEL: off, states, tasks (default), full or graph
  std::optional<std::string> metrics;  // LANTERN_METRICS: serve /metrics on HOST:PORT (port 0: any free)
  std::optional<std::string> stream;   // LANTERN_STREAM: serve the live stream on HOST:PORT (or :PORT)
  // LANTERN_FLIGHT: keep a flight recorder in memory, dumped by SIGUSR2 and by
  // Observation::dump_flight: "30s" or "30" (the last 30 seconds, at most 64 MiB),
  // "64MB" (the last 64 MiB, 1 MB = 2^20 bytes), or both: "30s,64MB".
  std::optional<std::string> flight;
  std::optional<std::string> flight_dir;  // LANTERN_FLIGHT_DIR: where dumps go (default: the current directory)
  // LANTERN_FLIGHT_SIGNAL: the signal that dumps the flight recorder: USR2 (the default),
  // USR1, SIGUSR1, a number, or "none" (dumps only through Observation::dump_flight).
  // Lantern never takes a signal the application handles: when the app has a handler for
  // it (a sigaction that is neither SIG_DFL nor SIG_IGN), observe() says so on the log,
  // leaves the app's handler alone, and the recorder is dumped through dump_flight only
  // (an app that wants its own handler to dump sets a flag there and calls dump_flight
  // from one of its threads: a dump allocates and writes files, which a handler must
  // not). Once Lantern has said it takes the signal, the signal never ends the process:
  // not when the flight recorder could not start (a bad LANTERN_FLIGHT or
  // LANTERN_FLIGHT_DIR: the signal then says that on stderr instead of dumping), and not
  // after finish() or during exit (lantern/instrumentation/signal_trigger.hpp).
  std::optional<std::string> flight_signal;
};

struct ObserveOptions {
  // program names the trace's producer and the flight recorder's dump files
  // ("<program>-flight-<UTC time>-<n>.trace").
  std::string program = "lantern";
  ObserveSettings settings;  // 1: the app's decisions
  bool environment = true;   // 2: read the LANTERN_* variables
  ObserveSettings defaults;  // 3: the app's defaults
  // counters: attach the Recorder (exact per-worker counters and histograms) even when no
  // sink needs it. Without any sink and without this, the scheduler runs unobserved.
  bool counters = false;
  // view: launch lantern-view attached over a loopback stream (a separate process);
  // viewer is its path (else $LANTERN_VIEW, else lantern-view on PATH).
  bool view = false;
  std::string viewer;
  std::size_t ring_capacity = 0;               // events per worker ring (0: the Recorder's default)
  std::size_t stream_client_buffer_bytes = 0;  // per viewer (0: the stream's default)
  // log: where observe() says what it started and every problem ("lantern: ..." lines);
  // nullptr: nowhere (problems() still has them).
  std::FILE* log = stderr;
};

// ObserveSource: where a resolved setting came from.
enum class ObserveSource { unset, settings, environment, defaults };
const char* source_name(ObserveSource source) noexcept;

class Observation {
 public:
  Observation(Observation&&) noexcept;
  Observation& operator=(Observation&&) noexcept;
  ~Observation();  // finish(), if not done yet

  Scheduler& scheduler() noexcept;
  Scheduler* operator->() noexcept { return &scheduler(); }

  // The parts, or nullptr when not running.
  instrumentation::Recorder* recorder() const noexcept;
  instrumentation::Collector* collector() const noexcept;
  instrumentation::TraceFileSink* trace() const noexcept;
  instrumentation::FlightRecorder* flight() const noexcept;
  instrumentation::StreamServer* stream() const noexcept;
  exporters::PrometheusExporter* metrics() const noexcept;

  // settings: what was decided for each setting (after the environment and the defaults)
  // and source(): where it came from.
  const ObserveSettings& settings() const noexcept;
  ObserveSource source(std::optional<std::string> ObserveSettings::*field) const noexcept;

  // dump_flight writes the flight recorder's window, up to this moment (the rings are
  // drained into it first): to `path`, or, when it is
  // empty, to a new file named like a signal's dump in the flight directory (never one
  // that exists). Returns the path written; on failure "" and *error says why (also
  // reported like every problem). No flight recorder: "" and an error.
  std::string dump_flight(const std::string& path = {}, std::string* error = nullptr);

  // ok: no problem so far. It asks the sinks, so a trace that has failed since is seen.
  bool ok() const;
  // problems: every problem, in order, one sentence each.
  std::vector<std::string> problems() const;

  // finish stops serving metrics, shuts the scheduler down (pending work runs first; not
  // a pool the app owns, see observe(Scheduler&, ...)),
  // drains the last events into every sink, waits (up to 5 s) for viewers to receive
  // them, closes the trace and reports any problem not reported yet. Returns 0 when
  // ok(), else 1: `return obs.finish();`. Idempotent; the flight recorder can still be
  // dumped after it; the scheduler cannot be used after it.
  int finish();

  struct Impl;

 private:
  friend Observation observe(SchedulerOptions, ObserveOptions);
  friend Observation observe(Scheduler&, ObserveOptions);
  explicit Observation(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// observe builds a Scheduler from `scheduler` (which must not already name an observer:
// std::invalid_argument) and observes it as `options` and the environment say. Throws
// only what the Scheduler's constructor throws (bad options); every observability
// problem is reported and kept instead (see above).
Observation observe(SchedulerOptions scheduler = {}, ObserveOptions options = {});

// observe(pool, options) observes a Scheduler the app built and owns, with the same
// settings, sinks and problems. What it can observe comes through the pool's observer:
// build the pool with a lantern::instrumentation::Recorder as SchedulerOptions::observer
// (an observer is fixed when a Scheduler is built, because its workers read it on every
// hook without a lock; none can be added to a running pool). /metrics times tasks for its
// task-duration histogram while it serves (Recorder::time_tasks). observe() sets
// the Recorder's level (off when nothing reads events). A pool without a Recorder runs
// unobserved, and each sink asked for is reported as a problem that says this.
// The pool and its Recorder must outlive the Observation (declare them first). finish()
// does not shut the app's pool down: it stops the sinks, draining what the workers have
// recorded so far (shut the pool down first for a trace that ends with the workers
// stopping), and sets the Recorder's level to off.
Observation observe(Scheduler& pool, ObserveOptions options = {});

}  // namespace lantern
