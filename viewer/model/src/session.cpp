// SPDX-License-Identifier: Apache-2.0
// session.cpp - the feed thread: ByteSource -> TraceDecoder -> Model::apply.
#include "lantern/viewer/session.hpp"

#include <pthread.h>

#include <vector>

#include "lantern/trace/trace_decoder.hpp"

namespace lantern::viewer {
namespace {

// An empty source for files that could not be opened: the session ends at once.
class FailedSource final : public ByteSource {
 public:
  explicit FailedSource(std::string name) : name_(std::move(name)) {}
  Status read(std::span<std::uint8_t>, std::size_t*, std::string*) override { return Status::end; }
  std::string describe() const override { return name_; }

 private:
  std::string name_;
};

}  // namespace

Session::Session(std::unique_ptr<ByteSource> source, SourceStatus::Kind kind, std::string name,
                 std::uint64_t event_limit)
    : source_(std::move(source)), kind_(kind) {
  model_.set_event_limit(event_limit);
  SourceStatus& s = model_.status();
  s.kind = kind;
  s.name = std::move(name);
  s.total_bytes = source_->total();
  s.phase = kind == SourceStatus::Kind::live ? SourceStatus::Phase::connecting : SourceStatus::Phase::loading;
  s.message = source_->describe();
}

std::unique_ptr<Session> Session::from_source(std::unique_ptr<ByteSource> source, SourceStatus::Kind kind,
                                              std::string name, std::uint64_t event_limit) {
  std::unique_ptr<Session> session(new Session(std::move(source), kind, std::move(name), event_limit));
  session->thread_ = std::thread([s = session.get()] { s->run(); });
  // The reading thread, by name in top -H, gdb and perf (Lantern's are "lantern-<what>").
  pthread_setname_np(session->thread_.native_handle(), "lantern-read");
  return session;
}

std::unique_ptr<Session> Session::open_file(const std::string& path, std::uint64_t event_limit) {
  std::string error;
  auto source = open_file_source(path, &error);
  if (!source) {
    std::unique_ptr<Session> session(
        new Session(std::make_unique<FailedSource>(path), SourceStatus::Kind::file, path, event_limit));
    session->model_.add_trace_problem(trace::TraceError{trace::TraceErrorKind::io, 0, error});
    session->model_.status().phase = SourceStatus::Phase::failed;
    session->model_.status().message = error;
    session->finished_.store(true, std::memory_order_release);
    return session;
  }
  return from_source(std::move(source), SourceStatus::Kind::file, path, event_limit);
}

std::unique_ptr<Session> Session::attach(const HostPort& where, std::uint64_t event_limit, bool wait) {
  return from_source(socket_source(where, wait), SourceStatus::Kind::live, where.text(), event_limit);
}

void Session::pause() {
  pause_.store(true, std::memory_order_release);
  // The feed thread checks between reads (a read returns within its poll period);
  // a finished session holds still already.
  while (!paused_.load(std::memory_order_acquire) && !finished()) paused_.wait(false, std::memory_order_acquire);
}

void Session::resume() {
  pause_.store(false, std::memory_order_release);
  pause_.notify_all();
}

Session::~Session() {
  stop_.store(true, std::memory_order_relaxed);
  resume();
  if (thread_.joinable()) thread_.join();
}

void Session::wait_until_finished() const { finished_.wait(false, std::memory_order_acquire); }

void Session::run() {
  trace::TraceDecoder decoder;
  std::vector<std::uint8_t> buffer(1u << 20);
  bool header_applied = false;
  bool was_connected = false;
  bool source_done = false;
  std::string failure;
  auto with_model = [&](auto&& fn) {
    std::lock_guard<std::mutex> lock(mutex_);
    fn(model_);
  };
  while (!stop_.load(std::memory_order_relaxed)) {
    if (pause_.load(std::memory_order_acquire)) {
      paused_.store(true, std::memory_order_release);
      paused_.notify_all();
      pause_.wait(true, std::memory_order_acquire);
      paused_.store(false, std::memory_order_release);
      continue;
    }
    std::size_t n = 0;
    std::string message;
    switch (source_->read(buffer, &n, &message)) {
      case ByteSource::Status::data:
        decoder.feed({buffer.data(), n});
        bytes_.fetch_add(n, std::memory_order_relaxed);
        break;
      case ByteSource::Status::waiting: break;
      case ByteSource::Status::end:
        decoder.end_of_input();
        source_done = true;
        break;
      case ByteSource::Status::error:
        failure = message;
        decoder.end_of_input();
        source_done = true;
        break;
    }
    if (!was_connected && source_->ever_connected()) {
      was_connected = true;
      connected_.store(true, std::memory_order_release);
      with_model([&](Model& m) {
        m.status().phase = live() ? SourceStatus::Phase::streaming : SourceStatus::Phase::loading;
        m.status().message = source_->describe();
      });
    } else if (!was_connected) {
      with_model([&](Model& m) { m.status().message = source_->describe(); });
    }
    // Parse everything the bytes so far allow; each chunk is applied under the lock
    // on its own, so a frame waits for at most one chunk.
    bool ended = false;
    for (bool more = true; more && !ended;) {
      switch (decoder.next()) {
        case trace::TraceDecoder::Step::need_input: more = false; break;
        case trace::TraceDecoder::Step::header:
          header_applied = true;
          with_model([&](Model& m) { m.apply_header(decoder.header(), true); });
          break;
        case trace::TraceDecoder::Step::chunk:
          with_model([&](Model& m) {
            if (!header_applied) m.apply_header(decoder.header(), false);  // the header was damaged
            m.apply(decoder.chunk());
          });
          header_applied = true;
          break;
        case trace::TraceDecoder::Step::problem: {
          trace::TraceError p = decoder.problem();
          // A connection that ended before a single byte is no damaged trace: the session
          // says what happened (attach_failure) instead.
          if (live() && source_done && decoder.received() == 0) break;
          if (live() && p.kind == trace::TraceErrorKind::truncated && source_done) {
            p.message = "the connection ended inside a chunk; its " + std::to_string(decoder.received() - p.offset) +
                        " bytes were discarded";
          }
          with_model([&](Model& m) { m.add_trace_problem(p); });
          break;
        }
        case trace::TraceDecoder::Step::end: ended = true; break;
      }
    }
    with_model([&](Model& m) { m.status().bytes = decoder.received(); });
    if (ended || source_done) break;
  }
  with_model([&](Model& m) {
    m.finish();
    SourceStatus& s = m.status();
    if (live() && !header_applied) {
      if (!was_connected) {
        attach_failure_ = failure.empty() ? "stopped before connecting to " + s.name : failure;
      } else if (decoder.received() == 0) {
        attach_failure_ = "the app at " + s.name +
                          " closed the connection before sending anything: its stream serves a limited number of "
                          "viewers and every one is in use, or the app is shutting down";
      } else {
        attach_failure_ = "the connection to " + s.name + " ended after " + std::to_string(decoder.received()) +
                          " bytes, before a whole trace header: is it a Lantern stream?";
      }
    }
    if (!attach_failure_.empty()) {
      s.phase = SourceStatus::Phase::failed;
      s.message = attach_failure_;
    } else if (!failure.empty()) {
      m.add_trace_problem(trace::TraceError{trace::TraceErrorKind::io, decoder.received(), failure});
      s.phase = live() ? SourceStatus::Phase::disconnected : SourceStatus::Phase::failed;
      s.message = failure + (live() ? "; keeping what was received" : "");
    } else if (live()) {
      s.phase = SourceStatus::Phase::disconnected;
      s.message = was_connected
                      ? "the app closed the connection (it ended or stopped streaming); keeping what was received"
                      : "stopped before connecting to " + s.name;
    } else {
      s.phase = m.has_trace_errors() ? SourceStatus::Phase::failed : SourceStatus::Phase::complete;
      s.message = m.has_trace_errors() ? "the trace has problems; showing what could be read" : "loaded";
    }
    if (m.discarded_events()) {
      s.message +=
          "; " + std::to_string(m.discarded_events()) + " events past the memory limit not kept (--max-events)";
    }
  });
  finished_.store(true, std::memory_order_release);
  finished_.notify_all();
  paused_.store(true, std::memory_order_release);  // a finished session holds still: pause() returns
  paused_.notify_all();
}

}  // namespace lantern::viewer
