// SPDX-License-Identifier: Apache-2.0
// echo_load.cpp - see echo_load.hpp.
#include "echo_load.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace lantern::examples {

namespace {

using Clock = std::chrono::steady_clock;

struct Conn {
  int fd = -1;
  bool connected = false;
  bool done = false;
  std::uint64_t rng = 0;
  std::vector<unsigned char> message;
  std::size_t sent = 0, received = 0;
  std::uint64_t messages = 0;
  Clock::time_point started;
  bool want_out = false;
};

std::uint64_t next(std::uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

}  // namespace

LoadResult run_load(const LoadOptions& o) {
  LoadResult result;
  trace::LatencyHistogram latency;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(o.port);
  if (inet_pton(AF_INET, o.host.c_str(), &addr.sin_addr) != 1) {
    result.errors = static_cast<std::uint64_t>(o.connections);
    result.first_error = "'" + o.host + "' is not an IPv4 address";
    return result;
  }
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  std::vector<Conn> conns(static_cast<std::size_t>(o.connections));
  auto fail = [&](Conn& c, const std::string& what) {
    if (c.done) return;
    ++result.errors;
    if (result.first_error.empty()) result.first_error = what;
    c.done = true;
    if (c.fd >= 0) {
      epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
      close(c.fd);
      c.fd = -1;
    }
  };
  auto new_message = [&](Conn& c) {
    const std::size_t span = o.max_bytes > o.min_bytes ? o.max_bytes - o.min_bytes + 1 : 1;
    c.message.resize(o.min_bytes + next(c.rng) % span);
    for (auto& b : c.message) b = static_cast<unsigned char>(next(c.rng));
    c.sent = c.received = 0;
    c.started = Clock::now();
  };
  auto set_interest = [&](Conn& c, bool out) {
    c.want_out = out;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0u);
    ev.data.ptr = &c;
    epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
  };
  for (std::size_t i = 0; i < conns.size(); ++i) {
    Conn& c = conns[i];
    c.rng = (o.seed + 1) * 0x9E3779B97F4A7C15ULL + i * 0xBF58476D1CE4E5B9ULL + 1;
    c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c.fd < 0) {
      fail(c, std::string("socket: ") + std::strerror(errno));
      continue;
    }
    const int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
      fail(c, std::string("connect: ") + std::strerror(errno));
      continue;
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP;
    ev.data.ptr = &c;
    c.want_out = true;
    epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
    new_message(c);
  }

  const auto start = Clock::now();
  const auto deadline =
      o.seconds > 0 ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds))
                    : Clock::time_point::max();
  std::vector<unsigned char> buf(256 * 1024);
  std::vector<epoll_event> events(256);
  auto all_done = [&] { return std::all_of(conns.begin(), conns.end(), [](const Conn& c) { return c.done; }); };
  auto last_progress = start;
  while (!all_done() && Clock::now() < deadline) {
    const int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), 50);
    for (int k = 0; k < n; ++k) {
      Conn& c = *static_cast<Conn*>(events[k].data.ptr);
      if (c.done) continue;
      if (events[k].events & EPOLLERR) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        fail(c, std::string("socket error: ") + std::strerror(err ? err : EIO));
        continue;
      }
      c.connected = true;
      if ((events[k].events & EPOLLOUT) && c.sent < c.message.size()) {
        const ssize_t w = send(c.fd, c.message.data() + c.sent, c.message.size() - c.sent, MSG_NOSIGNAL);
        if (w > 0) {
          c.sent += static_cast<std::size_t>(w);
        } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
          fail(c, std::string("send: ") + std::strerror(errno));
          continue;
        }
      }
      if (events[k].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) {
        for (;;) {
          const ssize_t r = recv(c.fd, buf.data(), buf.size(), 0);
          if (r > 0) {
            const std::size_t got = static_cast<std::size_t>(r);
            const std::size_t expected = std::min(got, c.message.size() - c.received);
            for (std::size_t b = 0; b < expected; ++b) result.mismatches += buf[b] != c.message[c.received + b];
            result.mismatches += got - expected;  // more than we sent: every extra byte is wrong
            c.received += expected;
            result.bytes += got;
            if (c.received == c.message.size() && c.sent == c.message.size()) {
              latency.record(static_cast<std::uint64_t>(
                  std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - c.started).count()));
              ++result.requests;
              ++c.messages;
              if (o.messages_per_connection && c.messages >= o.messages_per_connection) {
                c.done = true;
                epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
                close(c.fd);
                c.fd = -1;
                break;
              }
              new_message(c);
              // Send right away; EPOLLOUT only if the socket buffer is full.
              const ssize_t w = send(c.fd, c.message.data(), c.message.size(), MSG_NOSIGNAL);
              if (w > 0) c.sent = static_cast<std::size_t>(w);
            }
            continue;
          }
          if (r == 0) {
            fail(c, "the server closed the connection");
          } else if (errno != EAGAIN && errno != EINTR) {
            fail(c, std::string("recv: ") + std::strerror(errno));
          }
          break;
        }
      }
      if (!c.done) {
        const bool out = c.sent < c.message.size();
        if (out != c.want_out) set_interest(c, out);
      }
    }
    if (o.progress && Clock::now() - last_progress > std::chrono::milliseconds(100)) {
      last_progress = Clock::now();
      double fraction = 0;
      if (o.seconds > 0) {
        fraction = std::chrono::duration<double>(last_progress - start).count() / o.seconds;
      } else if (o.messages_per_connection) {
        fraction = static_cast<double>(result.requests) / static_cast<double>(o.messages_per_connection * conns.size());
      }
      o.progress(std::min(fraction, 1.0));
    }
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (Conn& c : conns) {
    if (c.fd >= 0) close(c.fd);
  }
  close(ep);
  result.p50 = percentile(latency, 0.50);
  result.p99 = percentile(latency, 0.99);
  result.p50_us = result.p50.us;
  result.p99_us = result.p99.us;
  result.max_us = static_cast<double>(latency.max_ns()) / 1e3;
  return result;
}

}  // namespace lantern::examples
