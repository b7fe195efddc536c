// SPDX-License-Identifier: Apache-2.0
// lantern::observe: where settings come from, that every failure is reported and turns
// the status non-zero, the flight recorder's dump files (never overwritten, never left
// half-written) and its signal (chosen by the settings, never taken from the app, never
// fatal once taken), the names of the threads it starts, the address forms its
// endpoints accept, and observing a Scheduler the app owns.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lantern/exporters/prometheus_exporter.hpp"
#include "lantern/host_port.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/signal_trigger.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/lantern.hpp"
#include "lantern/observe.hpp"
#include "lantern/trace/trace_reader.hpp"
#include "support/fib.hpp"
#include "support/file_size_limit.hpp"
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
                          "LANTERN_FLIGHT_DIR", "LANTERN_FLIGHT_SIGNAL"}) {
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

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// wait_until: polls `done` for up to 20 s (a bounded wait on what a signal causes).
bool wait_until(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 20s * lantern::testing::sanitizer_slowdown();
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
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
  std::optional<lantern::testing::FileSizeLimit> full;  // set once the trace has started
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
    full.emplace(64 * 1024);
    ASSERT_TRUE(full->ok());
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
  full.reset();
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
// thread, the Prometheus exporter's server thread) blocks the
// application's signals: `kill -USR2` or Ctrl-C reach the application's own threads.
// The one exception is the dump thread's own trigger. Each is named lantern-<what>, so
// top -H, gdb and perf tell them from the app's (/proc/self/task/TID/comm).
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
    // Lantern names its threads as each starts running, which may be a moment after
    // observe() returns.
    std::multiset<std::string> names;
    std::string unnamed;
    wait_until([&] {
      names.clear();
      unnamed.clear();
      for (pid_t tid : lantern::testing::thread_ids()) {
        if (before.count(tid)) continue;
        std::string name = read_file("/proc/self/task/" + std::to_string(tid) + "/comm");
        if (!name.empty() && name.back() == '\n') name.pop_back();
        if (name.rfind("lantern-", 0) != 0) unnamed += " '" + name + "'";
        names.insert(name);
      }
      return unnamed.empty();
    });
    EXPECT_EQ(unnamed, "") << "threads not named lantern-*";
    for (const char* want :
         {"lantern-w0", "lantern-w1", "lantern-collect", "lantern-stream", "lantern-flight", "lantern-metrics"}) {
      EXPECT_EQ(names.count(want), 1u) << want;
    }
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
  std::string error;
  const std::string path = [&] {
    const lantern::testing::FileSizeLimit small(100);
    EXPECT_TRUE(small.ok());
    return obs.dump_flight("", &error);
  }();
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

// --- The dump signal: configurable, never taken from the app, never fatal once taken.
// Each test runs in a child process (fork), where real signals are sent and the signal
// dispositions changed belong to the child alone; the parent waits with a deadline and
// reports how the child ended.

namespace {

// in_child runs `body` in a forked child with stderr sent to `stderr_path`; the child
// exits with what body returns (0: every check held). Returns a description of how the
// child ended: "" for exit 0.
std::string in_child(const std::string& stderr_path, const std::function<int()>& body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    std::FILE* err = std::freopen(stderr_path.c_str(), "w", stderr);
    if (!err) _exit(120);
    std::setvbuf(stderr, nullptr, _IONBF, 0);
    // A fresh process: tests before this one took the signals in the parent.
    signal(SIGUSR1, SIG_DFL);
    signal(SIGUSR2, SIG_DFL);
    int code = 121;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child threw: %s\n", e.what());
    }
    _exit(code);
  }
  if (pid < 0) return "fork failed";
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + 60s * lantern::testing::sanitizer_slowdown();
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return "the child hung (killed after 60 s)";
    }
    std::this_thread::sleep_for(2ms);
  }
  if (WIFSIGNALED(status)) return "the child was killed by signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) != 0) return "the child failed its check at line " + std::to_string(WEXITSTATUS(status));
  return "";
}

// In a child: a failed check exits with its line number (reported by in_child).
#define CHILD_CHECK(cond)                                                    \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "check failed (line %d): %s\n", __LINE__, #cond); \
      return __LINE__ % 250 + 1;                                             \
    }                                                                        \
  } while (0)

std::atomic<int> g_app_handler_runs{0};
void app_handler(int) { g_app_handler_runs.fetch_add(1); }

bool disposition_is(int signo, sighandler_t handler) {
  struct sigaction now {};
  sigaction(signo, nullptr, &now);
  return !(now.sa_flags & SA_SIGINFO) && now.sa_handler == handler;
}

}  // namespace

// An app with its own SIGUSR2 handler keeps it: observe says so, the app's handler runs
// for the signal, and the flight recorder still dumps through the call. Not a failure
// of observability (the default signal was not asked for by name): the status stays 0.
TEST(ObserveSignal, AnAppsOwnHandlerIsNeverTaken) {
  TempDir dir;
  const std::string err = dir / "stderr.txt";
  const std::string outcome = in_child(err, [&] {
    Env env({{"LANTERN_FLIGHT", "30s"}, {"LANTERN_FLIGHT_DIR", dir.path.c_str()}});
    CHILD_CHECK(signal(SIGUSR2, app_handler) != SIG_ERR);
    auto obs = lantern::observe({.workers = 2}, {.program = "mine"});
    CHILD_CHECK(obs.flight() != nullptr);
    CHILD_CHECK(read_file(err).find("SIGUSR2 already has a handler") != std::string::npos);
    CHILD_CHECK(disposition_is(SIGUSR2, app_handler));
    kill(getpid(), SIGUSR2);
    CHILD_CHECK(wait_until([] { return g_app_handler_runs.load() == 1; }));
    obs.scheduler().run([] { return lantern::testing::fib(12); });
    CHILD_CHECK(!obs.dump_flight().empty());
    CHILD_CHECK(obs.finish() == 0);
    return 0;
  });
  EXPECT_EQ(outcome, "") << read_file(err);
}

// LANTERN_FLIGHT_SIGNAL chooses the signal; SIGUSR2 is then left as it was.
TEST(ObserveSignal, TheEnvironmentChoosesTheSignal) {
  TempDir dir;
  const std::string err = dir / "stderr.txt";
  const std::string outcome = in_child(err, [&] {
    Env env({{"LANTERN_FLIGHT", "30s"}, {"LANTERN_FLIGHT_DIR", dir.path.c_str()}, {"LANTERN_FLIGHT_SIGNAL", "usr1"}});
    auto obs = lantern::observe({.workers = 2}, {.program = "usr1"});
    CHILD_CHECK(obs.ok());
    CHILD_CHECK(read_file(err).find("`kill -USR1 ") != std::string::npos);
    CHILD_CHECK(disposition_is(SIGUSR2, SIG_DFL));
    obs.scheduler().run([] { return lantern::testing::fib(12); });
    kill(getpid(), SIGUSR1);
    CHILD_CHECK(wait_until([&] { return read_file(err).find("flight recorder dumped to") != std::string::npos; }));
    CHILD_CHECK(obs.finish() == 0);
    return 0;
  });
  EXPECT_EQ(outcome, "") << read_file(err);
  EXPECT_EQ(files_in(dir.path), 2u);  // the dump and stderr.txt
}

// "none": no signal is touched; the recorder is dumped by the call only.
TEST(ObserveSignal, NoneTakesNoSignal) {
  TempDir dir;
  const std::string err = dir / "stderr.txt";
  const std::string outcome = in_child(err, [&] {
    Env env({{"LANTERN_FLIGHT", "30s"}, {"LANTERN_FLIGHT_DIR", dir.path.c_str()}, {"LANTERN_FLIGHT_SIGNAL", "none"}});
    auto obs = lantern::observe({.workers = 2}, {.program = "none"});
    CHILD_CHECK(obs.ok());
    CHILD_CHECK(disposition_is(SIGUSR2, SIG_DFL));
    CHILD_CHECK(read_file(err).find("call Observation::dump_flight dumps it") != std::string::npos);
    CHILD_CHECK(read_file(err).find("kill") == std::string::npos);
    CHILD_CHECK(!obs.dump_flight().empty());
    CHILD_CHECK(obs.finish() == 0);
    return 0;
  });
  EXPECT_EQ(outcome, "") << read_file(err);
}

// A signal that cannot serve (uncatchable, raised by faults or failed writes, glibc's,
// not a signal at all) is refused like any bad value, and the default is used.
TEST(ObserveSignal, ASignalThatCannotServeIsRefused) {
  for (const char* bad : {"KILL", "SIGSEGV", "9", "XFSZ", "0", "33", "USR3", "12x", "99"}) {
    std::string why;
    EXPECT_FALSE(lantern::instrumentation::parse_trigger_signal(bad, &why)) << bad;
    EXPECT_NE(why.find(std::string("\"") + bad + "\""), std::string::npos) << why;
  }
  for (const auto& [text, signo] : std::initializer_list<std::pair<const char*, int>>{
           {"USR2", SIGUSR2}, {"sigusr1", SIGUSR1}, {"SIGHUP", SIGHUP}, {"none", 0}, {"10", 10}, {"40", 40}}) {
    std::string why;
    EXPECT_EQ(lantern::instrumentation::parse_trigger_signal(text, &why), std::optional<int>(signo)) << text << why;
  }
  TempDir dir;
  const std::string err = dir / "stderr.txt";
  const std::string outcome = in_child(err, [&] {
    Env env({{"LANTERN_FLIGHT", "30s"}, {"LANTERN_FLIGHT_DIR", dir.path.c_str()}, {"LANTERN_FLIGHT_SIGNAL", "KILL"}});
    auto obs = lantern::observe({.workers = 1}, {.program = "bad"});
    const auto problems = obs.problems();
    CHILD_CHECK(problems.size() == 1);
    CHILD_CHECK(problems[0].find("LANTERN_FLIGHT_SIGNAL=KILL") != std::string::npos);
    CHILD_CHECK(problems[0].find("using SIGUSR2") != std::string::npos);
    CHILD_CHECK(obs.finish() == 1);
    return 0;
  });
  EXPECT_EQ(outcome, "") << read_file(err);
}

// A flight recorder was asked for but cannot start (a bad LANTERN_FLIGHT or
// LANTERN_FLIGHT_DIR): the problem is said at start, and the signal that would have
// dumped it says it again instead of killing the process.
TEST(ObserveSignal, ABadFlightSettingNeverLeavesTheSignalFatal) {
  TempDir dir;
  const std::string file = dir / "a-file";
  std::ofstream(file) << "not a directory";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"30GB", ""},  {"0", ""},     {"nan", ""},
      {"30s,", ""},  {"30sec", ""}, {"-5", ""},
      {"inf", ""},   {"1e400", ""}, {"30s", dir / "missing"},
      {"30s", file},
  };
  for (const auto& [flight, flight_dir] : cases) {
    const std::string err = dir / "stderr.txt";
    const std::string outcome = in_child(err, [&] {
      Env env({{"LANTERN_FLIGHT", flight.c_str()},
               {"LANTERN_FLIGHT_DIR", flight_dir.empty() ? dir.path.c_str() : flight_dir.c_str()}});
      auto obs = lantern::observe({.workers = 1}, {.program = "bad"});
      CHILD_CHECK(obs.flight() == nullptr);
      CHILD_CHECK(read_file(err).find("no flight recorder") != std::string::npos);
      CHILD_CHECK(!disposition_is(SIGUSR2, SIG_DFL));
      for (int i = 0; i < 3; ++i) kill(getpid(), SIGUSR2);
      CHILD_CHECK(wait_until([&] {
        return read_file(err).find("SIGUSR2 received, but no flight recorder is running") != std::string::npos;
      }));
      CHILD_CHECK(obs.finish() == 1);
      return 0;
    });
    EXPECT_EQ(outcome, "") << "LANTERN_FLIGHT=" << flight << " LANTERN_FLIGHT_DIR=" << flight_dir << "\n"
                           << read_file(err);
  }
}

// After the Observation is gone, the signal it took is still harmless: ignored if it was
// ignored before, else a handler that does nothing (never the fatal default, which would
// kill a process signalled during its exit).
TEST(ObserveSignal, TheSignalStaysHarmlessAfterTheObservationEnds) {
  for (const bool ignored_before : {false, true}) {
    TempDir dir;
    const std::string err = dir / "stderr.txt";
    const std::string outcome = in_child(err, [&] {
      if (ignored_before) signal(SIGUSR2, SIG_IGN);
      Env env({{"LANTERN_FLIGHT", "30s"}, {"LANTERN_FLIGHT_DIR", dir.path.c_str()}});
      {
        auto obs = lantern::observe({.workers = 2}, {.program = "after"});
        CHILD_CHECK(obs.flight() != nullptr);
        CHILD_CHECK(!disposition_is(SIGUSR2, SIG_DFL) && !disposition_is(SIGUSR2, SIG_IGN));
        CHILD_CHECK(obs.finish() == 0);
      }
      CHILD_CHECK(!disposition_is(SIGUSR2, SIG_DFL));
      if (ignored_before) CHILD_CHECK(disposition_is(SIGUSR2, SIG_IGN));
      for (int i = 0; i < 100; ++i) kill(getpid(), SIGUSR2);
      // A second observation takes it again (Lantern's own dormant handler is not the app's).
      auto again = lantern::observe({.workers = 1}, {.program = "again"});
      CHILD_CHECK(read_file(err).find("already has a handler") == std::string::npos);
      kill(getpid(), SIGUSR2);
      CHILD_CHECK(wait_until([&] { return read_file(err).find("flight recorder dumped to") != std::string::npos; }));
      return 0;
    });
    EXPECT_EQ(outcome, "") << (ignored_before ? "ignored before\n" : "default before\n") << read_file(err);
  }
}

// --- Addresses: LANTERN_STREAM and LANTERN_METRICS accept and refuse the same texts,
// with the same words (lantern::parse_host_port).
TEST(Observe, StreamAndMetricsAcceptTheSameAddresses) {
  for (const char* good : {"localhost:0", "127.0.0.1:0", ":0", "0"}) {
    Env env({{"LANTERN_STREAM", good}, {"LANTERN_METRICS", good}});
    auto obs = lantern::observe({.workers = 1}, quiet());
    EXPECT_TRUE(obs.ok()) << good << ": " << (obs.problems().empty() ? "" : obs.problems()[0]);
    EXPECT_NE(obs.stream(), nullptr) << good;
    EXPECT_NE(obs.metrics(), nullptr) << good;
    EXPECT_EQ(obs.finish(), 0);
  }
  for (const char* bad : {"localhost", "127.0.0.1:", "[::1", "127.0.0.1:65536", "a b:80", "::1:80", "host/x:1", ""}) {
    if (*bad == '\0') continue;  // "" turns both off
    Env env({{"LANTERN_STREAM", bad}, {"LANTERN_METRICS", bad}});
    auto obs = lantern::observe({.workers = 1}, quiet());
    const auto problems = obs.problems();
    ASSERT_EQ(problems.size(), 2u) << bad;
    std::string why;
    ASSERT_FALSE(lantern::parse_host_port(bad, &why, {.allow_port_zero = true})) << bad;
    for (const std::string& p : problems) EXPECT_NE(p.find(why), std::string::npos) << p << "\nwant: " << why;
    EXPECT_EQ(obs.finish(), 1);
  }
}

// --- An app's own Scheduler, built with a Recorder, is observed in place.
TEST(ObserveAttach, AnAppsOwnSchedulerIsObserved) {
  TempDir dir;
  const std::string trace = dir / "own.trace";
  Env env({{"LANTERN_TRACE", trace.c_str()}, {"LANTERN_METRICS", "127.0.0.1:0"}});
  lantern::instrumentation::Recorder recorder(2, {.level = lantern::trace::Level::off, .time_tasks = true});
  lantern::Scheduler pool({.workers = 2, .observer = &recorder});
  lantern::testing::Watchdog dog("observing an app's own pool", 60s, [&] { return pool.describe_state(); });
  {
    auto obs = lantern::observe(pool, quiet({.program = "own"}));
    EXPECT_EQ(&obs.scheduler(), &pool);
    EXPECT_EQ(obs.recorder(), &recorder);
    ASSERT_NE(obs.trace(), nullptr);
    ASSERT_NE(obs.metrics(), nullptr);
    EXPECT_EQ(recorder.level(), lantern::trace::Level::tasks);  // what the settings ask
    EXPECT_EQ(pool.run([] { return lantern::testing::fib(16); }), 987u);
    EXPECT_EQ(obs.finish(), 0);
    EXPECT_EQ(recorder.level(), lantern::trace::Level::off);  // nothing reads events now
    // The app's pool runs on after finish().
    EXPECT_EQ(pool.run([] { return lantern::testing::fib(12); }), 144u);
  }
  const auto t = lantern::trace::read_trace(trace);
  EXPECT_TRUE(t.header_ok && t.problems.empty());
  EXPECT_EQ(t.header.producer, "own");
  EXPECT_FALSE(t.events.empty());
  EXPECT_EQ(pool.run([] { return 7; }), 7);
}

TEST(ObserveAttach, APoolWithoutARecorderIsSaidAndRunsOn) {
  lantern::Scheduler pool({.workers = 1});
  {
    Env env({});
    auto obs = lantern::observe(pool, quiet());  // nothing asked for: nothing to say
    EXPECT_EQ(obs.finish(), 0);
  }
  Env env({{"LANTERN_METRICS", "127.0.0.1:0"}});
  auto obs = lantern::observe(pool, quiet());
  EXPECT_EQ(obs.metrics(), nullptr);
  ASSERT_EQ(obs.problems().size(), 1u);
  EXPECT_NE(obs.problems()[0].find("built without an observer"), std::string::npos) << obs.problems()[0];
  EXPECT_EQ(obs.scheduler().run([] { return 5; }), 5);
  EXPECT_EQ(obs.finish(), 1);
}
