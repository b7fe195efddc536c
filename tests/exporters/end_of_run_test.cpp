// SPDX-License-Identifier: Apache-2.0
// end_of_run_test.cpp - a Prometheus scrape taken at the end of a run agrees exactly with
// the Recorder's counters (exporters/prometheus/README.md, "At the end of a run, a scrape
// equals the Recorder's counters").
//
// As a user runs it: an app observed through lantern::observe with /metrics on a free
// loopback port (and a trace at level full through a deliberately small ring, so events
// are dropped and the drop counters are not 0), a demo-like workload under each sleep
// strategy (fork-join steals across a 2-socket topology, outside bursts with workers
// asleep in between, lane tasks, a dependency chain, tasks that throw to a Future, a
// TaskGroup, a TaskHandle and nobody, the echo server's IO and, under io_uring, IO
// wakes), then the end of the run: every worker asleep, the collector drained. Then one
// GET /metrics over a real socket, parsed as text.
//
// Every sample of every family the exporter publishes is compared with what it is made
// from, exactly: the Recorder's counters and histograms (every bucket, _count, _sum in
// whole nanoseconds), and for the families that are not Recorder counters the
// Scheduler's own figures (kSchedulerFamilies says which and why); the comparison lives
// in support/scrape_check.hpp, shared with server_e2e_test.cpp. A family on /metrics that
// the check does not know fails it, and a counter added to the Recorder's snapshot fails
// to compile there until it is published or listed as left out. On a mismatch the
// failure is a diff, one line per sample.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "echo_load.hpp"
#include "echo_server.hpp"
#include "exporters/support/child_process.hpp"
#include "exporters/support/exposition.hpp"
#include "exporters/support/recorder_reading.hpp"
#include "exporters/support/scrape_at_rest.hpp"
#include "exporters/support/scrape_check.hpp"
#include "lantern/exporters/metric_table.hpp"
#include "lantern/exporters/prometheus_exporter.hpp"
#include "lantern/exporters/testing/loopback_http.hpp"
#include "lantern/instrumentation/collector.hpp"
#include "lantern/lantern.hpp"
#include "lantern/observe.hpp"
#include "support/fib.hpp"
#include "support/watchdog.hpp"

namespace lantern::exporters {
namespace {

using namespace std::chrono_literals;
namespace ins = lantern::instrumentation;
using testing::Expected;
using testing::Reading;

constexpr std::uint32_t kWorkers = 4;
constexpr const char* kTopology = "2 sockets x 1 cores x 2 threads";  // steals at two distances

// The workload: a bit of everything the demo does, each part ending with its tasks done.
void workload(Scheduler& pool, const ins::Recorder& recorder) {
  static const Label kBurst = label("burst"), kLane = label("lane task");
  // 1. fork-join: steals between workers, at both distances of the topology.
  EXPECT_EQ(pool.run([] { return lantern::testing::fib(21); }), 10946u);
  // 2. bursts from this outside thread, all workers asleep in between: lane pops, wakes.
  for (int burst = 0; burst < 3; ++burst) {
    ASSERT_TRUE(testing::wait_until_all_sleep(pool, recorder)) << pool.describe_state();
    std::vector<Future<int>> futures;
    for (int i = 0; i < 60; ++i) {
      futures.push_back(pool.submit([i] {
        label_task(kBurst);
        volatile int x = 0;
        for (int k = 0; k < 3000; ++k) x = x + k;
        return i;
      }));
    }
    for (int i = 0; i < 60; ++i) EXPECT_EQ(futures[static_cast<std::size_t>(i)].get(), i);
  }
  // 3. tasks submitted into one worker's lane from inside the pool.
  std::vector<Future<void>> lane_tasks = pool.run([&pool] {
    std::vector<Future<void>> out;
    for (int i = 0; i < 20; ++i) out.push_back(pool.submit_to_lane(0, [] { label_task(kLane); }));
    return out;
  });
  for (auto& f : lane_tasks) f.get();
  // 4. a dependency chain, released by a signal set out here: releases, not-ready tasks.
  Signal go;
  TaskHandle last = pool.spawn_after({go}, [] {});
  for (int i = 1; i < 30; ++i) last = pool.spawn_after({last}, [] {});
  go.set();
  last.wait();
  // 5. tasks that throw: to a Future, to a TaskGroup, to a TaskHandle, and to nobody.
  // All four count in task_exceptions: a task that ended by throwing, whoever receives
  // its exception (README).
  EXPECT_THROW(pool.submit([]() -> int { throw std::runtime_error("expected by the test"); }).get(),
               std::runtime_error);
  {
    TaskGroup group(pool);
    group.spawn([] { throw std::runtime_error("expected by the test, to the group"); });
    EXPECT_THROW(group.wait(), std::runtime_error);
  }
  EXPECT_THROW(pool.spawn_handle([] { throw std::runtime_error("expected by the test, to the handle"); }).wait(),
               std::runtime_error);
  const std::uint64_t unhandled = pool.unhandled_exceptions();
  pool.spawn([] { throw std::runtime_error("expected by the test, unobserved"); });
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (pool.unhandled_exceptions() == unhandled) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the unobserved exception was never counted";
    std::this_thread::sleep_for(1ms);
  }
  // 6. IO: the echo server on this pool, fed over loopback.
  lantern::examples::EchoServer server(pool);
  server.start();
  lantern::examples::LoadOptions load;
  load.port = server.port();
  load.connections = 4;
  load.seconds = 0;
  load.messages_per_connection = 100;
  const auto result = lantern::examples::run_load(load);
  EXPECT_EQ(result.requests, 400u);
  EXPECT_EQ(result.mismatches, 0u);
  EXPECT_EQ(result.errors, 0u) << result.first_error;
  // 7. one connection, a message at a time, every worker asleep before each: under
  // io_uring the worker waiting for that socket is woken by its completion (an IO wake).
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(server.port());
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa), 0) << std::strerror(errno);
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(testing::wait_until_all_sleep(pool, recorder)) << pool.describe_state();
    const char message[8] = {'l', 'a', 'n', 't', 'e', 'r', 'n', static_cast<char>('0' + round)};
    ASSERT_EQ(::send(fd, message, sizeof message, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof message));
    char echo[sizeof message];
    std::size_t got = 0;
    while (got < sizeof echo) {
      const ssize_t n = ::recv(fd, echo + got, sizeof echo - got, 0);
      ASSERT_GT(n, 0) << "the echo server did not answer within 10 s: " << std::strerror(errno);
      got += static_cast<std::size_t>(n);
    }
    EXPECT_EQ(std::string(echo, sizeof echo), std::string(message, sizeof message));
  }
  ::close(fd);
  server.stop();
}

std::uint64_t total(const Reading& r, std::uint64_t ins::WorkerCountersSnapshot::*field) {
  std::uint64_t n = 0;
  for (const auto& w : r.workers) n += w.*field;
  return n;
}

class EndOfRun : public ::testing::TestWithParam<SleepStrategy> {};

TEST_P(EndOfRun, PrometheusScrapeAgreesExactlyWithTheRecorder) {
  testing::TempDir dir("lantern_end_of_run_");
  ObserveOptions options{.program = "end_of_run_test"};
  options.environment = false;  // what the test sets, whatever the environment says
  options.settings.metrics = "127.0.0.1:0";
  options.settings.trace = (dir.path() / "run.trace").string();
  options.settings.level = "full";
  options.ring_capacity = 32;  // tiny: fork-join at level full overflows it between collector passes
  options.log = nullptr;
  Observation obs = observe({.workers = kWorkers,
                             .topology = kTopology,
                             .on_unhandled_exception = [](std::exception_ptr) {},
                             .sleep_strategy = GetParam()},
                            options);
  ASSERT_TRUE(obs.ok()) << ::testing::PrintToString(obs.problems());
  ASSERT_NE(obs.metrics(), nullptr);
  ASSERT_NE(obs.recorder(), nullptr);
  Scheduler& pool = obs.scheduler();
  const ins::Recorder& recorder = *obs.recorder();
  lantern::testing::Watchdog watchdog("end-of-run scrape", 120s, [&] { return pool.describe_state(); });

  workload(pool, recorder);
  if (HasFatalFailure()) return;
  // The end of the run: every worker asleep, the last events in the trace.
  ASSERT_TRUE(testing::wait_until_all_sleep(pool, recorder)) << pool.describe_state();
  obs.collector()->drain_now();

  const testing::Scrape scrape = testing::scrape_at_rest(pool, recorder, obs.metrics()->port());
  const Expected expected = testing::expected_samples(scrape.before, scrape.after, recorder.ns_per_tick() * 1e-9);
  const std::string differences = testing::diff(scrape.exposition, expected);
  EXPECT_EQ(differences, "") << "the scrape disagrees with the Recorder (and the Scheduler):\n"
                             << differences << "--- scrape ---\n"
                             << scrape.text.substr(0, 3000);

  // Every table metric is on /metrics and checked; the families that are not Recorder
  // counters are exactly kSchedulerFamilies.
  for (const MetricInfo& m : kMetrics) {
    EXPECT_TRUE(expected.count(std::string(m.name))) << m.name << " is published but not checked";
    EXPECT_TRUE(scrape.exposition.types.count(std::string(m.name))) << m.name << " missing from /metrics";
  }
  for (const testing::Source& s : testing::kSchedulerFamilies) {
    EXPECT_TRUE(expected.count(std::string(s.family))) << s.family;
  }

  const Reading& r = scrape.before;
  // The Scheduler's task count and the Recorder's (lantern_tasks_total) are one number.
  for (std::uint32_t w = 0; w < pool.worker_count(); ++w) {
    EXPECT_EQ(pool.tasks_run(w), r.workers[w].tasks) << "worker " << w;
  }
  // At the end of a run the Scheduler's and the Recorder's views of the states agree.
  std::array<std::uint32_t, trace::kStateCount> recorder_states{};
  for (const auto& w : r.workers) ++recorder_states[w.state];
  for (int s = 0; s < trace::kStateCount; ++s) {
    EXPECT_EQ(scrape.exposition.sum("lantern_workers", {{"state", std::string(trace::kStateNames[s])}}),
              recorder_states[static_cast<std::size_t>(s)])
        << "lantern_workers{state=" << trace::kStateNames[s] << "} vs the Recorder's current states";
  }
  EXPECT_EQ(scrape.exposition.sum("lantern_sleep_sleeping_workers"),
            recorder_states[static_cast<int>(WorkerState::sleeping)]);
  EXPECT_EQ(scrape.exposition.sum("lantern_sleep_inactive_workers"), kWorkers);
  // The identities the HELP texts state, on the scrape itself.
  EXPECT_EQ(scrape.exposition.sum("lantern_wakes_total"), scrape.exposition.sum("lantern_wake_latency_seconds_count") +
                                                              scrape.exposition.sum("lantern_io_wakes_total"))
      << "every wake is in the wake-latency histogram or is an IO wake";
  EXPECT_EQ(scrape.exposition.sum("lantern_lane_pops_total"),
            scrape.exposition.sum("lantern_ready_wait_seconds_count"));
  EXPECT_EQ(scrape.exposition.sum("lantern_tasks_total"), scrape.exposition.sum("lantern_task_duration_seconds_count"));
  EXPECT_EQ(scrape.exposition.sum("lantern_lane_depth") + scrape.exposition.sum("lantern_deque_depth") +
                scrape.exposition.sum("lantern_not_ready_tasks"),
            0);

  // The workload reached the counters this test is about: no comparison is only 0 == 0.
  using S = ins::WorkerCountersSnapshot;
  EXPECT_GT(total(r, &S::tasks), 1000u);
  EXPECT_GT(total(r, &S::lane_pops), 180u);
  EXPECT_GT(total(r, &S::sleeps), 0u);
  EXPECT_GT(total(r, &S::wakes_received), 0u);
  EXPECT_GE(total(r, &S::releases), 30u);
  EXPECT_EQ(total(r, &S::tasks_threw), 4u) << "the Future's, the group's, the TaskHandle's and the unobserved one";
  EXPECT_GT(total(r, &S::io_submitted), 0u);
  EXPECT_GT(total(r, &S::io_completed), 0u);
  EXPECT_GT(total(r, &S::events_recorded), 0u);
  EXPECT_GT(total(r, &S::events_dropped), 0u) << "the small ring should have dropped events";
  std::uint64_t steals = 0;
  for (const auto& w : r.workers) {
    for (auto n : w.steals) steals += n;
  }
  EXPECT_GT(steals, 0u);
  EXPECT_EQ(r.unhandled, 1u);
  EXPECT_GT(r.wake_latency.count(), 0u);
  if (GetParam() == SleepStrategy::io_uring) {
    EXPECT_GT(total(r, &S::io_wakes), 0u);
  }

  std::printf(
      "  %s: %zu samples scraped; tasks %llu, steals %llu, lane pops %llu, sleeps %llu, wakes %llu (io %llu), "
      "releases %llu, io ops %llu, events %llu recorded / %llu dropped\n",
      strategy_name(GetParam()), scrape.exposition.samples.size(), static_cast<unsigned long long>(total(r, &S::tasks)),
      static_cast<unsigned long long>(steals), static_cast<unsigned long long>(total(r, &S::lane_pops)),
      static_cast<unsigned long long>(total(r, &S::sleeps)),
      static_cast<unsigned long long>(total(r, &S::wakes_received)),
      static_cast<unsigned long long>(total(r, &S::io_wakes)), static_cast<unsigned long long>(total(r, &S::releases)),
      static_cast<unsigned long long>(total(r, &S::io_submitted)),
      static_cast<unsigned long long>(total(r, &S::events_recorded)),
      static_cast<unsigned long long>(total(r, &S::events_dropped)));
  EXPECT_EQ(obs.finish(), 0) << ::testing::PrintToString(obs.problems());
}

INSTANTIATE_TEST_SUITE_P(BothSleepStrategies, EndOfRun,
                         ::testing::Values(SleepStrategy::condvar, SleepStrategy::io_uring),
                         [](const ::testing::TestParamInfo<SleepStrategy>& info) {
                           return std::string(strategy_name(info.param));
                         });

}  // namespace
}  // namespace lantern::exporters
