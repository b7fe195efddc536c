// host_port.cpp - lantern::parse_host_port (host_port.hpp).
#include "lantern/host_port.hpp"

#include <charconv>

namespace lantern {

namespace {

constexpr std::string_view kExamples = "write HOST:PORT, e.g. 127.0.0.1:7777, [::1]:7777 or :7777";

bool fail(std::string* error, std::string_view text, const std::string& what) {
  if (error) *error = "'" + std::string(text) + "' " + what + " (" + std::string(kExamples) + ")";
  return false;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

std::string HostPort::text() const {
  return (ipv6() ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::optional<HostPort> parse_host_port(std::string_view text, std::string* error, const HostPortRules& rules) {
  HostPort out;
  out.host = rules.default_host;
  std::string_view host, port;
  bool bracketed = false;
  if (text.empty()) {
    fail(error, text, "is empty");
    return std::nullopt;
  }
  if (text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) {
      fail(error, text, "opens '[' without closing it");
      return std::nullopt;
    }
    host = text.substr(1, close - 1);
    bracketed = true;
    const std::string_view rest = text.substr(close + 1);
    if (rest.empty()) {
      fail(error, text, "has no port");
      return std::nullopt;
    }
    if (rest.front() != ':') {
      fail(error, text, "has something other than ':PORT' after ']'");
      return std::nullopt;
    }
    port = rest.substr(1);
    if (host.find(':') == std::string_view::npos) {
      fail(error, text, "has brackets around a host that is not an IPv6 address");
      return std::nullopt;
    }
  } else if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      fail(error, text, "is ambiguous: an IPv6 address needs brackets");
      return std::nullopt;
    }
  } else if (all_digits(text)) {
    port = text;
  } else {
    fail(error, text, "has no port");
    return std::nullopt;
  }
  for (char c : host) {
    if (c <= ' ' || c == 0x7f || c == '/' || c == '[' || c == ']' || c == '@' || c == '?' || c == '#') {
      fail(error, text, "has a character a host name cannot have");
      return std::nullopt;
    }
  }
  if (bracketed && host.empty()) {
    fail(error, text, "has an empty IPv6 address");
    return std::nullopt;
  }
  if (!host.empty()) out.host = std::string(host);
  if (port.empty()) {
    fail(error, text, "has no port");
    return std::nullopt;
  }
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (!all_digits(port) || ec != std::errc() || end != port.data() + port.size() || value > 65535) {
    fail(error, text, "has a port that is not a number from " + std::string(rules.allow_port_zero ? "0" : "1") +
                          " to 65535");
    return std::nullopt;
  }
  if (value == 0 && !rules.allow_port_zero) {
    fail(error, text, "has port 0, which only a listener can take (any free port)");
    return std::nullopt;
  }
  out.port = static_cast<std::uint16_t>(value);
  return out;
}

}  // namespace lantern
