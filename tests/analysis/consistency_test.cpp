// SPDX-License-Identifier: Apache-2.0
// consistency_test.cpp - every view of a run tells the same story.
//
// Real runs (a demo-like mix of fork-join, outside submissions, labelled tasks and a
// dependency chain; the echo server over loopback under both sleep strategies) are
// recorded to a file and a flight recorder; the file is then also cut short and damaged.
// For every quantity two views show, these agree EXACTLY:
//   - lantern-trace stats --json (the real binary),
//   - the viewer's Model (fed the file as the viewer feeds it),
//   - lantern-trace export --chrome (the real binary; its JSON parsed),
//   - for a live run with no drops, the Recorder's exact counters and histograms.
// Quantities: events by type, tasks per worker and per label, steals by distance, wakes
// (and which have arrows), every percentile, warnings, each worker's state shares (stats
// and lantern-trace diff) and where its states end (stats and the Chrome export).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "echo_load.hpp"
#include "echo_server.hpp"
#include "lantern/analysis/analysis.hpp"
#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/lantern.hpp"
#include "lantern/trace/trace_reader.hpp"
#include "lantern/viewer/model.hpp"
#include "support/fib.hpp"
#include "support/pool_state.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using json = nlohmann::json;
using lantern::analysis::Percentiles;
using lantern::analysis::Summary;
using lantern::instrumentation::Collector;
using lantern::instrumentation::FlightRecorder;
using lantern::instrumentation::Recorder;
using lantern::instrumentation::TraceFileSink;
using lantern::trace::LatencyHistogram;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("lantern-consistency-" + std::to_string(getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

int run_command(const std::string& cmd, std::string* out) {
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[65536];
  std::size_t n;
  out->clear();
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  const int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// What the Recorder counted, exactly, for a live run.
struct Exact {
  std::vector<lantern::instrumentation::WorkerCountersSnapshot> workers;
  LatencyHistogram ready_wait, task_duration, wake_latency;
};

// record runs `workload` on a pool with a Recorder (level full, rings big enough that
// nothing is dropped), writing `path` and, if asked, a flight-recorder dump.
template <class Workload>
Exact record(const std::string& path, lantern::SleepStrategy strategy, Workload workload,
             const std::string& flight = {}) {
  constexpr std::uint32_t kWorkers = 3;
  Recorder recorder(kWorkers, {.level = lantern::trace::Level::full, .ring_capacity = 1 << 18, .deque_push_sample = 1});
  Exact exact;
  {
    lantern::Scheduler pool({.workers = kWorkers, .sleep_strategy = strategy, .observer = &recorder});
    lantern::testing::Watchdog dog("consistency run", 120s, [&] { return pool.describe_state(); });
    const auto header = lantern::instrumentation::make_trace_header(pool, recorder, "consistency_test");
    auto sink = std::make_shared<TraceFileSink>(path, header);
    EXPECT_TRUE(sink->ok()) << sink->error();
    auto flight_recorder = std::make_shared<FlightRecorder>(header);
    Collector collector(recorder);
    collector.attach(sink);
    if (!flight.empty()) collector.attach(flight_recorder);
    collector.start();
    workload(pool);
    pool.shutdown();
    collector.stop();
    EXPECT_TRUE(sink->ok()) << sink->error();
    if (!flight.empty()) {
      EXPECT_EQ(flight_recorder->dump(flight), "");
    }
    for (std::uint32_t w = 0; w < kWorkers; ++w) {
      exact.workers.push_back(recorder.snapshot(w));
      exact.ready_wait.merge(recorder.counters(w).ready_wait.snapshot());
      exact.task_duration.merge(recorder.counters(w).task_duration.snapshot());
      exact.wake_latency.merge(recorder.counters(w).wake_latency.snapshot());
    }
  }
  return exact;
}

void demo_workload(lantern::Scheduler& pool) {
  static const lantern::Label parse = lantern::label("parse"), render = lantern::label("render");
  EXPECT_EQ(pool.run([] { return lantern::testing::fib(18); }), 2584u);
  std::vector<lantern::Future<void>> handles;
  for (int i = 0; i < 120; ++i) {
    handles.push_back(pool.submit([i] {
      lantern::label_task(i % 2 ? parse : render);
      volatile int x = 0;
      for (int k = 0; k < 2000; ++k) x = x + k;
    }));
    // Let the workers fall asleep, so the next submissions wake them (the run must have
    // wakes). Waited for, not slept for: 2 ms was not always enough for every worker to
    // finish its tasks and its spin before sleeping under TSan or on a loaded machine.
    if (i % 40 == 39) lantern::testing::wait_all_asleep(pool);
  }
  for (auto& h : handles) h.get();
  lantern::Signal go;
  auto gated = pool.spawn_after({go}, [] {});
  go.set();
  gated.wait();
}

auto echo_workload() {
  return [](lantern::Scheduler& pool) {
    lantern::examples::EchoServer server(pool, {});
    server.start();
    lantern::examples::LoadOptions load;
    load.port = server.port();
    load.connections = 4;
    load.seconds = 0.3;
    const auto result = lantern::examples::run_load(load);
    EXPECT_GT(result.requests, 0u);
    EXPECT_EQ(result.mismatches, 0u);
    server.stop();
  };
}

// The viewer's model, fed the file as the viewer's file session feeds it.
std::unique_ptr<lantern::viewer::Model> load_model(const std::string& path) {
  auto model = std::make_unique<lantern::viewer::Model>();
  lantern::trace::TraceReader reader = lantern::trace::TraceReader::open(path);
  reader.read_header();
  model->apply_header(reader.header(), reader.header_ok());
  while (reader.next_chunk()) model->apply(reader.chunk());
  for (const auto& p : reader.problems()) model->add_trace_problem(p);
  model->finish();
  return model;
}

void expect_percentiles(const json& j, const Percentiles& p, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(j.at("count").get<std::uint64_t>(), p.count);
  EXPECT_EQ(j.at("p50_ns").get<double>(), p.p50_ns);
  EXPECT_EQ(j.at("p90_ns").get<double>(), p.p90_ns);
  EXPECT_EQ(j.at("p99_ns").get<double>(), p.p99_ns);
}

void expect_exact_percentiles(const LatencyHistogram& h, const Percentiles& p, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(h.count(), p.count);
  EXPECT_EQ(h.quantile_ns(0.50), p.p50_ns);
  EXPECT_EQ(h.quantile_ns(0.90), p.p90_ns);
  EXPECT_EQ(h.quantile_ns(0.99), p.p99_ns);
}

// check_views: stats (binary), the viewer's model and the Chrome export (binary) agree on
// `path`; returns the model's summary.
Summary check_views(const std::string& path, const fs::path& dir) {
  auto model = load_model(path);
  const Summary s = model->analysis().summary();
  std::string out;
  run_command(std::string(LANTERN_TRACE_BIN) + " stats --json --no-progress '" + path + "' 2>/dev/null", &out);
  const json stats = json::parse(out);
  // Events by type.
  for (int t = 0; t < lantern::kEventCount; ++t) {
    const std::string name(lantern::kEventInfo[t].name);
    EXPECT_EQ(stats.at("events_by_type").at(name).get<std::uint64_t>(), s.events_by_type[static_cast<std::size_t>(t)])
        << name;
    EXPECT_EQ(model->events_of(static_cast<lantern::EventId>(t)), s.events_by_type[static_cast<std::size_t>(t)])
        << name;
  }
  // Tasks, steals, helps, wakes per worker.
  EXPECT_EQ(stats.at("workers").size(), s.workers.size());
  for (std::size_t w = 0; w < s.workers.size() && w < stats.at("workers").size(); ++w) {
    const json& jw = stats.at("workers")[w];
    EXPECT_EQ(jw.at("tasks").get<std::uint64_t>(), s.workers[w].tasks) << "worker " << w;
    EXPECT_EQ(jw.at("steals").get<std::uint64_t>(), s.workers[w].steals) << "worker " << w;
    EXPECT_EQ(jw.at("wakes").get<std::uint64_t>(), s.workers[w].wakes) << "worker " << w;
    EXPECT_EQ(jw.at("wakes").get<std::uint64_t>(), model->wakes(static_cast<std::uint32_t>(w)).size());
  }
  // Tasks per label.
  for (const auto& [label, n] : s.tasks_by_label) {
    const std::string name = label == 0 ? "(no label)" : model->label_name(label);
    EXPECT_EQ(stats.at("tasks_by_label").at(name).get<std::uint64_t>(), n) << name;
  }
  // Steals by distance.
  for (int d = 0; d < lantern::kStealDistanceCount; ++d) {
    EXPECT_EQ(stats.at("steals_by_distance").at(std::string(lantern::kStealDistanceNames[d])).get<std::uint64_t>(),
              s.steals_by_distance[static_cast<std::size_t>(d)]);
    EXPECT_EQ(model->steals_by_distance()[static_cast<std::size_t>(d)],
              s.steals_by_distance[static_cast<std::size_t>(d)]);
  }
  // Wakes and every percentile; the viewer's histograms are the same numbers.
  EXPECT_EQ(stats.at("wakes").get<std::uint64_t>(), s.wakes);
  EXPECT_EQ(stats.at("io_wakes_left_out_of_wake_latency").get<std::uint64_t>(), s.io_wakes);
  EXPECT_EQ(s.wake_latency.count + s.io_wakes, s.wakes) << "every wake is timed or an IO wake";
  expect_percentiles(stats.at("ready_wait"), s.ready_wait, "ready wait");
  expect_percentiles(stats.at("task_duration"), s.task_duration, "task duration");
  expect_percentiles(stats.at("wake_latency"), s.wake_latency, "wake latency");
  expect_percentiles(stats.at("io_latency"), s.io_latency, "io latency");
  EXPECT_EQ(model->wake_latency().quantile_ns(0.5), s.wake_latency.p50_ns);
  EXPECT_EQ(model->wake_latency().count(), s.wake_latency.count);
  EXPECT_EQ(model->ready_wait().quantile_ns(0.99), s.ready_wait.p99_ns);
  // Warnings: one count for the badge, the summary line, the Health panel and stats.
  EXPECT_EQ(stats.at("warnings").get<std::uint64_t>(), s.warnings);
  EXPECT_EQ(model->warning_count(), s.warnings);

  // The Chrome export.
  const std::string chrome = (dir / "export.json").string();
  run_command(
      std::string(LANTERN_TRACE_BIN) + " export --chrome --no-progress '" + path + "' -o '" + chrome + "' 2>/dev/null",
      &out);
  std::ifstream in(chrome);
  const json doc = json::parse(in);
  std::map<std::uint64_t, std::uint64_t> task_slices_by_tid;
  std::map<std::string, std::uint64_t> tasks_by_name;
  std::map<std::uint64_t, std::vector<std::pair<double, double>>> state_slices_by_tid;
  std::uint64_t wake_instants = 0, wake_flow_starts = 0;
  std::map<std::uint64_t, std::uint64_t> flow_start_tid;
  for (const json& e : doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "X" && e.at("cat") == "task") {
      ++task_slices_by_tid[e.at("tid").get<std::uint64_t>()];
      ++tasks_by_name[e.at("name").get<std::string>()];
    }
    if (ph == "X" && e.at("cat") == "state")
      state_slices_by_tid[e.at("tid").get<std::uint64_t>()].emplace_back(e.at("ts").get<double>(),
                                                                         e.at("dur").get<double>());
    if (ph == "i" && e.at("name") == "wake") ++wake_instants;
    if (ph == "s" || ph == "f") {
      EXPECT_EQ(e.at("cat"), "state") << "a flow binds to state slices: its category must be theirs";
      if (ph == "s" && e.at("name") == "wake") ++wake_flow_starts;
    }
  }
  for (std::size_t w = 0; w < s.workers.size(); ++w)
    EXPECT_EQ(task_slices_by_tid[2 * w + 2], s.workers[w].tasks) << "chrome task slices of worker " << w;
  for (const auto& [label, n] : s.tasks_by_label)
    EXPECT_EQ(tasks_by_name[label == 0 ? "task" : model->label_name(label)], n);
  EXPECT_EQ(wake_instants, s.wakes) << "every wake is exported";
  const json& other = doc.at("otherData");
  EXPECT_EQ(other.at("wakes").get<std::uint64_t>(), s.wakes);
  const json& left_out = other.at("wakes_without_arrow");
  EXPECT_EQ(other.at("wake_arrows").get<std::uint64_t>(), s.wake_arrows) << "the analysis' count of wakes by a worker";
  EXPECT_EQ(other.at("wake_arrows_drawn").get<std::uint64_t>() +
                left_out.at("waker_outside_the_pool").get<std::uint64_t>() +
                left_out.at("io_completion_no_waker").get<std::uint64_t>() +
                left_out.at("an_end_has_no_state_slice").get<std::uint64_t>(),
            s.wakes)
      << "the export accounts for every wake it drew no arrow for";
  EXPECT_EQ(left_out.at("io_completion_no_waker").get<std::uint64_t>(), s.io_wakes);
  EXPECT_EQ(wake_flow_starts, other.at("wake_arrows_drawn").get<std::uint64_t>());
  // No percentile lies outside the samples it summarises (the bucket midpoint is clamped
  // to them), in any figure stats prints, per label too.
  auto within = [](const json& p, const std::string& what) {
    SCOPED_TRACE(what);
    if (p.at("count").get<std::uint64_t>() == 0) return;
    const double max = p.at("max_ns").get<double>();
    for (const char* q : {"p50_ns", "p90_ns", "p99_ns"}) EXPECT_LE(p.at(q).get<double>(), max) << q;
    EXPECT_LE(p.at("p50_ns").get<double>(), p.at("p90_ns").get<double>());
    EXPECT_LE(p.at("p90_ns").get<double>(), p.at("p99_ns").get<double>());
  };
  for (const char* k : {"ready_wait", "task_duration", "wake_latency", "io_latency"}) within(stats.at(k), k);
  for (const auto& [label, p] : stats.at("duration_by_label").items()) within(p, "label " + label);
  EXPECT_EQ(
      other.at("steals").get<std::uint64_t>(), s.workers.empty() ? 0 : [&] {
        std::uint64_t n = 0;
        for (const auto& w : s.workers) n += w.steals;
        return n;
      }());
  // Adjacent state slices: parsed as doubles, one ends exactly where the next begins.
  for (const auto& [tid, slices] : state_slices_by_tid) {
    for (std::size_t i = 0; i + 1 < slices.size(); ++i) {
      EXPECT_LE(slices[i].first + slices[i].second, slices[i + 1].first) << "tid " << tid << " slice " << i;
    }
  }
  // A worker's last state slice ends where its time does (Analysis::span_end: its stop,
  // else the trace's end), the span stats counts: not on to the end of the trace.
  const lantern::analysis::Analysis& a = model->analysis();
  for (std::uint32_t w = 0; w < a.worker_count(); ++w) {
    const auto& slices = state_slices_by_tid[2ull * w + 1];
    if (slices.empty()) continue;
    double end_us = 0;
    for (const auto& [ts, dur] : slices) end_us = std::max(end_us, ts + dur);
    const double span_end_us = a.ticks_to_ns(static_cast<double>(a.span_end(w) - a.first_tick())) / 1e3;
    EXPECT_NEAR(end_us, span_end_us, 0.002) << "worker " << w << "'s states in the Chrome export end at its span's end";
  }
  // lantern-trace diff prints the shares stats prints (state_shares: of the whole span,
  // unknown time its own row), for every worker: diff of a run with itself. (A file cut
  // before its first whole chunk holds no events: diff refuses it, saying so.)
  if (s.events == 0) return s;
  run_command(std::string(LANTERN_TRACE_BIN) + " diff --json --no-progress '" + path + "' '" + path + "' 2>/dev/null",
              &out);
  const json diff = json::parse(out);
  std::map<std::pair<std::uint32_t, std::string>, double> diff_share;
  for (const json& row : diff.at("state_shares"))
    diff_share[{row.at("worker").get<std::uint32_t>(), row.at("state").get<std::string>()}] = row.at("a").get<double>();
  for (std::size_t w = 0; w < stats.at("workers").size(); ++w) {
    const json& ticks = stats.at("workers")[w].at("state_ticks");
    double span = 0;
    for (const auto& [name, v] : ticks.items()) span += v.get<double>();
    for (const auto& [name, v] : ticks.items()) {
      const double share = span > 0 ? v.get<double>() / span : 0;
      const std::pair<std::uint32_t, std::string> key{static_cast<std::uint32_t>(w), name};
      if (name == "unknown" && share == 0) {
        EXPECT_EQ(diff_share.count(key), 0u) << "worker " << w << ": an unknown row without unknown time";
        continue;
      }
      EXPECT_EQ(diff_share.count(key), 1u) << "worker " << w << " " << name;
      EXPECT_NEAR(diff_share[key], share, 1e-6) << "worker " << w << " " << name << ": diff and stats";
    }
  }
  return s;
}

// The trace agrees with the Recorder's exact counters (nothing was dropped).
void check_exact(const Exact& exact, const Summary& s) {
  ASSERT_EQ(s.dropped_events, 0u) << "the rings were sized so that nothing is dropped";
  std::uint64_t recorded = 0;
  ASSERT_EQ(exact.workers.size(), s.workers.size());
  for (std::size_t w = 0; w < exact.workers.size(); ++w) {
    const auto& c = exact.workers[w];
    SCOPED_TRACE("worker " + std::to_string(w));
    EXPECT_EQ(c.events_dropped, 0u);
    recorded += c.events_recorded;
    EXPECT_EQ(c.tasks, s.workers[w].tasks);
    EXPECT_EQ(c.helps, s.workers[w].helps);
    std::uint64_t steals = 0;
    for (auto n : c.steals) steals += n;
    EXPECT_EQ(steals, s.workers[w].steals);
    // Time per state, to the tick: the Recorder counts each worker from its `started` to
    // its `stopping` state event, the span the analysis gives the same worker (read here
    // after the pool stopped: time after the run is not counted by either).
    for (int k = 0; k < lantern::kWorkerStateCount; ++k) {
      EXPECT_EQ(c.state_ticks[static_cast<std::size_t>(k)], s.workers[w].state_ticks[static_cast<std::size_t>(k)])
          << lantern::kWorkerStateNames[k] << " ticks";
    }
    EXPECT_EQ(s.workers[w].state_ticks[lantern::kWorkerStateCount], 0u) << "a whole trace has no unknown time";
  }
  EXPECT_EQ(recorded, s.events);
  expect_exact_percentiles(exact.ready_wait, s.ready_wait, "ready wait vs the recorder");
  expect_exact_percentiles(exact.task_duration, s.task_duration, "task duration vs the recorder");
  expect_exact_percentiles(exact.wake_latency, s.wake_latency, "wake latency vs the recorder");
  std::uint64_t io_wakes = 0, lane_pops = 0, releases = 0, io_submitted = 0;
  std::array<std::uint64_t, lantern::kStealDistanceCount> by_distance{};
  for (const auto& c : exact.workers) {
    io_wakes += c.io_wakes;
    lane_pops += c.lane_pops;
    releases += c.releases;
    io_submitted += c.io_submitted;
    for (int d = 0; d < lantern::kStealDistanceCount; ++d)
      by_distance[static_cast<std::size_t>(d)] += c.steals[static_cast<std::size_t>(d)];
  }
  EXPECT_EQ(io_wakes, s.io_wakes);
  EXPECT_EQ(lane_pops, s.lane_pops);
  EXPECT_EQ(releases, s.releases);
  EXPECT_EQ(io_submitted, s.io_submitted);
  for (int d = 0; d < lantern::kStealDistanceCount; ++d)
    EXPECT_EQ(by_distance[static_cast<std::size_t>(d)], s.steals_by_distance[static_cast<std::size_t>(d)]);
}

TEST(Consistency, DemoRunFlightDumpTruncatedAndCorruptFiles) {
  TempDir dir;
  const std::string path = (dir.path / "demo.trace").string();
  const std::string flight = (dir.path / "flight.trace").string();
  const Exact exact = record(path, lantern::SleepStrategy::condvar, demo_workload, flight);
  const Summary s = check_views(path, dir.path);
  EXPECT_GT(s.tasks, 100u);
  EXPECT_GT(s.wakes, 0u);
  EXPECT_EQ(s.tasks_by_label.size(), 3u) << "parse, render and unlabelled";
  check_exact(exact, s);
  {
    SCOPED_TRACE("flight-recorder dump");
    check_views(flight, dir.path);
  }
  // Cut short, and damaged in the middle: the views still agree on what could be read.
  const auto size = fs::file_size(path);
  const std::string cut = (dir.path / "cut.trace").string();
  fs::copy_file(path, cut);
  fs::resize_file(cut, size * 6 / 10);
  {
    SCOPED_TRACE("truncated");
    check_views(cut, dir.path);
  }
  const std::string bad = (dir.path / "bad.trace").string();
  fs::copy_file(path, bad);
  {
    std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
    for (std::uint64_t at = size / 3; at < size / 3 + 64; ++at) {
      f.seekp(static_cast<std::streamoff>(at));
      f.put(static_cast<char>(0x5A));
    }
  }
  {
    SCOPED_TRACE("corrupted");
    check_views(bad, dir.path);
  }
}

#ifdef LANTERN_DEMO_BIN
// The real demo (its quick run: fork-join, bursts, lanes, labelled pipelines and the echo
// server on the io_uring strategy, so IO wakes too), recorded by the demo itself.
TEST(Consistency, TheDemosOwnTrace) {
  TempDir dir;
  const std::string path = (dir.path / "demo.trace").string();
  std::string out;
  ASSERT_EQ(
      run_command(std::string(LANTERN_DEMO_BIN) + " --quick --no-view --no-metrics --trace '" + path + "' 2>&1", &out),
      0)
      << out;
  const Summary s = check_views(path, dir.path);
  EXPECT_GT(s.tasks, 1000u);
  EXPECT_GT(s.io_submitted, 0u);

  // The demo's own table (the Recorder's exact counters) and lantern-trace stats of its
  // trace show the same numbers for the same run: time share per state, as printed.
  std::string stats;
  ASSERT_EQ(run_command(std::string(LANTERN_TRACE_BIN) + " stats --no-progress '" + path + "' 2>/dev/null", &stats), 0);
  auto rows = [&s](const std::string& text, const std::string& after, bool demo) {
    // worker id -> its four shares as printed ("21.6%" ...), from the table after `after`.
    std::map<std::string, std::vector<std::string>> shares;
    std::istringstream in(text.substr(text.find(after)));
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::vector<std::string> f;
      for (std::string x; fields >> x;) f.push_back(x);
      if (f.empty() || f[0].find_first_not_of("0123456789") != std::string::npos) continue;
      std::vector<std::string> pct;
      for (const std::string& x : f)
        if (x.size() > 1 && x.back() == '%') pct.push_back(x);
      if (pct.size() < 4) continue;
      pct.resize(4);  // active, idle, sleepy, sleeping
      shares.emplace(f[0], pct);
      if (demo && shares.size() == s.workers.size()) break;
    }
    return shares;
  };
  const auto demo_rows = rows(out, "per-worker figures", true);
  const auto stats_rows = rows(stats, "time share by state", false);
  ASSERT_EQ(demo_rows.size(), s.workers.size()) << out;
  if (s.dropped_events == 0) {  // with events lost the trace may miss state changes the counters saw
    EXPECT_EQ(demo_rows, stats_rows) << "demo:\n" << out << "\nstats:\n" << stats;
  }

  // The demo records at level tasks, which has no lane pops: stats says so instead of a
  // bare "no samples", and the trace header says which level it was.
  EXPECT_EQ(s.level, lantern::trace::Level::tasks);
  EXPECT_NE(stats.find("ready wait (lane_pop): no samples: not recorded at level tasks: lane_pop events are recorded "
                       "at level full"),
            std::string::npos)
      << stats;
  EXPECT_NE(out.find("ready wait (lanes)     "), std::string::npos) << out;
  EXPECT_EQ(out.find("ready wait (lanes)     no samples"), std::string::npos)
      << "the counters kept it at every level:\n"
      << out;

  // Percentiles, as printed: the demo's table (the Recorder's histograms) and stats print
  // one figure as one text (analysis::format_percentiles: "740 ns", not "0.7 us").
  auto figure = [](const std::string& text, const std::string& prefix) {
    // The rest of the line that starts with `prefix` (and, for the demo, its padding).
    const std::size_t at = text.find("\n" + prefix);
    if (at == std::string::npos) return std::string("(no line '" + prefix + "')");
    const std::size_t from = text.find_first_not_of(' ', at + 1 + prefix.size());
    return text.substr(from, text.find('\n', from) - from);
  };
  const std::string demo_duration = figure(out, "task duration "),
                    stats_duration = figure(stats, "task duration (inclusive of nested tasks): ");
  EXPECT_NE(demo_duration.find(" samples, p50 "), std::string::npos) << out;
  const std::string demo_wake = figure(out, "wake latency "),
                    stats_wake =
                        figure(stats, "wake latency (IO wakes left out: " + std::to_string(s.io_wakes) + "): ");
  if (s.dropped_events == 0) {  // with events lost the trace holds fewer samples than the counters
    EXPECT_EQ(demo_duration, stats_duration) << "demo:\n" << out << "\nstats:\n" << stats;
    EXPECT_EQ(demo_wake, stats_wake) << "demo:\n" << out << "\nstats:\n" << stats;
  }
}
#endif

TEST(Consistency, EchoServerUnderBothSleepStrategies) {
  for (auto strategy : {lantern::SleepStrategy::condvar, lantern::SleepStrategy::io_uring}) {
    SCOPED_TRACE(lantern::strategy_name(strategy));
    TempDir dir;
    const std::string path = (dir.path / "echo.trace").string();
    const Exact exact = record(path, strategy, echo_workload());
    const Summary s = check_views(path, dir.path);
    EXPECT_GT(s.io_submitted, 0u);
    check_exact(exact, s);
  }
}

}  // namespace
