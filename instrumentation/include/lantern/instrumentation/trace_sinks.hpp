// SPDX-License-Identifier: Apache-2.0
// trace_sinks.hpp - sinks that put events into the trace format: a file written as the
// program runs, and a flight recorder that keeps the last N seconds (or bytes) in memory
// and writes them out on demand (an API call, or a signal).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lantern/instrumentation/process_labels.hpp"
#include "lantern/instrumentation/signal_trigger.hpp"
#include "lantern/instrumentation/sink.hpp"
#include "lantern/trace/chunk_encoder.hpp"
#include "lantern/trace/trace_header.hpp"
#include "lantern/trace/trace_writer.hpp"

namespace lantern {
class Scheduler;
}

namespace lantern::instrumentation {

class Recorder;

// make_trace_header describes this machine, the scheduler's topology and worker count,
// and the clock calibration: everything a reader needs besides the events. Given the
// Recorder that feeds the trace, it also says the level it records at now (the header's
// recording level, which readers use to tell "not recorded at this level" from "did not
// happen"); without one the header does not say.
trace::TraceHeader make_trace_header(const Scheduler& scheduler, std::string producer);
trace::TraceHeader make_trace_header(const Scheduler& scheduler, const Recorder& recorder, std::string producer);

// TraceFileSink writes every event it receives to a trace file. A failure (disk full, a
// removed directory) stops the writing, not the program, and is reported when it
// happens, once: `report` (stderr by default) gets a sentence naming the file, the bytes
// written and the OS's reason, on the collector's thread, and failure() returns it from
// then on, for Collector::failures() and a non-zero exit. The events up to the last
// complete chunk stay readable. A path that cannot be created is a failure from the
// constructor on: ok() is false and failure() says why (not passed to `report`: the
// caller learns it at once and decides what to print). Each chunk names the task labels
// it uses, looked up in `labels` (the process's, by default), which must outlive the sink.
class TraceFileSink final : public Sink {
 public:
  using Report = std::function<void(const std::string& message)>;
  // report_to_stderr: the default Report, "lantern: <message>" on stderr.
  static void report_to_stderr(const std::string& message);

  TraceFileSink(const std::string& path, const trace::TraceHeader& header,
                const trace::LabelNames* labels = &process_labels(), Report report = &report_to_stderr);
  void on_batch(std::span<const trace::Event> events) override;
  void on_flush() override;
  std::string failure() const override;
  bool ok() const;
  std::string error() const;  // empty when ok: the OS-level reason (failure() adds the bytes written)
  trace::WriterStats stats() const;
  const std::string& path() const noexcept { return path_; }

 private:
  void check_failed();  // requires mutex_: the first failure is reported once

  std::string path_;
  Report report_;
  mutable std::mutex mutex_;
  trace::TraceWriter writer_;
  std::string failure_;  // guarded by mutex_
};

struct FlightRecorderOptions {
  double keep_seconds = 10.0;         // keep at least the last this many seconds...
  std::size_t max_bytes = 64u << 20;  // ...but never more than this many encoded bytes
  trace::ChunkLimits chunk_limits{.target_payload_bytes = 16u << 10, .max_events = 1u << 14};
  // Where task label names come from; each kept chunk names its own, so a dump names
  // every label its chunks use even after older chunks were forgotten.
  const trace::LabelNames* labels = &process_labels();
};

// FlightRecorder keeps recent events as encoded chunks (5-6 bytes an event in a recorded
// run), so ten seconds of a busy scheduler fit in memory, and dumps them as a normal
// trace file.
class FlightRecorder final : public Sink {
 public:
  FlightRecorder(const trace::TraceHeader& header, FlightRecorderOptions options = {});
  ~FlightRecorder() override;

  void on_batch(std::span<const trace::Event> events) override;

  // dump writes the header and every kept chunk (plus the open one) to `path`. Returns
  // an empty string on success, else a message naming the file and the reason. The file
  // is written under a temporary name beside `path` and renamed into place when whole,
  // so a failed dump (unwritable directory, disk full) leaves no file at all.
  std::string dump(const std::string& path);
  // dump_to_new_file: the same, to a new file "<prefix>-<UTC time>-<n>.trace" (n counts
  // this recorder's dumps) that is never one that exists: a name taken by anyone else
  // moves on to the next n. Sets *path to the file written.
  std::string dump_to_new_file(const std::string& prefix, std::string* path);

  // dump_on_signal: from now on, signal `signo` (default SIGUSR2) makes a background
  // thread ("lantern-flight") dump to a new file (dump_to_new_file with `path_prefix`)
  // and say on stderr where, or why it failed. Returns "" when it took the signal, else a
  // sentence saying why not (then nothing changed): the application handles the signal
  // itself (Lantern never takes a signal from the application), another trigger holds
  // one, or the signal cannot be used. The signal is handled as SignalTrigger says
  // (lantern/instrumentation/signal_trigger.hpp): async-signal-safe, never fatal once
  // taken, not even after the recorder is gone. Signals that arrive while a dump is being
  // written are honoured by one more dump after it; several of them are merged into that
  // one dump, and its line on stderr says how many requests it covers. One trigger per
  // process.
  std::string dump_on_signal(std::string path_prefix, int signo = 0);

  std::size_t kept_bytes() const;
  std::size_t kept_chunks() const;
  std::uint64_t dumps() const noexcept { return dumps_.load(std::memory_order_relaxed); }
  // dump_failures: dumps that failed (each said why on stderr or to its caller);
  // last_dump_error: the newest such message ("" if none).
  std::uint64_t dump_failures() const noexcept { return dump_failures_.load(std::memory_order_relaxed); }
  std::string last_dump_error() const;
  // signals_merged: signal requests served by a dump that another request started.
  std::uint64_t signals_merged() const noexcept { return signals_merged_.load(std::memory_order_relaxed); }

 private:
  struct Chunk {
    std::vector<std::uint8_t> bytes;
    std::uint64_t last_ticks;
  };
  void seal_open_chunk();  // requires mutex_
  void trim();             // requires mutex_
  // write_dump: the kept chunks to a temporary file, renamed to `path` when whole (over
  // an existing file only if `replace`); "exists" is returned when !replace and it does.
  std::string write_dump(const std::string& path, bool replace);
  std::string failed(std::string error);                    // counts and keeps a failed dump's message
  static std::string failed_name(const std::string& path);  // "flight recorder dump to 'P' failed, ..."

  trace::TraceHeader header_;
  FlightRecorderOptions options_;
  std::uint64_t keep_ticks_;
  mutable std::mutex mutex_;
  trace::ChunkEncoder encoder_;
  std::uint64_t open_last_ticks_ = 0;
  std::deque<Chunk> chunks_;
  std::size_t bytes_ = 0;
  std::uint64_t newest_ticks_ = 0;
  std::atomic<std::uint64_t> dumps_{0};
  std::atomic<std::uint64_t> dump_failures_{0};
  std::atomic<std::uint64_t> dump_sequence_{0};
  std::atomic<std::uint64_t> signals_merged_{0};
  mutable std::mutex error_mutex_;
  std::string last_dump_error_;
  std::string path_prefix_;                 // for dumps on a signal
  std::unique_ptr<SignalTrigger> trigger_;  // last: stops (and serves what is pending) first
};

}  // namespace lantern::instrumentation
