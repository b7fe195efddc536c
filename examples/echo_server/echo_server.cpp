// SPDX-License-Identifier: Apache-2.0
// echo_server.cpp - see echo_server.hpp.
#include "echo_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <system_error>

namespace lantern::examples {

namespace {
// Task labels: the trace and the viewer name the echo server's tasks by these.
const Label kAcceptLabel = label("echo accept");
const Label kReadLabel = label("echo read");
const Label kWriteLabel = label("echo write");
}  // namespace

struct EchoServer::Connection {
  int fd;
  std::unique_ptr<char[]> buffer;
  std::size_t filled = 0;   // bytes read into buffer
  std::size_t written = 0;  // of those, bytes echoed back
};

EchoServer::EchoServer(Scheduler& pool, EchoServerOptions options) : pool_(pool), options_(std::move(options)) {
  const std::string where = options_.address + ":" + std::to_string(options_.port);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(options_.port);
  if (inet_pton(AF_INET, options_.address.c_str(), &addr.sin_addr) != 1) {
    throw std::system_error(EINVAL, std::generic_category(),
                            "echo server: '" + options_.address + "' is not an IPv4 address");
  }
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::system_error(errno, std::generic_category(), "echo server: socket");
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    close(listen_fd_);
    throw std::system_error(
        err, std::generic_category(),
        "echo server: cannot listen on " + where +
            (err == EADDRINUSE ? " (already in use: pick another --port, or 0 for any free one)" : ""));
  }
  if (listen(listen_fd_, 4096) != 0) {
    const int err = errno;
    close(listen_fd_);
    throw std::system_error(err, std::generic_category(), "echo server: listen on " + where);
  }
  socklen_t len = sizeof addr;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
}

EchoServer::~EchoServer() {
  stop();
  wait_until_open_at_most(0);
  // Pending accepts end with an error once the socket is shut down; wait for them
  // before closing it (their callbacks use *this).
  for (int n = accepts_pending_.load(); n > 0; n = accepts_pending_.load()) accepts_pending_.wait(n);
  close(listen_fd_);
}

void EchoServer::start() {
  for (int i = 0; i < options_.accepts_in_flight; ++i) accept_next();
}

void EchoServer::accept_next() {
  if (stopping_.load()) return;
  accepts_pending_.fetch_add(1);
  try {
    pool_.io().accept(listen_fd_, [this](IoResult r) { on_accept(r); });
  } catch (const ShutdownError&) {
    accepts_pending_.fetch_sub(1);
    accepts_pending_.notify_all();
  }
}

void EchoServer::on_accept(IoResult r) {
  struct Done {  // one pending accept fewer, whatever happens below
    EchoServer* s;
    ~Done() {
      s->accepts_pending_.fetch_sub(1);
      s->accepts_pending_.notify_all();
    }
  } done{this};
  label_task(kAcceptLabel);
  if (!r.ok()) {
    // Shutdown (ECANCELED), stop() (EINVAL after shutdown(2)): stop accepting. Anything
    // else (EMFILE, a connection reset while queued) is that connection's problem.
    if (r.value == -ECANCELED || stopping_.load()) return;
    errors_.fetch_add(1);
    if (r.value == -EMFILE || r.value == -ENFILE) {
      // Out of descriptors: retry when connections have closed, not in a hot loop.
      accepts_pending_.fetch_add(1);
      pool_.io().timeout(std::chrono::milliseconds(10), [this](IoResult) {
        accepts_pending_.fetch_sub(1);
        accepts_pending_.notify_all();
        accept_next();
      });
      return;
    }
    accept_next();
    return;
  }
  const int one = 1;
  setsockopt(r.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  auto* c = new Connection{r.fd(), std::make_unique<char[]>(options_.buffer_bytes)};
  accepted_.fetch_add(1);
  open_.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    connections_.insert(c);
    if (stopping_.load()) shutdown(c->fd, SHUT_RDWR);  // stop() ran meanwhile
  }
  accept_next();
  read_next(c);
}

void EchoServer::read_next(Connection* c) {
  io::read(c->fd, c->buffer.get(), options_.buffer_bytes, [this, c](IoResult r) {
    label_task(kReadLabel);
    if (!r.ok()) return finish(c, r.value != -ECONNRESET && r.value != -ECANCELED);
    if (r.bytes() == 0) return finish(c, false);  // the client closed its side
    c->filled = r.bytes();
    c->written = 0;
    write_rest(c);
  });
}

void EchoServer::write_rest(Connection* c) {
  io::write(c->fd, c->buffer.get() + c->written, c->filled - c->written, [this, c](IoResult r) {
    label_task(kWriteLabel);
    if (!r.ok()) return finish(c, r.value != -EPIPE && r.value != -ECONNRESET && r.value != -ECANCELED);
    c->written += r.bytes();
    bytes_.fetch_add(r.bytes(), std::memory_order_relaxed);
    if (c->written < c->filled) return write_rest(c);  // a short write: send the rest first
    read_next(c);
  });
}

void EchoServer::finish(Connection* c, bool error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    connections_.erase(c);
  }
  close(c->fd);
  delete c;
  if (error) errors_.fetch_add(1);
  open_.fetch_sub(1);
  closed_.fetch_add(1);
  open_.notify_all();
  closed_.notify_all();
}

void EchoServer::stop() {
  if (stopping_.exchange(true)) return;
  shutdown(listen_fd_, SHUT_RDWR);  // pending accepts complete with an error
  std::lock_guard<std::mutex> lock(mutex_);
  for (Connection* c : connections_) shutdown(c->fd, SHUT_RDWR);  // reads return 0
}

void EchoServer::wait_until_open_at_most(std::uint64_t n) {
  for (std::uint64_t v = open_.load(); v > n; v = open_.load()) open_.wait(v);
}

void EchoServer::wait_until_closed_at_least(std::uint64_t n) {
  for (std::uint64_t v = closed_.load(); v < n; v = closed_.load()) closed_.wait(v);
}

EchoStats EchoServer::stats() const {
  EchoStats s;
  s.accepted = accepted_.load();
  s.closed = closed_.load();
  s.open = open_.load();
  s.bytes_echoed = bytes_.load(std::memory_order_relaxed);
  s.errors = errors_.load();
  return s;
}

}  // namespace lantern::examples
