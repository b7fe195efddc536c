// SPDX-License-Identifier: Apache-2.0
// trace_sinks.cpp - trace file sink, flight recorder, and the header describing a run.
#include "lantern/instrumentation/trace_sinks.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>

#include "lantern/clock.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/scheduler.hpp"

namespace lantern::instrumentation {

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

}  // namespace

trace::TraceHeader make_trace_header(const Scheduler& scheduler, std::string producer) {
  trace::TraceHeader h;
  h.producer = std::move(producer);
  h.hostname = hostname();
  h.cpu_model = cpu_model();
  h.topology = scheduler.topology().describe();
  for (const CpuInfo& c : scheduler.topology().cpus()) {
    h.cpus.push_back({c.os_cpu, c.core, c.l2, c.llc, c.numa_node, c.package});
  }
  h.workers = scheduler.worker_count();
  const TickCalibration& cal = calibration();
  h.clock = {cal.tsc, cal.ns_per_tick, cal.base_ticks, cal.base_ns};
  h.wall_start_unix_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return h;
}

trace::TraceHeader make_trace_header(const Scheduler& scheduler, const Recorder& recorder, std::string producer) {
  trace::TraceHeader h = make_trace_header(scheduler, std::move(producer));
  h.level = recorder.level();
  h.event_cost_ns = recorder.event_cost_ns();
  return h;
}

// --- TraceFileSink ---

void TraceFileSink::report_to_stderr(const std::string& message) {
  std::fprintf(stderr, "lantern: %s\n", message.c_str());
}

TraceFileSink::TraceFileSink(const std::string& path, const trace::TraceHeader& header, const trace::LabelNames* labels,
                             Report report)
    : path_(path),
      report_(std::move(report)),
      writer_(trace::TraceWriter::create(path, header, trace::WriterOptions{.labels = labels})) {
  if (const trace::TraceError* e = writer_.error()) failure_ = "not recording a trace: " + e->message;
}

void TraceFileSink::check_failed() {
  if (!failure_.empty()) return;
  const trace::TraceError* e = writer_.error();
  if (!e) return;
  const std::uint64_t written = writer_.stats().bytes;
  // A write that failed before the first chunk was whole removed the file (the writer's
  // message says so): it never held an event.
  failure_ = "the trace stopped being written after " + std::to_string(written) + " bytes to '" + path_ +
             "': " + e->message + ". The program keeps running" +
             (writer_.stats().chunks > 0 ? "; the file holds the events up to its last complete chunk."
                                         : ". No event had been written, so no file is left.");
  if (report_) report_(failure_);
}

void TraceFileSink::on_batch(std::span<const trace::Event> events) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (writer_.ok()) {
    writer_.write(events);
    check_failed();
  }
}

void TraceFileSink::on_flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (writer_.ok()) {
    writer_.flush();
    check_failed();
  }
}

std::string TraceFileSink::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

bool TraceFileSink::ok() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return writer_.ok();
}

std::string TraceFileSink::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const trace::TraceError* e = writer_.error();
  return e ? e->message : std::string();
}

trace::WriterStats TraceFileSink::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return writer_.stats();
}

// --- FlightRecorder ---

FlightRecorder::FlightRecorder(const trace::TraceHeader& header, FlightRecorderOptions options)
    : header_(header),
      options_(options),
      keep_ticks_(static_cast<std::uint64_t>(options.keep_seconds * 1e9 / header.safe_ns_per_tick())),
      encoder_(options.chunk_limits, options.labels) {}

FlightRecorder::~FlightRecorder() { trigger_.reset(); }

void FlightRecorder::on_batch(std::span<const trace::Event> events) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const trace::Event& e : events) {
    if (encoder_.add(e) == trace::ChunkEncoder::AddResult::chunk_full) {
      seal_open_chunk();
      encoder_.add(e);
    }
    open_last_ticks_ = std::max(open_last_ticks_, e.ticks);
    newest_ticks_ = std::max(newest_ticks_, e.ticks);
    if (encoder_.full()) seal_open_chunk();
  }
  trim();
}

void FlightRecorder::seal_open_chunk() {
  Chunk c;
  if (encoder_.finish_chunk(c.bytes) == 0) return;
  c.last_ticks = open_last_ticks_;
  bytes_ += c.bytes.size();
  chunks_.push_back(std::move(c));
  open_last_ticks_ = 0;
}

void FlightRecorder::trim() {
  // Whole chunks fall off the front: by size always, by age once a newer chunk covers
  // the window (so a quiet program still has its last burst).
  while (!chunks_.empty() && (bytes_ > options_.max_bytes ||
                              (chunks_.size() > 1 && chunks_.front().last_ticks + keep_ticks_ < newest_ticks_))) {
    bytes_ -= chunks_.front().bytes.size();
    chunks_.pop_front();
  }
}

std::string FlightRecorder::dump(const std::string& path) {
  std::string error = write_dump(path, /*replace=*/true);
  if (!error.empty()) return failed(std::move(error));
  dumps_.fetch_add(1, std::memory_order_relaxed);
  return {};
}

std::string FlightRecorder::dump_to_new_file(const std::string& prefix, std::string* path) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &utc);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::uint64_t n = dump_sequence_.fetch_add(1, std::memory_order_relaxed) + 1;
    const std::string candidate = prefix + "-" + stamp + "-" + std::to_string(n) + ".trace";
    std::string error = write_dump(candidate, /*replace=*/false);
    if (error == "exists") continue;  // someone else's dump: take the next number
    if (!error.empty()) return failed(std::move(error));
    if (path) *path = candidate;
    dumps_.fetch_add(1, std::memory_order_relaxed);
    return {};
  }
  return failed("flight recorder: every name " + prefix + "-" + stamp + "-<n>.trace tried is taken");
}

std::string FlightRecorder::write_dump(const std::string& path, bool replace) {
  // Never over a FIFO, a device or a directory (the rename would replace a FIFO or a
  // device node, or fail on a directory after the whole dump was written).
  if (struct stat st{}; ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return failed_name(path) +
           "it exists and is not a regular file (a dump is written to a regular file, or a new one)";
  }
  std::vector<std::uint8_t> all;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    seal_open_chunk();
    all.reserve(bytes_);
    for (const Chunk& c : chunks_) all.insert(all.end(), c.bytes.begin(), c.bytes.end());
  }
  // Written whole under a temporary name, then renamed: a reader never sees half a dump,
  // and a failure leaves nothing behind (no 0-byte or truncated file).
  static std::atomic<std::uint64_t> temporaries{0};
  const std::string temporary = path + "." + std::to_string(getpid()) + "-" +
                                std::to_string(temporaries.fetch_add(1, std::memory_order_relaxed)) + ".partial";
  std::string error;
  {
    trace::TraceWriter writer = trace::TraceWriter::create(temporary, header_);
    if (writer.ok()) writer.write_chunks(all);
    if (writer.ok()) writer.close();
    if (const trace::TraceError* e = writer.error()) error = e->message;
  }
  if (error.empty()) {
    int rc = replace ? std::rename(temporary.c_str(), path.c_str())
                     : renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && !replace && (errno == EINVAL || errno == ENOSYS)) {
      // A file system without RENAME_NOREPLACE: link() also refuses to replace.
      rc = link(temporary.c_str(), path.c_str());
      if (rc == 0) unlink(temporary.c_str());
    }
    if (rc != 0) {
      const int err = errno;
      unlink(temporary.c_str());
      if (!replace && err == EEXIST) return "exists";
      return "cannot write flight recorder dump '" + path + "': " + std::strerror(err);
    }
    return {};
  }
  unlink(temporary.c_str());  // whatever was written of it
  // The writer names the temporary file; the user asked for `path`.
  for (std::size_t at = error.find(temporary); at != std::string::npos; at = error.find(temporary, at)) {
    error.replace(at, temporary.size(), path);
    at += path.size();
  }
  return failed_name(path) + error;
}

std::string FlightRecorder::failed_name(const std::string& path) {
  return "flight recorder dump to '" + path + "' failed, nothing written: ";
}

std::string FlightRecorder::failed(std::string error) {
  dump_failures_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(error_mutex_);
  last_dump_error_ = error;
  return error;
}

std::string FlightRecorder::last_dump_error() const {
  std::lock_guard<std::mutex> lock(error_mutex_);
  return last_dump_error_;
}

std::size_t FlightRecorder::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

std::size_t FlightRecorder::kept_chunks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return chunks_.size();
}

std::string FlightRecorder::dump_on_signal(std::string path_prefix, int signo) {
  if (trigger_) return "this flight recorder already dumps on " + signal_label(trigger_->signo());
  if (signo == 0) signo = SIGUSR2;
  path_prefix_ = std::move(path_prefix);
  std::string error;
  trigger_ = SignalTrigger::take(
      signo,
      [this](std::uint64_t signals) {
        if (signals > 1) signals_merged_.fetch_add(signals - 1, std::memory_order_relaxed);
        std::string path;
        const std::string error = dump_to_new_file(path_prefix_, &path);
        const std::string merged = signals > 1 ? " (" + std::to_string(signals) +
                                                     " signals arrived during the previous dump or together; "
                                                     "this one dump serves them all)"
                                               : "";
        if (error.empty()) {
          std::fprintf(stderr, "lantern: flight recorder dumped to %s%s\n", path.c_str(), merged.c_str());
        } else {
          std::fprintf(stderr, "lantern: %s%s\n", error.c_str(), merged.c_str());
        }
      },
      &error);
  return error;
}

}  // namespace lantern::instrumentation
