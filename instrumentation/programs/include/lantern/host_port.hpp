// SPDX-License-Identifier: Apache-2.0
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
//
// Header only (target lantern::host_port), so that the libraries that take an address
// (the stream server, the Prometheus exporter, lantern::observe, the viewer's socket
// source) and every program share it without one more archive to link.
#pragma once

#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace lantern {

struct HostPort {
  std::string host = "127.0.0.1";  // without brackets: "::1", not "[::1]"
  std::uint16_t port = 0;

  bool ipv6() const { return host.find(':') != std::string::npos; }
  // text: "host:port", or "[v6]:port"; parse_host_port(text()) gives back the same value.
  std::string text() const { return (ipv6() ? "[" + host + "]" : host) + ":" + std::to_string(port); }
  friend bool operator==(const HostPort&, const HostPort&) = default;
};

struct HostPortRules {
  std::string default_host = "127.0.0.1";  // for ":PORT" and "PORT"
  bool allow_port_zero = false;            // a listener may take "any free port"; a client may not
};

namespace host_port_detail {

inline constexpr std::string_view kExamples = "write HOST:PORT, e.g. 127.0.0.1:7777, [::1]:7777 or :7777";

inline bool fail(std::string* error, std::string_view text, std::string_view what) {
  if (!error) return false;
  std::string message;
  message.reserve(text.size() + what.size() + kExamples.size() + 6);
  for (std::string_view part : {std::string_view("'"), text, std::string_view("' "), what, std::string_view(" ("),
                                kExamples, std::string_view(")")}) {
    message.append(part);
  }
  *error = std::move(message);
  return false;
}

inline bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace host_port_detail

// parse_host_port reads `text` as above. On failure returns nullopt and, when `error` is
// given, sets it to one sentence that quotes the text and says what is wrong, e.g.
// "'localhost' has no port (write HOST:PORT, e.g. 127.0.0.1:7777, [::1]:7777 or :7777)".
inline std::optional<HostPort> parse_host_port(std::string_view text, std::string* error = nullptr,
                                               const HostPortRules& rules = {}) {
  HostPort out;
  out.host = rules.default_host;
  std::string_view host, port;
  bool bracketed = false;
  if (text.empty()) {
    host_port_detail::fail(error, text, "is empty");
    return std::nullopt;
  }
  if (text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) {
      host_port_detail::fail(error, text, "opens '[' without closing it");
      return std::nullopt;
    }
    host = text.substr(1, close - 1);
    bracketed = true;
    const std::string_view rest = text.substr(close + 1);
    if (rest.empty()) {
      host_port_detail::fail(error, text, "has no port");
      return std::nullopt;
    }
    if (rest.front() != ':') {
      host_port_detail::fail(error, text, "has something other than ':PORT' after ']'");
      return std::nullopt;
    }
    port = rest.substr(1);
    if (host.find(':') == std::string_view::npos) {
      host_port_detail::fail(error, text, "has brackets around a host that is not an IPv6 address");
      return std::nullopt;
    }
  } else if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      host_port_detail::fail(error, text, "is ambiguous: an IPv6 address needs brackets");
      return std::nullopt;
    }
  } else if (host_port_detail::all_digits(text)) {
    port = text;
  } else {
    host_port_detail::fail(error, text, "has no port");
    return std::nullopt;
  }
  for (char c : host) {
    if (c <= ' ' || c == 0x7f || c == '/' || c == '[' || c == ']' || c == '@' || c == '?' || c == '#') {
      host_port_detail::fail(error, text, "has a character a host name cannot have");
      return std::nullopt;
    }
  }
  if (bracketed && host.empty()) {
    host_port_detail::fail(error, text, "has an empty IPv6 address");
    return std::nullopt;
  }
  if (!host.empty()) out.host = std::string(host);
  if (port.empty()) {
    host_port_detail::fail(error, text, "has no port");
    return std::nullopt;
  }
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (!host_port_detail::all_digits(port) || ec != std::errc() || end != port.data() + port.size() || value > 65535) {
    host_port_detail::fail(error, text,
                           rules.allow_port_zero ? "has a port that is not a number from 0 to 65535"
                                                 : "has a port that is not a number from 1 to 65535");
    return std::nullopt;
  }
  if (value == 0 && !rules.allow_port_zero) {
    host_port_detail::fail(error, text, "has port 0, which only a listener can take (any free port)");
    return std::nullopt;
  }
  out.port = static_cast<std::uint16_t>(value);
  return out;
}

}  // namespace lantern
