// SPDX-License-Identifier: Apache-2.0
// echo_server.hpp - a TCP echo server (RFC 862: every byte received is sent back
// unchanged) built on Lantern's asynchronous IO. One connection is a chain of tasks:
// read -> write everything read -> read again; no thread ever blocks on a socket.
//
// Memory per connection is one buffer: a client that sends without reading fills its
// socket buffers, our write waits, and we stop reading from it (TCP flow control), so
// oversized input costs the server nothing extra and never stalls other connections.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_set>

#include "lantern/lantern.hpp"

namespace lantern::examples {

struct EchoServerOptions {
  std::string address = "127.0.0.1";  // IPv4 address to listen on
  std::uint16_t port = 0;             // 0: any free port (see EchoServer::port())
  std::size_t buffer_bytes = 16 * 1024;
  int accepts_in_flight = 4;  // accept operations kept pending at once
};

struct EchoStats {
  std::uint64_t accepted = 0;
  std::uint64_t closed = 0;
  std::uint64_t open = 0;
  std::uint64_t bytes_echoed = 0;
  std::uint64_t errors = 0;  // connections that ended in an error (reset, broken pipe, ...)
};

class EchoServer {
 public:
  // Binds and listens. Throws std::system_error whose message names the address and
  // what went wrong (e.g. "127.0.0.1:7000 is already in use").
  EchoServer(Scheduler& pool, EchoServerOptions options = {});
  // stop(), then waits until every connection is closed.
  ~EchoServer();
  EchoServer(const EchoServer&) = delete;
  EchoServer& operator=(const EchoServer&) = delete;

  std::uint16_t port() const noexcept { return port_; }
  // start begins accepting connections.
  void start();
  // stop: no new connections; open ones are shut down (their reads end, they close).
  void stop();
  // wait_until_open_at_most blocks until at most n connections are open.
  void wait_until_open_at_most(std::uint64_t n);
  // wait_until_closed_at_least blocks until n connections have been closed in all.
  void wait_until_closed_at_least(std::uint64_t n);
  EchoStats stats() const;

 private:
  struct Connection;
  void accept_next();
  void on_accept(IoResult r);
  void read_next(Connection* c);
  void write_rest(Connection* c);
  void finish(Connection* c, bool error);

  Scheduler& pool_;
  EchoServerOptions options_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepts_pending_{0};
  std::atomic<std::uint64_t> accepted_{0}, closed_{0}, bytes_{0}, errors_{0};
  std::atomic<std::uint64_t> open_{0};
  std::mutex mutex_;
  std::unordered_set<Connection*> connections_;  // guarded by mutex_ (for stop())
};

}  // namespace lantern::examples
