// stream_server.cpp - encoding on the collector thread, all socket I/O on one server
// thread with poll(); per-client bounded queues of shared, immutable chunks.
#include "lantern/instrumentation/stream_server.hpp"
#include "lantern/host_port.hpp"

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
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>

extern char** environ;

namespace lantern::instrumentation {

struct StreamServer::Chunk {
  std::vector<std::uint8_t> bytes;
  std::uint64_t events = 0;
  std::uint64_t min_tick = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> per_worker;  // (worker, events): for drop markers
};

struct StreamServer::Client {
  int fd = -1;
  std::deque<std::shared_ptr<const Chunk>> queue;
  std::size_t offset = 0;        // bytes of queue.front() already sent
  std::size_t queued_bytes = 0;
  std::vector<std::uint64_t> lost;  // per worker: events dropped since the last marker
  std::uint64_t lost_tick = 0;      // where the gap starts
  bool lost_any = false;
};

namespace {

// The worker ids a stream can carry: core refuses more than kMaxWorkers (1024).
constexpr std::uint32_t kMaxStreamWorker = 1u << 16;

std::string format_address(const std::string& host, std::uint16_t port) {
  return HostPort{host, port}.text();
}

}  // namespace

StreamServer::StreamServer(const trace::TraceHeader& header, StreamOptions options)
    : options_(std::move(options)),
      encoder_(options_.chunk_limits, options_.labels),
      last_flush_(std::chrono::steady_clock::now()) {
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
  server->thread_ = std::thread([s = server.get()] { s->run(); });
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
  for (addrinfo* a = found; a && listen_fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 16) == 0) {
      listen_fd_ = fd;
      sockaddr_storage bound{};
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
    *error = "cannot stream on " + where + ": " + last + (options_.port ? " (is the port in use? try another, or 0)" : "");
    return false;
  }
  return true;
}

std::string StreamServer::address() const { return format_address(options_.host, port_); }

void StreamServer::wake() noexcept {
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_write_, &byte, 1);  // full pipe: already woken
}

void StreamServer::on_batch(std::span<const trace::Event> events) {
  // Nobody watching: the whole cost of streaming is this load.
  if (clients_now_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(encode_mutex_);
  for (const trace::Event& e : events) {
    auto result = encoder_.add(e);
    if (result == trace::ChunkEncoder::AddResult::chunk_full) {
      finish_chunk();
      result = encoder_.add(e);
    }
    if (result != trace::ChunkEncoder::AddResult::added) continue;
    if (e.worker < kMaxStreamWorker) {
      if (open_per_worker_.size() <= e.worker) open_per_worker_.resize(e.worker + 1, 0);
      ++open_per_worker_[e.worker];
    }
    open_min_tick_ = std::min(open_min_tick_, e.ticks);
    if (encoder_.full()) finish_chunk();
  }
  if (std::chrono::steady_clock::now() - last_flush_ >= options_.flush_period) finish_chunk();
}

void StreamServer::on_flush() {
  std::lock_guard<std::mutex> lock(encode_mutex_);
  finish_chunk();
}

void StreamServer::finish_chunk() {
  last_flush_ = std::chrono::steady_clock::now();
  if (encoder_.empty()) return;
  auto chunk = std::make_shared<Chunk>();
  encoder_.finish_chunk(chunk->bytes);
  chunk->min_tick = open_min_tick_;
  for (std::uint32_t w = 0; w < open_per_worker_.size(); ++w) {
    if (open_per_worker_[w] == 0) continue;
    chunk->per_worker.emplace_back(w, open_per_worker_[w]);
    chunk->events += open_per_worker_[w];
    open_per_worker_[w] = 0;
  }
  open_min_tick_ = ~std::uint64_t{0};
  publish(std::move(chunk));
}

void StreamServer::publish(std::shared_ptr<const Chunk> chunk) {
  {
    std::lock_guard<std::mutex> lock(clients_mutex_);
    ++stats_.chunks_encoded;
    stats_.events_encoded += chunk->events;
    for (auto& c : clients_) {
      if (c->queued_bytes + chunk->bytes.size() > options_.client_buffer_bytes) {
        // Too slow: this viewer loses the whole chunk (chunks are independent, so the
        // next one still decodes) and later learns how many events each worker lost.
        if (!c->lost_any) c->lost_tick = chunk->min_tick;
        c->lost_any = true;
        for (auto [w, n] : chunk->per_worker) {
          if (c->lost.size() <= w) c->lost.resize(w + 1, 0);
          c->lost[w] += n;
        }
        stats_.events_dropped += chunk->events;
        ++stats_.chunks_dropped;
        continue;
      }
      if (c->lost_any) {
        trace::ChunkEncoder markers;
        for (std::uint32_t w = 0; w < c->lost.size(); ++w) {
          if (c->lost[w]) markers.add(trace::Event{c->lost_tick, w, trace::EventType::dropped, {0, 0, 0}, c->lost[w], 0});
        }
        auto marker = std::make_shared<Chunk>();
        markers.finish_chunk(marker->bytes);
        c->queued_bytes += marker->bytes.size();
        c->queue.push_back(std::move(marker));
        c->lost.assign(c->lost.size(), 0);
        c->lost_any = false;
      }
      c->queued_bytes += chunk->bytes.size();
      c->queue.push_back(chunk);
    }
  }
  wake();
}

void StreamServer::accept_clients() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: no more; anything else: try again next poll
    std::lock_guard<std::mutex> lock(clients_mutex_);
    if (static_cast<int>(clients_.size()) >= options_.max_clients) {
      ::close(fd);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Client>();
    c->fd = fd;
    c->queue.push_back(header_);  // a late viewer starts with the header, then live chunks
    c->queued_bytes = header_->bytes.size();
    clients_.push_back(std::move(c));
    ++stats_.clients_total;
    clients_now_.store(static_cast<std::uint32_t>(clients_.size()), std::memory_order_relaxed);
  }
}

bool StreamServer::write_client(Client& c) {
  while (!c.queue.empty()) {
    const Chunk& front = *c.queue.front();
    const ssize_t n = ::send(c.fd, front.bytes.data() + c.offset, front.bytes.size() - c.offset,
                             MSG_NOSIGNAL | MSG_DONTWAIT);  // no SIGPIPE when the viewer is gone
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
    c.offset += static_cast<std::size_t>(n);
    stats_.bytes_sent += static_cast<std::uint64_t>(n);
    if (c.offset == front.bytes.size()) {
      c.queued_bytes -= front.bytes.size();
      c.queue.pop_front();
      c.offset = 0;
    }
  }
  return true;
}

void StreamServer::run() {
  std::vector<pollfd> fds;
  const int timeout_ms = static_cast<int>(std::max<std::int64_t>(1, options_.flush_period.count()));
  while (!stopping_.load(std::memory_order_relaxed)) {
    fds.clear();
    fds.push_back(pollfd{wake_read_, POLLIN, 0});
    fds.push_back(pollfd{listen_fd_, POLLIN, 0});
    {
      std::lock_guard<std::mutex> lock(clients_mutex_);
      for (auto& c : clients_) fds.push_back(pollfd{c->fd, static_cast<short>(POLLIN | (c->queue.empty() ? 0 : POLLOUT)), 0});
    }
    ::poll(fds.data(), fds.size(), timeout_ms);
    if (fds[0].revents & POLLIN) {
      char drain[64];
      while (::read(wake_read_, drain, sizeof drain) > 0) {
      }
    }
    if (fds[1].revents & POLLIN) accept_clients();
    {
      std::lock_guard<std::mutex> lock(clients_mutex_);
      // Only this thread adds or removes clients, so fds[2 + i] is still clients_[i].
      std::size_t kept = 0;
      for (std::size_t i = 0; i < clients_.size(); ++i) {
        Client& c = *clients_[i];
        const short ev = i + 2 < fds.size() ? fds[i + 2].revents : 0;
        bool alive = !(ev & (POLLERR | POLLNVAL));
        if (alive && (ev & (POLLIN | POLLHUP))) {
          char sink[256];  // a viewer sends nothing; readable means it closed
          const ssize_t n = ::recv(c.fd, sink, sizeof sink, MSG_DONTWAIT);
          alive = n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
        }
        if (alive) alive = write_client(c);
        if (alive) {
          clients_[kept++] = std::move(clients_[i]);
        } else {
          ::close(c.fd);
        }
      }
      clients_.resize(kept);
      clients_now_.store(static_cast<std::uint32_t>(kept), std::memory_order_relaxed);
    }
    {
      // A partly filled chunk must not wait for more events forever (an idle pool).
      std::lock_guard<std::mutex> lock(encode_mutex_);
      if (!encoder_.empty() && std::chrono::steady_clock::now() - last_flush_ >= options_.flush_period) finish_chunk();
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
      if (std::all_of(clients_.begin(), clients_.end(), [](const auto& c) { return c->queue.empty(); })) return true;
    }
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

StreamStats StreamServer::stats() const {
  std::lock_guard<std::mutex> lock(clients_mutex_);
  StreamStats s = stats_;
  s.clients = clients_now_.load(std::memory_order_relaxed);
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
    std::fprintf(stderr, "lantern: %s=%s: %s; continuing without streaming\n", kStreamEnvironmentVariable, value, error.c_str());
    return {};
  }
  StreamHandle handle = start_stream(collector, header, options, &error);
  if (!handle) {
    std::fprintf(stderr, "lantern: %s=%s: %s; continuing without streaming\n", kStreamEnvironmentVariable, value, error.c_str());
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
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
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
