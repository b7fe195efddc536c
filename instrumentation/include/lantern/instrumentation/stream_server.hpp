// SPDX-License-Identifier: Apache-2.0
// stream_server.hpp - the app side of live attach: a Sink that serves the trace format
// over TCP to any number of viewers (lantern-view --attach HOST:PORT).
//
//   auto stream = lantern::instrumentation::start_stream(collector, header);   // one call
//   // or, for apps that don't change code: LANTERN_STREAM=127.0.0.1:7777 ./app, where
//   // whoever builds the Collector calls maybe_start_stream_from_env(collector, header).
//
// The wire carries exactly a trace file's bytes: the header, then self-contained chunks
// (lantern/trace/format.hpp), so a viewer reads a socket with the same decoder as a file.
// The server keeps the start of the run (StreamOptions::backlog_bytes of chunks, encoded
// whether or not a viewer is connected), so a viewer that connects after the app began
// (lantern-view --attach --wait started first, or a viewer launched a moment later) gets
// everything from the first event. A viewer that connects later still gets that start,
// then `dropped` markers (reason before_attach) counting, per worker, the events streamed
// between the end of the start and its connection, then the chunks from that moment on:
// nothing it did not receive goes uncounted.
//
// What the app pays, and what it never risks:
//   - no viewer connected: until backlog_bytes of chunks are kept, the collector thread
//     encodes as for one viewer; after that, it counts each batch's events per worker
//     (for the before_attach markers), and encodes nothing;
//   - viewers connected: the collector thread encodes each batch once (~5 bytes an
//     event) and appends the finished chunk to each client's queue; a separate server
//     thread does all socket I/O, non-blocking, so a stalled viewer never stalls the
//     collector, let alone a worker;
//   - a slow viewer: its queue is bounded (StreamOptions::client_buffer_bytes); whole
//     chunks that do not fit are dropped for that viewer and counted, and before its next
//     chunk (or alone, within a flush period of there being room, when no chunk follows)
//     it receives `dropped` events (the trace format's own gap marker) saying how many
//     events each worker lost and why: `slow_viewer` for the events it lost, and the
//     counts of the `dropped` markers among them with their own reasons (`ring_full`:
//     the app lost those too), so its health view shows every gap;
//   - a viewer that stops reading: once its socket has accepted nothing for
//     StreamOptions::stall_timeout it is disconnected, and when every slot is taken a
//     new viewer takes the slot of the one stalled longest (stalled kGiveWayAfter); a
//     client that sends bytes (a viewer sends none) is closed at once, so garbage costs
//     what a closed connection costs;
//   - idle clients holding every slot of a quiet app (nothing to send, so none of them
//     is ever stalled): when no client is stalled, a new viewer takes the slot of the
//     one whose socket has accepted nothing for longest, once that is kIdleGiveWayAfter,
//     so 8 idle connections cannot lock viewers out. A viewer that is refused (every
//     slot is busy) sees the connection closed before the header; lantern-view says so;
//   - a viewer that dies: send() uses MSG_NOSIGNAL (no SIGPIPE), the client is closed and
//     forgotten; the app carries on. The app dying: the viewer sees the connection end
//     and keeps what it has.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/process_labels.hpp"
#include "lantern/instrumentation/sink.hpp"
#include "lantern/trace/chunk_encoder.hpp"
#include "lantern/trace/trace_header.hpp"

namespace lantern::instrumentation {

struct StreamOptions {
  // Loopback by default: a trace reveals timing and task addresses. Give "0.0.0.0" (or
  // a specific interface) to serve other machines deliberately; start() then prints a
  // warning that anyone who can reach the port can read the trace.
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;                       // 0: any free port; StreamServer::port() says which
  std::size_t client_buffer_bytes = 16u << 20;  // per viewer; beyond it chunks are dropped
  std::chrono::milliseconds flush_period{20};   // a partly filled chunk waits at most this long
  // max_clients: viewers served at once. When all are taken, a new connection takes the
  // slot of the viewer that has been stalled longest (stalled at least kGiveWayAfter),
  // else of the one that has received nothing for longest (at least kIdleGiveWayAfter),
  // else it is closed at once.
  int max_clients = 8;
  // backlog_bytes: how much of the start of the run (whole chunks, from the first event)
  // is kept for viewers that connect late; 0 keeps none.
  std::size_t backlog_bytes = 4u << 20;
  // stall_timeout: a viewer that has bytes waiting and whose socket accepted none of them
  // for this long is disconnected (it is not reading). Its slot is free again.
  std::chrono::milliseconds stall_timeout{5000};
  // Smaller chunks than a file's: they reach the viewer sooner and one dropped chunk
  // is a smaller gap.
  trace::ChunkLimits chunk_limits{.target_payload_bytes = 16u << 10, .max_events = 1u << 12};
  // Where task label names come from: every chunk names the labels it uses, so a viewer
  // that connects late, or loses chunks, still names them. Must outlive the server.
  const trace::LabelNames* labels = &process_labels();
};

struct StreamStats {
  std::uint32_t clients = 0;             // connected now
  std::uint32_t clients_stalled = 0;     // of those: bytes waiting, socket accepting none
  std::uint64_t clients_total = 0;       // ever accepted
  std::uint64_t clients_evicted = 0;     // disconnected: stalled past stall_timeout, or gave way to a new viewer
  std::uint64_t clients_refused = 0;     // closed at connect: every slot taken by a viewer that reads
  std::uint64_t clients_sent_input = 0;  // closed because they sent bytes (a viewer sends nothing)
  std::uint64_t events_encoded = 0;      // events put into chunks (only while a viewer is connected)
  std::uint64_t chunks_encoded = 0;
  // events_dropped: summed over viewers, events a slow viewer did not get, the `dropped`
  // markers among them left out (their counts reach it): its slow_viewer markers' sum.
  std::uint64_t events_dropped = 0;
  std::uint64_t chunks_dropped = 0;
  std::uint64_t bytes_sent = 0;
};

// kGiveWayAfter: how long a viewer must have been stalled before a new connection may
// take its slot (a reading viewer is briefly "stalled" whenever its socket buffer fills).
inline constexpr std::chrono::milliseconds kGiveWayAfter{250};
// kIdleGiveWayAfter: how long a viewer's socket must have accepted nothing (nothing to
// send: a quiet app, or an idle client) before a new connection may take its slot when
// no viewer is stalled.
inline constexpr std::chrono::milliseconds kIdleGiveWayAfter{1000};

class StreamServer final : public Sink {
 public:
  // start listens on options.host:options.port and starts the server thread. Returns
  // nullptr and sets *error (naming the address and the OS's reason) on failure.
  static std::shared_ptr<StreamServer> start(const trace::TraceHeader& header, StreamOptions options = {},
                                             std::string* error = nullptr);
  ~StreamServer() override;  // stop()
  StreamServer(const StreamServer&) = delete;
  StreamServer& operator=(const StreamServer&) = delete;

  // Sink: on the collector's thread.
  void on_batch(std::span<const trace::Event> events) override;
  void on_flush() override;

  std::uint16_t port() const noexcept { return port_; }
  std::string address() const;  // "HOST:PORT", what --attach takes
  // exposure_warning: empty when the server listens on a loopback address only; else the
  // warning start() printed on stderr (anyone who can reach the port can read the trace).
  const std::string& exposure_warning() const noexcept { return exposure_warning_; }
  StreamStats stats() const;
  // wait_until_sent: until every connected viewer has been sent all it was given and
  // told of everything it lost (or `timeout`); an app about to exit calls it so the last
  // chunks are not cut off.
  bool wait_until_sent(std::chrono::milliseconds timeout) const;
  // stop closes every connection and the listening socket and joins the thread.
  // Detach the sink from its Collector first (start_stream's handle does both).
  void stop();
  // adopt_child: a viewer process this server launched (open_viewer); the server
  // thread reaps it when it exits so it does not linger as a zombie.
  void adopt_child(pid_t pid) noexcept { child_.store(pid, std::memory_order_relaxed); }

 private:
  struct Tally;
  struct Chunk;
  struct Client;
  struct Counters;
  StreamServer(const trace::TraceHeader& header, StreamOptions options);
  bool listen_on(std::string* error);
  void run();
  void finish_chunk();                               // requires encode_mutex_
  void publish(std::shared_ptr<const Chunk> chunk);  // null: only the gap markers owed
  void accept_clients(std::chrono::steady_clock::time_point now);
  bool write_client(Client& c, std::chrono::steady_clock::time_point now);  // false: the client is gone
  void remove_clients(const std::vector<Client*>& gone);
  void wake() noexcept;

  StreamOptions options_;
  std::shared_ptr<const Chunk> header_;
  std::string exposure_warning_;
  int listen_fd_ = -1;
  int wake_read_ = -1, wake_write_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint32_t> clients_now_{0};
  std::atomic<pid_t> child_{0};

  // Encoding state: the collector thread, and the server thread's timed flush.
  std::mutex encode_mutex_;
  trace::ChunkEncoder encoder_;
  std::vector<Tally> open_;  // per worker: its events in the open chunk
  std::chrono::steady_clock::time_point last_flush_;
  bool markers_owed_ = false;  // a viewer lost chunks and has not been told yet
  // The start of the run, for late viewers, and what was streamed after it, per worker.
  std::vector<std::shared_ptr<const Chunk>> backlog_;
  std::size_t backlog_used_ = 0;
  std::atomic<bool> backlog_full_{false};  // read without the mutex by on_batch
  std::vector<Tally> after_backlog_;
  void count_after_backlog(std::span<const trace::Event> events);  // requires encode_mutex_

  // clients_: only the server thread adds and removes clients, holding clients_mutex_;
  // publish() (the collector thread) reads the list holding it, so a client cannot go
  // away under it. Chunks reach a client through its own single-producer queue: socket
  // I/O never holds the mutex, so a slow send never delays the collector.
  mutable std::mutex clients_mutex_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::unique_ptr<Counters> counters_;
};

// start_stream starts a StreamServer and attaches it to `collector`. The handle detaches
// and stops it when destroyed. On failure the handle is empty and *error says why.
class StreamHandle {
 public:
  StreamHandle() = default;
  StreamHandle(Collector* collector, std::shared_ptr<StreamServer> server)
      : collector_(collector), server_(std::move(server)) {}
  StreamHandle(StreamHandle&& other) noexcept { *this = std::move(other); }
  StreamHandle& operator=(StreamHandle&& other) noexcept;
  ~StreamHandle() { reset(); }
  explicit operator bool() const noexcept { return server_ != nullptr; }
  StreamServer* operator->() const noexcept { return server_.get(); }
  StreamServer* get() const noexcept { return server_.get(); }
  void reset();

 private:
  Collector* collector_ = nullptr;
  std::shared_ptr<StreamServer> server_;
};

StreamHandle start_stream(Collector& collector, const trace::TraceHeader& header, StreamOptions options = {},
                          std::string* error = nullptr);

// kStreamEnvironmentVariable: LANTERN_STREAM=HOST:PORT (or :PORT, or PORT: loopback).
inline constexpr const char* kStreamEnvironmentVariable = "LANTERN_STREAM";

// maybe_start_stream_from_env: if LANTERN_STREAM is set, start streaming there and say
// so on stderr (with the lantern-view command to attach); if it is set but unusable,
// say why on stderr and carry on without streaming. Unset: an empty handle, silently.
StreamHandle maybe_start_stream_from_env(Collector& collector, const trace::TraceHeader& header);

// open_viewer: the in-process convenience. Starts a stream on a free loopback port and
// launches `lantern-view --attach 127.0.0.1:PORT` as a separate process (found via
// $LANTERN_VIEW, else `program`, else "lantern-view" on PATH). A separate process rather
// than a window thread: the app keeps its main thread, a crash in either leaves the
// other running, and the viewer outlives the app to show how it ended. The viewer runs
// in its own process group, so Ctrl-C in the app's terminal does not close it.
StreamHandle open_viewer(Collector& collector, const trace::TraceHeader& header, std::string* error = nullptr,
                         const std::string& program = "");

}  // namespace lantern::instrumentation
