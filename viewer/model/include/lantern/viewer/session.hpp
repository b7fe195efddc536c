// SPDX-License-Identifier: Apache-2.0
// session.hpp - a Model and the thread that fills it from a file or a live socket.
//
// The feed thread reads bytes from a ByteSource into one TraceDecoder and applies each
// chunk to the Model under mutex(); the UI thread takes the same mutex while it builds a
// frame. A file is read as fast as it decodes (the window shows progress meanwhile); a
// socket as fast as the app sends. When the source ends - end of file, or the app closed
// the connection or died - the model keeps everything it had and the status says why.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "lantern/viewer/byte_source.hpp"
#include "lantern/viewer/model.hpp"

namespace lantern::viewer {

class Session {
 public:
  // open_file: never fails; an unreadable file gives a finished session whose model
  // holds the error (what the window and --screenshot report).
  // event_limit: see Model::set_event_limit.
  static constexpr std::uint64_t kDefaultEventLimit = 100'000'000;
  static std::unique_ptr<Session> open_file(const std::string& path, std::uint64_t event_limit = kDefaultEventLimit);
  // attach: a live app's stream. wait: keep trying until it answers (socket_source);
  // else a connection that fails ends the session at once (attach_failure says why).
  static std::unique_ptr<Session> attach(const HostPort& where, std::uint64_t event_limit = kDefaultEventLimit,
                                         bool wait = true);
  // from_source: any ByteSource (tests feed bytes one at a time through this).
  static std::unique_ptr<Session> from_source(std::unique_ptr<ByteSource> source, SourceStatus::Kind kind,
                                              std::string name, std::uint64_t event_limit = kDefaultEventLimit);
  ~Session();  // stops the feed thread; never blocks longer than one poll period
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  std::mutex& mutex() noexcept { return mutex_; }
  Model& model() noexcept { return model_; }  // lock mutex() first while the feed runs
  bool live() const noexcept { return kind_ == SourceStatus::Kind::live; }
  // finished: the source ended and everything read has been applied.
  bool finished() const noexcept { return finished_.load(std::memory_order_acquire); }
  void wait_until_finished() const;
  // bytes_received: total so far (read without the lock, for rate displays).
  std::uint64_t bytes_received() const noexcept { return bytes_.load(std::memory_order_relaxed); }
  // connected: a live session's connection was made (ever); false for a file.
  bool connected() const noexcept { return connected_.load(std::memory_order_acquire); }
  // attach_failure: once a live session has finished without receiving the trace's
  // header, why, as one sentence: nothing answered, or the app closed the connection
  // before sending anything (its stream full, or shutting down). Empty otherwise. Lock
  // mutex() first while the feed runs.
  const std::string& attach_failure() const noexcept { return attach_failure_; }
  // pause: the feed thread stops applying what arrives (bytes wait in the socket) until
  // resume(); returns once it has stopped, so the model holds still: what a picture
  // shows and what a summary printed after it says are of the same moment.
  void pause();
  void resume();

 private:
  Session(std::unique_ptr<ByteSource> source, SourceStatus::Kind kind, std::string name, std::uint64_t event_limit);
  void run();

  std::unique_ptr<ByteSource> source_;
  SourceStatus::Kind kind_;
  std::mutex mutex_;
  Model model_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<bool> connected_{false};
  std::atomic<bool> pause_{false};
  std::atomic<bool> paused_{false};  // the feed thread has seen pause_ and holds still
  std::string attach_failure_;       // under mutex_
  std::thread thread_;
};

}  // namespace lantern::viewer
