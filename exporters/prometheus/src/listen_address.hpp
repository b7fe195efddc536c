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
  std::string host;  // numeric IP, without brackets ("127.0.0.1", "::1"); a name is resolved
  std::uint16_t port = 0;
  bool ipv6 = false;
};

// parse_listen_address reads what lantern::parse_host_port accepts ("HOST:PORT",
// "[IPv6]:PORT", ":PORT", "PORT"; these two listen on every IPv4 interface), with the
// same rules as every other address in Lantern. A host name ("localhost") is resolved to
// its first IPv4 address (else IPv6). nullopt when the text is refused; then `error` (if
// given) says why, in parse_host_port's words, or that the name does not resolve.
std::optional<ListenAddress> parse_listen_address(std::string_view address, std::string* error = nullptr);

// format_listen_address: the inverse ("[::1]:9464" for IPv6).
std::string format_listen_address(const ListenAddress& address);

// open_listener binds a non-blocking socket to `address` and listens on it. Returns the
// descriptor, or -1 with strerror of the failure in *error ("Address already in use").
int open_listener(const ListenAddress& address, std::string* error);

// bound_port: the port `fd` is bound to (the one chosen when the address asked for 0).
std::uint16_t bound_port(int fd) noexcept;

}  // namespace lantern::exporters::detail
