// SPDX-License-Identifier: Apache-2.0
// listen_address.hpp - the exporter's listen address: reading it, and the two things the
// exporter does with plain sockets around civetweb's listener.
//  - why_cannot_listen: civetweb only says "problem binding to port"; the exporter's
//    error should say "Address already in use" or "Permission denied".
//  - poke: civetweb's listener thread sees a stop request only when its poll() returns,
//    up to 2 s later without traffic; a connection makes it return at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lantern::exporters::detail {

struct ListenAddress {
  std::string host;  // numeric IP, without brackets ("127.0.0.1", "::1"); a name resolved
  std::uint16_t port = 0;
  bool ipv6 = false;
};

// parse_listen_address reads what lantern::parse_host_port accepts ("HOST:PORT",
// "[IPv6]:PORT", ":PORT", "PORT"; these two listen on every IPv4 interface, as civetweb
// reads them), with the same rules as every other address in Lantern. civetweb listens
// on numeric addresses only: a host name ("localhost") is resolved to its first IPv4
// address (else IPv6). nullopt when the text is refused; then `error` (if given) says
// why, in parse_host_port's words, or that the name does not resolve.
std::optional<ListenAddress> parse_listen_address(std::string_view address, std::string* error = nullptr);

// civetweb_has_ipv6: whether the civetweb in this process can listen on IPv6 addresses
// (mg_check_feature(8)). Debian 12's libcivetweb1 (1.15) is built without: it fails such
// a listen with only "null context when constructing CivetServer". nullopt: cannot tell.
std::optional<bool> civetweb_has_ipv6() noexcept;

// format_listen_address: the inverse ("[::1]:9464" for IPv6).
std::string format_listen_address(const ListenAddress& address);

// why_cannot_listen binds and listens on `address` with a throwaway socket and returns
// strerror of the failure ("Address already in use"), or "" when that worked after all.
std::string why_cannot_listen(const ListenAddress& address);

// poke opens and closes one connection to `address` (a wildcard host means loopback),
// without waiting for it to be accepted. Errors are ignored: it is only a nudge.
void poke(const ListenAddress& address) noexcept;

}  // namespace lantern::exporters::detail
