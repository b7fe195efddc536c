// SPDX-License-Identifier: Apache-2.0
// The echo server example (examples/echo_server) under both sleep strategies, with real
// TCP connections on loopback: 1,000 concurrent connections echoing every byte back
// unchanged (compared), clients that disconnect mid-message or reset, a message far
// larger than any buffer, a client that never reads, and a port already in use.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "echo_load.hpp"
#include "echo_server.hpp"
#include "lantern/lantern.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;
using lantern::Scheduler;
using lantern::SleepStrategy;
using lantern::examples::EchoServer;
using lantern::examples::LoadOptions;
using lantern::examples::LoadResult;
using lantern::examples::run_load;
using lantern::testing::Watchdog;

namespace {

std::function<std::string()> dump(const Scheduler& s, const EchoServer& server) {
  return [&] {
    const auto st = server.stats();
    return s.describe_state() + "echo server: accepted=" + std::to_string(st.accepted) +
           " open=" + std::to_string(st.open) + " closed=" + std::to_string(st.closed) +
           " errors=" + std::to_string(st.errors) + "\n";
  };
}

int connect_to(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Two descriptors per connection (client and server side) plus the test's own.
void raise_fd_limit(rlim_t want) {
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  if (r.rlim_cur < want) {
    r.rlim_cur = std::min(want, r.rlim_max);
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

}  // namespace

class Echo : public ::testing::TestWithParam<SleepStrategy> {
 protected:
  Scheduler pool{{.workers = 2, .sleep_strategy = GetParam()}};
};

TEST_P(Echo, ThousandConcurrentConnectionsEchoEveryByte) {
  raise_fd_limit(4096);
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  ASSERT_GE(r.rlim_cur, 2100u) << "the test needs 2 descriptors per connection; raise ulimit -n";
  EchoServer server(pool);
  server.start();
  Watchdog dog("1,000 connections", 120s, dump(pool, server));
  LoadOptions o;
  o.port = server.port();
  o.connections = 1000;
  o.seconds = 0;
  o.messages_per_connection = lantern::testing::sanitizer_slowdown() > 1 ? 2 : 5;
  o.min_bytes = 1;
  o.max_bytes = 16 * 1024;
  const LoadResult res = run_load(o);
  EXPECT_EQ(res.errors, 0u) << res.first_error;
  EXPECT_EQ(res.mismatches, 0u);
  EXPECT_EQ(res.requests, 1000 * o.messages_per_connection);
  server.wait_until_open_at_most(0);
  EXPECT_EQ(server.stats().accepted, 1000u);
  EXPECT_EQ(server.stats().errors, 0u);
  EXPECT_EQ(server.stats().bytes_echoed, res.bytes);
}

TEST_P(Echo, MessageMuchLargerThanTheBufferComesBackWhole) {
  EchoServer server(pool, {.buffer_bytes = 4096});
  server.start();
  Watchdog dog("32 MiB message", 120s, dump(pool, server));
  LoadOptions o;
  o.port = server.port();
  o.seconds = 0;
  o.messages_per_connection = 1;
  o.min_bytes = o.max_bytes = 32u << 20;
  const LoadResult res = run_load(o);
  EXPECT_EQ(res.errors, 0u) << res.first_error;
  EXPECT_EQ(res.mismatches, 0u);
  EXPECT_EQ(res.bytes, 32u << 20);
}

TEST_P(Echo, SurvivesClientsThatDisconnectMidMessageOrReset) {
  EchoServer server(pool);
  server.start();
  Watchdog dog("disconnects", 60s, dump(pool, server));
  std::vector<char> junk(100000, '\xff');
  for (int i = 0; i < 50; ++i) {
    const int fd = connect_to(server.port());
    ASSERT_GE(fd, 0);
    ASSERT_GT(send(fd, junk.data(), junk.size() / (1 + i % 7), MSG_NOSIGNAL), 0);
    if (i % 2) {  // an abortive close: the server sees a reset, mid-echo
      linger l{1, 0};
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    close(fd);  // never read what came back
  }
  server.wait_until_closed_at_least(50);
  EXPECT_EQ(server.stats().accepted, 50u);
  // The server still serves correctly afterwards.
  LoadOptions o;
  o.port = server.port();
  o.connections = 8;
  o.seconds = 0;
  o.messages_per_connection = 100;
  o.min_bytes = 1;
  o.max_bytes = 2000;
  const LoadResult res = run_load(o);
  EXPECT_EQ(res.errors, 0u) << res.first_error;
  EXPECT_EQ(res.mismatches, 0u);
  EXPECT_EQ(res.requests, 800u);
}

TEST_P(Echo, AClientThatNeverReadsDoesNotStallTheOthers) {
  EchoServer server(pool);
  server.start();
  Watchdog dog("non-reading client", 60s, dump(pool, server));
  // Fill both directions' socket buffers: the server's write to this client blocks (in
  // the kernel, not in a worker) and it stops reading from it.
  const int hog = connect_to(server.port());
  ASSERT_GE(hog, 0);
  timeval tv{0, 200000};
  setsockopt(hog, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  std::vector<char> junk(1 << 20, '\0');
  std::size_t sent = 0;
  for (;;) {  // until the send times out: everything between us is full
    const ssize_t n = send(hog, junk.data(), junk.size(), MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  EXPECT_GT(sent, 0u);
  LoadOptions o;
  o.port = server.port();
  o.connections = 8;
  o.seconds = 0;
  o.messages_per_connection = 200;
  const LoadResult res = run_load(o);
  EXPECT_EQ(res.errors, 0u) << res.first_error;
  EXPECT_EQ(res.mismatches, 0u);
  EXPECT_EQ(res.requests, 1600u);
  linger l{1, 0};
  setsockopt(hog, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(hog);
  server.wait_until_open_at_most(0);
}

TEST_P(Echo, StopClosesOpenConnections) {
  EchoServer server(pool);
  server.start();
  Watchdog dog("stop", 30s, dump(pool, server));
  const int fd = connect_to(server.port());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(send(fd, "abc", 3, MSG_NOSIGNAL), 3);
  char buf[8];
  ASSERT_EQ(recv(fd, buf, 3, MSG_WAITALL), 3);  // echoed: the connection is open
  EXPECT_EQ(server.stats().open, 1u);
  EXPECT_EQ(server.stats().closed, 0u);
  server.stop();
  EXPECT_EQ(recv(fd, buf, sizeof buf, 0), 0);  // then closed by the server
  close(fd);
  server.wait_until_open_at_most(0);
}

TEST_P(Echo, PortInUseIsAClearError) {
  EchoServer first(pool);
  try {
    EchoServer second(pool, {.port = first.port()});
    FAIL() << "a second server on the same port was created";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EADDRINUSE);
    EXPECT_NE(std::string(e.what()).find("already in use"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(first.port())), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, Echo, ::testing::Values(SleepStrategy::condvar, SleepStrategy::io_uring),
                         [](const auto& info) { return std::string(lantern::strategy_name(info.param)); });
