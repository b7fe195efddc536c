// host_port.hpp - the one parser for "HOST:PORT" in Lantern: every program's address
// option (--metrics, --stream, --attach, --host/--port pairs aside) and the environment
// variables (LANTERN_STREAM, LANTERN_METRICS) read addresses with it, so they all accept
// and refuse the same texts with the same messages.
//
// Accepted:
//   HOST:PORT     127.0.0.1:7777, localhost:7777, myhost.example:9464
//   [IPV6]:PORT   [::1]:7777, [::]:9464 (an IPv6 literal must be in brackets)
//   :PORT         the default host (HostPortRules::default_host)
//   PORT          the same, a bare number
// PORT is decimal, 1 to 65535; 0 ("any free port") only where HostPortRules allows it.
// The host is checked for form only (no spaces, no '/', brackets only around an IPv6
// literal); whether it resolves is for whoever connects or listens.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lantern {

struct HostPort {
  std::string host = "127.0.0.1";  // without brackets: "::1", not "[::1]"
  std::uint16_t port = 0;

  bool ipv6() const { return host.find(':') != std::string::npos; }
  // text: "host:port", or "[v6]:port"; parse_host_port(text()) gives back the same value.
  std::string text() const;
  friend bool operator==(const HostPort&, const HostPort&) = default;
};

struct HostPortRules {
  std::string default_host = "127.0.0.1";  // for ":PORT" and "PORT"
  bool allow_port_zero = false;            // a listener may take "any free port"; a client may not
};

// parse_host_port reads `text` as above. On failure returns nullopt and, when `error` is
// given, sets it to one sentence that quotes the text and says what is wrong, e.g.
// "'localhost' has no port (write HOST:PORT, e.g. 127.0.0.1:7777, [::1]:7777 or :7777)".
std::optional<HostPort> parse_host_port(std::string_view text, std::string* error = nullptr,
                                        const HostPortRules& rules = {});

}  // namespace lantern
