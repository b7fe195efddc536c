// program_cli_test.cpp - every shipped program and every benchmark program built here,
// run as a user runs it, follows the same command-line conventions (README.md,
// "Command-line conventions"); a benchmark is only asked for --help, --version and bad
// usage, so none of them runs:
//   --version prints "PROGRAM VERSION (trace format version N)" on stdout, exit 0;
//   --help and -h print the usage on stdout, exit 0;
//   a bad option or value: "PROGRAM: ... (see PROGRAM --help)" on stderr, nothing on
//   stdout, exit 2;
//   errors while running go to stderr, the report stays on stdout.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lantern/trace/format.hpp"
#include "lantern/version.hpp"

namespace {

struct Result {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;
};

std::string quote(const std::string& arg) {
  std::string q = "'";
  for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("lantern_program_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// run: the program with `args`, no display, stdin from /dev/null, bounded by timeout(1).
Result run(const std::string& program, const std::vector<std::string>& args) {
  static int counter = 0;
  const auto base = scratch() / ("run" + std::to_string(++counter));
  std::string cmd = "env -u DISPLAY -u LANTERN_STREAM timeout -k 5 60 " + quote(program);
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " > " + quote(base.string() + ".out") + " 2> " + quote(base.string() + ".err") + " < /dev/null";
  const int status = std::system(cmd.c_str());
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base.string() + ".out");
  r.err = slurp(base.string() + ".err");
  return r;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// closed_port: a loopback port nothing listens on (bound, then closed).
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

struct Program {
  std::string name;                   // as it names itself in messages
  std::string path;                   // the built binary
  std::vector<std::string> bad_value;  // a known option with a value it refuses
  std::string bad_value_message;
};

std::vector<Program> programs() {
  std::vector<Program> list;
#ifdef LANTERN_TRACE_CLI_BIN
  list.push_back({"lantern-trace", LANTERN_TRACE_CLI_BIN, {"info", "--no-progress=yes", "x"}, "option --no-progress takes no value"});
#endif
#ifdef LANTERN_DEMO_BIN
  list.push_back({"lantern_demo", LANTERN_DEMO_BIN, {"--workers", "0"}, "--workers takes a number from 1 to"});
#endif
#ifdef LANTERN_ECHO_SERVER_BIN
  list.push_back({"lantern_echo_server", LANTERN_ECHO_SERVER_BIN, {"--port", "70000"}, "--port takes a port from 0 to 65535, not '70000'"});
#endif
#ifdef LANTERN_ECHO_CLIENT_BIN
  list.push_back({"lantern_echo_client", LANTERN_ECHO_CLIENT_BIN, {"--size", "9-3"}, "--size takes BYTES or MIN-MAX"});
#endif
#ifdef LANTERN_LIVE_DEMO_BIN
  list.push_back({"lantern_live_demo", LANTERN_LIVE_DEMO_BIN, {"--stream", "localhost"}, "'localhost' has no port"});
#endif
#ifdef LANTERN_VIEW_BIN
  list.push_back({"lantern-view", LANTERN_VIEW_BIN, {"--attach", "[::1]:0"}, "has port 0"});
#endif
  // The benchmark programs (bench/; not in the sanitizer builds).
#ifdef LANTERN_BENCH_BIN
  list.push_back({"lantern_bench", LANTERN_BENCH_BIN, {"--reps", "0"}, "--reps takes a number from 1 to 1000, not '0'"});
#endif
#ifdef LANTERN_GRAPH_BENCH_BIN
  list.push_back({"lantern_graph_bench", LANTERN_GRAPH_BENCH_BIN, {"--workers", "1,x"},
                  "--workers takes a list of numbers from 1 to 1024, not '1,x'"});
#endif
#ifdef LANTERN_INSTR_BENCH_BIN
  list.push_back({"lantern_instr_bench", LANTERN_INSTR_BENCH_BIN, {"--only", "event,bogus"},
                  "--only takes a list of event, ring, overhead, paired, collector or trace, not 'event,bogus'"});
#endif
#ifdef LANTERN_INSTR_BENCH_OFF_BIN
  list.push_back({"lantern_instr_bench_off", LANTERN_INSTR_BENCH_OFF_BIN, {"--workers", "0"},
                  "--workers takes a number from 1 to 1024, not '0'"});
#endif
#ifdef IO_BENCH_BIN
  list.push_back({"io_bench", IO_BENCH_BIN, {"--connections", "1,0"},
                  "--connections takes a list of numbers from 1 to 100000, not '1,0'"});
#endif
#ifdef PROMETHEUS_BENCH_BIN
  list.push_back({"prometheus_bench", PROMETHEUS_BENCH_BIN, {"--scrapes", "0"},
                  "--scrapes takes a number from 1 to 1000000, not '0'"});
#endif
#ifdef VIEWER_BENCH_BIN
  list.push_back({"viewer_bench", VIEWER_BENCH_BIN, {"--frames", "0"}, "--frames takes a number from 1 to 100000, not '0'"});
#endif
#ifdef LANTERN_HELPING_BENCH_BIN
  list.push_back({"lantern_helping_bench", LANTERN_HELPING_BENCH_BIN, {"--reps-nocheck", "0"},
                  "--reps-nocheck takes a number from 1 to 1000, not '0'"});
#endif
#ifdef LANTERN_HELPING_BENCH_NOCHECK_BIN
  list.push_back({"lantern_helping_bench_nocheck", LANTERN_HELPING_BENCH_NOCHECK_BIN, {"--reps", "0"},
                  "--reps takes a number from 1 to 1000, not '0'"});
#endif
#ifdef LANTERN_SOAK_BIN
  list.push_back({"lantern_soak", LANTERN_SOAK_BIN, {"--sample", "0"}, "--sample takes a number of seconds from 0.1, not '0'"});
#endif
  return list;
}

TEST(ProgramCli, EveryProgramIsChecked) {
  std::string names;
  for (const auto& p : programs()) names += " " + p.name;
  std::printf("programs checked:%s\n", names.c_str());
  EXPECT_GE(programs().size(), 5u) << "built here:" << names;
}

TEST(ProgramCli, VersionNamesTheProjectAndTraceFormatVersions) {
  for (const auto& p : programs()) {
    const Result r = run(p.path, {"--version"});
    EXPECT_EQ(r.exit_code, 0) << p.name << r.err;
    EXPECT_EQ(r.out, p.name + " " + std::string(lantern::kVersion) + " (trace format version " +
                         std::to_string(lantern::trace::kFormatVersion) + ")\n");
    EXPECT_EQ(r.err, "") << p.name;
  }
}

TEST(ProgramCli, HelpGoesToStdoutAndExitsZero) {
  for (const auto& p : programs()) {
    for (const char* flag : {"--help", "-h"}) {
      const Result r = run(p.path, {flag});
      EXPECT_EQ(r.exit_code, 0) << p.name << " " << flag;
      EXPECT_EQ(r.out.rfind("usage: " + p.name, 0), 0u) << p.name << " " << flag << ":\n" << r.out;
      EXPECT_TRUE(has(r.out, "--version")) << p.name << " " << flag << ": --help should list --version";
      EXPECT_EQ(r.err, "") << p.name;
    }
  }
}

TEST(ProgramCli, UnknownOptionIsAUsageErrorOnStderr) {
  for (const auto& p : programs()) {
    // lantern-trace takes a command first; its options belong to the commands.
    std::vector<std::string> args = p.name == "lantern-trace" ? std::vector<std::string>{"stats", "--bogus", "x"}
                                                              : std::vector<std::string>{"--bogus"};
    const Result r = run(p.path, args);
    EXPECT_EQ(r.exit_code, 2) << p.name;
    EXPECT_EQ(r.out, "") << p.name;
    EXPECT_TRUE(has(r.err, "unknown option '--bogus'")) << p.name << ": " << r.err;
    EXPECT_TRUE(has(r.err, "--help)")) << p.name << ": " << r.err;
    EXPECT_EQ(r.err.rfind(p.name, 0), 0u) << p.name << ": the message names the program: " << r.err;
  }
}

TEST(ProgramCli, BadValueAndMissingValueAreUsageErrorsOnStderr) {
  for (const auto& p : programs()) {
    Result r = run(p.path, p.bad_value);
    EXPECT_EQ(r.exit_code, 2) << p.name;
    EXPECT_EQ(r.out, "") << p.name;
    EXPECT_TRUE(has(r.err, p.bad_value_message)) << p.name << ": expected '" << p.bad_value_message << "' in " << r.err;
    if (p.name == "lantern-trace") continue;
    r = run(p.path, {p.bad_value.front()});  // the option without its value
    EXPECT_EQ(r.exit_code, 2) << p.name;
    EXPECT_TRUE(has(r.err, "option " + p.bad_value.front() + " needs a value")) << p.name << ": " << r.err;
  }
}

// The benchmarks' lists and names: every item is checked, and the message names the
// option and what it takes.
TEST(ProgramCli, BenchListsAndChoicesAreChecked) {
  struct Case {
    const char* program;
    const char* name;
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases;
#ifdef LANTERN_BENCH_BIN
  cases.push_back({LANTERN_BENCH_BIN, "lantern_bench", {"--only", "fib,nope"}, "--only takes a list of fib, skynet, "});
  cases.push_back({LANTERN_BENCH_BIN, "lantern_bench", {"--workers", ","}, "--workers takes a list of numbers from 1 to 1024, not ','"});
  cases.push_back({LANTERN_BENCH_BIN, "lantern_bench", {"--sleep", "spin"}, "--sleep takes condvar or io_uring, not 'spin'"});
  cases.push_back({LANTERN_BENCH_BIN, "lantern_bench", {"--topology", "2 sockets x"}, "--topology takes a spec such as"});
  cases.push_back({LANTERN_BENCH_BIN, "lantern_bench", {"--quick=yes"}, "option --quick takes no value"});
  // Either the kernel's trace marker (no tracefs, not root) or the list cannot be opened;
  // both before any benchmark runs.
  cases.push_back({LANTERN_BENCH_BIN, "lantern_bench", {"--wake-trace", "/nonexistent-dir/samples.txt"}, "--wake-trace: cannot "});
#endif
#ifdef LANTERN_INSTR_BENCH_BIN
  cases.push_back({LANTERN_INSTR_BENCH_BIN, "lantern_instr_bench", {"--count", "fib:all"}, "--count takes WORKLOAD:OBSERVER"});
  cases.push_back({LANTERN_INSTR_BENCH_BIN, "lantern_instr_bench", {"--paired-rounds", "5"},
                   "--paired-rounds takes a number from 6 to 100000, not '5'"});
#endif
#ifdef LANTERN_INSTR_BENCH_OFF_BIN
  cases.push_back({LANTERN_INSTR_BENCH_OFF_BIN, "lantern_instr_bench_off", {"--reps", "x"}, "--reps takes a number from 1 to 1000, not 'x'"});
#endif
#ifdef IO_BENCH_BIN
  cases.push_back({IO_BENCH_BIN, "io_bench", {"--seconds", "0.01"}, "--seconds takes a number of seconds from 0.1 to 86400, not '0.01'"});
#endif
  for (const Case& c : cases) {
    const Result r = run(c.program, c.args);
    EXPECT_EQ(r.exit_code, 2) << c.name << " " << c.args.front();
    EXPECT_EQ(r.out, "") << c.name << " " << c.args.front();
    EXPECT_EQ(r.err.rfind(std::string(c.name) + ": " + c.message, 0), 0u) << c.name << ": expected '" << c.message << "' in " << r.err;
  }
  std::printf("bench cases checked: %zu\n", cases.size());
}

// Errors while running (not usage): on stderr, with the program's name; reports on stdout.
TEST(ProgramCli, RuntimeErrorsGoToStderr) {
#ifdef LANTERN_ECHO_CLIENT_BIN
  {
    const Result r = run(LANTERN_ECHO_CLIENT_BIN, {"--port", std::to_string(closed_port()), "--messages", "1"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(has(r.err, "lantern_echo_client: 1 of 1 connections failed; the first:")) << r.err;
    EXPECT_FALSE(has(r.out, "Connection refused")) << r.out;
    EXPECT_TRUE(has(r.out, "failed connections: 1")) << r.out;  // the report still says it
  }
#endif
#ifdef LANTERN_ECHO_SERVER_BIN
  {
    // 192.0.2.1 (TEST-NET-1) is on no interface here: the server cannot listen there.
    const Result r = run(LANTERN_ECHO_SERVER_BIN, {"--address", "192.0.2.1", "--port", "0", "--workers", "1"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(has(r.err, "lantern_echo_server: ")) << r.err;
    EXPECT_EQ(r.out, "");
  }
#endif
#ifdef LANTERN_LIVE_DEMO_BIN
  {
    const Result r = run(LANTERN_LIVE_DEMO_BIN, {"--stream", "192.0.2.1:0", "--workers", "1", "--once", "--fib", "5"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(has(r.err, "lantern_live_demo: cannot stream on 192.0.2.1:0")) << r.err;
    EXPECT_EQ(r.out, "");
  }
#endif
#ifdef LANTERN_VIEW_BIN
  {
    const std::string missing = (scratch() / "no-such.ltrace").string();
    const Result r = run(LANTERN_VIEW_BIN, {missing});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(has(r.err, "lantern-view: ")) << r.err;
    EXPECT_EQ(r.out, "");
  }
#endif
#ifdef LANTERN_DEMO_BIN
  {
    const Result r = run(LANTERN_DEMO_BIN, {"--quick", "--workers", "2", "--no-metrics", "--no-view", "--trace",
                                            (scratch() / "no-such-dir" / "x.trace").string()});
    // The demo runs on without its trace, says so at once, and exits 1 because what it
    // was asked to record was not (lantern::observe's status).
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(has(r.err, "not recording a trace: ")) << r.err;
    EXPECT_TRUE(has(r.err, "lantern_demo: the workloads ran, but observing them failed")) << r.err;
    EXPECT_FALSE(has(r.out, "not recording")) << r.out;
  }
#endif
}

}  // namespace
