// SPDX-License-Identifier: Apache-2.0
// loopback_http.hpp - a blocking HTTP/1.0 GET on plain POSIX sockets, for the exporter's
// tests and benchmark (they scrape /metrics and query a local Prometheus server's API).
//
// HTTP/1.0 with "Connection: close" keeps it small: the server sends no chunked encoding
// and closes the connection after the body, so the body is everything after the headers.
// Not a general client: no redirects, no TLS, no keep-alive, IPv4 only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lantern::exporters::testing {

struct HttpResponse {
  int status = 0;    // e.g. 200
  std::string head;  // the status line and the header fields
  std::string body;  // the bytes after the header block
};

namespace detail {

// Socket closes its descriptor on every path out of http_get.
struct Socket {
  int fd = -1;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

// wait_for waits until fd is ready for `events` or the deadline passes.
inline bool wait_for(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

}  // namespace detail

// http_get fetches http://host:port/target (target includes the query string, already
// URL-encoded), sending `headers` ("Accept: ...\r\n" lines) too. Throws
// std::runtime_error naming the URL on a refused connection, a timeout or a malformed
// response; an HTTP error status is returned, not thrown.
inline HttpResponse http_get(std::uint16_t port, std::string_view target,
                             std::chrono::milliseconds timeout = std::chrono::milliseconds(5000),
                             const std::string& host = "127.0.0.1", const std::string& headers = "") {
  const std::string url = "http://" + host + ":" + std::to_string(port) + std::string(target);
  auto fail = [&](const std::string& what) { return std::runtime_error("GET " + url + ": " + what); };
  const auto deadline = std::chrono::steady_clock::now() + timeout;

  detail::Socket s;
  s.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s.fd < 0) throw fail(std::string("socket: ") + std::strerror(errno));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1) throw fail("not a numeric IPv4 address");
  if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
    if (errno != EINPROGRESS) throw fail(std::string("connect: ") + std::strerror(errno));
    if (!detail::wait_for(s.fd, POLLOUT, deadline)) throw fail("connect timed out");
    int error = 0;
    socklen_t len = sizeof error;
    ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &error, &len);
    if (error != 0) throw fail(std::string("connect: ") + std::strerror(error));
  }

  const std::string request = "GET " + std::string(target) + " HTTP/1.0\r\nHost: " + host + ":" + std::to_string(port) +
                              "\r\nConnection: close\r\n" + headers + "\r\n";
  for (std::size_t sent = 0; sent < request.size();) {
    if (!detail::wait_for(s.fd, POLLOUT, deadline)) throw fail("send timed out");
    const ssize_t n = ::send(s.fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) throw fail(std::string("send: ") + std::strerror(errno));
    if (n > 0) sent += static_cast<std::size_t>(n);
  }

  std::string response;
  char buffer[16384];
  for (;;) {
    if (!detail::wait_for(s.fd, POLLIN, deadline)) throw fail("no complete response within the timeout");
    const ssize_t n = ::recv(s.fd, buffer, sizeof buffer, 0);
    if (n == 0) break;  // the server closed: the response is complete
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      throw fail(std::string("recv: ") + std::strerror(errno));
    }
    response.append(buffer, static_cast<std::size_t>(n));
  }

  HttpResponse out;
  const auto header_end = response.find("\r\n\r\n");
  if (response.compare(0, 5, "HTTP/") != 0 || header_end == std::string::npos ||
      std::sscanf(response.c_str(), "HTTP/%*s %d", &out.status) != 1) {
    throw fail("malformed response: " + response.substr(0, 200));
  }
  out.head = response.substr(0, header_end + 2);
  out.body = response.substr(header_end + 4);
  return out;
}

// url_encode escapes a query parameter value (PromQL has spaces, braces, quotes...).
inline std::string url_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace lantern::exporters::testing
