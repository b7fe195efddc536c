// SPDX-License-Identifier: Apache-2.0
// echo_latency_test.cpp - the echo client's round-trip percentiles cover the whole range:
// the percentiles alone (values from 1 us to 2.38 s, and the top bucket), then the real
// load client against a loopback server that answers each message after 150 ms (a
// histogram that stopped at 100 ms would print p50 = p99 = 100000.5 us for it).
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "echo_load.hpp"
#include "percentile.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using lantern::examples::percentile;
using lantern::trace::LatencyHistogram;

TEST(EchoPercentile, PercentilesAreWithinOneBucketAtEveryScale) {
  LatencyHistogram h;
  for (int i = 0; i < 50; ++i) h.record(1'000);        // 1 us
  for (int i = 0; i < 49; ++i) h.record(250'000'000);  // 250 ms
  h.record(2'380'000'000);                             // 2.38 s
  EXPECT_NEAR(percentile(h, 0.25).us, 1.0, 1.0 * 0.0625);
  EXPECT_NEAR(percentile(h, 0.75).us, 250'000.0, 250'000.0 * 0.0625);
  EXPECT_NEAR(percentile(h, 1.0).us, 2'380'000.0, 2'380'000.0 * 0.0625);
  EXPECT_LE(percentile(h, 1.0).us, static_cast<double>(h.max_ns()) / 1e3);
  EXPECT_DOUBLE_EQ(static_cast<double>(h.max_ns()) / 1e3, 2'380'000.0);
  EXPECT_FALSE(percentile(h, 0.99).beyond_top);
  EXPECT_EQ(percentile(h, 0.5).to_string().find("beyond"), std::string::npos);
}

TEST(EchoPercentile, APercentileInTheTopBucketSaysSo) {
  LatencyHistogram h;
  h.record(~std::uint64_t{0});  // the top bucket has no upper edge
  const auto p = percentile(h, 0.5);
  EXPECT_TRUE(p.beyond_top);
  EXPECT_EQ(p.to_string().rfind("> ", 0), 0u) << p.to_string();
  EXPECT_NE(p.to_string().find("beyond the histogram's top bucket"), std::string::npos);
}

// SlowEcho: a loopback server that echoes each message `delay` after it arrives.
class SlowEcho {
 public:
  explicit SlowEcho(std::chrono::milliseconds delay) : delay_(delay) {
    listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listen_, 4);
    socklen_t len = sizeof a;
    ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~SlowEcho() {
    stop_ = true;
    thread_.join();
    ::close(listen_);
  }
  std::uint16_t port() const { return port_; }

 private:
  void run() {
    int fd = -1;
    while (!stop_ && fd < 0) {
      pollfd p{listen_, POLLIN, 0};
      if (::poll(&p, 1, 20) == 1) fd = ::accept(listen_, nullptr, nullptr);
    }
    char buf[4096];
    while (!stop_ && fd >= 0) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) != 1) continue;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      std::this_thread::sleep_for(delay_);  // the latency under test, not synchronisation
      ::send(fd, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL);
    }
    if (fd >= 0) ::close(fd);
  }
  std::chrono::milliseconds delay_;
  int listen_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(EchoPercentile, TheLoadClientReportsRoundTripsBeyond100Ms) {
  lantern::testing::Watchdog watchdog("TheLoadClientReportsRoundTripsBeyond100Ms", 60s);
  SlowEcho server(150ms);
  lantern::examples::LoadOptions o;
  o.port = server.port();
  o.connections = 1;
  o.seconds = 0;
  o.messages_per_connection = 4;
  o.min_bytes = o.max_bytes = 32;  // one segment: one recv, one delay per message
  const auto r = lantern::examples::run_load(o);
  ASSERT_EQ(r.errors, 0u) << r.first_error;
  ASSERT_EQ(r.requests, 4u);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_GE(r.p50.us, 150'000.0 * (1 - 0.0625)) << r.p50.to_string();
  EXPECT_LE(r.p50.us, r.max_us);
  EXPECT_FALSE(r.p99.beyond_top);
  EXPECT_GE(r.max_us, 150'000.0);
}

}  // namespace
