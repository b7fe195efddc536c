// SPDX-License-Identifier: Apache-2.0
// host_port_test.cpp - lantern::parse_host_port, the one HOST:PORT parser every program
// option and environment variable reads addresses with.
#include <gtest/gtest.h>

#include "lantern/host_port.hpp"

namespace lantern {
namespace {

HostPort ok(std::string_view text, const HostPortRules& rules = {}) {
  std::string error;
  const auto hp = parse_host_port(text, &error, rules);
  EXPECT_TRUE(hp) << text << ": " << error;
  EXPECT_EQ(error, "") << text;
  return hp.value_or(HostPort{"", 0});
}

std::string refused(std::string_view text, const HostPortRules& rules = {}) {
  std::string error;
  EXPECT_FALSE(parse_host_port(text, &error, rules)) << text;
  EXPECT_FALSE(parse_host_port(text, nullptr, rules)) << text;  // no error wanted: still refused
  std::string quoted = "'";  // appended, not "'" + ...: GCC 12.2 warns (-Wrestrict, GCC bug 105651)
  quoted += text;
  quoted += "' ";
  EXPECT_EQ(error.rfind(quoted, 0), 0u) << "quotes the text: " << error;
  EXPECT_NE(error.find("e.g. 127.0.0.1:7777"), std::string::npos) << "shows the form: " << error;
  return error;
}

TEST(HostPort, Ipv4AndNames) {
  EXPECT_EQ(ok("127.0.0.1:7777"), (HostPort{"127.0.0.1", 7777}));
  EXPECT_EQ(ok("0.0.0.0:9464"), (HostPort{"0.0.0.0", 9464}));
  EXPECT_EQ(ok("localhost:1"), (HostPort{"localhost", 1}));
  EXPECT_EQ(ok("my-host.example:65535"), (HostPort{"my-host.example", 65535}));
}

TEST(HostPort, Ipv6InBrackets) {
  const HostPort v6 = ok("[::1]:7777");
  EXPECT_EQ(v6, (HostPort{"::1", 7777}));
  EXPECT_TRUE(v6.ipv6());
  EXPECT_EQ(v6.text(), "[::1]:7777");
  EXPECT_EQ(ok("[fe80::1%eth0]:80").host, "fe80::1%eth0");
  EXPECT_NE(refused("::1:7777").find("needs brackets"), std::string::npos);
  EXPECT_NE(refused("[::1]").find("has no port"), std::string::npos);
  EXPECT_NE(refused("[::1]7777").find("after ']'"), std::string::npos);
  EXPECT_NE(refused("[::1:7777").find("without closing"), std::string::npos);
  EXPECT_NE(refused("[]:7777").find("not an IPv6"), std::string::npos);
  EXPECT_NE(refused("[localhost]:7777").find("not an IPv6"), std::string::npos);
}

TEST(HostPort, DefaultHostForPortOnly) {
  EXPECT_EQ(ok(":7777"), (HostPort{"127.0.0.1", 7777}));
  EXPECT_EQ(ok("7777"), (HostPort{"127.0.0.1", 7777}));
  EXPECT_EQ(ok("9464", {.default_host = "0.0.0.0"}), (HostPort{"0.0.0.0", 9464}));
}

TEST(HostPort, MissingPort) {
  for (const char* text : {"localhost", "127.0.0.1:", "localhost:", "", "[::1]:"}) {
    const std::string error = refused(text);
    EXPECT_TRUE(error.find("has no port") != std::string::npos || error.find("is empty") != std::string::npos) << error;
  }
}

TEST(HostPort, BadPorts) {
  for (const char* text : {"127.0.0.1:65536", "127.0.0.1:99999999999", "127.0.0.1:-1", "127.0.0.1:+80", "127.0.0.1:80x",
                           "127.0.0.1: 80", "127.0.0.1:0x50", ":http", "1.5"}) {
    const std::string error = refused(text);
    EXPECT_TRUE(error.find("not a number from 1 to 65535") != std::string::npos ||
                error.find("has no port") != std::string::npos)
        << error;
  }
  // Port 0, "any free port", only where a listener allows it.
  EXPECT_NE(refused("127.0.0.1:0").find("port 0"), std::string::npos);
  EXPECT_EQ(ok("127.0.0.1:0", {.allow_port_zero = true}).port, 0);
  EXPECT_NE(refused("127.0.0.1:65536", {.allow_port_zero = true}).find("from 0 to 65535"), std::string::npos);
}

TEST(HostPort, BadHosts) {
  for (const char* text : {"a b:80", "x/y:80", "user@host:80", "a\tb:80"})
    EXPECT_NE(refused(text).find("a host name cannot have"), std::string::npos) << text;
  refused("http://x:80");  // a URL is not an address
}

TEST(HostPort, TextRoundTrips) {
  for (const char* text : {"127.0.0.1:7777", "[::1]:9464", "localhost:1", "[::]:0"}) {
    const HostPort hp = ok(text, {.allow_port_zero = true});
    EXPECT_EQ(hp.text(), text);
    EXPECT_EQ(ok(hp.text(), {.allow_port_zero = true}), hp);
  }
}

}  // namespace
}  // namespace lantern
