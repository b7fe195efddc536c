// SPDX-License-Identifier: Apache-2.0
// stream_server.cpp - encoding on the collector thread, all socket I/O on one server
// thread with poll(); per-client bounded lock-free queues of shared, immutable chunks.
#include "lantern/instrumentation/stream_server.hpp"
#include "lantern/host_port.hpp"
#include "lantern/thread_signals.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>

#include <boost/lockfree/spsc_queue.hpp>

extern char** environ;

namespace lantern::instrumentation {

// Tally: one worker's events in a chunk, or what a viewer lost of them.
struct StreamServer::Tally {
  std::uint64_t events = 0;                              // `dropped` markers included
  std::uint64_t markers = 0;                             // how many of them are `dropped` markers ...
  std::array<std::uint64_t, kDropReasonCount> marked{};  // ... and the events they count, by reason
  std::uint64_t last_tick = 0;                           // the worker's latest event

  void add(const trace::Event& e) {
    ++events;
    last_tick = std::max(last_tick, e.ticks);
    if (e.type != EventId::dropped) return;
    const DroppedPayload d = trace::payload<DroppedPayload>(e);
    if (static_cast<std::size_t>(d.reason) >= marked.size()) return;  // not a reason this build knows: an event
    ++markers;
    marked[static_cast<std::size_t>(d.reason)] += d.count;
  }
  // lose: the viewer lost `t`: the counts of its markers keep their reasons, its other
  // events are the viewer's own loss (`why`: slow_viewer, or before_attach).
  void lose(const Tally& t, DropReason why = DropReason::slow_viewer) {
    for (std::size_t r = 0; r < marked.size(); ++r) marked[r] += t.marked[r];
    marked[static_cast<std::size_t>(why)] += t.events - t.markers;
    last_tick = std::max(last_tick, t.last_tick);
  }
  // absorb: `t`'s events counted here too (two stretches of one worker's events).
  void absorb(const Tally& t) {
    events += t.events;
    markers += t.markers;
    for (std::size_t r = 0; r < marked.size(); ++r) marked[r] += t.marked[r];
    last_tick = std::max(last_tick, t.last_tick);
  }
};

struct StreamServer::Chunk {
  std::vector<std::uint8_t> bytes;
  std::uint64_t events = 0;   // `dropped` markers included
  std::uint64_t markers = 0;  // of those
  struct Worker {
    std::uint32_t worker;
    Tally tally;
  };
  std::vector<Worker> per_worker;  // for what a viewer that loses the chunk must be told
};

namespace {

// kClientQueueChunks: chunks a client's queue holds at most (besides the byte bound). A
// chunk is at most ChunkLimits::max_events events; a full queue drops like a full buffer.
constexpr std::size_t kClientQueueChunks = 4096;

// kClientSendBuffer: the kernel's send buffer per viewer. Small enough that a viewer
// which stops reading shows up as stalled after a few hundred KiB rather than megabytes;
// the server's own queue (client_buffer_bytes) absorbs bursts for one that reads.
constexpr int kClientSendBuffer = 256 << 10;

}  // namespace

// Client: one viewer connection. The collector thread produces into `queue` (publish);
// the server thread consumes it (write_client). Fields are marked with their thread.
struct StreamServer::Client {
  int fd = -1;
  // Bounded single-producer/single-consumer hand-off, collector thread -> server thread.
  boost::lockfree::spsc_queue<std::shared_ptr<const Chunk>> queue{kClientQueueChunks};
  std::atomic<std::size_t> queued_bytes{0};  // in `queue` plus the unsent part of `sending`
  // Server thread only.
  std::shared_ptr<const Chunk> sending;  // being sent; starts as the header
  std::size_t offset = 0;                // bytes of `sending` already sent
  // The start of the run as it was when this viewer connected, sent after the header
  // and before `queue`.
  std::deque<std::shared_ptr<const Chunk>> backlog;
  std::chrono::steady_clock::time_point last_sent;  // its socket last accepted bytes (or it connected)
  bool stalled = false;                             // bytes waiting, and the socket took none
  std::chrono::steady_clock::time_point stalled_since;
  std::atomic<bool> stalled_now{false};  // for stats(), read on any thread
  // What this viewer lost since its last gap markers, per worker (Tally::lose). Written
  // by publish() holding encode_mutex_ and clients_mutex_; read holding either.
  std::vector<Tally> lost;
  bool lost_any = false;
};

struct StreamServer::Counters {
  std::atomic<std::uint64_t> clients_total{0}, clients_evicted{0}, clients_refused{0}, clients_sent_input{0};
  std::atomic<std::uint64_t> events_encoded{0}, chunks_encoded{0}, events_dropped{0}, chunks_dropped{0};
  std::atomic<std::uint64_t> bytes_sent{0};
};

namespace {

// The worker ids a stream can carry: core refuses more than kMaxWorkers (1024).
constexpr std::uint32_t kMaxStreamWorker = 1u << 16;

std::string format_address(const std::string& host, std::uint16_t port) { return HostPort{host, port}.text(); }

bool is_loopback(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr) >> 24) == 127;
  }
  if (a.ss_family == AF_INET6) {
    const in6_addr& v6 = reinterpret_cast<const sockaddr_in6&>(a).sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&v6)) return v6.s6_addr[12] == 127;
  }
  return false;
}

void add(std::atomic<std::uint64_t>& counter, std::uint64_t n) { counter.fetch_add(n, std::memory_order_relaxed); }

}  // namespace

StreamServer::StreamServer(const trace::TraceHeader& header, StreamOptions options)
    : options_(std::move(options)),
      encoder_(options_.chunk_limits, options_.labels),
      last_flush_(std::chrono::steady_clock::now()),
      counters_(std::make_unique<Counters>()) {
  backlog_full_.store(options_.backlog_bytes == 0, std::memory_order_relaxed);
  auto h = std::make_shared<Chunk>();
  h->bytes = trace::encode_header(header);
  header_ = std::move(h);
}

std::shared_ptr<StreamServer> StreamServer::start(const trace::TraceHeader& header, StreamOptions options,
                                                  std::string* error) {
  std::shared_ptr<StreamServer> server(new StreamServer(header, std::move(options)));
  std::string why;
  if (!server->listen_on(&why)) {
    if (error) *error = why;
    return nullptr;
  }
  if (!server->exposure_warning_.empty()) std::fprintf(stderr, "%s\n", server->exposure_warning_.c_str());
  server->thread_ = start_thread("lantern-stream", [s = server.get()] { s->run(); });
  return server;
}

StreamServer::~StreamServer() { stop(); }

bool StreamServer::listen_on(std::string* error) {
  const std::string where = format_address(options_.host, options_.port);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    *error = std::string("cannot create the stream server's wake-up pipe: ") + std::strerror(errno);
    return false;
  }
  wake_read_ = pipe_fds[0], wake_write_ = pipe_fds[1];
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(options_.port);
  if (const int rc = ::getaddrinfo(options_.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    *error = "cannot stream on " + where + ": " + ::gai_strerror(rc);
    return false;
  }
  std::string last = "no usable address";
  sockaddr_storage bound{};
  for (addrinfo* a = found; a && listen_fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 16) == 0) {
      listen_fd_ = fd;
      socklen_t len = sizeof bound;
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
      port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    } else {
      last = std::strerror(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) {
    *error =
        "cannot stream on " + where + ": " + last + (options_.port ? " (is the port in use? try another, or 0)" : "");
    return false;
  }
  if (!is_loopback(bound)) {
    exposure_warning_ = "lantern: warning: the trace stream on " + address() +
                        " is not limited to this machine: anyone who can reach this port can connect and read the "
                        "trace (task labels, timings, the machine's topology). Stream on 127.0.0.1 (the default) "
                        "and tunnel it (ssh -L) to watch from elsewhere.";
  }
  return true;
}

std::string StreamServer::address() const { return format_address(options_.host, port_); }

void StreamServer::wake() noexcept {
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_write_, &byte, 1);  // full pipe: already woken
}

void StreamServer::on_batch(std::span<const trace::Event> events) {
  if (clients_now_.load(std::memory_order_relaxed) == 0 && backlog_full_.load(std::memory_order_relaxed)) {
    // Nobody watching, and the start of the run is kept: only count what a viewer that
    // connects later will not receive.
    std::lock_guard<std::mutex> lock(encode_mutex_);
    if (clients_now_.load(std::memory_order_relaxed) == 0) {
      count_after_backlog(events);
      return;
    }
  }
  std::lock_guard<std::mutex> lock(encode_mutex_);
  for (const trace::Event& e : events) {
    auto result = encoder_.add(e);
    if (result == trace::ChunkEncoder::AddResult::chunk_full) {
      finish_chunk();
      result = encoder_.add(e);
    }
    if (result != trace::ChunkEncoder::AddResult::added) continue;
    if (e.worker < kMaxStreamWorker) {
      if (open_.size() <= e.worker) open_.resize(e.worker + 1);
      open_[e.worker].add(e);
    }
    if (encoder_.full()) finish_chunk();
  }
  if (std::chrono::steady_clock::now() - last_flush_ >= options_.flush_period) finish_chunk();
}

void StreamServer::count_after_backlog(std::span<const trace::Event> events) {
  for (const trace::Event& e : events) {
    if (e.worker >= kMaxStreamWorker) continue;
    if (after_backlog_.size() <= e.worker) after_backlog_.resize(e.worker + 1);
    after_backlog_[e.worker].add(e);
  }
}

void StreamServer::on_flush() {
  std::lock_guard<std::mutex> lock(encode_mutex_);
  finish_chunk();
}

void StreamServer::finish_chunk() {
  last_flush_ = std::chrono::steady_clock::now();
  if (encoder_.empty()) {
    // Nothing new, but a viewer that lost the last chunk must still learn of it.
    if (markers_owed_) publish(nullptr);
    return;
  }
  auto chunk = std::make_shared<Chunk>();
  encoder_.finish_chunk(chunk->bytes);
  for (std::uint32_t w = 0; w < open_.size(); ++w) {
    if (open_[w].events == 0) continue;
    chunk->events += open_[w].events;
    chunk->markers += open_[w].markers;
    chunk->per_worker.push_back({w, open_[w]});
    open_[w] = Tally{};
  }
  if (!backlog_full_.load(std::memory_order_relaxed)) {
    if (backlog_used_ + chunk->bytes.size() <= options_.backlog_bytes) {
      backlog_used_ += chunk->bytes.size();
      backlog_.push_back(chunk);
    } else {
      backlog_full_.store(true, std::memory_order_relaxed);
    }
  }
  if (backlog_full_.load(std::memory_order_relaxed)) {
    // Past the start of the run: a viewer that connects later is told it missed these.
    for (const Chunk::Worker& w : chunk->per_worker) {
      if (after_backlog_.size() <= w.worker) after_backlog_.resize(w.worker + 1);
      after_backlog_[w.worker].absorb(w.tally);
    }
  }
  publish(std::move(chunk));
}

void StreamServer::publish(std::shared_ptr<const Chunk> chunk) {
  // Both producers of a client's queue (finish_chunk from the collector thread and from
  // the server thread's timed flush) hold encode_mutex_: one producer at a time.
  if (chunk) {
    add(counters_->chunks_encoded, 1);
    add(counters_->events_encoded, chunk->events);
  }
  bool owed = false;
  {
    std::lock_guard<std::mutex> lock(clients_mutex_);
    for (auto& c : clients_) {
      if (!chunk && !c->lost_any) continue;
      std::shared_ptr<Chunk> marker;
      if (c->lost_any) {
        // The gap markers go before the next chunk this viewer gets (or alone, when no
        // chunk comes). Each worker's markers carry the tick of that worker's latest lost
        // event: after everything this viewer received from the worker, before anything
        // it will receive. One marker per reason: slow_viewer for the events lost for
        // this viewer only (the app's own trace has them), and the counts of the markers
        // it lost with their own reasons (ring_full: lost by the app too).
        trace::ChunkEncoder markers;
        for (std::uint32_t w = 0; w < c->lost.size(); ++w) {
          for (std::size_t r = 0; r < c->lost[w].marked.size(); ++r) {
            if (c->lost[w].marked[r] == 0) continue;
            markers.add(trace::make_event(c->lost[w].last_tick, w,
                                          DroppedPayload{c->lost[w].marked[r], static_cast<DropReason>(r)}));
          }
        }
        marker = std::make_shared<Chunk>();
        markers.finish_chunk(marker->bytes);
      }
      const std::size_t bytes = (chunk ? chunk->bytes.size() : 0) + (marker ? marker->bytes.size() : 0);
      const std::size_t slots = (chunk ? 1u : 0u) + (marker ? 1u : 0u);
      const bool fits = c->queue.write_available() >= slots &&
                        c->queued_bytes.load(std::memory_order_acquire) + bytes <= options_.client_buffer_bytes;
      if (!fits) {
        // Too slow: this viewer loses the whole chunk (chunks are independent, so the
        // next one still decodes) and later learns how many events each worker lost.
        c->lost_any = true;
        owed = true;
        if (!chunk) continue;  // the markers wait for room
        for (const Chunk::Worker& w : chunk->per_worker) {
          if (c->lost.size() <= w.worker) c->lost.resize(w.worker + 1);
          c->lost[w.worker].lose(w.tally);
        }
        add(counters_->events_dropped, chunk->events - chunk->markers);
        add(counters_->chunks_dropped, 1);
        continue;
      }
      c->queued_bytes.fetch_add(bytes, std::memory_order_release);
      if (marker) {
        c->queue.push(std::move(marker));
        c->lost.assign(c->lost.size(), Tally{});
        c->lost_any = false;
      }
      if (chunk) c->queue.push(chunk);
    }
  }
  markers_owed_ = owed;
  wake();
}

void StreamServer::remove_clients(const std::vector<Client*>& gone) {
  if (gone.empty()) return;
  std::lock_guard<std::mutex> lock(clients_mutex_);
  std::erase_if(clients_, [&](const std::unique_ptr<Client>& c) {
    if (std::find(gone.begin(), gone.end(), c.get()) == gone.end()) return false;
    ::close(c->fd);
    return true;
  });
  clients_now_.store(static_cast<std::uint32_t>(clients_.size()), std::memory_order_relaxed);
}

void StreamServer::accept_clients(std::chrono::steady_clock::time_point now) {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: no more; anything else: try again next poll
    if (static_cast<int>(clients_.size()) >= options_.max_clients) {
      // Every slot is taken. The viewer stalled longest gives way, if one has been
      // stalled long enough to be told apart from a reader whose buffer is momentarily
      // full; else the one whose socket accepted nothing for longest, if that is long
      // enough to be told apart from a viewer of a busy app (a quiet app sends nothing,
      // so its idle clients are never stalled).
      Client* oldest = nullptr;
      for (auto& c : clients_) {
        if (c->stalled && now - c->stalled_since >= kGiveWayAfter &&
            (!oldest || c->stalled_since < oldest->stalled_since)) {
          oldest = c.get();
        }
      }
      for (auto& c : clients_) {
        if (oldest) break;
        if (!c->stalled && now - c->last_sent >= kIdleGiveWayAfter) oldest = c.get();
      }
      for (auto& c : clients_) {
        if (oldest && !oldest->stalled && !c->stalled && c->last_sent < oldest->last_sent) oldest = c.get();
      }
      if (!oldest) {
        ::close(fd);
        add(counters_->clients_refused, 1);
        continue;
      }
      remove_clients({oldest});
      add(counters_->clients_evicted, 1);
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kClientSendBuffer, sizeof kClientSendBuffer);
    auto c = std::make_unique<Client>();
    c->fd = fd;
    c->last_sent = now;
    c->sending = header_;  // a late viewer starts with the header, the start of the run, then live chunks
    std::size_t bytes = header_->bytes.size();
    // Under encode_mutex_ (then clients_mutex_, publish's order): no chunk is finished
    // between the snapshot of the start and the client joining the list, so the next
    // chunk it is given follows what it was counted as missing.
    std::lock_guard<std::mutex> encode(encode_mutex_);
    for (const auto& chunk : backlog_) {
      c->backlog.push_back(chunk);
      bytes += chunk->bytes.size();
    }
    c->queued_bytes.store(bytes, std::memory_order_relaxed);
    for (std::uint32_t w = 0; w < after_backlog_.size(); ++w) {
      if (after_backlog_[w].events == 0) continue;
      if (c->lost.size() <= w) c->lost.resize(w + 1);
      c->lost[w].lose(after_backlog_[w], DropReason::before_attach);
      c->lost_any = true;
      markers_owed_ = true;  // sent before its first live chunk, or at the next flush
    }
    std::lock_guard<std::mutex> lock(clients_mutex_);
    clients_.push_back(std::move(c));
    add(counters_->clients_total, 1);
    clients_now_.store(static_cast<std::uint32_t>(clients_.size()), std::memory_order_relaxed);
  }
}

bool StreamServer::write_client(Client& c, std::chrono::steady_clock::time_point now) {
  for (;;) {
    if (!c.sending) {
      if (!c.backlog.empty()) {
        c.sending = std::move(c.backlog.front());
        c.backlog.pop_front();
      } else if (!c.queue.pop(c.sending)) {
        break;  // all sent
      }
      c.offset = 0;
    }
    const Chunk& front = *c.sending;
    const ssize_t n = ::send(c.fd, front.bytes.data() + c.offset, front.bytes.size() - c.offset,
                             MSG_NOSIGNAL | MSG_DONTWAIT);  // no SIGPIPE when the viewer is gone
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
      if (!c.stalled) c.stalled = true, c.stalled_since = now;
      c.stalled_now.store(true, std::memory_order_relaxed);
      return true;
    }
    c.stalled = false;
    c.last_sent = now;
    c.offset += static_cast<std::size_t>(n);
    add(counters_->bytes_sent, static_cast<std::uint64_t>(n));
    if (c.offset == front.bytes.size()) {
      c.queued_bytes.fetch_sub(front.bytes.size(), std::memory_order_release);
      c.sending.reset();
    }
  }
  c.stalled = false;
  c.stalled_now.store(false, std::memory_order_relaxed);
  return true;
}

void StreamServer::run() {
  std::vector<pollfd> fds;
  std::vector<Client*> gone;
  const int timeout_ms = static_cast<int>(std::max<std::int64_t>(1, options_.flush_period.count()));
  while (!stopping_.load(std::memory_order_relaxed)) {
    // Only this thread changes clients_, so it reads the list without the mutex.
    fds.clear();
    fds.push_back(pollfd{wake_read_, POLLIN, 0});
    fds.push_back(pollfd{listen_fd_, POLLIN, 0});
    for (auto& c : clients_) {
      const bool waiting = c->sending || !c->backlog.empty() || c->queue.read_available() > 0;
      fds.push_back(pollfd{c->fd, static_cast<short>(POLLIN | (waiting ? POLLOUT : 0)), 0});
    }
    ::poll(fds.data(), fds.size(), timeout_ms);
    if (fds[0].revents & POLLIN) {
      char drain[64];
      while (::read(wake_read_, drain, sizeof drain) > 0) {
      }
    }
    const auto now = std::chrono::steady_clock::now();
    gone.clear();
    // fds[2 + i] is clients_[i]: nothing was added or removed since the poll.
    for (std::size_t i = 0; i < clients_.size(); ++i) {
      Client& c = *clients_[i];
      const short ev = fds[i + 2].revents;
      bool alive = !(ev & (POLLERR | POLLNVAL));
      if (alive && (ev & (POLLIN | POLLHUP))) {
        // A viewer sends nothing: readable means it closed, or it is not a viewer. Either
        // way the connection ends here, so a client that sends garbage costs one read.
        char byte;
        const ssize_t n = ::recv(c.fd, &byte, 1, MSG_DONTWAIT);
        if (n > 0) add(counters_->clients_sent_input, 1);
        alive = n < 0 && (errno == EAGAIN || errno == EINTR);
      }
      if (alive) alive = write_client(c, now);
      if (alive && c.stalled && now - c.stalled_since >= options_.stall_timeout) {
        alive = false;  // not reading: free the slot
        add(counters_->clients_evicted, 1);
      }
      if (!alive) gone.push_back(&c);
    }
    remove_clients(gone);
    if (fds[1].revents & POLLIN) accept_clients(now);
    {
      // A partly filled chunk must not wait for more events forever (an idle pool), nor
      // gap markers for a viewer that had no room for them.
      std::lock_guard<std::mutex> lock(encode_mutex_);
      if ((!encoder_.empty() || markers_owed_) &&
          std::chrono::steady_clock::now() - last_flush_ >= options_.flush_period) {
        finish_chunk();
      }
    }
    if (const pid_t child = child_.load(std::memory_order_relaxed); child > 0) {
      if (::waitpid(child, nullptr, WNOHANG) == child) child_.store(0, std::memory_order_relaxed);
    }
  }
}

void StreamServer::stop() {
  if (stopping_.exchange(true)) return;
  if (wake_write_ >= 0) wake();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(clients_mutex_);
  for (auto& c : clients_) ::close(c->fd);
  clients_.clear();
  clients_now_.store(0, std::memory_order_relaxed);
  for (int* fd : {&listen_fd_, &wake_read_, &wake_write_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

bool StreamServer::wait_until_sent(std::chrono::milliseconds timeout) const {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(clients_mutex_);
      if (std::all_of(clients_.begin(), clients_.end(), [](const auto& c) {
            return c->queued_bytes.load(std::memory_order_acquire) == 0 && !c->lost_any;
          })) {
        return true;
      }
    }
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

StreamStats StreamServer::stats() const {
  StreamStats s;
  {
    std::lock_guard<std::mutex> lock(clients_mutex_);
    s.clients = static_cast<std::uint32_t>(clients_.size());
    for (const auto& c : clients_) s.clients_stalled += c->stalled_now.load(std::memory_order_relaxed);
  }
  const auto get = [](const std::atomic<std::uint64_t>& v) { return v.load(std::memory_order_relaxed); };
  s.clients_total = get(counters_->clients_total);
  s.clients_evicted = get(counters_->clients_evicted);
  s.clients_refused = get(counters_->clients_refused);
  s.clients_sent_input = get(counters_->clients_sent_input);
  s.events_encoded = get(counters_->events_encoded);
  s.chunks_encoded = get(counters_->chunks_encoded);
  s.events_dropped = get(counters_->events_dropped);
  s.chunks_dropped = get(counters_->chunks_dropped);
  s.bytes_sent = get(counters_->bytes_sent);
  return s;
}

namespace {

// parse_stream_address: lantern::parse_host_port, where ":PORT" and "PORT" mean loopback
// and port 0 any free port.
bool parse_stream_address(const std::string& text, StreamOptions* o, std::string* error) {
  const auto where = parse_host_port(text, error, {.default_host = "127.0.0.1", .allow_port_zero = true});
  if (!where) return false;
  o->host = where->host;
  o->port = where->port;
  return true;
}

}  // namespace

StreamHandle& StreamHandle::operator=(StreamHandle&& other) noexcept {
  if (this != &other) {
    reset();
    collector_ = other.collector_;
    server_ = std::move(other.server_);
    other.collector_ = nullptr;
  }
  return *this;
}

void StreamHandle::reset() {
  if (!server_) return;
  if (collector_) collector_->detach(server_.get());
  server_->stop();
  server_.reset();
}

StreamHandle start_stream(Collector& collector, const trace::TraceHeader& header, StreamOptions options,
                          std::string* error) {
  auto server = StreamServer::start(header, std::move(options), error);
  if (!server) return {};
  collector.attach(server);
  return StreamHandle(&collector, std::move(server));
}

StreamHandle maybe_start_stream_from_env(Collector& collector, const trace::TraceHeader& header) {
  const char* value = std::getenv(kStreamEnvironmentVariable);
  if (!value || !*value) return {};
  StreamOptions options;
  std::string error;
  if (!parse_stream_address(value, &options, &error)) {
    std::fprintf(stderr, "lantern: %s=%s: %s; continuing without streaming\n", kStreamEnvironmentVariable, value,
                 error.c_str());
    return {};
  }
  StreamHandle handle = start_stream(collector, header, options, &error);
  if (!handle) {
    std::fprintf(stderr, "lantern: %s=%s: %s; continuing without streaming\n", kStreamEnvironmentVariable, value,
                 error.c_str());
    return {};
  }
  std::fprintf(stderr, "lantern: streaming the scheduler on %s (watch it: lantern-view --attach %s)\n",
               handle->address().c_str(), handle->address().c_str());
  return handle;
}

StreamHandle open_viewer(Collector& collector, const trace::TraceHeader& header, std::string* error,
                         const std::string& program) {
  StreamOptions options;  // loopback, any free port
  StreamHandle handle = start_stream(collector, header, options, error);
  if (!handle) return handle;
  const char* env = std::getenv("LANTERN_VIEW");
  const std::string viewer = env && *env ? env : !program.empty() ? program : "lantern-view";
  const std::string address = handle->address();
  std::vector<std::string> args = {viewer, "--attach", address};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);  // own process group: the app's Ctrl-C leaves it open
  // No signal blocked in the viewer, whichever thread launches it (one of Lantern's own
  // blocks the application's signals, lantern/thread_signals.hpp, and a child inherits it),
  // and none ignored (a child inherits ignored signals too, and an app often ignores
  // SIGPIPE).
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, viewer.c_str(), nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    if (error) {
      *error = "cannot launch '" + viewer + "': " + std::strerror(rc) +
               " (set LANTERN_VIEW to its path or put it on PATH); still streaming on " + address +
               ": lantern-view --attach " + address;
    }
    return handle;
  }
  handle->adopt_child(pid);
  return handle;
}

}  // namespace lantern::instrumentation
