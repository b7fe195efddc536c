// SPDX-License-Identifier: Apache-2.0
// lantern::observe: where settings come from, that every failure is reported and turns
// the status non-zero, and the flight recorder's dump files (never overwritten, never
// left half-written).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "lantern/exporters/prometheus_exporter.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/lantern.hpp"
#include "lantern/observe.hpp"
#include "lantern/trace/trace_reader.hpp"
#include "support/fib.hpp"
#include "support/thread_masks.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using lantern::ObserveOptions;
using lantern::ObserveSettings;
using lantern::ObserveSource;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("lantern-observe-" + std::to_string(getpid()) + "-" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

// Env: sets LANTERN_* variables for one test and restores them.
struct Env {
  std::vector<std::string> names;
  Env(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const char* n : {"LANTERN_TRACE", "LANTERN_LEVEL", "LANTERN_METRICS", "LANTERN_STREAM", "LANTERN_FLIGHT",
                          "LANTERN_FLIGHT_DIR"}) {
      unsetenv(n);
    }
    for (auto [n, v] : vars) {
      setenv(n, v, 1);
      names.push_back(n);
    }
  }
  ~Env() {
    for (const auto& n : names) unsetenv(n.c_str());
  }
};

ObserveOptions quiet(ObserveOptions o = {}) {
  o.log = nullptr;
  return o;
}

std::size_t files_in(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST(Observe, NothingAskedForRunsTheSchedulerUnobserved) {
  Env env({});
  auto obs = lantern::observe({.workers = 2}, quiet());
  EXPECT_EQ(obs.recorder(), nullptr);
  EXPECT_EQ(obs.scheduler().run([] { return lantern::testing::fib(15); }), 610u);
  EXPECT_EQ(obs.finish(), 0);
}

TEST(Observe, CodeSettingsWinOverTheEnvironmentWhichWinsOverDefaults) {
  TempDir dir;
  const std::string env_trace = dir / "env.trace", code_trace = dir / "code.trace";
  Env env({{"LANTERN_TRACE", env_trace.c_str()}, {"LANTERN_LEVEL", "full"}});
  {
    ObserveOptions o = quiet({.program = "precedence"});
    o.settings.trace = code_trace;
    o.defaults.level = "states";
    o.defaults.trace = dir / "default.trace";
    auto obs = lantern::observe({.workers = 2}, o);
    EXPECT_EQ(*obs.settings().trace, code_trace);
    EXPECT_EQ(obs.source(&ObserveSettings::trace), ObserveSource::settings);
    EXPECT_EQ(*obs.settings().level, "full");
    EXPECT_EQ(obs.source(&ObserveSettings::level), ObserveSource::environment);
    EXPECT_EQ(obs.source(&ObserveSettings::metrics), ObserveSource::unset);
    EXPECT_EQ(obs.recorder()->level(), lantern::trace::Level::full);
    obs.scheduler().run([] { return lantern::testing::fib(12); });
    EXPECT_EQ(obs.finish(), 0);
  }
  EXPECT_TRUE(fs::exists(code_trace));
  EXPECT_FALSE(fs::exists(env_trace));
  const auto t = lantern::trace::read_trace(code_trace);
  EXPECT_TRUE(t.header_ok);
  EXPECT_EQ(t.header.producer, "precedence");
  EXPECT_FALSE(t.events.empty());
}

TEST(Observe, AnEmptySettingTurnsASinkOffWhateverTheEnvironmentSays) {
  TempDir dir;
  const std::string env_trace = dir / "env.trace";
  Env env({{"LANTERN_TRACE", env_trace.c_str()}, {"LANTERN_FLIGHT", ""}});
  ObserveOptions o = quiet();
  o.settings.trace = "";
  o.defaults.flight = "10s";  // LANTERN_FLIGHT= (set, empty) turns the default off
  auto obs = lantern::observe({.workers = 1}, o);
  EXPECT_EQ(obs.trace(), nullptr);
  EXPECT_EQ(obs.flight(), nullptr);
  EXPECT_EQ(obs.recorder(), nullptr);
  EXPECT_EQ(obs.finish(), 0);
  EXPECT_FALSE(fs::exists(env_trace));
}

TEST(Observe, InvalidEnvironmentValuesAreReportedAndMakeTheStatusFail) {
  Env env({{"LANTERN_LEVEL", "loud"},
           {"LANTERN_FLIGHT", "ten minutes"},
           {"LANTERN_STREAM", "localhost"},
           {"LANTERN_METRICS", "not-an-address"}});
  auto obs = lantern::observe({.workers = 1}, quiet());
  const auto problems = obs.problems();
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_NE(problems[0].find("LANTERN_LEVEL=loud"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("LANTERN_FLIGHT=ten minutes"), std::string::npos) << problems[1];
  EXPECT_NE(problems[2].find("LANTERN_STREAM=localhost"), std::string::npos) << problems[2];
  EXPECT_NE(problems[3].find("LANTERN_METRICS=not-an-address"), std::string::npos) << problems[3];
  EXPECT_EQ(obs.scheduler().run([] { return 7; }), 7);  // the app runs on
  EXPECT_FALSE(obs.ok());
  EXPECT_EQ(obs.finish(), 1);
}

// LANTERN_FLIGHT takes seconds, a size, or one of each: a third item, or the same kind
// twice, is refused like any other bad value ("30s,64MB,1" kept only the last 1 s).
TEST(Observe, AFlightSpecGivingTheSameThingTwiceIsRefused) {
  for (const char* bad : {"30s,64MB,1", "30s,10s", "8MB,16MB"}) {
    Env env({{"LANTERN_FLIGHT", bad}});
    auto obs = lantern::observe({.workers = 1}, quiet());
    const auto problems = obs.problems();
    ASSERT_EQ(problems.size(), 1u) << bad;
    EXPECT_NE(problems[0].find(std::string("LANTERN_FLIGHT=") + bad), std::string::npos) << problems[0];
    EXPECT_NE(problems[0].find("twice"), std::string::npos) << problems[0];
    EXPECT_EQ(obs.flight(), nullptr) << bad;
    EXPECT_EQ(obs.finish(), 1);
  }
}

TEST(Observe, AMetricsPortInUseIsReportedAtOnce) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string taken = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  Env env({{"LANTERN_METRICS", taken.c_str()}});
  auto obs = lantern::observe({.workers = 1}, quiet());
  EXPECT_EQ(obs.metrics(), nullptr);
  ASSERT_FALSE(obs.ok());
  EXPECT_NE(obs.problems()[0].find("Address already in use"), std::string::npos) << obs.problems()[0];
  EXPECT_EQ(obs.finish(), 1);
  close(fd);
}

TEST(Observe, AnUnwritableTracePathIsReportedAtOnce) {
  Env env({{"LANTERN_TRACE", "/nonexistent-dir/x.trace"}});
  auto obs = lantern::observe({.workers = 1}, quiet());
  EXPECT_EQ(obs.trace(), nullptr);
  ASSERT_FALSE(obs.ok());
  EXPECT_NE(obs.problems()[0].find("/nonexistent-dir/x.trace"), std::string::npos) << obs.problems()[0];
  EXPECT_EQ(obs.finish(), 1);
}

// A trace whose disk fills up while the app runs: said once, at the failing write (not
// again at exit), the app keeps running, and the status fails.
TEST(Observe, ATraceThatFailsMidRunIsSaidOnceAndFailsTheStatus) {
  TempDir dir;
  Env env({});
  const std::string trace = dir / "mid.trace";
  const std::string log_path = dir / "log.txt";
  std::FILE* log = std::fopen(log_path.c_str(), "w");
  ASSERT_NE(log, nullptr);
  // What observe has said so far (it flushes each line; read through another descriptor).
  const auto said = [&] {
    std::ifstream in(log_path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  const auto old_handler = signal(SIGXFSZ, SIG_IGN);
  int status = -1;
  {
    ObserveOptions o;
    o.log = log;
    o.settings.trace = trace;
    o.settings.level = "full";
    auto obs = lantern::observe({.workers = 2}, o);
    ASSERT_NE(obs.trace(), nullptr);
    lantern::testing::Watchdog dog("trace on a full disk", 120s, [&] { return obs.scheduler().describe_state(); });
    // The disk is full from 64 KiB on: a file size limit (writes past it fail, EFBIG).
    rlimit small = old;
    small.rlim_cur = 64 * 1024;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    // The app keeps running while the trace fails, and the failure is said when it
    // happens: before the app finishes (bounded: the watchdog fails loudly).
    while (said().find("stopped being written") == std::string::npos) {
      EXPECT_EQ(obs.scheduler().run([] { return lantern::testing::fib(18); }), 2584);
    }
    EXPECT_FALSE(obs.trace()->ok());
    EXPECT_EQ(obs.scheduler().run([] { return lantern::testing::fib(18); }), 2584);
    status = obs.finish();
    EXPECT_EQ(obs.problems().size(), 1u);
  }
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
  std::fclose(log);
  const std::string text = said();
  EXPECT_EQ(status, 1);
  // Lines that name the trace: "tracing to PATH" when it started, then the failure once
  // (not again at finish()).
  std::size_t lines = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    if (text.substr(begin, end - begin).find(trace) != std::string::npos) ++lines;
    begin = end + 1;
  }
  EXPECT_EQ(lines, 2u) << text;
  EXPECT_NE(text.find("bytes"), std::string::npos) << text;
}

TEST(Observe, MetricsServeTheObservedScheduler) {
  Env env({{"LANTERN_METRICS", "127.0.0.1:0"}});
  auto obs = lantern::observe({.workers = 2}, quiet());
  ASSERT_NE(obs.metrics(), nullptr);
  EXPECT_NE(obs.metrics()->port(), 0);
  EXPECT_EQ(obs.recorder()->level(), lantern::trace::Level::off);  // nothing reads events: none recorded
  EXPECT_EQ(obs.finish(), 0);
}

// Every thread observe starts (workers, collector, stream server, flight recorder's dump
// thread, the Prometheus exposer's civetweb threads) blocks the
// application's signals: `kill -USR2` or Ctrl-C reach the application's own threads.
// The one exception is the dump thread's own trigger.
TEST(Observe, NoThreadItStartsTakesTheApplicationsSignals) {
  TempDir dir;
  Env env({{"LANTERN_METRICS", "127.0.0.1:0"},
           {"LANTERN_STREAM", "127.0.0.1:0"},
           {"LANTERN_TRACE", (dir / "t.trace").c_str()},
           {"LANTERN_FLIGHT", "30s"},
           {"LANTERN_FLIGHT_DIR", dir.path.c_str()}});
  lantern::testing::Watchdog watchdog("observe's threads", 30s);
  const auto before = lantern::testing::thread_ids();
  {
    auto obs = lantern::observe({.workers = 2}, quiet());
    ASSERT_NE(obs.metrics(), nullptr);
    ASSERT_NE(obs.stream(), nullptr);
    ASSERT_NE(obs.flight(), nullptr);
    ASSERT_NE(obs.trace(), nullptr);
    EXPECT_EQ(obs.scheduler().run([] { return lantern::testing::fib(15); }), 610u);
    EXPECT_GE(lantern::testing::thread_ids().size(), before.size() + 5);
    // The flight recorder's dump thread, and only it, takes its trigger (SIGUSR2).
    EXPECT_EQ(lantern::testing::threads_taking_application_signals(before, lantern::testing::signal_bit(SIGUSR2)), "");
    EXPECT_EQ(obs.finish(), 0);
  }
}

TEST(Observe, SchedulerOptionsWithAnObserverAreRefused) {
  lantern::instrumentation::Recorder mine(1);
  Env env({{"LANTERN_METRICS", "127.0.0.1:0"}});
  EXPECT_THROW(lantern::observe({.workers = 1, .observer = &mine}, quiet()), std::invalid_argument);
}

TEST(ObserveFlight, DumpsThroughTheApiNeverOverwriteAndNameTheirFiles) {
  TempDir dir;
  Env env({{"LANTERN_FLIGHT", "30s,8MB"}, {"LANTERN_FLIGHT_DIR", dir.path.c_str()}});
  auto obs = lantern::observe({.workers = 2}, quiet({.program = "api"}));
  ASSERT_NE(obs.flight(), nullptr);
  lantern::testing::Watchdog dog("flight dumps", 60s, [&] { return obs.scheduler().describe_state(); });
  obs.scheduler().run([] { return lantern::testing::fib(16); });
  std::set<std::string> names;
  for (int i = 0; i < 5; ++i) {
    std::string error;
    const std::string path = obs.dump_flight("", &error);
    ASSERT_EQ(error, "");
    EXPECT_EQ(path.rfind(dir / "api-flight-", 0), 0u) << path;
    names.insert(path);
    const auto t = lantern::trace::read_trace(path);
    EXPECT_TRUE(t.header_ok && t.problems.empty());
    EXPECT_FALSE(t.events.empty());
  }
  EXPECT_EQ(names.size(), 5u);
  EXPECT_EQ(files_in(dir.path), 5u);
  EXPECT_EQ(obs.finish(), 0);
}

TEST(ObserveFlight, AFailedDumpLeavesNoFileAndFailsTheStatus) {
  TempDir dir;
  Env env({{"LANTERN_FLIGHT", "30s"}, {"LANTERN_FLIGHT_DIR", dir.path.c_str()}});
  auto obs = lantern::observe({.workers = 2}, quiet({.program = "full"}));
  lantern::testing::Watchdog dog("failed flight dump", 60s, [&] { return obs.scheduler().describe_state(); });
  obs.scheduler().run([] { return lantern::testing::fib(16); });
  // A disk that fills up mid-dump: a file size limit of 100 bytes (write fails with EFBIG
  // once the header is written).
  rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  const auto old_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 100;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  const std::string path = obs.dump_flight("", &error);
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
  EXPECT_EQ(path, "");
  EXPECT_NE(error.find("File too large"), std::string::npos) << error;
  EXPECT_NE(error.find(dir / "full-flight-"), std::string::npos) << error;  // the name asked for
  EXPECT_EQ(files_in(dir.path), 0u) << "a failed dump left a file behind";
  // An explicit path in a missing directory: the same.
  EXPECT_EQ(obs.dump_flight(dir / "missing/x.trace", &error), "");
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
  EXPECT_FALSE(obs.ok());
  EXPECT_EQ(obs.finish(), 1);
}

TEST(ObserveFlight, WithoutAFlightRecorderDumpFlightSaysHowToGetOne) {
  Env env({});
  auto obs = lantern::observe({.workers = 1}, quiet({.counters = true}));
  std::string error;
  EXPECT_EQ(obs.dump_flight("", &error), "");
  EXPECT_NE(error.find("LANTERN_FLIGHT"), std::string::npos) << error;
}
