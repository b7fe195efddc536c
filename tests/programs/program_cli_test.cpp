// SPDX-License-Identifier: Apache-2.0
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

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "lantern/trace/format.hpp"
#include "lantern/trace/trace_writer.hpp"
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
  // Removed at exit when every test passed; kept (its path is in the failures) otherwise.
  static const struct Remove {
    std::filesystem::path path;
    ~Remove() {
      if (!::testing::UnitTest::GetInstance()->Passed()) return;
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } remove{dir};
  return dir;
}

// How run() starts a program, beyond its arguments.
struct RunOptions {
  std::string stdout_to;      // a file for its stdout (e.g. /dev/full) instead of a capture; Result::out stays ""
  std::string shell_prefix;   // shell commands before it, e.g. "ulimit -f 1;" (sh: 512-byte blocks)
  bool keep_display = false;  // leave DISPLAY set (for xvfb-run)
};

// run: the program with `args`, no display, stdin from /dev/null, bounded by timeout(1).
Result run(const std::string& program, const std::vector<std::string>& args, const RunOptions& options = {}) {
  static int counter = 0;
  const auto base = scratch() / ("run" + std::to_string(++counter));
  std::string cmd = options.shell_prefix;
  cmd += options.keep_display ? " env" : " env -u DISPLAY";
  cmd += " -u LANTERN_STREAM timeout -k 5 60 ";
  cmd += quote(program);
  for (const auto& a : args) {
    cmd += ' ';
    cmd += quote(a);
  }
  cmd += " > " + quote(options.stdout_to.empty() ? base.string() + ".out" : options.stdout_to) + " 2> " +
         quote(base.string() + ".err") + " < /dev/null";
  const int status = std::system(cmd.c_str());
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base.string() + ".out");
  r.err = slurp(base.string() + ".err");
  return r;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// lines: `text` split at newlines (no empty last line).
std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// header_only_trace: a trace file with a header and no chunk (its Chrome export is about
// 640 bytes of JSON), or with `tasks` tasks run on worker 0; `tail` bytes after it are a
// trace problem.
std::string header_only_trace(const std::string& name, const std::string& tail = {}, int tasks = 0) {
  const auto path = scratch() / name;
  lantern::trace::TraceHeader header;
  header.producer = "program_cli_test";
  header.workers = 1;
  lantern::trace::TraceWriter writer = lantern::trace::TraceWriter::create(path.string(), header);
  for (int i = 0; i < tasks; ++i) {
    const auto task = static_cast<std::uint64_t>(i + 1);
    writer.write(lantern::trace::make_event(100 + 10 * task, 0, lantern::TaskBeginPayload{.task = task}));
    writer.write(lantern::trace::make_event(105 + 10 * task, 0, lantern::TaskEndPayload{.task = task}));
  }
  EXPECT_TRUE(writer.close()) << path;
  if (!tail.empty()) std::ofstream(path, std::ios::binary | std::ios::app) << tail;
  return path.string();
}

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
  std::string name;                    // as it names itself in messages
  std::string path;                    // the built binary
  std::vector<std::string> bad_value;  // a known option with a value it refuses
  std::string bad_value_message;
};

std::vector<Program> programs() {
  std::vector<Program> list;
#ifdef LANTERN_TRACE_CLI_BIN
  list.push_back({"lantern-trace",
                  LANTERN_TRACE_CLI_BIN,
                  {"info", "--no-progress=yes", "x"},
                  "option --no-progress takes no value"});
#endif
#ifdef LANTERN_DEMO_BIN
  list.push_back({"lantern_demo", LANTERN_DEMO_BIN, {"--workers", "0"}, "--workers takes a number from 1 to"});
#endif
#ifdef LANTERN_ECHO_SERVER_BIN
  list.push_back({"lantern_echo_server",
                  LANTERN_ECHO_SERVER_BIN,
                  {"--port", "70000"},
                  "--port takes a port from 0 to 65535, not '70000'"});
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
  list.push_back(
      {"lantern_bench", LANTERN_BENCH_BIN, {"--reps", "0"}, "--reps takes a number from 1 to 1000, not '0'"});
#endif
#ifdef LANTERN_GRAPH_BENCH_BIN
  list.push_back({"lantern_graph_bench",
                  LANTERN_GRAPH_BENCH_BIN,
                  {"--workers", "1,x"},
                  "--workers takes a list of numbers from 1 to 1024, not '1,x'"});
#endif
#ifdef LANTERN_INSTR_BENCH_BIN
  list.push_back({"lantern_instr_bench",
                  LANTERN_INSTR_BENCH_BIN,
                  {"--only", "event,bogus"},
                  "--only takes a list of event, ring, overhead, paired, collector or trace, not 'event,bogus'"});
#endif
#ifdef LANTERN_INSTR_BENCH_OFF_BIN
  list.push_back({"lantern_instr_bench_off",
                  LANTERN_INSTR_BENCH_OFF_BIN,
                  {"--workers", "0"},
                  "--workers takes a number from 1 to 1024, not '0'"});
#endif
#ifdef IO_BENCH_BIN
  list.push_back({"io_bench",
                  IO_BENCH_BIN,
                  {"--connections", "1,0"},
                  "--connections takes a list of numbers from 1 to 100000, not '1,0'"});
#endif
#ifdef PROMETHEUS_BENCH_BIN
  list.push_back({"prometheus_bench",
                  PROMETHEUS_BENCH_BIN,
                  {"--scrapes", "0"},
                  "--scrapes takes a number from 1 to 1000000, not '0'"});
#endif
#ifdef VIEWER_BENCH_BIN
  list.push_back(
      {"viewer_bench", VIEWER_BENCH_BIN, {"--frames", "0"}, "--frames takes a number from 1 to 100000, not '0'"});
#endif
#ifdef LANTERN_HELPING_BENCH_BIN
  list.push_back({"lantern_helping_bench",
                  LANTERN_HELPING_BENCH_BIN,
                  {"--reps-nocheck", "0"},
                  "--reps-nocheck takes a number from 1 to 1000, not '0'"});
#endif
#ifdef LANTERN_HELPING_BENCH_NOCHECK_BIN
  list.push_back({"lantern_helping_bench_nocheck",
                  LANTERN_HELPING_BENCH_NOCHECK_BIN,
                  {"--reps", "0"},
                  "--reps takes a number from 1 to 1000, not '0'"});
#endif
#ifdef LANTERN_SOAK_BIN
  list.push_back(
      {"lantern_soak", LANTERN_SOAK_BIN, {"--sample", "0"}, "--sample takes a number of seconds from 0.1, not '0'"});
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
  cases.push_back({LANTERN_BENCH_BIN,
                   "lantern_bench",
                   {"--workers", ","},
                   "--workers takes a list of numbers from 1 to 1024, not ','"});
  cases.push_back(
      {LANTERN_BENCH_BIN, "lantern_bench", {"--sleep", "spin"}, "--sleep takes condvar or io_uring, not 'spin'"});
  cases.push_back(
      {LANTERN_BENCH_BIN, "lantern_bench", {"--topology", "2 sockets x"}, "--topology takes a spec such as"});
  cases.push_back({LANTERN_BENCH_BIN, "lantern_bench", {"--quick=yes"}, "option --quick takes no value"});
#endif
#ifdef LANTERN_INSTR_BENCH_BIN
  cases.push_back({LANTERN_INSTR_BENCH_BIN,
                   "lantern_instr_bench",
                   {"--paired-rounds", "5"},
                   "--paired-rounds takes a number from 6 to 100000, not '5'"});
#endif
#ifdef LANTERN_INSTR_BENCH_OFF_BIN
  cases.push_back({LANTERN_INSTR_BENCH_OFF_BIN,
                   "lantern_instr_bench_off",
                   {"--reps", "x"},
                   "--reps takes a number from 1 to 1000, not 'x'"});
#endif
#ifdef IO_BENCH_BIN
  cases.push_back({IO_BENCH_BIN,
                   "io_bench",
                   {"--seconds", "0.01"},
                   "--seconds takes a number of seconds from 0.1 to 86400, not '0.01'"});
#endif
  for (const Case& c : cases) {
    const Result r = run(c.program, c.args);
    EXPECT_EQ(r.exit_code, 2) << c.name << " " << c.args.front();
    EXPECT_EQ(r.out, "") << c.name << " " << c.args.front();
    EXPECT_EQ(r.err.rfind(std::string(c.name) + ": " + c.message, 0), 0u)
        << c.name << ": expected '" << c.message << "' in " << r.err;
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
    const std::string missing = (scratch() / "no-such.trace").string();
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
    // Its list of what failed: each line starts with its name (lantern::observe's own
    // messages before it start with "lantern:").
    const std::vector<std::string> err = lines(r.err);
    const auto list = std::find(err.begin(), err.end(), "lantern_demo: the workloads ran, but observing them failed:");
    ASSERT_NE(list, err.end()) << r.err;
    ASSERT_NE(list + 1, err.end()) << r.err;
    for (auto line = list + 1; line != err.end(); ++line) EXPECT_EQ(line->rfind("lantern_demo: ", 0), 0u) << *line;
    EXPECT_FALSE(has(r.out, "not recording")) << r.out;
  }
#endif
}

// Each program's exit status for output that cannot be written, as its --help says:
// lantern-trace 2 (a file that cannot be written), lantern-view 5 (cannot write), the
// others 1 (a failure while running).
int cannot_write_status(const Program& p) {
  if (p.name == "lantern-trace") return 2;
  if (p.name == "lantern-view") return 5;
  return 1;
}

// README: "`--` ends the options". What follows it is an argument even when it starts
// with '-', and the "--" itself is never "an unknown option".
TEST(ProgramCli, DoubleDashEndsTheOptions) {
  for (const auto& p : programs()) {
    std::vector<std::string> args = p.name == "lantern-trace" ? std::vector<std::string>{"stats", "--", "--bogus"}
                                                              : std::vector<std::string>{"--", "--bogus"};
    const Result r = run(p.path, args);
    EXPECT_NE(r.exit_code, 0) << p.name;
    EXPECT_FALSE(has(r.err, "unknown option")) << p.name << ": " << r.err;
    EXPECT_TRUE(has(r.err, "--bogus")) << p.name << ": " << r.err;
    EXPECT_EQ(r.err.rfind(p.name, 0), 0u) << p.name << ": " << r.err;
    if (p.name != "lantern-trace" && p.name != "lantern-view") {  // no FILE argument: "--bogus" is one too many
      EXPECT_EQ(r.exit_code, 2) << p.name;
      EXPECT_TRUE(has(r.err, "unexpected argument '--bogus' (see " + p.name + " --help)")) << p.name << ": " << r.err;
    }
  }
#ifdef LANTERN_TRACE_CLI_BIN
  {
    const std::string trace = header_only_trace("dd.trace");
    const std::string dash_named = "-x.trace";  // a file whose name starts with '-', in the scratch directory
    std::filesystem::copy_file(trace, scratch() / dash_named, std::filesystem::copy_options::overwrite_existing);
    Result r = run(LANTERN_TRACE_CLI_BIN, {"info", "--", trace});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "producer    program_cli_test")) << r.out;
    r = run("sh", {"-c", "cd " + quote(scratch().string()) + " && exec " + quote(LANTERN_TRACE_CLI_BIN) +
                             " info --no-progress -- -x.trace"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "file        -x.trace")) << r.out;
    r = run(LANTERN_TRACE_CLI_BIN, {"validate", "--", trace});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
#endif
#ifdef LANTERN_VIEW_BIN
  {
    // Past "--", a name starting with '-' is the trace file (missing here: exit 3, no window).
    const Result r = run(LANTERN_VIEW_BIN, {"--", "-no-such.trace"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_TRUE(has(r.err, "lantern-view: cannot open the trace '-no-such.trace'")) << r.err;
  }
#endif
#ifdef LANTERN_DEMO_BIN
  {
    const Result r = run(LANTERN_DEMO_BIN, {"--", "--quick"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "lantern_demo: unexpected argument '--quick' (see lantern_demo --help)\n");
    EXPECT_EQ(r.out, "");
  }
#endif
}

// README: reports go to stdout. A report (or the help) that cannot be written is an
// error: "PROGRAM: cannot write the output: REASON" on stderr and the status the
// program's --help gives for it, never 0.
TEST(ProgramCli, OutputThatCannotBeWrittenIsAnError) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  const RunOptions to_full{.stdout_to = "/dev/full"};
  for (const auto& p : programs()) {
    for (const char* flag : {"--help", "--version"}) {
      const Result r = run(p.path, {flag}, to_full);
      EXPECT_EQ(r.exit_code, cannot_write_status(p)) << p.name << " " << flag << ": " << r.err;
      EXPECT_EQ(r.err, p.name + ": cannot write the output: No space left on device\n") << p.name << " " << flag;
    }
  }
#ifdef LANTERN_TRACE_CLI_BIN
  {
    const std::string trace = header_only_trace("full.trace", {}, 3);  // diff refuses a trace without events
    const std::vector<std::vector<std::string>> reports = {
        {"info", trace},     {"stats", trace},           {"stats", "--json", trace},
        {"validate", trace}, {"diff", trace, trace},     {"export", "--chrome", trace, "-o", "-"},
        {"scale", trace},    {"scale", "--json", trace}, {"info", "--help"},
        {"scale", "--help"}};
    for (const auto& args : reports) {
      const Result r = run(LANTERN_TRACE_CLI_BIN, args, to_full);
      EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
      EXPECT_EQ(r.err, "lantern-trace " + args[0] + ": cannot write the output: No space left on device\n")
          << args[0] << " " << args[1];
    }
  }
#endif
#ifdef LANTERN_DEMO_BIN
  {
    const Result r =
        run(LANTERN_DEMO_BIN, {"--quick", "--workers", "2", "--no-trace", "--no-metrics", "--no-view"}, to_full);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(has(r.err, "lantern_demo: cannot write the output: No space left on device")) << r.err;
  }
#endif
#ifdef LANTERN_ECHO_CLIENT_BIN
  {
    // The connection fails (status 1 anyway); the report that says so must not vanish unsaid.
    const Result r =
        run(LANTERN_ECHO_CLIENT_BIN, {"--port", std::to_string(closed_port()), "--messages", "1"}, to_full);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(has(r.err, "lantern_echo_client: cannot write the output: No space left on device")) << r.err;
  }
#endif
}

// An export whose file cannot be written completely says why (the error can show only at
// fclose, when the JSON was still in the stdio buffer; errno must be fclose's, never a
// stale "Success") and leaves no cut-off JSON behind.
TEST(ProgramCli, ExportThatCannotBeWrittenSaysWhyAndLeavesNoFile) {
#ifdef LANTERN_TRACE_CLI_BIN
  const std::string trace = header_only_trace("export.trace");
  // A file size limit of 512 bytes (sh's ulimit -f counts 512-byte blocks; SIGXFSZ
  // ignored: the write fails with EFBIG): the ~640 bytes of JSON stay in the 4 KiB stdio
  // buffer until fclose.
  const std::string json = (scratch() / "limited.json").string();
  Result r = run(LANTERN_TRACE_CLI_BIN, {"export", "--chrome", trace, "-o", json},
                 {.shell_prefix = "trap '' XFSZ; ulimit -f 1;"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "lantern-trace export: cannot write '" + json + "': File too large")) << r.err;
  EXPECT_FALSE(has(r.err, "Success")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(json)) << "the incomplete JSON was left behind";
  EXPECT_EQ(r.out, "");
  // A device is never removed; /dev/full says why too.
  if (std::filesystem::exists("/dev/full")) {
    r = run(LANTERN_TRACE_CLI_BIN, {"export", "--chrome", trace, "-o", "/dev/full"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "lantern-trace export: cannot write '/dev/full': No space left on device\n");
    EXPECT_TRUE(std::filesystem::exists("/dev/full"));
  }
  // The same trace with room to write: a complete file.
  r = run(LANTERN_TRACE_CLI_BIN, {"export", "--chrome", trace, "-o", json});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(std::filesystem::file_size(json), 512u);
#else
  GTEST_SKIP() << "lantern-trace is not built here";
#endif
}

// README: a malformed value is bad usage - "PROGRAM: what is wrong (see PROGRAM --help)",
// exit 2 - and nothing runs (no flight recorder, no connection, no report).
TEST(ProgramCli, MalformedValuesAreUsageErrorsBeforeAnythingRuns) {
  struct Case {
    std::string name, path;
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases;
#ifdef LANTERN_DEMO_BIN
  cases.push_back({"lantern_demo",
                   LANTERN_DEMO_BIN,
                   {"--topology", "banana"},
                   "--topology takes a spec such as \"2 sockets x 4 cores x 2 threads\", not 'banana': "});
  cases.push_back({"lantern_demo",
                   LANTERN_DEMO_BIN,
                   {"--topology", "0 sockets x 4 cores"},
                   "--topology takes a spec such as \"2 sockets x 4 cores x 2 threads\", not '0 sockets x 4 cores': "});
#endif
#ifdef LANTERN_ECHO_SERVER_BIN
  cases.push_back(
      {"lantern_echo_server",
       LANTERN_ECHO_SERVER_BIN,
       {"--address", "999.1.1.1", "--port", "0"},
       "--address takes an IPv4 address such as 127.0.0.1, not '999.1.1.1' (see lantern_echo_server --help)"});
  cases.push_back({"lantern_echo_server",
                   LANTERN_ECHO_SERVER_BIN,
                   {"--address", "::1", "--port", "0"},
                   "--address takes an IPv4 address such as 127.0.0.1, not '::1' (see lantern_echo_server --help)"});
#endif
#ifdef LANTERN_ECHO_CLIENT_BIN
  cases.push_back({"lantern_echo_client",
                   LANTERN_ECHO_CLIENT_BIN,
                   {"--host", "foo", "--messages", "1"},
                   "--host takes an IPv4 address such as 127.0.0.1, not 'foo' (see lantern_echo_client --help)"});
  cases.push_back(
      {"lantern_echo_client",
       LANTERN_ECHO_CLIENT_BIN,
       {"--seconds", "0"},
       "--seconds takes a number of seconds above 0, up to 86400, not '0' (see lantern_echo_client --help)"});
#endif
  for (const Case& c : cases) {
    const Result r = run(c.path, c.args);
    EXPECT_EQ(r.exit_code, 2) << c.name << " " << c.args[1] << ": " << r.err;
    EXPECT_EQ(r.out, "") << c.name << " " << c.args[1];
    EXPECT_EQ(r.err.rfind(c.name + ": " + c.message, 0), 0u)
        << c.name << ": expected '" << c.message << "' in " << r.err;
    EXPECT_TRUE(has(r.err, "(see " + c.name + " --help)\n")) << r.err;
    EXPECT_EQ(lines(r.err).size(), 1u) << c.name << ": one line, nothing started: " << r.err;
  }
}

// README: a trace's problems go to stderr, each line starting with the program's name
// ("lantern-trace stats: FILE: error: truncated at offset ..."), so grep finds them.
TEST(ProgramCli, TraceProblemsStartWithTheProgramName) {
#ifdef LANTERN_TRACE_CLI_BIN
  const std::string trace = header_only_trace("cut.trace", "\x01\x02");  // 2 bytes that are not a chunk
  const std::string json = (scratch() / "cut.json").string();
  const std::vector<std::vector<std::string>> commands = {
      {"info", trace}, {"stats", trace}, {"validate", trace}, {"export", "--chrome", trace, "-o", json}};
  for (const auto& args : commands) {
    const Result r = run(LANTERN_TRACE_CLI_BIN, args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
    const std::string prefix = "lantern-trace " + args[0] + ": ";
    EXPECT_TRUE(has(r.err, prefix + trace + ": error: the last 2 bytes")) << args[0] << ": " << r.err;
    for (const std::string& line : lines(r.err)) EXPECT_EQ(line.rfind(prefix, 0), 0u) << args[0] << ": " << line;
  }
#endif
#ifdef LANTERN_VIEW_BIN
  // lantern-view prints them with --screenshot, which needs X: under xvfb-run where it is.
  if (std::system("command -v xvfb-run > /dev/null 2>&1") == 0) {
    const std::string trace = header_only_trace("cut-view.trace", "\x01\x02");
    // Leak checks off for the viewer (an ASan build): the GL driver's allocations are
    // never freed, as for the viewer's screenshot tests (tests/viewer/CMakeLists.txt).
    const Result r = run("env",
                         {"ASAN_OPTIONS=detect_leaks=0", "xvfb-run", "-a", LANTERN_VIEW_BIN, "--screenshot",
                          (scratch() / "cut.png").string(), trace},
                         {.keep_display = true});
    if (r.exit_code == 4) {
      std::printf("lantern-view: no display under xvfb-run here; its problem lines are not checked\n");
    } else {
      // xvfb-run's own cleanup can fail here and turn 3 into its status; lantern-view's
      // lines still say what it did.
      if (!has(r.err, "xvfb-run: error")) {
        EXPECT_EQ(r.exit_code, 3) << r.err;
      }
      EXPECT_TRUE(has(r.err, "lantern-view: " + trace + ": error: the last 2 bytes")) << r.err;
      for (const std::string& line : lines(r.err)) {
        if (!line.empty() && line.rfind("xvfb-run", 0) != 0) {
          EXPECT_EQ(line.rfind("lantern-view: ", 0), 0u) << line;
        }
      }
      // --at beyond the trace's end, refused once the end is known: bad usage, in the
      // words of every usage error ("(see lantern-view --help)").
      const std::string short_trace = header_only_trace("short-view.trace", {}, 3);
      const Result at = run("env",
                            {"ASAN_OPTIONS=detect_leaks=0", "xvfb-run", "-a", LANTERN_VIEW_BIN, "--screenshot",
                             (scratch() / "at.png").string(), "--at", "10s", short_trace},
                            {.keep_display = true});
      EXPECT_TRUE(has(at.err, "lantern-view: --at 10.000 s is beyond the end of the trace")) << at.err;
      EXPECT_TRUE(has(at.err, "(see lantern-view --help)\n")) << at.err;
    }
  }
#endif
}

// lantern-trace scale's options follow the conventions too: --help on stdout, a bad
// value or a missing one is a usage error naming the option (exit 2, stderr, the
// command's name first), and --what-if, the one option that may be repeated, keeps
// every value (a bad second one is refused).
TEST(ProgramCli, TraceScaleHelpAndBadOptions) {
#ifdef LANTERN_TRACE_CLI_BIN
  Result r = run(LANTERN_TRACE_CLI_BIN, {"scale", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("usage: lantern-trace scale", 0), 0u) << r.out;
  EXPECT_EQ(run(LANTERN_TRACE_CLI_BIN, {"help", "scale"}).out, r.out);
  const std::string trace = header_only_trace("scale.trace", {}, 3);
  const struct {
    std::vector<std::string> args;
    std::string message;
  } bad[] = {
      {{"scale", "--workers", "0", trace}, "--workers takes a list of numbers from 1 to 1024, not '0'"},
      {{"scale", "--topology", "two sockets", trace}, "--topology takes a spec such as"},
      {{"scale", "--what-if", "fib=50", "--what-if", "fib=0", trace}, "--what-if takes LABEL=PCT"},
      {{"scale", "--top", "-1", trace}, "--top takes a number from 0 to 1000, not '-1'"},
      {{"scale", "--bogus", trace}, "unknown option '--bogus'"},
      {{"scale", "--json=1", trace}, "option --json takes no value"},
      {{"scale", trace, "--workers"}, "option --workers needs a value"},
  };
  for (const auto& b : bad) {
    r = run(LANTERN_TRACE_CLI_BIN, b.args);
    EXPECT_EQ(r.exit_code, 2) << b.message << ": " << r.err;
    EXPECT_EQ(r.out, "") << b.message;
    EXPECT_EQ(r.err.rfind("lantern-trace scale: ", 0), 0u) << r.err;
    EXPECT_TRUE(has(r.err, b.message)) << "expected '" << b.message << "' in " << r.err;
    EXPECT_TRUE(has(r.err, "(see lantern-trace scale --help)")) << r.err;
  }
#else
  GTEST_SKIP() << "lantern-trace is not built here";
#endif
}

// Smaller ones: --version after a lantern-trace command; a file that is not a trace at
// all gets no report of zeros from info and stats.
TEST(ProgramCli, TraceCommandsAnswerVersionAndRefuseNonTraces) {
#ifdef LANTERN_TRACE_CLI_BIN
  for (const char* command : {"info", "stats", "export", "validate", "diff", "scale"}) {
    const Result r = run(LANTERN_TRACE_CLI_BIN, {command, "--version"});
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_EQ(r.out, "lantern-trace " + std::string(lantern::kVersion) + " (trace format version " +
                         std::to_string(lantern::trace::kFormatVersion) + ")\n")
        << command;
  }
  const auto empty = scratch() / "empty.trace";
  std::ofstream(empty).close();
  for (const std::string& file : {empty.string(), std::string("/dev/null")}) {
    for (const std::vector<std::string>& args : {std::vector<std::string>{"info", file},
                                                 {"stats", file},
                                                 {"stats", "--json", file},
                                                 {"scale", file},
                                                 {"scale", "--json", file}}) {
      const Result r = run(LANTERN_TRACE_CLI_BIN, args);
      EXPECT_EQ(r.exit_code, 1) << args[0] << " " << file;  // the trace has problems: it is not one
      EXPECT_EQ(r.out, "") << args[0] << " " << file << ": a report of zeros, as if the counts were known";
      EXPECT_TRUE(has(r.err, "lantern-trace " + args[0] + ": " + file + ": error: not a Lantern trace")) << r.err;
    }
  }
#else
  GTEST_SKIP() << "lantern-trace is not built here";
#endif
}

// A program that writes a trace says at exit how many events its rings lost, by reason
// and per worker, and what that does to the figures it printed; the count is the one the
// trace's own markers add up to (lantern-trace info). A small ring makes drops likely,
// not certain: whether the collector keeps up depends on how the two threads are
// scheduled (a slow sanitizer build can drain every event). So each program runs again,
// with more work, until it loses some (at most kTries runs); a run that prints no loss report must
// have lost none (its trace's markers add up to 0), and a program that never loses any fails.
TEST(ProgramCli, ProgramsThatLoseEventsSayHowManyWhyAndWhatItAffects) {
  struct Case {
    const char* name;
    std::string bin;
    std::vector<std::string> (*args)(int attempt, const std::string& trace);  // more work each attempt
    const char* affects;
  };
  constexpr int kTries = 6;
  std::vector<Case> cases;
  const std::string trace = (scratch() / "lossy.trace").string();
#ifdef LANTERN_DEMO_BIN
  cases.push_back({"lantern_demo", LANTERN_DEMO_BIN,
                   [](int attempt, const std::string& t) {
                     return std::vector<std::string>{
                         "--quick", "--ring", attempt == 0 ? "64" : "8", "--no-metrics", "--no-view", "--workers", "2",
                         "--trace", t};
                   },
                   "The per-worker figures above are the Recorder's exact counters and include the lost events"});
#endif
#ifdef LANTERN_LIVE_DEMO_BIN
  cases.push_back({"lantern_live_demo", LANTERN_LIVE_DEMO_BIN,
                   [](int attempt, const std::string& t) {
                     return std::vector<std::string>{"--once", "--fib",   std::to_string(22 + 2 * attempt),
                                                     "--ring", "8",       "--workers",
                                                     "2",      "--trace", t};
                   },
                   "The fib times above are measured by this program"});
#endif
  for (const Case& c : cases) {
    Result r;
    std::size_t at = std::string::npos;
    for (int attempt = 0; attempt < kTries && at == std::string::npos; ++attempt) {
      std::filesystem::remove(trace);
      r = run(c.bin, c.args(attempt, trace));
      ASSERT_EQ(r.exit_code, 0) << c.name << r.err;
      at = r.out.find("events lost: ");
#ifdef LANTERN_TRACE_CLI_BIN
      // No loss report: then the trace's own markers say nothing was lost.
      if (at == std::string::npos) {
        const Result info = run(LANTERN_TRACE_CLI_BIN, {"info", trace});
        EXPECT_TRUE(has(info.out, "dropped     0 events lost")) << c.name << " lost events but did not say so\n"
                                                                << r.out << info.out;
      }
#endif
    }
    ASSERT_NE(at, std::string::npos) << c.name << " lost no events in " << kTries << " runs, or did not report them:\n"
                                     << r.out;
    const std::uint64_t lost = std::stoull(r.out.substr(at + 13));
    EXPECT_GT(lost, 0u);
    EXPECT_TRUE(has(r.out.substr(at), " (ring_full: ")) << r.out.substr(at);
    // Per worker: whichever workers lost events (with two workers either may lose none),
    // adding up to the total.
    const std::string report = r.out.substr(at, r.out.find('\n', at) - at);
    std::uint64_t per_worker = 0;
    int workers_named = 0;
    const std::regex worker_loss("worker [0-9]+: ([0-9]+)");
    for (std::sregex_iterator m(report.begin(), report.end(), worker_loss), end; m != end; ++m) {
      per_worker += std::stoull((*m)[1].str());
      ++workers_named;
    }
    EXPECT_GE(workers_named, 1) << report;
    EXPECT_EQ(per_worker, lost) << report;
    EXPECT_TRUE(has(r.out.substr(at), c.affects)) << r.out.substr(at);
#ifdef LANTERN_TRACE_CLI_BIN
    const Result info = run(LANTERN_TRACE_CLI_BIN, {"info", trace});
    EXPECT_TRUE(has(info.out, "dropped     " + std::to_string(lost) + " events lost")) << c.name << "\n" << info.out;
#endif
  }
}

}  // namespace
