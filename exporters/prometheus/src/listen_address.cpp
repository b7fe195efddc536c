// SPDX-License-Identifier: Apache-2.0
// listen_address.cpp - parse and format "IP:PORT"; bind or connect a throwaway socket.
#include "listen_address.hpp"

#include "lantern/host_port.hpp"

#include <arpa/inet.h>
#include <dlfcn.h>
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
  // interface, as civetweb reads it); civetweb listens on numeric addresses only.
  const auto parsed = parse_host_port(address, error, {.default_host = "0.0.0.0", .allow_port_zero = true});
  if (!parsed) return std::nullopt;
  ListenAddress out{parsed->host, parsed->port, parsed->ipv6()};
  unsigned char probe[sizeof(in6_addr)];
  if (inet_pton(out.ipv6 ? AF_INET6 : AF_INET, out.host.c_str(), probe) != 1) {
    if (error) *error = "'" + out.host + "' is not a numeric IP (the exporter listens on numeric addresses only)";
    return std::nullopt;
  }
  return out;
}

std::optional<bool> civetweb_has_ipv6() noexcept {
  // Looked up rather than linked: civetweb is prometheus-cpp's, loaded with it.
  using CheckFeature = unsigned (*)(unsigned);
  const auto check = reinterpret_cast<CheckFeature>(::dlsym(RTLD_DEFAULT, "mg_check_feature"));
  if (!check) return std::nullopt;
  return check(8) != 0;  // 8: MG_FEATURES_IPV6
}

std::string format_listen_address(const ListenAddress& address) { return HostPort{address.host, address.port}.text(); }

std::string why_cannot_listen(const ListenAddress& address) {
  const SocketAddress sa = to_socket_address(address, address.host);
  const int fd = ::socket(sa.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::strerror(errno);
  // Same option as civetweb, so that a port in TIME_WAIT is not mistaken for a taken one.
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int result = ::bind(fd, sa.get(), sa.length);
  if (result == 0) result = ::listen(fd, 1);
  const int error = result == 0 ? 0 : errno;
  ::close(fd);
  return error == 0 ? std::string() : std::string(std::strerror(error));
}

void poke(const ListenAddress& address) noexcept {
  std::string host = address.host;
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  const SocketAddress sa = to_socket_address(address, host);
  const int fd = ::socket(sa.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return;
  ::connect(fd, sa.get(), sa.length);  // non-blocking: the SYN is what wakes the listener
  ::close(fd);
}

}  // namespace lantern::exporters::detail
