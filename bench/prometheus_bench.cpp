// SPDX-License-Identifier: Apache-2.0
// prometheus_bench.cpp - what the Prometheus exporter costs (bench/RESULTS.md,
// "prometheus_bench"). Two questions, each answered in one process:
//
//   1. How long does one scrape take with 64 workers? A Scheduler of 64 workers on the
//      injected topology "4 sockets x 8 cores x 2 threads" runs a workload that fills
//      every counter and histogram, then the bench times many scrapes three ways:
//      SchedulerCollectable::Collect() alone, Collect() plus text serialization, and a
//      full HTTP GET of /metrics on loopback. Target: median <= 2 ms.
//   2. Does scraping slow the scheduler down? fib(32) through join on every hardware
//      thread, repetitions alternating (A B B A ...) between no scraping and an HTTP
//      scrape every 100 ms (10 Hz) from another thread. Target: median throughput
//      changes by at most 1%.
//
// The recorder runs at level off in both (nothing drains its rings here); its counters
// and histograms, which are what the exporter reads, are kept at every level.
#include <prometheus/text_serializer.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "lantern/exporters/metric_table.hpp"
#include "lantern/exporters/prometheus_exporter.hpp"
#include "lantern/exporters/testing/loopback_http.hpp"
#include "lantern/lantern.hpp"
#include "lantern/tools/program_cli.hpp"
#include "workloads.hpp"

namespace {

using bench::Clock;
using namespace std::chrono_literals;
using bench::workloads::fib_lantern;
using lantern::exporters::PrometheusExporter;

struct Config {
  int scrapes = 1000;    // per method in part 1
  int reps = 10;         // A-B-B-A quartets in part 2
  int fibs_per_rep = 8;  // fib(32) runs per repetition (a repetition spans several scrapes)
  bool markdown = false;
};

constexpr const char* kUsage = R"(usage: prometheus_bench [--scrapes N] [--reps N] [--quick] [--markdown]

Measures the Prometheus exporter's cost (see the comment at the top of
bench/prometheus_bench.cpp): the time of one scrape with 64 workers (Collect only,
Collect + serialize, HTTP GET on loopback; target median <= 2 ms), and fib(32)
throughput with and without 10 Hz scraping (target: at most 1% slower).
Exit status: 0 when every answer was right, even if targets were missed; 2 on a wrong
answer or bad usage; 3 on a hang.

options:
  -h, --help    this text
  --version     print the version
  --scrapes N   scrapes timed per method, 1 to 1000000 (default 1000)
  --reps N      A-B-B-A quartets of fib repetitions, 1 to 1000 (default 10; a rep is
                8 x fib(32))
  --quick       smoke test: 50 scrapes, 1 quartet of 1 x fib(32) reps (--scrapes and
                --reps still count when given)
  --markdown    print tables as Markdown (for bench/RESULTS.md)
)";

// Instrumented: a Recorder and the Scheduler it observes, in destruction-safe order.
struct Instrumented {
  Instrumented(std::uint32_t workers, const std::string& topology)
      : recorder(workers, {.level = lantern::trace::Level::off}), pool(options(workers, topology, &recorder)) {}
  static lantern::SchedulerOptions options(std::uint32_t workers, const std::string& topology,
                                           lantern::Observer* observer) {
    lantern::SchedulerOptions o;
    o.workers = workers;
    o.topology = topology;
    o.observer = observer;
    return o;
  }
  lantern::instrumentation::Recorder recorder;
  lantern::Scheduler pool;
};

struct Stats {
  double median, p90, max;
};
Stats stats(const std::vector<double>& values) {
  return {bench::median(values), bench::percentile(values, 90), bench::percentile(values, 100)};
}

// print_row: a Markdown row, or for a terminal a first column of 30 characters and
// right-aligned figures.
void print_row(bool markdown, const std::vector<std::string>& cells) {
  std::string line = markdown ? "|" : "";
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (markdown) {
      line += " " + cells[i] + " |";
    } else {
      const std::size_t width = i == 0 ? 30 : 12;
      const std::string pad(cells[i].size() < width ? width - cells[i].size() : 1, ' ');
      line += i == 0 ? cells[i] + pad : pad + cells[i];
    }
  }
  std::printf("%s\n", line.c_str());
}

std::string fmt(double v, const char* format = "%.3f") {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// ------------------------------------------------------------------ 1. scrape time

void scrape_cost(const Config& config, bench::Watchdog& watchdog) {
  constexpr std::uint32_t kWorkers = 64;
  const std::string topology = "4 sockets x 8 cores x 2 threads";
  Instrumented app(kWorkers, topology);
  // Fill counters, histograms and steals at every distance: fork-join work plus tasks
  // submitted into lanes from outside.
  for (int round = 0; round < 3; ++round) {
    if (app.pool.run([] { return fib_lantern(25); }) != 75025) bench::wrong_answer("fib(25) on 64 workers");
    std::vector<lantern::Future<int>> futures;
    for (int i = 0; i < 2000; ++i) futures.push_back(app.pool.submit([i] { return i; }));
    for (int i = 0; i < 2000; ++i) bench::check_equal("submitted task result", futures[i].get(), i);
    watchdog.beat("scrape cost: filling counters");
  }
  bench::settle(100ms);

  lantern::exporters::PrometheusOptions options;
  options.address = "127.0.0.1:0";
  PrometheusExporter exporter(app.pool, app.recorder, options);
  const auto& collectable = exporter.collectable();
  prometheus::TextSerializer serializer;

  std::vector<double> collect_ms, serialize_ms, http_ms;
  std::size_t series = 0, bytes = 0;
  for (int i = 0; i < config.scrapes; ++i) {
    // Interleave the three methods so machine noise hits all three alike.
    auto t0 = Clock::now();
    auto families = collectable.Collect();
    auto t1 = Clock::now();
    collect_ms.push_back(bench::seconds_between(t0, t1) * 1e3);

    t0 = Clock::now();
    families = collectable.Collect();
    std::ostringstream text;
    serializer.Serialize(text, families);
    const std::string body = text.str();
    t1 = Clock::now();
    serialize_ms.push_back(bench::seconds_between(t0, t1) * 1e3);
    bytes = body.size();

    t0 = Clock::now();
    const auto response = lantern::exporters::testing::http_get(exporter.port(), "/metrics");
    t1 = Clock::now();
    if (response.status != 200) bench::wrong_answer("GET /metrics status " + std::to_string(response.status));
    http_ms.push_back(bench::seconds_between(t0, t1) * 1e3);
    if (i == 0) {
      for (const auto& f : families) series += f.metric.size();
    }
    watchdog.beat("scrape cost: scraping");
  }

  std::printf("\n## One scrape, %u workers (topology \"%s\"), %d scrapes per method\n\n", kWorkers, topology.c_str(),
              config.scrapes);
  std::printf("%zu samples in %zu metric families (without histogram buckets), %zu bytes of text per scrape\n\n",
              series, lantern::exporters::kMetricCount, bytes);
  print_row(config.markdown, {"method", "median ms", "p90 ms", "max ms", "target", "result"});
  if (config.markdown) print_row(true, {"---", "--:", "--:", "--:", "---", "---"});
  auto row = [&](const char* name, const std::vector<double>& ms) {
    const Stats s = stats(ms);
    print_row(config.markdown,
              {name, fmt(s.median), fmt(s.p90), fmt(s.max), "median <= 2 ms", s.median <= 2.0 ? "PASS" : "MISS"});
  };
  row("Collect()", collect_ms);
  row("Collect() + serialize", serialize_ms);
  row("HTTP GET /metrics (loopback)", http_ms);
  std::fflush(stdout);
}

// --------------------------------------------------- 2. throughput while scraped

void throughput_under_scraping(const Config& config, bench::Watchdog& watchdog) {
  const std::uint32_t workers = std::max(1u, std::thread::hardware_concurrency());
  Instrumented app(workers, "");
  lantern::exporters::PrometheusOptions options;
  options.address = "127.0.0.1:0";
  PrometheusExporter exporter(app.pool, app.recorder, options);

  // The scraper thread: while scraping, one GET every 100 ms on a fixed schedule. While
  // not, it blocks on a condition variable: a thread that polled instead would wake the
  // machine up to 1000 times a second in the "not scraped" reps only, which on this VM
  // keeps idle vCPUs from halting and makes the workers' wake-ups faster on that side.
  std::mutex mutex;
  std::condition_variable changed;
  bool scraping = false, stop = false;  // guarded by mutex
  auto set_scraping = [&](bool on) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      scraping = on;
    }
    changed.notify_one();
  };
  std::atomic<int> scrapes{0};
  std::vector<double> scrape_ms;  // the scraper's only; read after join
  std::thread scraper([&] {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return scraping || stop; });
      if (stop) return;
      auto next = Clock::now();
      while (scraping && !stop) {
        lock.unlock();
        const auto t0 = Clock::now();
        try {
          const auto response = lantern::exporters::testing::http_get(exporter.port(), "/metrics");
          if (response.status != 200)
            bench::wrong_answer("scrape during fib: status " + std::to_string(response.status));
        } catch (const std::exception& e) {
          bench::wrong_answer(std::string("scrape during fib: ") + e.what());
        }
        scrape_ms.push_back(bench::seconds_between(t0, Clock::now()) * 1e3);
        scrapes.fetch_add(1);
        next += 100ms;
        lock.lock();
        changed.wait_until(lock, next, [&] { return !scraping || stop; });
      }
    }
  });

  auto one_rep = [&] {
    const auto t0 = Clock::now();
    for (int k = 0; k < config.fibs_per_rep; ++k) {
      bench::check_equal("fib(32)", app.pool.run([] { return fib_lantern(32); }), bench::workloads::kFibValue);
    }
    return bench::seconds_between(t0, Clock::now()) * 1e3 / config.fibs_per_rep;  // ms per fib(32)
  };
  double load_before[1] = {0}, load_after[1] = {0};
  getloadavg(load_before, 1);  // context for the reader: this figure is only as good as the machine is quiet
  one_rep();                   // warm-up
  // Quartets A B B A (A: not scraped, B: scraped): each quartet's change compares reps
  // taken within a second of each other, so slow drifts in machine load (a neighbour's
  // build starting) cancel out; the headline is the median over quartets.
  std::vector<double> quiet_ms, scraped_ms, quartet_change;
  int scrapes_in_reps = 0;
  for (int q = 0; q < config.reps; ++q) {
    double quiet_sum = 0, scraped_sum = 0;
    for (const bool scraped : {false, true, true, false}) {
      set_scraping(scraped);
      bench::settle(20ms);
      const int before = scrapes.load();
      const double ms = one_rep();
      (scraped ? scraped_ms : quiet_ms).push_back(ms);
      (scraped ? scraped_sum : quiet_sum) += ms;
      if (scraped) scrapes_in_reps += scrapes.load() - before;
      set_scraping(false);
      watchdog.beat("throughput: fib(32) repetitions");
    }
    quartet_change.push_back((scraped_sum / quiet_sum - 1.0) * 100.0);
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    stop = true;
  }
  changed.notify_one();
  scraper.join();
  getloadavg(load_after, 1);

  const double change = bench::median(quartet_change);  // + means slower while scraped
  std::printf(
      "\n## fib(32) through join, %u workers, scraped at 10 Hz vs not (%d A-B-B-A quartets, %d x fib(32) per rep)\n\n",
      workers, config.reps, config.fibs_per_rep);
  // A scrape's wall time, all of it CPU at most, taken 10 times a second from the
  // workers' cores: the slowdown to expect if every core is busy.
  const double scrape_median = bench::median(scrape_ms);
  std::printf(
      "%d scrapes during the scraped repetitions, median %.3f ms each: at most %.2f%% of %u cores; "
      "1-minute load average %.2f before, %.2f after\n\n",
      scrapes_in_reps, scrape_median, scrape_median * 10 / 1000 / workers * 100, workers, load_before[0],
      load_after[0]);
  print_row(config.markdown, {"side", "median ms per fib(32)", "min", "max"});
  if (config.markdown) print_row(true, {"---", "--:", "--:", "--:"});
  print_row(config.markdown, {"not scraped", fmt(bench::median(quiet_ms)), fmt(bench::percentile(quiet_ms, 0)),
                              fmt(bench::percentile(quiet_ms, 100))});
  print_row(config.markdown, {"scraped at 10 Hz", fmt(bench::median(scraped_ms)), fmt(bench::percentile(scraped_ms, 0)),
                              fmt(bench::percentile(scraped_ms, 100))});
  std::printf(
      "\nper-quartet change in time per fib(32): median %+.2f%% (quartets from %+.2f%% to %+.2f%%); "
      "best rep %+.2f%%\n",
      change, bench::percentile(quartet_change, 0), bench::percentile(quartet_change, 100),
      (bench::percentile(scraped_ms, 0) / bench::percentile(quiet_ms, 0) - 1.0) * 100.0);
  std::printf("target: at most +1%% (median over quartets): %s\n", change <= 1.0 ? "PASS" : "MISS");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  bool quick = false;
  lantern::tools::Program program("prometheus_bench", kUsage);
  auto& app = program.app();
  CLI::Option* scrapes = lantern::tools::number_option(app, "--scrapes", &config.scrapes, 1, 1000000);
  CLI::Option* reps = lantern::tools::number_option(app, "--reps", &config.reps, 1, 1000);
  app.add_flag("--quick", quick);
  app.add_flag("--markdown", config.markdown);
  if (const auto exit = program.parse(argc, argv)) return *exit;
  if (quick) {
    if (scrapes->count() == 0) config.scrapes = 50;
    if (reps->count() == 0) config.reps = 1;
    config.fibs_per_rep = 1;
  }
  bench::Watchdog watchdog(120s);
  scrape_cost(config, watchdog);
  throughput_under_scraping(config, watchdog);
  return 0;
}
