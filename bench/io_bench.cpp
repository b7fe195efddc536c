// SPDX-License-Identifier: Apache-2.0
// io_bench - the echo server (examples/echo_server) under the io_uring sleep strategy
// against the condvar strategy, in the same run (bench/RESULTS.md, "io_bench").
//
// The server runs as a child process (lantern_echo_server, 2 workers), so its CPU time
// is its own (/proc/PID/stat); the load client (examples/echo_server/echo_load.cpp, one
// thread, epoll) runs in this process. Strategies alternate repetition by repetition so
// drift on a shared machine hits both alike; every figure is a median.
//
//   io_bench [--reps N] [--seconds S] [--idle-seconds S] [--connections 1,8,64] [--workers N] [--markdown] [--quick]
// (io_bench --help says what each does)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "echo_load.hpp"
#include "harness.hpp"
#include "lantern/options.hpp"  // kMaxWorkers
#include "lantern/tools/program_cli.hpp"

namespace {

using bench::median;

struct Server {
  pid_t pid = -1;
  std::uint16_t port = 0;
  std::FILE* log = nullptr;  // the server's stderr: shown only if it failed
  int out = -1;              // its stdout, open until it has ended (its last words need a reader)
};

// show_log copies what the server wrote to its stderr to ours.
void show_log(std::FILE* log) {
  std::rewind(log);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, log)) > 0) std::fwrite(buf, 1, n, stderr);
}

// start_server runs lantern_echo_server --port 0 and reads the port it prints. Its
// stderr (a banner per start: the flight recorder's note) goes to a temporary file,
// shown if the server fails to start or ends other than by our SIGTERM.
Server start_server(const std::string& strategy, unsigned workers) {
  int out[2];
  if (pipe(out) != 0) std::exit(3);
  std::FILE* log = std::tmpfile();
  if (!log) {
    std::perror("io_bench: tmpfile for the server's stderr");
    std::exit(3);
  }
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(fileno(log), STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    const std::string w = std::to_string(workers);
    execl(LANTERN_ECHO_SERVER_PATH, "lantern_echo_server", "--port", "0", "--workers", w.c_str(), "--sleep",
          strategy.c_str(), static_cast<char*>(nullptr));
    std::perror("io_bench: exec lantern_echo_server");
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  // "listening on 127.0.0.1:PORT (2 workers, io_uring sleep strategy)"
  const std::size_t colon = line.rfind(':', line.find(' ', line.find("127.0.0.1")));
  Server s{pid, 0, log, out[0]};
  if (colon == std::string::npos || line.find(strategy + " sleep strategy") == std::string::npos) {
    std::fprintf(stderr, "io_bench: the server did not start as asked: '%s'; its stderr:\n", line.c_str());
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    show_log(log);
    close(out[0]);
    std::exit(3);
  }
  s.port = static_cast<std::uint16_t>(std::atoi(line.c_str() + colon + 1));
  return s;
}

void stop_server(const Server& s) {
  kill(s.pid, SIGTERM);
  int status = 0;
  waitpid(s.pid, &status, 0);
  const bool clean =
      (WIFEXITED(status) && WEXITSTATUS(status) == 0) || (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  if (!clean) {
    std::fprintf(stderr, "io_bench: the server ended with status %d; its stderr:\n", status);
    show_log(s.log);
  }
  std::fclose(s.log);
  close(s.out);
}

// cpu_seconds: user + system time of a process so far.
double cpu_seconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::istringstream rest(all.substr(all.rfind(')') + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {  // fields 14 and 15: utime, stime
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct Sample {
  double rps = 0, p99 = 0, cores = 0;
};

unsigned g_workers = 2;

Sample run_one(const std::string& strategy, int connections, double seconds) {
  const Server s = start_server(strategy, g_workers);
  lantern::examples::LoadOptions o;
  o.port = s.port;
  o.connections = connections;
  o.seconds = seconds;
  o.min_bytes = o.max_bytes = 64;
  const double cpu0 = cpu_seconds(s.pid);
  const lantern::examples::LoadResult r = lantern::examples::run_load(o);
  const double cpu1 = cpu_seconds(s.pid);
  stop_server(s);
  if (r.errors || r.mismatches) {
    std::fprintf(stderr, "io_bench: WRONG ANSWER: %s, %d connections: %llu errors (%s), %llu mismatched bytes\n",
                 strategy.c_str(), connections, static_cast<unsigned long long>(r.errors), r.first_error.c_str(),
                 static_cast<unsigned long long>(r.mismatches));
    std::exit(2);
  }
  return {r.requests_per_second(), r.p99_us, (cpu1 - cpu0) / r.seconds};
}

double idle_cpu_percent(const std::string& strategy, double seconds) {
  const Server s = start_server(strategy, g_workers);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // past start-up
  const double cpu0 = cpu_seconds(s.pid);
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));  // measuring idleness itself
  const double cpu1 = cpu_seconds(s.pid);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stop_server(s);
  return 100.0 * (cpu1 - cpu0) / wall;
}

constexpr const char* kUsage = R"(usage: io_bench [--reps N] [--seconds S] [--idle-seconds S] [--connections 1,8,64]
                [--workers N] [--markdown] [--quick]

The echo server (--workers workers, default 2, a child process) under the io_uring sleep
strategy against the condvar strategy, 64-byte messages, the load client in this
process. Prints medians of N repetitions: requests/s, p99 round trip, server CPU in
cores; and idle server CPU.

options:
  -h, --help            this text
  --version             print the version
  --reps N              repetitions of each strategy, 1 to 1000 (default 5)
  --seconds S           load per repetition, seconds from 0.1 to 86400 (default 2)
  --idle-seconds S      idle time measured per repetition, seconds from 0.1 to 86400
                        (default 5)
  --connections LIST    client connection counts, one row each, 1 to 100000
                        (default 1,8,64)
  --workers N           the server's workers, 1 to 1024 (default 2)
  --markdown            print the table as Markdown (for bench/RESULTS.md)
  --quick               smoke test: 1 rep, 0.3 s of load, 0.3 s idle (each unless
                        given)

Exit status: 0 when every answer was right, even if targets were missed; 2 on a wrong
answer or bad usage; 3 when the server could not be started.
)";

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  double seconds = 2.0, idle_seconds = 5.0;
  std::vector<int> conns = {1, 8, 64};
  bool markdown = false, quick = false;
  lantern::tools::Program program("io_bench", kUsage);
  auto& app = program.app();
  CLI::Option* reps_option = lantern::tools::number_option(app, "--reps", &reps, 1, 1000);
  CLI::Option* seconds_option =
      lantern::tools::number_option(app, "--seconds", &seconds, 0.1, 86400.0, "a number of seconds from 0.1 to 86400");
  CLI::Option* idle_option = lantern::tools::number_option(app, "--idle-seconds", &idle_seconds, 0.1, 86400.0,
                                                           "a number of seconds from 0.1 to 86400");
  lantern::tools::number_list_option(app, "--connections", &conns, 1, 100000);
  lantern::tools::number_option(app, "--workers", &g_workers, 1u, lantern::kMaxWorkers);
  app.add_flag("--markdown", markdown);
  app.add_flag("--quick", quick);
  if (const auto exit = program.parse(argc, argv)) return *exit;
  if (quick) {
    if (reps_option->count() == 0) reps = 1;
    if (seconds_option->count() == 0) seconds = 0.3;
    if (idle_option->count() == 0) idle_seconds = 0.3;
  }
  const char* strategies[] = {"io_uring", "condvar"};
  bench::Progress progress;
  struct Line {
    int connections;
    Sample s[2];
  };
  std::vector<Line> lines;
  for (int c : conns) {
    std::vector<double> rps[2], p99[2], cores[2];
    for (int r = 0; r < reps; ++r) {
      for (int k = 0; k < 2; ++k) {
        progress.show(std::string("echo ") + strategies[k] + ", " + std::to_string(c) + " connections", g_workers,
                      std::to_string(r) + "/" + std::to_string(reps));
        const Sample s = run_one(strategies[k], c, seconds);
        rps[k].push_back(s.rps);
        p99[k].push_back(s.p99);
        cores[k].push_back(s.cores);
      }
    }
    Line line{c, {}};
    for (int k = 0; k < 2; ++k) line.s[k] = {median(rps[k]), median(p99[k]), median(cores[k])};
    lines.push_back(line);
  }
  std::vector<double> idle[2];
  for (int r = 0; r < reps; ++r) {
    for (int k = 0; k < 2; ++k) {
      progress.show(std::string("idle ") + strategies[k], g_workers, std::to_string(r) + "/" + std::to_string(reps));
      idle[k].push_back(idle_cpu_percent(strategies[k], idle_seconds));
    }
  }
  progress.clear();

  const char* sep = markdown ? " | " : "  ";
  const char* edge = markdown ? "| " : "";
  const char* end = markdown ? " |" : "";
  std::printf(
      "%sconnections%sio_uring req/s%scondvar req/s%sratio%sp99 io_uring us%sp99 condvar us%scores io_uring%scores "
      "condvar%s\n",
      edge, sep, sep, sep, sep, sep, sep, sep, end);
  if (markdown) std::printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const Line& l : lines) {
    std::printf("%s%d%s%.0f%s%.0f%s%.2f%s%.0f%s%.0f%s%.2f%s%.2f%s\n", edge, l.connections, sep, l.s[0].rps, sep,
                l.s[1].rps, sep, l.s[0].rps / l.s[1].rps, sep, l.s[0].p99, sep, l.s[1].p99, sep, l.s[0].cores, sep,
                l.s[1].cores, end);
  }
  const double idle_uring = median(idle[0]), idle_condvar = median(idle[1]);
  std::printf(
      "\nidle server CPU (%% of one core, no clients, %.1f s, resolution %.2f %%): io_uring %.2f %%, condvar %.2f %% "
      "[target <= 1 %%: %s]\n",
      idle_seconds, 100.0 / static_cast<double>(sysconf(_SC_CLK_TCK)) / idle_seconds, idle_uring, idle_condvar,
      idle_uring <= 1.0 && idle_condvar <= 1.0 ? "PASS" : "MISS");
  std::printf(
      "(server: %u workers; ratio: io_uring/condvar requests per second, higher is better; medians of %d runs\n"
      " of %.1f s, 64-byte messages; the client shares this machine's cores with the server)\n",
      g_workers, reps, seconds);
  return 0;
}
