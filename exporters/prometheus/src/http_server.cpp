// SPDX-License-Identifier: Apache-2.0
// http_server.cpp - a poll() loop over non-blocking sockets that answers GET and HEAD.
#include "http_server.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "lantern/thread_signals.hpp"

namespace lantern::exporters::detail {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxHeaderBytes = 8192;  // a scrape request is ~100-300 bytes

struct Connection {
  int fd = -1;
  std::string in;        // bytes received, not yet a complete request
  std::string out;       // the response being sent
  std::size_t sent = 0;  // bytes of `out` sent
  bool close_after = false;
  unsigned requests = 0;
  Clock::time_point deadline;       // closed when this passes
  Clock::time_point last_activity;  // the eviction order when every slot is taken
  bool sending() const { return sent < out.size(); }
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    default: return "Error";
  }
}

// Parsed: a request head, or why it is refused (status != 0).
struct Parsed {
  HttpRequest request;
  bool keep_alive = false;
  int refuse = 0;
};

Parsed parse_head(std::string_view head) {
  Parsed p;
  const std::size_t line_end = head.find("\r\n");
  const std::string_view line = head.substr(0, line_end);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) {
    p.refuse = 400;
    return p;
  }
  p.request.method = std::string(line.substr(0, sp1));
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (target.empty() || target.front() != '/' || version.substr(0, 5) != "HTTP/") {
    p.refuse = 400;
    return p;
  }
  target = target.substr(0, target.find('?'));
  p.request.path = std::string(target);
  // HTTP/1.1 keeps the connection unless told otherwise; HTTP/1.0 closes it.
  p.keep_alive = version == "HTTP/1.1";
  std::size_t at = line_end == std::string_view::npos ? head.size() : line_end + 2;
  while (at < head.size()) {
    std::size_t end = head.find("\r\n", at);
    if (end == std::string_view::npos) end = head.size();
    const std::string_view field = head.substr(at, end - at);
    at = end + 2;
    const std::size_t colon = field.find(':');
    if (colon == std::string_view::npos) {
      p.refuse = 400;
      return p;
    }
    const std::string name = lower(trim(field.substr(0, colon)));
    const std::string_view value = trim(field.substr(colon + 1));
    if (name == "accept") {
      p.request.accept = std::string(value);
    } else if (name == "connection") {
      const std::string v = lower(value);
      if (v.find("close") != std::string::npos) p.keep_alive = false;
    } else if (name == "transfer-encoding" || (name == "content-length" && value != "0")) {
      p.refuse = 400;  // a body is never expected: refuse rather than read it
      return p;
    }
  }
  if (p.request.method != "GET" && p.request.method != "HEAD") p.refuse = 405;
  return p;
}

}  // namespace

HttpServer::HttpServer(int listen_fd, HttpServerOptions options, Handler handler, const char* thread_name)
    : listen_fd_(listen_fd), options_(options), handler_(std::move(handler)) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    ::close(listen_fd_);
    throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  }
  options_.max_connections = std::max<std::size_t>(1, options_.max_connections);
  options_.max_requests_per_connection = std::max(1u, options_.max_requests_per_connection);
  thread_ = start_thread(thread_name, [this] { run(); });
}

HttpServer::~HttpServer() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
  thread_.join();
  ::close(wake_fd_);
  ::close(listen_fd_);
}

void HttpServer::run() noexcept {
  std::vector<std::unique_ptr<Connection>> connections;
  std::vector<pollfd> polled;
  const bool keep_alive = options_.keep_alive_timeout.count() > 0;
  Clock::time_point accept_paused_until{};

  auto respond = [&](Connection& c, const Parsed& p, Clock::time_point now) {
    HttpReply reply;
    if (p.refuse != 0) {
      reply.status = p.refuse;
      reply.body = std::string(reason(p.refuse)) + "\n";
    } else {
      try {
        reply = handler_(p.request);
      } catch (const std::exception& e) {
        reply = HttpReply{500, "text/plain; charset=utf-8", std::string("lantern: ") + e.what() + "\n"};
      }
    }
    ++c.requests;
    c.close_after = p.refuse != 0 || !p.keep_alive || !keep_alive || c.requests >= options_.max_requests_per_connection;
    std::string head = "HTTP/1.1 " + std::to_string(reply.status) + " " + reason(reply.status) +
                       "\r\nContent-Type: " + reply.content_type +
                       "\r\nContent-Length: " + std::to_string(reply.body.size()) + "\r\n";
    if (reply.status == 405) head += "Allow: GET, HEAD\r\n";
    head += c.close_after ? "Connection: close\r\n\r\n" : "Connection: keep-alive\r\n\r\n";
    c.out = std::move(head);
    if (p.request.method != "HEAD") c.out += reply.body;
    c.sent = 0;
    c.deadline = now + options_.send_timeout;
  };

  // serve_buffered: answer the complete request at the front of c.in, if there is one.
  auto serve_buffered = [&](Connection& c, Clock::time_point now) -> bool {
    const std::size_t end = c.in.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (c.in.size() > kMaxHeaderBytes) {
        Parsed p;
        p.refuse = 431;
        respond(c, p, now);
        c.in.clear();
        return true;
      }
      return false;
    }
    Parsed p = parse_head(std::string_view(c.in).substr(0, end));
    c.in.erase(0, end + 4);
    respond(c, p, now);
    return true;
  };

  for (;;) {
    const Clock::time_point now = Clock::now();
    polled.clear();
    polled.push_back({wake_fd_, POLLIN, 0});
    // Out of descriptors, accept fails while the listener stays readable: rest it a moment
    // rather than spin on it.
    polled.push_back({listen_fd_, static_cast<short>(now >= accept_paused_until ? POLLIN : 0), 0});
    Clock::time_point next = now + std::chrono::seconds(1);
    if (now < accept_paused_until) next = accept_paused_until;
    for (const auto& c : connections) {
      polled.push_back({c->fd, static_cast<short>(c->sending() ? POLLOUT : POLLIN), 0});
      next = std::min(next, c->deadline);
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1;
    const int ready = ::poll(polled.data(), polled.size(), static_cast<int>(std::max<std::int64_t>(0, wait)));
    if (ready < 0 && errno != EINTR && errno != EAGAIN && errno != ENOMEM) break;
    if (polled[0].revents) break;  // stop
    const Clock::time_point t = Clock::now();

    // Connections first, in order: requests that arrived are served before anyone new.
    for (std::size_t i = 0; i < connections.size(); ++i) {
      Connection& c = *connections[i];
      const short revents = polled[i + 2].revents;
      bool drop = false;
      if (revents & (POLLERR | POLLNVAL)) {
        drop = true;
      } else if (c.sending() && (revents & (POLLOUT | POLLHUP))) {
        const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
          c.sent += static_cast<std::size_t>(n);
          c.last_activity = t;
          c.deadline = t + options_.send_timeout;
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
          drop = true;
        }
        if (!drop && !c.sending()) {
          c.out.clear();
          c.sent = 0;
          if (c.close_after) {
            drop = true;
          } else if (!serve_buffered(c, t)) {  // a pipelined request, if one is waiting
            c.deadline = t + (c.in.empty() ? options_.keep_alive_timeout : options_.request_timeout);
          }
        }
      } else if (!c.sending() && (revents & (POLLIN | POLLHUP))) {
        char buffer[4096];
        const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
          drop = true;
        } else if (n > 0) {
          // The header is due request_timeout after its first byte.
          if (c.in.empty() && c.requests > 0) c.deadline = t + options_.request_timeout;
          c.in.append(buffer, static_cast<std::size_t>(n));
          c.last_activity = t;
          serve_buffered(c, t);
        }
      }
      if (!drop && t >= c.deadline) drop = true;
      if (drop) {
        ::close(c.fd);
        connections[i] = std::move(connections.back());
        connections.pop_back();
        polled[i + 2] = polled.back();
        polled.pop_back();
        --i;
      }
    }

    // Newcomers. When every slot is taken, the least recently active connection that is
    // not receiving a response (idle kept-alive, slow or silent) gives its slot up: a new
    // scraper is never refused, and a connection only ever loses its slot to a newer one.
    if (polled[1].revents & POLLIN) {
      for (int accepted = 0; accepted < 64; ++accepted) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
          if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            accept_paused_until = t + std::chrono::milliseconds(100);
          }
          break;
        }
        if (connections.size() >= options_.max_connections) {
          auto victim = connections.end();
          for (auto it = connections.begin(); it != connections.end(); ++it) {
            const bool candidate = !(*it)->sending();
            const bool better_kind = victim == connections.end() || (candidate && (*victim)->sending());
            const bool same_kind = victim != connections.end() && candidate == !(*victim)->sending();
            if (better_kind || (same_kind && (*it)->last_activity < (*victim)->last_activity)) victim = it;
          }
          ::close((*victim)->fd);
          *victim = std::move(connections.back());
          connections.pop_back();
        }
        auto c = std::make_unique<Connection>();
        c->fd = fd;
        c->last_activity = t;
        c->deadline = t + options_.request_timeout;
        connections.push_back(std::move(c));
      }
    }
  }
  for (const auto& c : connections) ::close(c->fd);
}

}  // namespace lantern::exporters::detail
