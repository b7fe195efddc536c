// trace_sinks.cpp - trace file sink, flight recorder, and the header describing a run.
#include "lantern/instrumentation/trace_sinks.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "lantern/clock.hpp"
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
  h.wall_start_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  return h;
}

// --- TraceFileSink ---

void TraceFileSink::report_to_stderr(const std::string& message) {
  std::fprintf(stderr, "lantern: %s\n", message.c_str());
}

TraceFileSink::TraceFileSink(const std::string& path, const trace::TraceHeader& header,
                             const trace::LabelNames* labels, Report report)
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
  failure_ = "the trace stopped being written after " + std::to_string(written) + " bytes to '" + path_ +
             "': " + e->message + ". The program keeps running; the file holds the events up to its last " +
             "complete chunk.";
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

FlightRecorder::~FlightRecorder() {
  if (signal_thread_.joinable()) {
    signal(signo_, SIG_DFL);
    const char stop = 'q';
    [[maybe_unused]] ssize_t n = write(pipe_write_, &stop, 1);
    signal_thread_.join();
  }
  if (pipe_read_ >= 0) close(pipe_read_);
  if (pipe_write_ >= 0) close(pipe_write_);
}

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
  std::vector<std::uint8_t> all;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    seal_open_chunk();
    all.reserve(bytes_);
    for (const Chunk& c : chunks_) all.insert(all.end(), c.bytes.begin(), c.bytes.end());
  }
  trace::TraceWriter writer = trace::TraceWriter::create(path, header_);
  if (writer.ok()) writer.write_chunks(all);
  if (writer.ok()) writer.close();
  if (const trace::TraceError* e = writer.error()) return e->message;
  dumps_.fetch_add(1, std::memory_order_relaxed);
  return {};
}

std::size_t FlightRecorder::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

std::size_t FlightRecorder::kept_chunks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return chunks_.size();
}

namespace {
std::atomic<int> g_signal_pipe{-1};
void on_dump_signal(int) {
  const int fd = g_signal_pipe.load(std::memory_order_relaxed);
  const char wake = 'd';
  if (fd >= 0) [[maybe_unused]] ssize_t n = write(fd, &wake, 1);  // async-signal-safe
}
}  // namespace

std::string FlightRecorder::dump_on_signal(std::string path_prefix, int signo) {
  if (signal_thread_.joinable()) return "this flight recorder already dumps on a signal";
  if (signo == 0) signo = SIGUSR2;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::string("cannot create the signal pipe: ") + std::strerror(errno);
  int expected = -1;
  if (!g_signal_pipe.compare_exchange_strong(expected, fds[1])) {
    close(fds[0]);
    close(fds[1]);
    return "another flight recorder in this process already owns the dump signal";
  }
  pipe_read_ = fds[0];
  pipe_write_ = fds[1];
  signo_ = signo;
  path_prefix_ = std::move(path_prefix);
  signal_thread_ = std::thread([this] {
    for (;;) {
      char c = 0;
      const ssize_t n = read(pipe_read_, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || c == 'q') break;
      const auto now = std::chrono::system_clock::now().time_since_epoch();
      const std::string path =
          path_prefix_ + "-" + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now).count()) + ".trace";
      const std::string error = dump(path);
      if (error.empty()) {
        std::fprintf(stderr, "lantern: flight recorder dumped to %s\n", path.c_str());
      } else {
        std::fprintf(stderr, "lantern: flight recorder dump failed: %s\n", error.c_str());
      }
    }
    g_signal_pipe.store(-1, std::memory_order_relaxed);
  });
  struct sigaction action {};
  action.sa_handler = on_dump_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(signo, &action, nullptr);
  return {};
}

}  // namespace lantern::instrumentation
