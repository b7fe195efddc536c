// SPDX-License-Identifier: Apache-2.0
// observe.cpp - build the Scheduler with a Recorder, start the sinks the settings ask
// for, keep every problem, and take it all down in order.
#include "lantern/observe.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "lantern/host_port.hpp"
#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/signal_trigger.hpp"
#include "lantern/instrumentation/stream_server.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/scheduler.hpp"
#include "settings.hpp"

#if LANTERN_OBSERVE_PROMETHEUS
#include "lantern/exporters/prometheus_exporter.hpp"
#endif

namespace lantern {

using namespace observe_detail;
namespace ins = instrumentation;

const char* source_name(ObserveSource source) noexcept {
  switch (source) {
    case ObserveSource::unset: return "unset";
    case ObserveSource::settings: return "settings";
    case ObserveSource::environment: return "environment";
    case ObserveSource::defaults: return "defaults";
  }
  return "?";
}

struct Observation::Impl {
  ObserveOptions options;
  ResolvedSettings resolved;
  std::string flight_prefix;
  // Declaration order is destruction order reversed: the Recorder outlives the Scheduler
  // it observes, the Collector outlives the stream attached to it.
  std::unique_ptr<ins::Recorder> recorder;
  std::unique_ptr<Scheduler> scheduler;
  // What is observed: the two above, or the app's own (observe(Scheduler&)).
  Scheduler* pool = nullptr;
  ins::Recorder* rec = nullptr;
  std::unique_ptr<ins::Collector> collector;
  std::shared_ptr<ins::TraceFileSink> trace;
  std::shared_ptr<ins::FlightRecorder> flight;
  // The dump signal, held when a flight recorder was asked for but could not start: it
  // says why instead of dumping (the signal was announced; it must not end the process).
  std::unique_ptr<ins::SignalTrigger> idle_trigger;
  ins::StreamHandle stream;
#if LANTERN_OBSERVE_PROMETHEUS
  std::unique_ptr<exporters::PrometheusExporter> metrics;
#endif
  mutable std::mutex mutex;  // guards the problem list and what poll() has seen
  mutable std::vector<std::string> problems;
  mutable bool trace_failure_seen = false;
  mutable std::uint64_t flight_failures_seen = 0;
  bool finished = false;
  int status = 0;

  ~Impl() { finish(); }

  void say(const std::string& line) const {
    if (options.log) {
      std::fprintf(options.log, "lantern: %s\n", line.c_str());
      std::fflush(options.log);
    }
  }
  // problem: report at once and keep. `printed`: someone else already said it on stderr.
  void problem(std::string text, bool printed = false) const {
    if (!printed) say(text);
    std::lock_guard<std::mutex> lock(mutex);
    problems.push_back(std::move(text));
  }
  std::string origin(std::optional<std::string> ObserveSettings::*field) const {
    return describe_origin(resolved, index_of(field));
  }

  // poll: ask the sinks for failures that happened since (a trace that failed on a full
  // disk, a flight dump that failed on a signal).
  void poll() const {
    if (trace && !trace->ok()) {
      bool first = false;
      {
        std::lock_guard<std::mutex> lock(mutex);
        first = !trace_failure_seen;
        trace_failure_seen = true;
      }
      // The sink said it on stderr when it happened (TraceFileSink's report): keep it
      // for the exit status without saying it twice.
      if (first) problem(trace->failure(), /*printed=*/true);
    }
    if (flight) {
      const std::uint64_t failures = flight->dump_failures();
      std::uint64_t fresh = 0;
      {
        std::lock_guard<std::mutex> lock(mutex);
        fresh = failures - flight_failures_seen;
        flight_failures_seen = failures;
      }
      // Each failed dump said why on stderr when it failed (the signal thread, or the
      // caller of dump_flight): keep them without saying them twice.
      if (fresh > 0) {
        problem(std::to_string(fresh) + " flight recorder dump(s) failed; the last: " + flight->last_dump_error(),
                /*printed=*/true);
      }
    }
  }

  int finish() {
    if (finished) return status;
    finished = true;
#if LANTERN_OBSERVE_PROMETHEUS
    metrics.reset();  // stop serving before the scheduler goes
#endif
    if (scheduler) scheduler->shutdown();  // only the pool observe() built
    if (collector) collector->stop();      // the last events reach every sink, which flush
    // An app's own pool runs on: nothing reads its events any more.
    if (!scheduler && rec) rec->set_level(trace::Level::off);
    // Viewers get the end too; the stream stays up (its figures readable) until the
    // handle goes.
    if (stream) stream->wait_until_sent(std::chrono::seconds(5));
    poll();
    std::lock_guard<std::mutex> lock(mutex);
    status = problems.empty() ? 0 : 1;
    return status;
  }

  // What the settings ask for (decide), then the scheduler (build or attach), then the
  // sinks (start_sinks).
  struct Wants {
    trace::Level level = trace::Level::tasks;
    bool trace = false, stream = false, flight = false, metrics = false, events = false;
    bool recorder() const { return events || metrics; }
  };
  Wants decide();
  void build(SchedulerOptions scheduler_options);
  void attach(Scheduler& existing);
  void start_sinks(const Wants& wants);
  void start_flight(const trace::TraceHeader& header, trace::Level level);
  // flight_signal: the dump signal the settings name (0: none); *named: a setting named it.
  int flight_signal(bool* named);
  void hold_signal_idle(const std::string& why);
};

Observation::Impl::Wants Observation::Impl::decide() {
  resolved = resolve(options);
  const ObserveSettings& s = resolved.values;
  Wants w;
  if (s.level && !s.level->empty()) {
    if (auto parsed = parse_level(*s.level)) {
      w.level = *parsed;
    } else {
      problem(origin(&ObserveSettings::level) +
              ": not a level (off, states, tasks, full, graph); recording at level tasks");
    }
  }
  w.trace = s.trace && !s.trace->empty();
  w.stream = s.stream && !s.stream->empty();
  w.flight = s.flight && !s.flight->empty();
  w.metrics = s.metrics && !s.metrics->empty();
  w.events = w.trace || w.stream || w.flight || options.view;
  // Nothing that reads events: record none (the exact counters stay, for /metrics), and
  // run no collector thread, so an idle program stays idle.
  if (!w.events) w.level = trace::Level::off;
  return w;
}

void Observation::Impl::build(SchedulerOptions scheduler_options) {
  const Wants wants = decide();
  if (wants.recorder() || options.counters) {
    if (scheduler_options.observer) {
      throw std::invalid_argument(
          "lantern::observe: SchedulerOptions::observer is already set; observe() attaches its own Recorder "
          "(to observe a pool built with a Recorder of its own: observe(Scheduler&, ObserveOptions))");
    }
    if (scheduler_options.workers == 0) scheduler_options.workers = std::max(1u, std::thread::hardware_concurrency());
    // Tasks are timed for /metrics' task-duration histogram while its collectable exists
    // (it asks the Recorder: Recorder::time_tasks), so not when nothing serves it.
    ins::RecorderOptions recorder_options{.level = wants.level};
    if (options.ring_capacity) recorder_options.ring_capacity = options.ring_capacity;
    recorder = std::make_unique<ins::Recorder>(scheduler_options.workers, recorder_options);
    scheduler_options.observer = recorder.get();
  }
  scheduler = std::make_unique<Scheduler>(scheduler_options);
  pool = scheduler.get();
  rec = recorder.get();
  if (!rec) return;
  if (rec->worker_count() != pool->worker_count()) {
    throw std::logic_error("lantern::observe: the scheduler has " + std::to_string(pool->worker_count()) +
                           " workers, the recorder " + std::to_string(rec->worker_count()));
  }
  start_sinks(wants);
}

void Observation::Impl::attach(Scheduler& existing) {
  const Wants wants = decide();
  pool = &existing;
  if (!wants.recorder() && !options.counters) return;
  Observer* observer = existing.observer();
  rec = dynamic_cast<ins::Recorder*>(observer);
  if (!rec || rec->worker_count() != existing.worker_count()) {
    const std::string why = !observer ? "it was built without an observer"
                            : !rec    ? "its observer is not a lantern::instrumentation::Recorder"
                                      : "its Recorder was made for another worker count";
    rec = nullptr;
    problem("cannot observe this Scheduler: " + why +
            ". An observer is fixed when a Scheduler is built: give it a Recorder (SchedulerOptions::observer) "
            "to observe it. Nothing is traced, streamed, recorded or served");
    if (wants.flight) hold_signal_idle("this Scheduler cannot be observed");
    return;
  }
  rec->set_level(wants.level);
  start_sinks(wants);
}

void Observation::Impl::start_sinks(const Wants& wants) {
  const ObserveSettings& s = resolved.values;
  const trace::Level level = wants.level;
  collector = std::make_unique<ins::Collector>(*rec);
  const trace::TraceHeader header = ins::make_trace_header(*pool, *rec, options.program);
  const std::string level_name(trace::kLevelNames[static_cast<int>(level)]);

  if (wants.trace) {
    // A write that fails later (a full disk) is said once, when it happens, where every
    // other problem is said (options.log); poll() keeps it for the exit status.
    auto sink = std::make_shared<ins::TraceFileSink>(*s.trace, header, &ins::process_labels(),
                                                     [this](const std::string& message) { say(message); });
    if (sink->ok()) {
      trace = sink;
      collector->attach(sink);
      say("tracing to " + *s.trace + " (level " + level_name + ")");
    } else {
      problem(origin(&ObserveSettings::trace) + ": not recording a trace: " + sink->error());
    }
  }
  if (wants.flight) start_flight(header, level);
  if (options.view) {
    std::string error;
    stream = ins::open_viewer(*collector, header, &error, options.viewer);
    if (stream) {
      say("lantern-view attached on " + stream->address());
    } else {
      problem("could not open the viewer: " + error);
    }
  }
  if (wants.stream && !stream) {
    std::string why;
    if (auto address = parse_host_port(*s.stream, &why, {.allow_port_zero = true})) {
      ins::StreamOptions stream_options;
      stream_options.host = address->host;
      stream_options.port = address->port;
      if (options.stream_client_buffer_bytes) stream_options.client_buffer_bytes = options.stream_client_buffer_bytes;
      std::string error;
      stream = ins::start_stream(*collector, header, stream_options, &error);
      if (stream) {
        say("streaming on " + stream->address() + " (watch it: lantern-view --attach " + stream->address() + ")");
      } else {
        problem(origin(&ObserveSettings::stream) + ": not streaming: " + error);
      }
    } else {
      problem(origin(&ObserveSettings::stream) + ": " + why + "; not streaming");
    }
  }
  if (wants.events) collector->start();

  if (wants.metrics) {
#if LANTERN_OBSERVE_PROMETHEUS
    try {
      metrics = std::make_unique<exporters::PrometheusExporter>(*pool, *rec,
                                                                exporters::PrometheusOptions{.address = *s.metrics});
      say("serving metrics on " + metrics->url());
    } catch (const std::exception& e) {
      problem(origin(&ObserveSettings::metrics) + ": not serving metrics: " + e.what());
    }
#else
    problem(origin(&ObserveSettings::metrics) +
            ": this Lantern was built without the Prometheus exporter (LANTERN_BUILD_PROMETHEUS=OFF)");
#endif
  }
}

int Observation::Impl::flight_signal(bool* named) {
  const ObserveSettings& s = resolved.values;
  *named = s.flight_signal && !s.flight_signal->empty();
  if (!*named) return SIGUSR2;
  std::string why;
  if (const auto signo = ins::parse_trigger_signal(*s.flight_signal, &why)) return *signo;
  problem(origin(&ObserveSettings::flight_signal) + ": " + why + "; using SIGUSR2");
  return SIGUSR2;
}

void Observation::Impl::hold_signal_idle(const std::string& why) {
  bool named = false;
  const int signo = flight_signal(&named);
  if (signo == 0) return;
  const std::string label = ins::signal_label(signo);
  std::string error;
  idle_trigger = ins::SignalTrigger::take(
      signo,
      [label, why](std::uint64_t) {
        std::fprintf(stderr, "lantern: %s received, but no flight recorder is running (%s); nothing dumped\n",
                     label.c_str(), why.c_str());
      },
      &error);
  if (idle_trigger) {
    say(label +
        " stays Lantern's: it says why there is no flight recorder instead of dumping, and never ends "
        "the process");
  } else if (named) {
    problem(origin(&ObserveSettings::flight_signal) + ": " + error);
  } else {
    say(error);
  }
}

void Observation::Impl::start_flight(const trace::TraceHeader& header, trace::Level level) {
  const ObserveSettings& s = resolved.values;
  std::string why;
  const auto spec = parse_flight(*s.flight, &why);
  if (!spec) {
    problem(origin(&ObserveSettings::flight) + ": " + why + "; no flight recorder");
    hold_signal_idle(origin(&ObserveSettings::flight) + " is not valid");
    return;
  }
  const std::string dir = s.flight_dir && !s.flight_dir->empty() ? *s.flight_dir : ".";
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || access(dir.c_str(), W_OK | X_OK) != 0) {
    const std::string where = s.flight_dir ? origin(&ObserveSettings::flight_dir) : "the current directory";
    problem(where + ": not a writable directory, so the flight recorder could not be dumped; no flight recorder");
    hold_signal_idle(where + " is not a writable directory");
    return;
  }
  ins::FlightRecorderOptions flight_options;
  flight_options.keep_seconds = spec->keep_seconds > 0 ? spec->keep_seconds : 1e6;  // by size only: ~11 days
  if (spec->max_bytes) flight_options.max_bytes = spec->max_bytes;
  auto recorder_sink = std::make_shared<ins::FlightRecorder>(header, flight_options);
  flight_prefix = (dir == "." ? std::string() : dir + "/") + options.program + "-flight";
  bool named = false;
  const int signo = flight_signal(&named);
  std::string trigger = "call Observation::dump_flight";
  if (signo != 0) {
    const std::string error = recorder_sink->dump_on_signal(flight_prefix, signo);
    if (error.empty()) {
      trigger = "`kill -" + ins::signal_label(signo).substr(3) + " " + std::to_string(getpid()) + "`";
      if (signo >= SIGRTMIN) trigger = "`kill -" + std::to_string(signo) + " " + std::to_string(getpid()) + "`";
    } else if (named) {
      // Asked for by name: not having it is a problem.
      problem(origin(&ObserveSettings::flight_signal) + ": the flight recorder does not take " +
              ins::signal_label(signo) + ": " + error);
    } else {
      // The default signal, which the app handles itself: Lantern leaves it alone; the
      // recorder works through the call. Said, not a failure.
      say("the flight recorder does not take " + ins::signal_label(signo) + ": " + error);
    }
  }
  flight = recorder_sink;
  collector->attach(recorder_sink);
  char keeps[96];
  if (spec->keep_seconds > 0) {
    std::snprintf(keeps, sizeof(keeps), "the last %g s (at most %zu MiB)", flight_options.keep_seconds,
                  flight_options.max_bytes >> 20);
  } else {
    std::snprintf(keeps, sizeof(keeps), "the last %zu MiB", flight_options.max_bytes >> 20);
  }
  say(std::string("flight recorder keeps ") + keeps + " at level " +
      std::string(trace::kLevelNames[static_cast<int>(level)]) + "; " + trigger + " dumps it to " + flight_prefix +
      "-<UTC time>-<n>.trace");
}

Observation::Observation(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Observation::Observation(Observation&&) noexcept = default;
Observation& Observation::operator=(Observation&&) noexcept = default;
Observation::~Observation() = default;

Scheduler& Observation::scheduler() noexcept { return *impl_->pool; }
ins::Recorder* Observation::recorder() const noexcept { return impl_->rec; }
ins::Collector* Observation::collector() const noexcept { return impl_->collector.get(); }
ins::TraceFileSink* Observation::trace() const noexcept { return impl_->trace.get(); }
ins::FlightRecorder* Observation::flight() const noexcept { return impl_->flight.get(); }
ins::StreamServer* Observation::stream() const noexcept { return impl_->stream.get(); }
exporters::PrometheusExporter* Observation::metrics() const noexcept {
#if LANTERN_OBSERVE_PROMETHEUS
  return impl_->metrics.get();
#else
  return nullptr;
#endif
}

const ObserveSettings& Observation::settings() const noexcept { return impl_->resolved.values; }

ObserveSource Observation::source(std::optional<std::string> ObserveSettings::*field) const noexcept {
  const std::size_t i = index_of(field);
  return i < kSettingCount ? impl_->resolved.sources[i] : ObserveSource::unset;
}

std::string Observation::dump_flight(const std::string& path, std::string* error) {
  std::string why, written;
  if (!impl_->flight) {
    why = "no flight recorder is running (set LANTERN_FLIGHT, e.g. LANTERN_FLIGHT=30s, or ObserveSettings::flight)";
    impl_->problem("dump_flight: " + why);
  } else {
    if (impl_->collector) impl_->collector->drain_now();  // the dump includes what the rings hold now
    if (path.empty()) {
      why = impl_->flight->dump_to_new_file(impl_->flight_prefix, &written);
    } else {
      why = impl_->flight->dump(path);
      if (why.empty()) written = path;
    }
    if (!why.empty()) impl_->say(why);  // kept by poll(), which counts the recorder's failures
  }
  if (error) *error = why;
  return written;
}

bool Observation::ok() const {
  impl_->poll();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->problems.empty();
}

std::vector<std::string> Observation::problems() const {
  impl_->poll();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->problems;
}

int Observation::finish() { return impl_->finish(); }

Observation observe(SchedulerOptions scheduler, ObserveOptions options) {
  auto impl = std::make_unique<Observation::Impl>();
  impl->options = std::move(options);
  impl->build(std::move(scheduler));
  return Observation(std::move(impl));
}

Observation observe(Scheduler& pool, ObserveOptions options) {
  auto impl = std::make_unique<Observation::Impl>();
  impl->options = std::move(options);
  impl->attach(pool);
  return Observation(std::move(impl));
}

}  // namespace lantern
