// SPDX-License-Identifier: Apache-2.0
// listen_address.hpp - the exporter's listen address: reading it, writing it, and
// opening the listening socket on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lantern::exporters::detail {

struct ListenAddress {
  std::string host;  // numeric IP as written, without brackets ("127.0.0.1", "::1")
  std::uint16_t port = 0;
  bool ipv6 = false;
};

// parse_listen_address reads "IP:PORT", "[IPv6]:PORT" or a bare "PORT" (every IPv4
// interface). nullopt when it is none of these; then `error` (if
// given) says what is wrong, in lantern::parse_host_port's words (the port out of range,
// no port...) or that the host is not a numeric IP.
std::optional<ListenAddress> parse_listen_address(std::string_view address, std::string* error = nullptr);

// format_listen_address: the inverse ("[::1]:9464" for IPv6).
std::string format_listen_address(const ListenAddress& address);

// open_listener binds a non-blocking socket to `address` and listens on it. Returns the
// descriptor, or -1 with strerror of the failure in *error ("Address already in use").
int open_listener(const ListenAddress& address, std::string* error);

// bound_port: the port `fd` is bound to (the one chosen when the address asked for 0).
std::uint16_t bound_port(int fd) noexcept;

}  // namespace lantern::exporters::detail
