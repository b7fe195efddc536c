// SPDX-License-Identifier: Apache-2.0
// live_test.cpp - live attach end to end: StreamServer (the app side) to Session (the
// viewer side) over loopback. Late viewers, slow viewers, viewers that vanish, apps that
// vanish, the environment variable, and a real scheduler.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <lantern/instrumentation/collector.hpp>
#include <lantern/instrumentation/recorder.hpp>
#include <lantern/instrumentation/stream_server.hpp>
#include <lantern/instrumentation/trace_sinks.hpp>
#include <lantern/lantern.hpp>
#include <lantern/trace/trace_decoder.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/fib.hpp"
#include "support/pool_state.hpp"
#include "support/watchdog.hpp"
#include "trace_builder.hpp"

namespace lantern::viewer {
namespace {

using namespace std::chrono_literals;
using instrumentation::StreamOptions;
using instrumentation::StreamServer;

// until: polls `done` for up to 10 s (a loaded CI machine; times the sanitizer's
// slowdown), failing loudly otherwise.
template <class F>
bool until(F done, std::chrono::milliseconds limit = 10s) {
  const auto end = std::chrono::steady_clock::now() + limit * lantern::testing::sanitizer_slowdown();
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
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

std::uint64_t model_events(Session& s) {
  std::lock_guard<std::mutex> lock(s.mutex());
  return s.model().events();
}

// The stream keeps the start of the run: a viewer that connects after the app began
// gets the header, the events from before it connected, then everything from then on.
TEST(Live, LateViewerGetsHeaderTheStartOfTheRunThenEverything) {
  test::TraceBuilder b(2);
  std::string error;
  auto server = StreamServer::start(b.header(), StreamOptions{}, &error);
  ASSERT_TRUE(server) << error;
  server->on_batch(batch(2, 1000, 50));  // nobody connected: kept for a late viewer

  HostPort where;
  where.port = server->port();
  auto session = Session::attach(where);
  ASSERT_TRUE(until([&] { return server->stats().clients == 1; }));
  server->on_batch(batch(2, 5000, 100));
  server->on_flush();
  ASSERT_TRUE(until([&] { return model_events(*session) == 300; })) << model_events(*session);
  std::lock_guard<std::mutex> lock(session->mutex());
  EXPECT_EQ(session->model().dropped_events(), 0u);
  EXPECT_TRUE(session->model().header_ok());
  EXPECT_EQ(session->model().worker_count(), 2u);
  EXPECT_EQ(session->model().status().phase, SourceStatus::Phase::streaming);
}

// free_port: a loopback port nobody listens on now (bound, then closed).
std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// A viewer waiting for an app that is not up yet gets every event from the first, even
// those the app streamed before the viewer's next connection attempt: nothing is lost
// and nothing is counted as dropped.
TEST(Live, AnAttachWaitingBeforeTheAppStartsGetsEveryEvent) {
  test::TraceBuilder b(2);
  HostPort where;
  where.port = free_port();
  auto session = Session::attach(where, Session::kDefaultEventLimit, /*wait=*/true);
  StreamOptions o;
  o.port = where.port;
  std::string error;
  auto server = StreamServer::start(b.header(), o, &error);
  ASSERT_TRUE(server) << error;  // (the port was free a moment ago)
  std::uint64_t tick = 1000;
  for (int i = 0; i < 20; ++i, tick += 10000) server->on_batch(batch(2, tick, 100));  // the app runs at once
  server->on_flush();
  ASSERT_TRUE(until([&] { return model_events(*session) == 4000; })) << model_events(*session);
  std::lock_guard<std::mutex> lock(session->mutex());
  EXPECT_EQ(session->model().dropped_events(), 0u);
  EXPECT_EQ(session->model().first_tick(), 1000u);
}

// A viewer that connects after the start of the run the stream keeps is told how many
// events of each worker it missed, as drops (reason before_attach) that the analysis
// counts and the timeline marks like a ring's.
TEST(Live, EventsALateViewerMissedAreCountedAsDrops) {
  test::TraceBuilder b(2);
  StreamOptions o;
  o.backlog_bytes = 2048;  // a few chunks
  auto server = StreamServer::start(b.header(), o);
  ASSERT_TRUE(server);
  std::uint64_t tick = 1000, fed = 0;
  for (int i = 0; i < 50; ++i, tick += 10000, fed += 200) {
    server->on_batch(batch(2, tick, 100));
    server->on_flush();
  }
  HostPort where;
  where.port = server->port();
  auto session = Session::attach(where);
  ASSERT_TRUE(until([&] { return server->stats().clients == 1; }));
  server->on_batch(batch(2, tick, 100));
  server->on_flush();
  fed += 200;
  ASSERT_TRUE(until([&] {
    std::lock_guard<std::mutex> lock(session->mutex());
    return session->model().events() > 0 && session->model().events() -
                                                    session->model().analysis().events_of(EventId::dropped) +
                                                    session->model().dropped_events() ==
                                                fed;
  }));
  std::lock_guard<std::mutex> lock(session->mutex());
  const auto& a = session->model().analysis();
  EXPECT_GT(a.dropped_events(DropReason::before_attach), 0u);
  EXPECT_EQ(a.dropped_events(), a.dropped_events(DropReason::before_attach));
  EXPECT_EQ(a.drops(0).size() + a.drops(1).size(), 2u) << "one gap per worker";
}

// --attach to where nothing listens: the session ends at once, saying nothing answered
// (lantern-view exits 6 with it), unless told to wait.
TEST(Live, AttachWithoutWaitingToNothingSaysNothingAnswered) {
  HostPort where;
  where.port = free_port();
  auto session = Session::attach(where, Session::kDefaultEventLimit, /*wait=*/false);
  ASSERT_TRUE(until([&] { return session->finished(); }));
  std::lock_guard<std::mutex> lock(session->mutex());
  EXPECT_NE(session->attach_failure().find("nothing answered at 127.0.0.1:" + std::to_string(where.port)),
            std::string::npos)
      << session->attach_failure();
  EXPECT_FALSE(session->model().has_trace_errors()) << "no trace problem: there was no trace";
}

// A stream whose every slot is busy closes a new connection before the header: the
// session says so, not "not a Lantern trace: it is empty".
TEST(Live, AFullStreamsRefusalIsToldApartFromADamagedTrace) {
  test::TraceBuilder b(1);
  StreamOptions o;
  o.max_clients = 1;
  auto server = StreamServer::start(b.header(), o);
  ASSERT_TRUE(server);
  HostPort where;
  where.port = server->port();
  auto holder = Session::attach(where);  // reads: never stalled, and kept busy below
  ASSERT_TRUE(until([&] { return server->stats().clients == 1; }));
  auto refused = Session::attach(where, Session::kDefaultEventLimit, /*wait=*/false);
  std::uint64_t tick = 100;
  ASSERT_TRUE(until([&] {
    server->on_batch(batch(1, tick += 1000, 10));  // the holder keeps receiving
    server->on_flush();
    return refused->finished();
  }));
  std::lock_guard<std::mutex> lock(refused->mutex());
  EXPECT_NE(refused->attach_failure().find("closed the connection before sending anything"), std::string::npos)
      << refused->attach_failure();
  EXPECT_FALSE(refused->model().has_trace_errors());
  EXPECT_GE(server->stats().clients_refused, 1u);
}

TEST(Live, AppGoingAwayKeepsWhatWasReceived) {
  test::TraceBuilder b(1);
  auto server = StreamServer::start(b.header());
  ASSERT_TRUE(server);
  HostPort where;
  where.port = server->port();
  auto session = Session::attach(where);
  ASSERT_TRUE(until([&] { return server->stats().clients == 1; }));
  server->on_batch(batch(1, 100, 300));
  server->on_flush();
  ASSERT_TRUE(until([&] { return model_events(*session) == 300; }));
  server->stop();  // the app ends (or dies: the socket closes either way)
  ASSERT_TRUE(until([&] { return session->finished(); }));
  std::lock_guard<std::mutex> lock(session->mutex());
  EXPECT_EQ(session->model().events(), 300u);
  EXPECT_EQ(session->model().status().phase, SourceStatus::Phase::disconnected);
  EXPECT_NE(session->model().status().message.find("closed"), std::string::npos);
}

TEST(Live, SlowViewerLosesWholeChunksAndIsToldHowMany) {
  test::TraceBuilder b(2);
  StreamOptions o;
  o.client_buffer_bytes = 4096;                // tiny: a viewer that does not read overflows at once
  o.stall_timeout = std::chrono::minutes(10);  // not disconnected while it does not read
  auto server = StreamServer::start(b.header(), o);
  ASSERT_TRUE(server);
  // A "viewer" that connects and does not read for a while.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server->port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_TRUE(until([&] { return server->stats().clients == 1; }));
  std::uint64_t sent = 0;
  // More than the kernel's socket buffers can absorb (several MB), so the queue overflows.
  for (int i = 0; i < 3000; ++i) {
    const auto events = batch(2, 1000 + static_cast<std::uint64_t>(i) * 100000, 500);
    server->on_batch(events);
    sent += events.size();
  }
  server->on_flush();
  const auto stats = server->stats();
  EXPECT_GT(stats.events_dropped, 0u);
  EXPECT_EQ(stats.events_encoded, sent);
  // Now the viewer reads: everything queued arrives, then one more chunk, preceded by
  // the drop markers. Events received plus the markers' counts add up to all sent.
  std::vector<std::uint8_t> bytes;
  std::atomic<bool> reading{true};
  std::atomic<std::uint64_t> received_bytes{0};
  std::thread reader([&] {
    std::vector<std::uint8_t> buf(1 << 16);
    while (reading.load()) {
      const ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
      if (n > 0) bytes.insert(bytes.end(), buf.begin(), buf.begin() + n);
      received_bytes.store(bytes.size());
      if (n <= 0) std::this_thread::sleep_for(1ms);
    }
  });
  const auto sent_within =
      std::chrono::duration_cast<std::chrono::milliseconds>(10s * lantern::testing::sanitizer_slowdown());
  ASSERT_TRUE(server->wait_until_sent(sent_within));
  server->on_batch(batch(2, 900'000'000, 10));
  server->on_flush();
  ASSERT_TRUE(server->wait_until_sent(sent_within));
  // Everything was handed to the socket: read until all of it arrived (the server's byte
  // count; this is its only client), not for a fixed 300 ms - a reader that did not get
  // the CPU in time missed the last chunk and its drop markers on a loaded machine.
  const std::uint64_t bytes_sent = server->stats().bytes_sent;
  const bool all_arrived = until([&] { return received_bytes.load() >= bytes_sent; });
  reading = false;
  reader.join();
  ASSERT_TRUE(all_arrived) << "received " << bytes.size() << " of " << bytes_sent << " bytes sent";
  ::close(fd);
  trace::TraceDecoder decoder;
  decoder.feed(bytes);
  decoder.end_of_input();
  std::uint64_t received = 0, marked = 0;
  for (auto step = decoder.next(); step != trace::TraceDecoder::Step::end; step = decoder.next()) {
    if (step != trace::TraceDecoder::Step::chunk) continue;
    for (const auto& e : decoder.chunk().events) {
      if (e.type == EventId::dropped) {
        marked += lantern::trace::payload<lantern::DroppedPayload>(e).count;
      } else {
        ++received;
      }
    }
  }
  EXPECT_EQ(marked, server->stats().events_dropped);
  EXPECT_EQ(received + marked, sent + 20);
}

TEST(Live, ViewerVanishingCostsTheAppNothing) {
  test::TraceBuilder b(1);
  auto server = StreamServer::start(b.header());
  ASSERT_TRUE(server);
  for (int round = 0; round < 3; ++round) {
    {
      HostPort where;
      where.port = server->port();
      auto session = Session::attach(where);
      ASSERT_TRUE(until([&] { return server->stats().clients == 1; }));
      server->on_batch(batch(1, 1, 1000));
    }  // the viewer is gone, mid-stream
    // Sending on (SIGPIPE would kill this test process without MSG_NOSIGNAL).
    for (int i = 0; i < 50; ++i) server->on_batch(batch(1, 1, 1000));
    server->on_flush();
    ASSERT_TRUE(until([&] { return server->stats().clients == 0; }));
  }
  EXPECT_EQ(server->stats().clients_total, 3u);
}

TEST(Live, EnvironmentVariable) {
  instrumentation::Recorder recorder(1);
  instrumentation::Collector collector(recorder);
  test::TraceBuilder b(1);
  ::unsetenv("LANTERN_STREAM");
  EXPECT_FALSE(instrumentation::maybe_start_stream_from_env(collector, b.header()));
  ::setenv("LANTERN_STREAM", "not an address", 1);
  EXPECT_FALSE(instrumentation::maybe_start_stream_from_env(collector, b.header()));
  ::setenv("LANTERN_STREAM", "127.0.0.1:0", 1);
  auto handle = instrumentation::maybe_start_stream_from_env(collector, b.header());
  ASSERT_TRUE(handle);
  EXPECT_GT(handle->port(), 0);
  ::unsetenv("LANTERN_STREAM");
}

TEST(Live, OpenViewerLaunchesAViewerProcessOrSaysWhy) {
  instrumentation::Recorder recorder(1);
  instrumentation::Collector collector(recorder);
  test::TraceBuilder b(1);
  std::string error;
  ::setenv("LANTERN_VIEW", "/bin/true", 1);  // a stand-in viewer that exits at once
  auto launched = instrumentation::open_viewer(collector, b.header(), &error);
  EXPECT_TRUE(launched);
  EXPECT_TRUE(error.empty()) << error;
  ::setenv("LANTERN_VIEW", "/nonexistent/lantern-view", 1);
  auto streaming = instrumentation::open_viewer(collector, b.header(), &error);
  ::unsetenv("LANTERN_VIEW");
  ASSERT_TRUE(streaming);  // the stream runs anyway: attach by hand
  EXPECT_NE(error.find("cannot launch '/nonexistent/lantern-view'"), std::string::npos) << error;
  EXPECT_NE(error.find(streaming->address()), std::string::npos) << error;
}

// A viewer launched from one of Lantern's threads (which block the application's signals,
// lantern/thread_signals.hpp) starts with no signal blocked, and none ignored that the
// application ignores: Ctrl-C and kill still reach it.
TEST(Live, AViewerLaunchedFromAWorkerBlocksAndIgnoresNoSignal) {
  instrumentation::Recorder recorder(1);
  instrumentation::Collector collector(recorder);
  test::TraceBuilder b(1);
  char dir[] = "/tmp/lantern-live-viewer-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string out = std::string(dir) + "/mask";
  // A real program, not a script: a shell clears its signal mask as it starts.
  ::setenv("LANTERN_VIEW", LANTERN_MASK_PROBE, 1);
  ::setenv("LANTERN_MASK_PROBE_OUT", out.c_str(), 1);
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &previous);  // as many servers do
  Scheduler pool({.workers = 1});
  lantern::testing::Watchdog watchdog("a viewer launched from a worker", 20s, lantern::testing::dump(pool));
  std::string error;
  auto launched = pool.run([&] { return instrumentation::open_viewer(collector, b.header(), &error); });
  ::unsetenv("LANTERN_VIEW");
  ::unsetenv("LANTERN_MASK_PROBE_OUT");
  sigaction(SIGPIPE, &previous, nullptr);
  ASSERT_TRUE(launched);
  EXPECT_TRUE(error.empty()) << error;
  std::string blocked, ignored;
  while (blocked.empty()) {  // the stand-in viewer writes its masks (renamed into place) and exits
    std::ifstream in(out);
    std::getline(in, blocked);
    std::getline(in, ignored);
    if (blocked.empty()) std::this_thread::yield();
  }
  EXPECT_EQ(blocked, "SigBlk:\t0000000000000000");
  // Signals 32 and 33 are glibc's own (thread cancellation, set*id): posix_spawn leaves
  // them ignored in every child; a program never sees them.
  ASSERT_EQ(ignored.rfind("SigIgn:", 0), 0u) << ignored;
  const std::uint64_t internal = (std::uint64_t{1} << 31) | (std::uint64_t{1} << 32);
  EXPECT_EQ(std::stoull(ignored.substr(7), nullptr, 16) & ~internal, 0u) << ignored;
  std::filesystem::remove_all(dir);
}

TEST(Live, RealSchedulerStreamsIntoTheSameModel) {
  instrumentation::Recorder recorder(2, {.level = trace::Level::full});
  instrumentation::Collector collector(recorder);
  SchedulerOptions options;
  options.workers = 2;
  options.observer = &recorder;
  Scheduler pool(options);
  std::string error;
  auto stream =
      instrumentation::start_stream(collector, instrumentation::make_trace_header(pool, "live test"), {}, &error);
  ASSERT_TRUE(stream) << error;
  HostPort where;
  where.port = stream->port();
  auto session = Session::attach(where);
  ASSERT_TRUE(until([&] { return stream->stats().clients == 1; }));
  collector.start();
  const Label kFib = label("live_test.fib"), kLeaf = label("live_test.leaf");
  EXPECT_EQ(pool.run([&] {
    label_task(kFib);
    return lantern::testing::fib(18);
  }),
            2584u);
  TaskGroup group(pool);
  for (int i = 0; i < 20; ++i) group.spawn([&] { label_task(kLeaf); });
  group.wait();
  pool.shutdown();
  collector.stop();
  ASSERT_TRUE(stream->wait_until_sent(
      std::chrono::duration_cast<std::chrono::milliseconds>(10s * lantern::testing::sanitizer_slowdown())));
  const auto stats = stream->stats();
  ASSERT_TRUE(until([&] { return model_events(*session) + stats.events_dropped >= stats.events_encoded; }));
  std::lock_guard<std::mutex> lock(session->mutex());
  const Model& m = session->model();
  EXPECT_EQ(m.worker_count(), 2u);
  EXPECT_GT(m.events_of(EventId::state), 0u);
  EXPECT_EQ(m.trace_problems().size(), 0u);
#if LANTERN_OBSERVER
  // The stream's chunks named the labels: the viewer shows the names, not numbers.
  EXPECT_EQ(m.labels().name(kFib.id()), "live_test.fib");
  EXPECT_EQ(m.labels().name(kLeaf.id()), "live_test.leaf");
  EXPECT_EQ(m.label_uses().at(kLeaf.id()), 20u);
#endif
}

}  // namespace
}  // namespace lantern::viewer
