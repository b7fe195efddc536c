// SPDX-License-Identifier: Apache-2.0
// listen_address.cpp - parse "HOST:PORT" (a name resolved to its address) and format
// "IP:PORT"; open the listening socket.
#include "listen_address.hpp"

#include "lantern/host_port.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lantern::exporters::detail {

namespace {

// SocketAddress: a ListenAddress as the socket API wants it.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family = AF_INET;
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

SocketAddress to_socket_address(const ListenAddress& address, const std::string& host) {
  SocketAddress out;
  if (address.ipv6) {
    auto* sa = reinterpret_cast<sockaddr_in6*>(&out.storage);
    sa->sin6_family = AF_INET6;
    sa->sin6_port = htons(address.port);
    inet_pton(AF_INET6, host.c_str(), &sa->sin6_addr);
    out.length = sizeof(sockaddr_in6);
    out.family = AF_INET6;
  } else {
    auto* sa = reinterpret_cast<sockaddr_in*>(&out.storage);
    sa->sin_family = AF_INET;
    sa->sin_port = htons(address.port);
    inet_pton(AF_INET, host.c_str(), &sa->sin_addr);
    out.length = sizeof(sockaddr_in);
  }
  return out;
}

}  // namespace

std::optional<ListenAddress> parse_listen_address(std::string_view address, std::string* error) {
  // lantern::parse_host_port reads the text (a bare PORT listens on every IPv4
  // interface), with the rules every Lantern address follows.
  const auto parsed = parse_host_port(address, error, {.default_host = "0.0.0.0", .allow_port_zero = true});
  if (!parsed) return std::nullopt;
  ListenAddress out{parsed->host, parsed->port, parsed->ipv6()};
  unsigned char probe[sizeof(in6_addr)];
  if (inet_pton(out.ipv6 ? AF_INET6 : AF_INET, out.host.c_str(), probe) == 1) return out;
  // A host name (localhost, this machine's name): the exporter listens on the name's
  // address, as the stream server does (getaddrinfo), IPv4 first.
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(out.host.c_str(), nullptr, &hints, &found); rc != 0) {
    if (error) *error = "'" + out.host + "' does not resolve to an address to listen on: " + ::gai_strerror(rc);
    return std::nullopt;
  }
  const addrinfo* pick = nullptr;
  for (const addrinfo* a = found; a; a = a->ai_next) {
    if (a->ai_family == AF_INET || (a->ai_family == AF_INET6 && !pick)) pick = a;
    if (pick && pick->ai_family == AF_INET) break;
  }
  char text[INET6_ADDRSTRLEN] = {};
  if (pick) {
    const void* address =
        pick->ai_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(pick->ai_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(pick->ai_addr)->sin6_addr);
    inet_ntop(pick->ai_family, address, text, sizeof text);
    out.host = text;
    out.ipv6 = pick->ai_family == AF_INET6;
  }
  ::freeaddrinfo(found);
  if (!pick) {
    if (error) *error = "'" + out.host + "' has no IPv4 or IPv6 address to listen on";
    return std::nullopt;
  }
  return out;
}

std::string format_listen_address(const ListenAddress& address) { return HostPort{address.host, address.port}.text(); }

int open_listener(const ListenAddress& address, std::string* error) {
  const SocketAddress sa = to_socket_address(address, address.host);
  const int fd = ::socket(sa.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *error = std::strerror(errno);
    return -1;
  }
  // A port left in TIME_WAIT by a previous run is taken again at once.
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (address.ipv6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  // Backlog: connections wait here while the server's loop turns, queued rather than
  // refused during a burst.
  if (::bind(fd, sa.get(), sa.length) != 0 || ::listen(fd, 512) != 0) {
    *error = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

std::uint16_t bound_port(int fd) noexcept {
  sockaddr_storage storage{};
  socklen_t length = sizeof storage;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length) != 0) return 0;
  if (storage.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
}

}  // namespace lantern::exporters::detail
