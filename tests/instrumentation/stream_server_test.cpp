// SPDX-License-Identifier: Apache-2.0
// stream_server_test.cpp - the live stream's server against hostile and stalled clients,
// over real loopback sockets: clients that never read cannot hold the viewer slots, a
// client that sends garbage is closed at once, and binding beyond loopback warns.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "lantern/instrumentation/stream_server.hpp"
#include "lantern/trace/trace_decoder.hpp"
#include "support/watchdog.hpp"

namespace lantern::instrumentation {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

trace::TraceHeader test_header(std::uint32_t workers) {
  trace::TraceHeader h;
  h.producer = "stream_server_test";
  h.workers = workers;
  h.clock.ns_per_tick = 1.0;
  return h;
}

std::vector<trace::Event> batch(std::uint32_t workers, std::uint64_t first_tick, int per_worker) {
  std::vector<trace::Event> out;
  for (std::uint32_t w = 0; w < workers; ++w) {
    for (int i = 0; i < per_worker; ++i) {
      out.push_back(trace::Event{
          first_tick + static_cast<std::uint64_t>(i) * 10, w, EventId::steal_round_failed, {0, 0, 0}, 1, 0});
    }
  }
  return out;
}

// connect_to: a blocking loopback connection; `rcvbuf` > 0 shrinks its receive buffer
// (a client that never reads then stalls the server's sends sooner).
int connect_to(std::uint16_t port, int rcvbuf = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (rcvbuf > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// read_some: what arrives on fd within `limit` (stops early at `enough` bytes or EOF).
std::vector<std::uint8_t> read_some(int fd, std::chrono::milliseconds limit, std::size_t enough, bool* eof = nullptr) {
  std::vector<std::uint8_t> out;
  std::uint8_t buf[65536];
  const auto end = Clock::now() + limit;
  while (out.size() < enough) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      if (eof) *eof = true;
      break;
    }
    if (n > 0) out.insert(out.end(), buf, buf + n);
  }
  return out;
}

// until: polls a condition for up to `limit`, feeding the server so stalls can happen.
template <class F, class Feed>
bool until(F done, Feed feed, std::chrono::milliseconds limit = 20s) {
  const auto end = Clock::now() + limit * lantern::testing::sanitizer_slowdown();
  while (!done()) {
    if (Clock::now() > end) return false;
    feed();
  }
  return true;
}

// ViewerReader: a viewer's socket read on a thread of its own. finish() waits until every
// byte the server sent has arrived (the server's own count, one client), not for a fixed
// time: a reader thread that did not get the CPU in time lost the last chunks and their
// gap markers on a loaded machine. It then closes the socket and decodes the events.
class ViewerReader {
 public:
  explicit ViewerReader(int fd)
      : fd_(fd), thread_([this] {
          bool eof = false;
          while (!done_.load() && !eof) {
            auto more = read_some(fd_, 20ms, 1 << 20, &eof);
            bytes_.insert(bytes_.end(), more.begin(), more.end());
            received_.store(bytes_.size());
          }
        }) {}
  ~ViewerReader() { stop(); }
  // finish: false (and *events untouched) if the bytes sent did not all arrive in time.
  bool finish(StreamServer& server, std::vector<trace::Event>* events) {
    const std::uint64_t sent = server.stats().bytes_sent;
    const bool all = until([&] { return received_.load() >= sent; }, [] { std::this_thread::sleep_for(1ms); });
    stop();
    EXPECT_TRUE(all) << "received " << received_.load() << " of " << sent << " bytes sent";
    if (!all) return false;
    trace::TraceDecoder decoder;
    decoder.feed(bytes_);
    decoder.end_of_input();
    for (auto step = decoder.next(); step != trace::TraceDecoder::Step::end; step = decoder.next()) {
      if (step == trace::TraceDecoder::Step::chunk)
        events->insert(events->end(), decoder.chunk().events.begin(), decoder.chunk().events.end());
    }
    return true;
  }

 private:
  void stop() {
    if (!thread_.joinable()) return;
    done_ = true;
    thread_.join();
    ::close(fd_);
  }
  const int fd_;
  std::vector<std::uint8_t> bytes_;
  std::atomic<bool> done_{false};
  std::atomic<std::uint64_t> received_{0};
  std::thread thread_;
};

// Received: what a viewer decoded: its events, the events its `dropped` markers count by
// reason, events whose worker's clock ran backwards, and events of unknown workers.
struct Received {
  std::uint64_t events = 0, backwards = 0, foreign = 0;
  std::uint64_t first_tick = 0;  // of the first event decoded
  std::array<std::uint64_t, kDropReasonCount> dropped{};
};
Received received(const std::vector<trace::Event>& got, std::uint32_t workers) {
  Received r;
  std::vector<std::uint64_t> last(workers, 0);
  if (!got.empty()) r.first_tick = got.front().ticks;
  for (const auto& e : got) {
    if (e.worker >= workers) {
      ++r.foreign;
      continue;
    }
    if (e.ticks < last[e.worker]) ++r.backwards;
    last[e.worker] = std::max(last[e.worker], e.ticks);
    if (e.type != EventId::dropped) {
      ++r.events;
      continue;
    }
    const auto d = trace::payload<DroppedPayload>(e);
    if (static_cast<std::size_t>(d.reason) < r.dropped.size()) r.dropped[static_cast<std::size_t>(d.reason)] += d.count;
  }
  return r;
}

// receive_all: once the server has sent everything (markers included), what `viewer`
// decoded; false when that did not happen in time.
bool receive_all(StreamServer& server, ViewerReader& viewer, std::uint32_t workers, Received* out) {
  if (!server.wait_until_sent(
          std::chrono::milliseconds(static_cast<long long>(20000 * lantern::testing::sanitizer_slowdown()))))
    return false;
  std::vector<trace::Event> got;
  if (!viewer.finish(server, &got)) return false;
  *out = received(got, workers);
  return true;
}

TEST(StreamServer, ClientsThatNeverReadGiveTheirSlotToARealViewer) {
  lantern::testing::Watchdog watchdog("ClientsThatNeverReadGiveTheirSlotToARealViewer", 60s);
  StreamOptions o;
  o.max_clients = 8;
  o.stall_timeout = 600s;  // only giving way frees a slot in this test
  auto server = StreamServer::start(test_header(2), o);
  ASSERT_TRUE(server);
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) idle.push_back(connect_to(server->port(), 4096));
  std::uint64_t tick = 1;
  auto feed = [&] {
    server->on_batch(batch(2, tick, 2000));
    server->on_flush();
    tick += 100000;
    std::this_thread::sleep_for(1ms);  // pacing: the server thread sends meanwhile
  };
  ASSERT_TRUE(until([&] { return server->stats().clients_stalled == 8; }, feed))
      << "clients " << server->stats().clients << ", stalled " << server->stats().clients_stalled;
  const auto stalled_at = Clock::now();
  while (Clock::now() - stalled_at < kGiveWayAfter + 50ms) feed();

  // A real viewer connects: it gets the header and live chunks, not a closed socket.
  const int viewer = connect_to(server->port());
  ASSERT_GE(viewer, 0);
  // The reader decodes as it reads and publishes what it has seen; the test feeds until
  // the viewer has received a whole chunk of events (or was closed), bounded by until()'s
  // limit. Before: 50 feeds, then a 100 ms sleep for "the last bytes to cross loopback" -
  // on a loaded machine (or under TSan) the server thread need not have accepted and
  // served the viewer by then, and the test failed with a healthy server.
  std::vector<std::uint8_t> got;
  std::atomic<bool> done{false};
  std::atomic<bool> eof_seen{false};
  std::atomic<std::uint64_t> events_seen{0};
  std::thread reader([&] {
    trace::TraceDecoder decoder;
    bool eof = false;
    while (!done.load() && !eof) {
      auto more = read_some(viewer, 50ms, 1 << 20, &eof);
      got.insert(got.end(), more.begin(), more.end());
      decoder.feed(more);
      for (auto step = decoder.next();
           step == trace::TraceDecoder::Step::chunk || step == trace::TraceDecoder::Step::header;
           step = decoder.next()) {
        if (step == trace::TraceDecoder::Step::chunk) events_seen.fetch_add(decoder.chunk().events.size());
      }
    }
    eof_seen = eof;
  });
  const bool served = until([&] { return events_seen.load() > 0 || eof_seen.load(); }, feed);
  done = true;
  reader.join();
  const StreamStats s = server->stats();
  EXPECT_TRUE(served) << "the viewer received no chunk within the limit: " << got.size() << " bytes";
  EXPECT_FALSE(eof_seen.load()) << "the viewer was closed after " << got.size() << " bytes";
  EXPECT_GE(s.clients_evicted, 1u);
  EXPECT_EQ(s.clients_refused, 0u);
  EXPECT_EQ(s.clients, 8u);
  ASSERT_GT(got.size(), 1000u) << "the viewer was closed with " << got.size() << " bytes";
  EXPECT_GT(events_seen.load(), 0u);
  ::close(viewer);
  for (int fd : idle) ::close(fd);
}

TEST(StreamServer, AClientThatStopsReadingIsDisconnectedAfterTheStallTimeout) {
  lantern::testing::Watchdog watchdog("AClientThatStopsReadingIsDisconnectedAfterTheStallTimeout", 60s);
  StreamOptions o;
  o.stall_timeout = 300ms;
  auto server = StreamServer::start(test_header(1), o);
  ASSERT_TRUE(server);
  const int fd = connect_to(server->port(), 4096);
  std::uint64_t tick = 1;
  auto feed = [&] {
    server->on_batch(batch(1, tick, 2000));
    server->on_flush();
    tick += 100000;
    std::this_thread::sleep_for(1ms);
  };
  ASSERT_TRUE(until([&] { return server->stats().clients_stalled == 1; }, feed));
  ASSERT_TRUE(until([&] { return server->stats().clients == 0; }, feed));
  EXPECT_EQ(server->stats().clients_evicted, 1u);
  // Its socket sees the end of the stream.
  bool eof = false;
  read_some(fd, 10s, ~std::size_t{0}, &eof);
  EXPECT_TRUE(eof);
  ::close(fd);
}

// Before: the server read 256 bytes at a time and kept the connection, so a client that
// streams garbage kept the server thread busy (44 % CPU) and slowed the app by 45 %.
TEST(StreamServer, AClientThatSendsBytesIsClosedAtOnce) {
  lantern::testing::Watchdog watchdog("AClientThatSendsBytesIsClosedAtOnce", 60s);
  auto server = StreamServer::start(test_header(1));
  ASSERT_TRUE(server);
  const int fd = connect_to(server->port());
  ASSERT_GE(fd, 0);
  std::vector<char> garbage(1 << 16, 'G');
  bool closed = false;
  const auto end = Clock::now() + 10s * lantern::testing::sanitizer_slowdown();
  std::size_t sent = 0;
  while (!closed && Clock::now() < end) {
    const ssize_t n = ::send(fd, garbage.data(), garbage.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) sent += static_cast<std::size_t>(n);
    if (n < 0 && errno != EAGAIN && errno != EINTR) closed = true;  // EPIPE / ECONNRESET
    bool eof = false;
    read_some(fd, 5ms, ~std::size_t{0}, &eof);
    closed = closed || eof;
  }
  EXPECT_TRUE(closed) << "the server kept a connection that sent " << sent << " bytes of garbage";
  EXPECT_TRUE(until([&] { return server->stats().clients == 0; }, [] { std::this_thread::sleep_for(1ms); }));
  EXPECT_EQ(server->stats().clients_sent_input, 1u);
  ::close(fd);
}

// A slow viewer's gap markers say why (DropReason::slow_viewer: lost for this viewer
// only, not by the app), and each worker's marker lies after everything that viewer
// received from the worker and before anything it receives next, so no worker's clock
// runs backwards (before: every marker carried the first lost chunk's earliest tick,
// across workers, which put it before events already delivered).
TEST(StreamServer, GapMarkersKeepEachWorkersTicksInOrder) {
  lantern::testing::Watchdog watchdog("GapMarkersKeepEachWorkersTicksInOrder", 60s);
  StreamOptions o;
  o.client_buffer_bytes = 64 << 10;  // small: chunks are dropped soon after the socket is full
  o.stall_timeout = std::chrono::minutes(10);
  auto server = StreamServer::start(test_header(3), o);
  ASSERT_TRUE(server);
  const int fd = connect_to(server->port(), 4096);
  ASSERT_TRUE(until([&] { return server->stats().clients == 1; }, [] { std::this_thread::sleep_for(1ms); }));
  // Workers' events overlap in time across chunks, so a chunk's earliest tick is some
  // other worker's, earlier than what the first workers already delivered.
  std::uint64_t tick = 100000;
  auto feed = [&] {
    std::vector<trace::Event> events;
    for (std::uint32_t w = 0; w < 3; ++w) {
      for (int i = 0; i < 300 * static_cast<int>(w + 1); ++i) {
        // Worker w's events lag w * 15,000 ticks behind worker 0's, as a collector batch's
        // per-ring runs do; each worker's own ticks still only grow.
        events.push_back(trace::Event{
            tick - w * 15000 + static_cast<std::uint64_t>(i) * 7, w, EventId::steal_round_failed, {0, 0, 0}, 1, 0});
      }
    }
    tick += 10000;
    server->on_batch(events);
    server->on_flush();
  };
  ASSERT_TRUE(until([&] { return server->stats().chunks_dropped >= 20; }, feed));
  ViewerReader viewer(fd);
  ASSERT_TRUE(server->wait_until_sent(20s));
  for (int i = 0; i < 5; ++i) feed();  // chunks after the gap: the markers go first
  ASSERT_TRUE(server->wait_until_sent(20s));
  std::vector<trace::Event> got;
  ASSERT_TRUE(viewer.finish(*server, &got));
  std::vector<std::uint64_t> last(3, 0);
  std::uint64_t markers = 0, marked = 0, backwards = 0;
  {
    for (const auto& e : got) {
      ASSERT_LT(e.worker, 3u);
      if (e.ticks < last[e.worker]) ++backwards;
      last[e.worker] = std::max(last[e.worker], e.ticks);
      if (e.type == EventId::dropped) {
        const auto d = trace::payload<DroppedPayload>(e);
        ++markers, marked += d.count;
        // The viewer's own reason: the app dropped nothing (not ring_full).
        EXPECT_EQ(d.reason, DropReason::slow_viewer);
      }
    }
  }
  EXPECT_GT(markers, 0u);
  EXPECT_EQ(marked, server->stats().events_dropped);
  EXPECT_EQ(backwards, 0u) << "events or markers earlier than the same worker's previous event";
}

// A slow viewer that loses chunks still learns of every drop, for the right reason: the
// app's own `ring_full` markers inside a lost chunk reach it as ring_full (before: they
// were counted as slow_viewer events and the app's drops vanished for that viewer), the
// rest as slow_viewer; and a loss after the last chunk is reported too (before: gap
// markers only went out in front of a next chunk, which never came).
TEST(StreamServer, ASlowViewerLearnsOfEveryDropWithItsReasonEvenAfterTheLastChunk) {
  lantern::testing::Watchdog watchdog("ASlowViewerLearnsOfEveryDropWithItsReasonEvenAfterTheLastChunk", 60s);
  StreamOptions o;
  o.client_buffer_bytes = 64 << 10;  // small: chunks are dropped soon after the socket is full
  o.stall_timeout = std::chrono::minutes(10);
  constexpr std::uint32_t kWorkers = 2;
  auto server = StreamServer::start(test_header(kWorkers), o);
  ASSERT_TRUE(server);
  const int fd = connect_to(server->port(), 4096);
  ASSERT_TRUE(until([&] { return server->stats().clients == 1; }, [] { std::this_thread::sleep_for(1ms); }));
  // Each batch: per worker 300 events and then the app's marker for 7 events its ring
  // dropped: one chunk per feed.
  std::uint64_t tick = 1000, fed_events = 0, fed_ring_full = 0;
  auto feed = [&] {
    std::vector<trace::Event> events;
    for (std::uint32_t w = 0; w < kWorkers; ++w) {
      for (int i = 0; i < 300; ++i) {
        events.push_back(
            trace::Event{tick + static_cast<std::uint64_t>(i), w, EventId::steal_round_failed, {0, 0, 0}, 1, 0});
      }
      events.push_back(trace::make_event(tick + 300, w, DroppedPayload{7, DropReason::ring_full}));
      fed_events += 300, fed_ring_full += 7;
    }
    tick += 1000;
    server->on_batch(events);
    server->on_flush();
  };
  // Feed until chunks are being dropped, and stop right after a feed whose chunk was:
  // nothing follows the last loss.
  bool last_lost = false;
  ASSERT_TRUE(until([&] { return last_lost; },
                    [&] {
                      const std::uint64_t before = server->stats().chunks_dropped;
                      feed();
                      last_lost = before >= 10 && server->stats().chunks_dropped > before;
                    }));
  ViewerReader viewer(fd);
  // Sent means told too: the viewer's gap markers went out once it had room for them.
  Received r;
  ASSERT_TRUE(receive_all(*server, viewer, kWorkers, &r));
  const std::uint64_t events = r.events, backwards = r.backwards;
  const std::uint64_t ring_full = r.dropped[static_cast<std::size_t>(DropReason::ring_full)];
  const std::uint64_t slow_viewer = r.dropped[static_cast<std::size_t>(DropReason::slow_viewer)];
  EXPECT_EQ(r.foreign, 0u);
  const StreamStats stats = server->stats();
  EXPECT_GE(stats.chunks_dropped, 10u);
  EXPECT_EQ(ring_full, fed_ring_full) << "every drop of the app's reaches the viewer as ring_full";
  EXPECT_EQ(slow_viewer, stats.events_dropped) << "and every event it lost itself as slow_viewer";
  EXPECT_EQ(events + slow_viewer, fed_events);
  EXPECT_EQ(backwards, 0u) << "events or markers earlier than the same worker's previous event";
}

// A quiet app sends nothing, so clients that connect and never read are never stalled:
// when all 8 slots are held by them, a new viewer still gets in (the client whose socket
// accepted nothing for longest gives way after kIdleGiveWayAfter), and gets the header.
TEST(StreamServer, IdleClientsOfAQuietAppGiveTheirSlotToANewViewer) {
  lantern::testing::Watchdog watchdog("IdleClientsOfAQuietAppGiveTheirSlotToANewViewer", 60s);
  StreamOptions o;
  o.max_clients = 8;
  o.stall_timeout = 600s;
  auto server = StreamServer::start(test_header(2), o);
  ASSERT_TRUE(server);
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) idle.push_back(connect_to(server->port()));
  ASSERT_TRUE(until([&] { return server->stats().clients == 8; }, [] { std::this_thread::sleep_for(1ms); }));
  // New viewers try until one receives the header (each refused one sees the end of the
  // stream at once), bounded by until()'s limit: the app never sends a thing.
  std::size_t header_bytes = 0;
  int attempts = 0;
  const bool in = until([&] { return header_bytes > 0; },
                        [&] {
                          ++attempts;
                          const int fd = connect_to(server->port());
                          bool eof = false;
                          header_bytes = read_some(fd, 200ms, 16, &eof).size();
                          if (header_bytes == 0)
                            ::close(fd);
                          else
                            idle.push_back(fd);
                        });
  EXPECT_TRUE(in) << attempts << " viewers were refused";
  EXPECT_GE(server->stats().clients_evicted, 1u);
  EXPECT_EQ(server->stats().clients, 8u);
  for (int fd : idle) ::close(fd);
}

// The stream keeps the start of the run: a viewer that connects after the first events
// (an attach waiting for the app, one launched a moment later) receives them all. A viewer
// that connects after that start is told, per worker, how many events it missed
// (before_attach markers), so what it received plus what it was told adds up to what
// the app streamed.
TEST(StreamServer, ALateViewerGetsTheStartOfTheRunAndIsToldWhatItMissed) {
  lantern::testing::Watchdog watchdog("ALateViewerGetsTheStartOfTheRunAndIsToldWhatItMissed", 60s);
  constexpr std::uint32_t kWorkers = 2;
  for (const std::size_t backlog : {std::size_t{4} << 20, std::size_t{4} << 10}) {
    StreamOptions o;
    o.backlog_bytes = backlog;
    auto server = StreamServer::start(test_header(kWorkers), o);
    ASSERT_TRUE(server);
    std::uint64_t tick = 1000, fed = 0;
    auto feed = [&] {
      server->on_batch(batch(kWorkers, tick, 500));
      server->on_flush();
      tick += 100000;
      fed += kWorkers * 500;
    };
    for (int i = 0; i < 20; ++i) feed();  // nobody is watching yet
    const int fd = connect_to(server->port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(until([&] { return server->stats().clients == 1; }, [] { std::this_thread::sleep_for(1ms); }));
    ViewerReader viewer(fd);
    for (int i = 0; i < 5; ++i) feed();
    Received r;
    ASSERT_TRUE(receive_all(*server, viewer, kWorkers, &r));
    const std::uint64_t events = r.events, backwards = r.backwards;
    const std::uint64_t missed = r.dropped[static_cast<std::size_t>(DropReason::before_attach)];
    EXPECT_EQ(r.foreign, 0u);
    EXPECT_EQ(r.dropped[static_cast<std::size_t>(DropReason::ring_full)] +
                  r.dropped[static_cast<std::size_t>(DropReason::slow_viewer)],
              0u);
    ASSERT_GT(r.events, 0u);
    EXPECT_EQ(r.first_tick, 1000u) << "the viewer starts at the run's first event";
    EXPECT_EQ(events + missed, fed) << "backlog " << backlog;
    if (backlog == (std::size_t{4} << 20))
      EXPECT_EQ(missed, 0u) << "the whole run fits the backlog";
    else
      EXPECT_GT(missed, 0u) << "a small backlog keeps only the start";
    EXPECT_EQ(backwards, 0u) << "markers lie between what the viewer received of each worker";
  }
}

TEST(StreamServer, ServingBeyondLoopbackWarnsThatAnyoneCanReadTheTrace) {
  for (const char* host : {"127.0.0.1", "::1"}) {
    StreamOptions o;
    o.host = host;
    auto server = StreamServer::start(test_header(1), o);
    if (!server && std::string(host) == "::1") continue;  // no IPv6 on this machine
    ASSERT_TRUE(server) << host;
    EXPECT_EQ(server->exposure_warning(), "") << host;
  }
  StreamOptions o;
  o.host = "0.0.0.0";
  ::testing::internal::CaptureStderr();
  auto server = StreamServer::start(test_header(1), o);
  const std::string printed = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(server);
  EXPECT_NE(server->exposure_warning().find("anyone who can reach this port can connect and read the trace"),
            std::string::npos);
  EXPECT_NE(printed.find(server->exposure_warning()), std::string::npos) << printed;
}

}  // namespace
}  // namespace lantern::instrumentation
