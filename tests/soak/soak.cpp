// SPDX-License-Identifier: Apache-2.0
// soak.cpp - lantern_soak: every part of Lantern that faces the network or the disk,
// running together for a long time (10 minutes by default), checked for leaks and for
// correctness throughout. Not in the default test suite: run it by hand or with
// `cmake --build build/release --target soak` (README.md beside this has a full run).
//
// One process, one Scheduler, as an application would have it:
//   - the demo's workloads in a loop on the pool: fork-join fib by join, bursts of
//     submitted tasks with idle gaps, self-spawning floods, spawn_after pipelines;
//   - the echo server on the same pool under load from the echo client (8 connections,
//     messages of 64 B - 4 KiB), every echoed byte compared;
//   - /metrics (PrometheusExporter) scraped over loopback HTTP every second;
//   - the live stream (StreamServer) with a viewer attached for 15 s of every 30 s: this
//     program again, as a separate process running the viewer's own Session and Model
//     over the socket (no window), required to have received events;
//   - a FlightRecorder dumped every minute, each dump read back with TraceReader and
//     required to be a valid trace (intact header, at least one chunk, no errors).
// Every --sample seconds it samples RSS, open file descriptors and threads (from /proc)
// and prints the series. At the end the samples after the warm-up must stay flat: the
// mean of the last quarter exceeds the mean of the first quarter by less than
// max(16 MiB, 10 %) of RSS and 2 descriptors or threads. Exit 0
// when every check holds, 1 otherwise (each failure says what), 2 for bad options.
#include <dirent.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "echo_load.hpp"
#include "echo_server.hpp"
#include "lantern/exporters/prometheus_exporter.hpp"
#include "lantern/exporters/testing/loopback_http.hpp"
#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/stream_server.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/lantern.hpp"
#include "lantern/tools/program_cli.hpp"
#include "lantern/trace/trace_reader.hpp"
#include "lantern/viewer/session.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct Options {
  double seconds = 600;
  double sample_seconds = 10;
  double warmup_seconds = 30;
  unsigned workers = 2;
};

const char* kUsage =
    "usage: lantern_soak [--seconds S] [--sample S] [--warmup S] [--workers N]\n\n"
    "Runs the demo's workloads, the echo server under load, /metrics scraped every second, a\n"
    "viewer attached 15 s of every 30 s and a flight-recorder dump every minute, for S seconds\n"
    "(default 600). Prints RSS, descriptors and threads every --sample seconds (default 10);\n"
    "after --warmup seconds (default 30) they must stay flat.\n\n"
    "options:\n"
    "  -h, --help       this text\n"
    "  --version        print the version\n"
    "  --seconds S      how long (from 1; default 600)\n"
    "  --sample S       seconds between samples (from 0.1; default 10)\n"
    "  --warmup S       seconds before the flatness checks start (default 30)\n"
    "  --workers N      the pool's workers (1 to 1024; default 2)\n\n"
    "Exit status: 0 when every check held, 1 when one failed, 2 on bad usage.\n";

// parse: nullopt to go on, or the exit status to return at once (program_cli.hpp).
std::optional<int> parse(int argc, char** argv, Options* o) {
  lantern::tools::Program program("lantern_soak", kUsage);
  auto& app = program.app();
  lantern::tools::number_option(app, "--seconds", &o->seconds, 1.0, 1e9, "a number of seconds from 1");
  lantern::tools::number_option(app, "--sample", &o->sample_seconds, 0.1, 1e9, "a number of seconds from 0.1");
  lantern::tools::number_option(app, "--warmup", &o->warmup_seconds, 0.0, 1e9, "a number of seconds from 0");
  lantern::tools::number_option(app, "--workers", &o->workers, 1u, 1024u);
  return program.parse(argc, argv);
}

struct Sample {
  double t = 0;
  long rss_kib = 0;
  int fds = 0;
  int threads = 0;
  std::uint64_t scrapes = 0, echoed_bytes = 0, attaches = 0, dumps = 0;
};

long rss_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}
int threads() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Threads:", 0) == 0) return static_cast<int>(std::strtol(line.c_str() + 8, nullptr, 10));
  }
  return -1;
}
int open_fds() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
    --n;  // the directory stream's own descriptor
  }
  return n;
}

void spin_for(std::chrono::microseconds d) {
  const auto end = Clock::now() + d;
  while (Clock::now() < end) {
  }
}

long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  lantern::join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}

// Failures: what went wrong, printed at the end (and as it happens).
struct Failures {
  std::mutex mutex;
  std::vector<std::string> list;
  void add(std::string what) {
    std::fprintf(stderr, "lantern_soak: FAILED: %s\n", what.c_str());
    std::lock_guard<std::mutex> lock(mutex);
    list.push_back(std::move(what));
  }
};

}  // namespace

// viewer_child: the viewer's Session and Model attached to the stream for `seconds`;
// exit 0 when it received events and its model reports no decoding error.
int viewer_child(const char* port, const char* seconds) {
  lantern::viewer::HostPort where;
  where.port = static_cast<std::uint16_t>(std::atoi(port));
  auto session = lantern::viewer::Session::attach(where);
  std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(seconds)));
  std::lock_guard<std::mutex> lock(session->mutex());
  const std::uint64_t events = session->model().events();
  if (events == 0) {
    std::fprintf(stderr, "lantern_soak viewer: attached %s s and received no event\n", seconds);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--viewer-child") == 0) return viewer_child(argv[2], argv[3]);
  Options o;
  if (const auto exit = parse(argc, argv, &o)) return *exit;
  Failures failures;
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("lantern-soak-" + std::to_string(::getpid()));
  fs::create_directories(dir);

  lantern::instrumentation::Recorder recorder(o.workers, {.level = lantern::trace::Level::tasks});
  lantern::SchedulerOptions so;
  so.workers = o.workers;
  so.observer = &recorder;
  lantern::Scheduler pool(so);
  lantern::instrumentation::Collector collector(recorder);
  const auto header = lantern::instrumentation::make_trace_header(pool, recorder, "lantern_soak");
  auto flight = std::make_shared<lantern::instrumentation::FlightRecorder>(
      header, lantern::instrumentation::FlightRecorderOptions{.keep_seconds = 5.0});
  collector.attach(flight);
  std::string error;
  auto stream = lantern::instrumentation::start_stream(collector, header, {}, &error);
  if (!stream) {
    std::fprintf(stderr, "lantern_soak: cannot stream: %s\n", error.c_str());
    return 1;
  }
  collector.start();
  lantern::exporters::PrometheusExporter exporter(pool, recorder, {.address = "127.0.0.1:0"});
  lantern::examples::EchoServer echo(pool);
  echo.start();

  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> scrapes{0}, echoed{0}, attaches{0}, dumps{0}, rounds{0};
  const lantern::Label kFib = lantern::label("fib"), kBurst = lantern::label("burst"), kFlood = lantern::label("flood"),
                       kParse = lantern::label("parse"), kRender = lantern::label("render");

  // The demo's workloads, in a loop.
  std::thread workloads([&] {
    while (!stop.load()) {
      const long r = pool.run([&] {
        lantern::label_task(kFib);
        return fib(22);
      });
      if (r != 17711) failures.add("fib(22) = " + std::to_string(r));
      {
        lantern::TaskGroup group(pool);
        for (int i = 0; i < 100; ++i) {
          group.spawn([&] {
            lantern::label_task(kBurst);
            spin_for(5us);
          });
        }
        group.wait();
      }
      std::atomic<long> flooded{0};
      struct Flood {
        lantern::Scheduler* pool;
        std::atomic<long>* done;
        lantern::Label label;
        void operator()() const {
          lantern::label_task(label);
          spin_for(std::chrono::microseconds(2));
          if (done->fetch_add(1) + 1 < 2000) pool->spawn(*this);
        }
      };
      pool.run([&] { pool.spawn(Flood{&pool, &flooded, kFlood}); });
      {
        std::vector<lantern::TaskHandle> last;
        for (int i = 0; i < 20; ++i) {
          lantern::TaskHandle parse = pool.spawn_handle([&] {
            lantern::label_task(kParse);
            spin_for(20us);
          });
          last.push_back(pool.spawn_after({parse}, [&] {
            lantern::label_task(kRender);
            spin_for(30us);
          }));
        }
        for (auto& h : last) h.wait();
      }
      while (flooded.load() < 2000) std::this_thread::yield();
      rounds.fetch_add(1);
      std::this_thread::sleep_for(20ms);  // an idle gap: workers fall asleep and are woken
    }
  });

  // The echo server under load: 2-second runs back to back, every byte compared.
  std::thread load([&] {
    while (!stop.load()) {
      lantern::examples::LoadOptions l;
      l.port = echo.port();
      l.connections = 8;
      l.seconds = 2;
      l.min_bytes = 64;
      l.max_bytes = 4096;
      l.seed = rounds.load() + 1;
      const auto r = lantern::examples::run_load(l);
      if (r.mismatches || r.errors) {
        failures.add("echo: " + std::to_string(r.mismatches) + " bytes differ, " + std::to_string(r.errors) +
                     " connections failed " + r.first_error);
      }
      echoed.fetch_add(r.bytes);
    }
  });

  // /metrics every second.
  std::thread scraper([&] {
    auto next = Clock::now();
    while (!stop.load()) {
      try {
        const auto r = lantern::exporters::testing::http_get(exporter.port(), "/metrics", 2s);
        if (r.status != 200 || r.body.find("lantern_tasks_total") == std::string::npos) {
          failures.add("scrape: status " + std::to_string(r.status));
        }
        scrapes.fetch_add(1);
      } catch (const std::exception& e) {
        failures.add(std::string("scrape: ") + e.what());
      }
      next += 1s;
      while (!stop.load() && Clock::now() < next) std::this_thread::sleep_for(10ms);
    }
  });

  // A viewer attached for 15 s of every 30 s: this program again as a child process (a
  // viewer is another process; its model holds every event it received, which must not
  // count as the app's memory).
  std::thread viewer([&] {
    while (!stop.load()) {
      const std::string self = fs::read_symlink("/proc/self/exe").string();
      const std::string port = std::to_string(stream->port());
      const char* args[] = {self.c_str(), "--viewer-child", port.c_str(), "15", nullptr};
      pid_t child = 0;
      if (::posix_spawn(&child, self.c_str(), nullptr, nullptr, const_cast<char**>(args), environ) != 0) {
        failures.add("viewer: cannot start a viewer process");
      } else {
        int status = 0;
        ::waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failures.add("viewer: the viewer process failed");
      }
      attaches.fetch_add(1);
      const auto detached_until = Clock::now() + 15s;
      while (!stop.load() && Clock::now() < detached_until) std::this_thread::sleep_for(50ms);
    }
  });

  // A flight-recorder dump every minute, read back.
  std::thread dumper([&] {
    auto next = Clock::now() + 60s;
    while (!stop.load()) {
      while (!stop.load() && Clock::now() < next) std::this_thread::sleep_for(50ms);
      if (stop.load()) break;
      next += 60s;
      const std::string path = (dir / ("dump-" + std::to_string(dumps.load()) + ".trace")).string();
      if (std::string e = flight->dump(path); !e.empty()) {
        failures.add("dump: " + e);
        continue;
      }
      auto reader = lantern::trace::TraceReader::open(path);
      std::uint64_t chunks = 0, events = 0;
      if (reader.read_header()) {
        while (reader.next_chunk()) ++chunks, events += reader.chunk().events.size();
      }
      if (!reader.header_ok() || chunks == 0 || reader.has_errors()) {
        failures.add("dump " + path + ": header " + (reader.header_ok() ? "ok" : "bad") + ", " +
                     std::to_string(chunks) + " chunks, " + std::to_string(reader.problems().size()) + " problems");
      }
      std::printf("dump %llu: %s, %llu chunks, %llu events, valid\n", static_cast<unsigned long long>(dumps.load()),
                  path.c_str(), static_cast<unsigned long long>(chunks), static_cast<unsigned long long>(events));
      fs::remove(path);
      dumps.fetch_add(1);
    }
  });

  // The series.
  std::vector<Sample> series;
  const auto start = Clock::now();
  std::printf("lantern_soak: %.0f s, %u workers, sample every %.0f s, warm-up %.0f s\n", o.seconds, o.workers,
              o.sample_seconds, o.warmup_seconds);
  std::printf("%8s %10s %5s %8s %8s %12s %8s %6s %8s\n", "t (s)", "RSS (KiB)", "fds", "threads", "scrapes",
              "echoed (B)", "attaches", "dumps", "rounds");
  for (;;) {
    Sample s;
    s.t = std::chrono::duration<double>(Clock::now() - start).count();
    s.rss_kib = rss_kib();
    s.fds = open_fds();
    s.threads = threads();
    s.scrapes = scrapes.load();
    s.echoed_bytes = echoed.load();
    s.attaches = attaches.load();
    s.dumps = dumps.load();
    series.push_back(s);
    std::printf("%8.0f %10ld %5d %8d %8llu %12llu %8llu %6llu %8llu\n", s.t, s.rss_kib, s.fds, s.threads,
                static_cast<unsigned long long>(s.scrapes), static_cast<unsigned long long>(s.echoed_bytes),
                static_cast<unsigned long long>(s.attaches), static_cast<unsigned long long>(s.dumps),
                static_cast<unsigned long long>(rounds.load()));
    std::fflush(stdout);
    if (s.t >= o.seconds) break;
    const auto next = start + std::chrono::duration<double>(std::min(o.seconds, s.t + o.sample_seconds));
    std::this_thread::sleep_until(std::chrono::time_point_cast<Clock::duration>(next));
  }
  stop.store(true);
  for (std::thread* t : {&workloads, &load, &scraper, &viewer, &dumper}) t->join();

  // Flat after the warm-up: the mean of the last quarter of the samples against the mean
  // of the first quarter (single samples swing with the allocator and the viewer's
  // visits; a leak moves the whole quarter).
  const auto first =
      std::find_if(series.begin(), series.end(), [&](const Sample& s) { return s.t >= o.warmup_seconds; });
  if (first == series.end() || series.end() - first < 4) {
    failures.add("too short to judge: fewer than four samples after the warm-up");
  } else {
    const std::size_t n = static_cast<std::size_t>(series.end() - first), q = std::max<std::size_t>(1, n / 4);
    auto mean = [&](auto field, std::size_t from) {
      double sum = 0;
      for (std::size_t i = from; i < from + q; ++i) sum += static_cast<double>(field(first[static_cast<long>(i)]));
      return sum / static_cast<double>(q);
    };
    const auto rss = [](const Sample& s) { return s.rss_kib; };
    const auto fds = [](const Sample& s) { return s.fds; };
    const auto thr = [](const Sample& s) { return s.threads; };
    const double rss0 = mean(rss, 0), rss1 = mean(rss, n - q), fd0 = mean(fds, 0), fd1 = mean(fds, n - q),
                 th0 = mean(thr, 0), th1 = mean(thr, n - q);
    const double rss_allowed = std::max(16.0 * 1024, rss0 / 10);
    std::printf(
        "flat? means of the first and last quarter after the warm-up (%zu samples each): RSS %.0f -> %.0f KiB "
        "(allowed +%.0f), fds %.1f -> %.1f, threads %.1f -> %.1f\n",
        q, rss0, rss1, rss_allowed, fd0, fd1, th0, th1);
    if (rss1 - rss0 > rss_allowed)
      failures.add("RSS grew by " + std::to_string(static_cast<long>(rss1 - rss0)) + " KiB");
    if (fd1 - fd0 > 2) failures.add("descriptors grew: " + std::to_string(fd0) + " -> " + std::to_string(fd1));
    if (th1 - th0 > 2) failures.add("threads grew: " + std::to_string(th0) + " -> " + std::to_string(th1));
  }
  const Sample& last = series.back();
  if (last.scrapes + 2 < static_cast<std::uint64_t>(o.seconds))
    failures.add("only " + std::to_string(last.scrapes) + " scrapes");
  if (last.echoed_bytes == 0) failures.add("no byte echoed");
  if (o.seconds >= 60 && last.dumps == 0) failures.add("no flight-recorder dump");
  if (o.seconds >= 30 && last.attaches == 0) failures.add("no viewer attach");
  const auto sinks = collector.failures();
  for (const auto& f : sinks) failures.add("sink: " + f);
  const auto st = stream->stats();
  std::printf(
      "totals: %llu scrapes, %llu bytes echoed and checked, %llu viewer attaches (stream: %llu clients, %llu "
      "evicted, %llu events dropped for slow viewers), %llu dumps, %llu workload rounds\n",
      static_cast<unsigned long long>(last.scrapes), static_cast<unsigned long long>(echoed.load()),
      static_cast<unsigned long long>(attaches.load()), static_cast<unsigned long long>(st.clients_total),
      static_cast<unsigned long long>(st.clients_evicted), static_cast<unsigned long long>(st.events_dropped),
      static_cast<unsigned long long>(dumps.load()), static_cast<unsigned long long>(rounds.load()));
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!failures.list.empty()) {
    std::printf("lantern_soak: FAILED (%zu problems)\n", failures.list.size());
    return 1;
  }
  std::printf("lantern_soak: PASSED\n");
  return 0;
}
