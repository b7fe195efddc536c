// SPDX-License-Identifier: Apache-2.0
// chrome_export_test.cpp - `lantern-trace export --chrome`, checked field by field on the
// JSON the real binary writes: the shapes Perfetto's importer relies on, exact
// microsecond timestamps exact in units of 1/1024 us (adjacent slices abut exactly once
// parsed as doubles), matched flows bound to real slices of their own category, wake
// arrows from the waker to the woken worker and every wake accounted for, state slices
// that never overlap, properly nested task slices, and counters never below 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "support/run_command.hpp"
#include "support/synthetic_trace.hpp"

namespace lantern::trace {
namespace {

// Timestamps of random traces reach 2^64 ns: parse numbers as long double (64-bit
// mantissa on x86-64) so nanoseconds survive exactly.
using json = nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t, std::uint64_t, long double>;
using testing::run_tool;
using testing::scratch_dir;

using Ns = long double;  // exact integers up to 2^64
Ns to_ns(const json& micros) { return std::roundl(micros.get<long double>() * 1000.0L); }

struct Exported {
  std::string text;
  json doc;
};

Exported export_trace(const std::vector<std::uint8_t>& trace_bytes, const std::string& name, int expected_exit) {
  const auto in = scratch_dir() / (name + ".trace");
  const auto out = scratch_dir() / (name + ".json");
  testing::spit(in, std::string(trace_bytes.begin(), trace_bytes.end()));
  const auto r = run_tool({"export", "--chrome", "--no-progress", in.string(), "-o", out.string()});
  EXPECT_EQ(r.exit_code, expected_exit) << r.err;
  Exported e;
  e.text = testing::slurp(out);
  e.doc = json::parse(e.text);  // throws (fails the test) on invalid JSON
  return e;
}

void check_document(const Exported& e) {
  const json& events = e.doc.at("traceEvents");
  ASSERT_TRUE(events.is_array());
  ASSERT_FALSE(events.empty());

  // Every ts and dur in the text is a plain decimal (no exponent or sign) with at most 10
  // decimals: an exact multiple of 1/1024 us. (A hand scan rather than std::regex, whose
  // GCC 12 headers warn under ASan.)
  std::size_t numbers = 0;
  for (const std::string key : {"\"ts\":", "\"dur\":"}) {
    for (std::size_t at = e.text.find(key); at != std::string::npos; at = e.text.find(key, at + 1)) {
      const std::size_t begin = at + key.size();
      const std::size_t end = e.text.find_first_of(",}", begin);
      const std::string value = e.text.substr(begin, end - begin);
      const std::size_t dot = value.find('.');
      const bool ok = dot == std::string::npos
                          ? !value.empty() && value.find_first_not_of("0123456789") == std::string::npos
                          : dot > 0 && value.size() <= dot + 11 && value.size() > dot + 1 &&
                                value.find_first_not_of("0123456789") == dot &&
                                value.find_first_not_of("0123456789", dot + 1) == std::string::npos;
      ASSERT_TRUE(ok) << key << value;
      const long double units = std::stold(value) * 1024.0L;
      ASSERT_EQ(units, std::roundl(units)) << key << value << " is not a multiple of 1/1024 us";
      ++numbers;
    }
  }
  EXPECT_GT(numbers, 0u);

  std::set<std::uint64_t> named_tids;
  std::map<std::uint64_t, std::vector<std::pair<Ns, Ns>>> slices_by_tid;  // [begin, end) ns
  std::map<std::uint64_t, std::string> track_category;
  std::map<std::uint64_t, std::vector<std::pair<double, double>>> state_doubles;  // in file order
  std::map<std::tuple<std::string, std::string, std::uint64_t>, int> flow_balance;
  std::vector<json> flows;
  for (const json& ev : events) {
    const std::string ph = ev.at("ph");
    if (ph == "M") {
      if (ev.at("name") == "thread_name") named_tids.insert(ev.at("tid").get<std::uint64_t>());
      continue;
    }
    ASSERT_TRUE(ev.at("ts").is_number());
    ASSERT_GE(ev.at("ts").get<double>(), 0.0);
    ASSERT_EQ(ev.at("pid"), 1);
    if (ph == "X") {
      for (const char* field : {"name", "ph", "ts", "dur", "pid", "tid"}) ASSERT_TRUE(ev.contains(field)) << ev;
      ASSERT_TRUE(ev.at("name").is_string());
      ASSERT_TRUE(ev.at("dur").is_number());
      ASSERT_GE(ev.at("dur").get<double>(), 0.0);
      const auto tid = ev.at("tid").get<std::uint64_t>();
      // The end as one sum (exact: both are multiples of 1/1024 us), rounded once.
      slices_by_tid[tid].push_back(
          {to_ns(ev.at("ts")),
           std::roundl((ev.at("ts").get<long double>() + ev.at("dur").get<long double>()) * 1000.0L)});
      if (ev.at("cat") == "state") {
        state_doubles[tid].emplace_back(static_cast<double>(ev.at("ts").get<long double>()),
                                        static_cast<double>(ev.at("dur").get<long double>()));
      }
      track_category[tid] = ev.at("cat");
    } else if (ph == "s" || ph == "f") {
      flow_balance[{ev.at("cat"), ev.at("name"), ev.at("id").get<std::uint64_t>()}] += ph == "s" ? 1 : -1;
      flows.push_back(ev);
      EXPECT_EQ(ev.at("cat"), "state")
          << "flows bind to state slices: DevTools binds a flow only to slices of its category";
    } else if (ph == "C") {
      for (const auto& [key, value] : ev.at("args").items()) ASSERT_GE(value.get<double>(), 0.0) << ev;
    }
  }
  for (const auto& [key, balance] : flow_balance) ASSERT_EQ(balance, 0) << "flow " << std::get<2>(key);
  for (const auto& [tid, slices] : slices_by_tid) EXPECT_TRUE(named_tids.count(tid)) << "tid " << tid;

  for (auto& [tid, slices] : slices_by_tid) {
    auto sorted = slices;
    if (track_category[tid] == "state") {
      std::sort(sorted.begin(), sorted.end());  // zero-length slices first at a shared start
      for (std::size_t i = 1; i < sorted.size(); ++i)
        ASSERT_LE(sorted[i - 1].second, sorted[i].first) << "state slices overlap on tid " << tid;
      // A worker's state slices abut: parsed as doubles, ts + dur IS the next ts.
      const auto& doubles = state_doubles[tid];
      for (std::size_t i = 1; i < doubles.size(); ++i)
        ASSERT_EQ(doubles[i - 1].first + doubles[i - 1].second, doubles[i].first) << "tid " << tid << " slice " << i;
    } else {
      // Task slices nest: each either lies inside the enclosing open one or starts after it.
      std::sort(sorted.begin(), sorted.end(),
                [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
      std::vector<Ns> open_ends;
      for (const auto& [b, end] : sorted) {
        while (!open_ends.empty() && open_ends.back() <= b) open_ends.pop_back();
        if (!open_ends.empty()) {
          ASSERT_LE(end, open_ends.back()) << "task slices cross on tid " << tid;
        }
        open_ends.push_back(end);
      }
    }
  }
  // Each flow end is bound: "s" and "f" with bp=e sit inside a slice of their track,
  // "f" without bp has a slice starting at or after it.
  for (const json& f : flows) {
    const auto& slices = slices_by_tid[f.at("tid").get<std::uint64_t>()];
    const Ns t = to_ns(f.at("ts"));
    const bool enclosing = f.at("ph") == "s" || f.value("bp", "") == "e";
    const bool bound = std::any_of(slices.begin(), slices.end(),
                                   [&](auto s) { return enclosing ? (s.first <= t && t <= s.second) : s.first >= t; });
    EXPECT_TRUE(bound) << f;
  }
}

TEST(ChromeExport, ForkJoinTraceIsWellFormedFieldByField) {
  const auto events = testing::fork_join_events({.workers = 4, .events = 60'000, .seed = 8});
  const Exported e = export_trace(testing::write_trace_bytes(testing::test_header(4), events), "forkjoin", 0);
  check_document(e);
  std::map<std::string, int> phases;
  for (const json& ev : e.doc.at("traceEvents")) ++phases[ev.at("ph")];
  EXPECT_GT(phases["X"], 1000);
  EXPECT_GT(phases["s"], 10);
  EXPECT_GT(phases["C"], 10);
  EXPECT_EQ(e.doc.at("otherData").at("hostname"), "testhost");
}

TEST(ChromeExport, TimestampsAreRebasedAndConvertedWithTheCalibration) {
  TraceHeader h = testing::test_header(1);
  h.clock.ns_per_tick = 0.5;
  const std::vector<Event> events = {
      {1'000'000, 0, EventId::state, {}, 1 << 8 | 0, 0},  // idle -> active
      {1'000'002, 0, EventId::task_begin, {}, 0x1000, 0},
      {1'002'002, 0, EventId::task_end, {}, 0x1000, 0},   // 2000 ticks = 1 us
      {1'002'003, 0, EventId::state, {}, 0 << 8 | 1, 2},  // active -> idle
  };
  const Exported e = export_trace(testing::write_trace_bytes(h, events), "calibrated", 0);
  check_document(e);
  // 1 ns = 1.024 units of 1/1024 us, rounded: the task starts at 1 unit and lasts 1024
  // (1000 ns); the active state starts at 0 and ends at 1001.5 ns (1026 units).
  EXPECT_NE(e.text.find("\"name\":\"task\",\"cat\":\"task\",\"ph\":\"X\",\"ts\":0.0009765625,\"dur\":1,"),
            std::string::npos)
      << e.text;
  EXPECT_NE(e.text.find("\"name\":\"active\",\"cat\":\"state\",\"ph\":\"X\",\"ts\":0,\"dur\":1.001953125,"),
            std::string::npos)
      << e.text;
}

TEST(ChromeExport, TasksAreNamedByTheirLabelsAndIoOperationsAreAsyncSlices) {
  TraceHeader h = testing::test_header(2);
  h.clock.ns_per_tick = 1.0;
  LabelTable names;
  names.define(1, "parse");
  names.define(2, "render \"html\"");  // needs escaping
  const std::vector<Event> events = {
      {1000, 0, EventId::state, {}, 1 << 8 | 0, 1},
      {1010, 0, EventId::task_begin, {}, 0xA000, 1},
      {1011, 0, EventId::task_label, {}, 0xA000, 1},
      {1020, 0, EventId::io_submit, {}, 77, 0 | 7 << 8},  // read fd 7
      {1030, 0, EventId::task_begin, {}, 0xB000, 5},      // nested, labelled twice: the last wins
      {1031, 0, EventId::task_label, {}, 0xB000, 1},
      {1032, 0, EventId::task_label, {}, 0xB000, 2},
      {1040, 0, EventId::task_end, {}, 0xB000, 0},
      {1050, 0, EventId::task_end, {}, 0xA000, 0},
      {1060, 0, EventId::task_begin, {}, 0xC000, 0},  // never labelled
      {1070, 0, EventId::task_end, {}, 0xC000, 0},
      {1080, 0, EventId::io_submit, {}, 78, 4 | static_cast<std::uint64_t>(-1) << 8},  // a timeout, no fd
      {1000, 1, EventId::state, {}, 1 << 8 | 0, 1},
      {1100, 1, EventId::io_complete, {}, 77, 4096},  // reaped by the other worker
      {1110, 1, EventId::task_begin, {}, 0xD000, 0},
      {1111, 1, EventId::task_label, {}, 0xD000, 9},  // a label the trace never named
      {1120, 1, EventId::task_end, {}, 0xD000, 0},
  };
  const Exported e = export_trace(testing::write_trace_bytes(h, events, {}, &names), "labels", 0);
  check_document(e);
  std::map<std::string, int> task_names;
  std::vector<json> io;
  for (const json& ev : e.doc.at("traceEvents")) {
    if (ev.at("ph") == "X" && ev.at("cat") == "task") {
      ++task_names[ev.at("name").get<std::string>()];
      if (ev.at("name") != "task") {
        EXPECT_EQ(ev.at("args").at("label"), ev.at("name")) << ev;
      }
    }
    if (ev.value("cat", "") == "io") io.push_back(ev);
  }
  EXPECT_EQ(task_names,
            (std::map<std::string, int>{{"parse", 1}, {"render \"html\"", 1}, {"task", 1}, {"label 9", 1}}));
  ASSERT_EQ(io.size(), 4u);  // two operations, a begin and an end each
  // Operation ids are addresses and get reused: each slice has its own id; group by it.
  std::map<std::uint64_t, std::vector<json>> by_id;
  for (const json& ev : io) by_id[ev.at("id").get<std::uint64_t>()].push_back(ev);
  std::map<std::uint64_t, std::vector<json>> by_op;
  for (auto& [id, pair] : by_id) by_op[pair.at(0).at("name") == "read fd 7" ? 77 : 78] = pair;
  ASSERT_EQ(by_op[77].size(), 2u);
  EXPECT_EQ(by_op[77][0].at("ph"), "b");
  EXPECT_EQ(by_op[77][0].at("name"), "read fd 7");
  EXPECT_EQ(to_ns(by_op[77][0].at("ts")), 20);  // rebased: the first event is at 1000
  EXPECT_EQ(by_op[77][1].at("ph"), "e");
  EXPECT_EQ(to_ns(by_op[77][1].at("ts")), 100);
  EXPECT_EQ(by_op[77][1].at("args").at("result"), 4096);
  ASSERT_EQ(by_op[78].size(), 2u);
  EXPECT_EQ(by_op[78][0].at("name"), "timeout");
  EXPECT_TRUE(by_op[78][1].at("args").contains("note"));  // still in flight at the end
  // Each IO slice sits under the worker that submitted it (its tasks track, tid 2N+2), so
  // Perfetto draws it there rather than on a process track.
  for (const json& ev : io) EXPECT_EQ(ev.at("tid"), 2u) << ev;
}

// A wake's arrow runs from the waker (at the wake call: wake time - latency) to the woken
// worker; wakes with no waker in the pool have no arrow and are counted, not lost.
TEST(ChromeExport, WakeArrowsRunFromTheWakerAndEveryWakeIsAccountedFor) {
  TraceHeader h = testing::test_header(2);
  h.clock.ns_per_tick = 1.0;
  auto wake = [](std::uint64_t t, std::uint32_t wakee, WakePayload p) { return make_event(t, wakee, p); };
  const std::vector<Event> events = {
      make_event(1000, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::found_work}),
      make_event(1000, 1, StatePayload{WorkerState::idle, WorkerState::sleeping, StateReason::fell_asleep}),
      wake(1500, 1, WakePayload{0, WakeCause::work, 300}),  // worker 0 woke worker 1 at 1200
      make_event(1500, 1, StatePayload{WorkerState::sleeping, WorkerState::idle, StateReason::woken}),
      make_event(1600, 1, StatePayload{WorkerState::idle, WorkerState::sleeping, StateReason::fell_asleep}),
      wake(1700, 1, WakePayload{kOutsideWaker, WakeCause::work, 50}),  // an outside thread
      make_event(1700, 1, StatePayload{WorkerState::sleeping, WorkerState::idle, StateReason::woken}),
      make_event(1800, 1, StatePayload{WorkerState::idle, WorkerState::sleeping, StateReason::fell_asleep}),
      wake(1900, 1, WakePayload{kOutsideWaker, WakeCause::io, 0}),  // an IO completion
      make_event(1900, 1, StatePayload{WorkerState::sleeping, WorkerState::idle, StateReason::woken}),
      make_event(2000, 0, StatePayload{WorkerState::active, WorkerState::idle, StateReason::out_of_work}),
  };
  const Exported e = export_trace(testing::write_trace_bytes(h, events), "wakes", 0);
  check_document(e);
  std::vector<json> starts, ends, instants;
  for (const json& ev : e.doc.at("traceEvents")) {
    if (ev.at("ph") == "s") starts.push_back(ev);
    if (ev.at("ph") == "f") ends.push_back(ev);
    if (ev.at("ph") == "i" && ev.at("name") == "wake") instants.push_back(ev);
  }
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(starts[0].at("tid"), 1) << "from the waker, worker 0's states track (tid 1)";
  EXPECT_EQ(ends[0].at("tid"), 3) << "to the woken worker, worker 1's states track (tid 3)";
  EXPECT_EQ(to_ns(starts[0].at("ts")), 200) << "at the wake call: 1200 ticks, 200 ns after the first event";
  EXPECT_EQ(to_ns(ends[0].at("ts")), 500);
  EXPECT_EQ(instants.size(), 3u) << "every wake is exported";
  const json& other = e.doc.at("otherData");
  EXPECT_EQ(other.at("wakes"), 3);
  EXPECT_EQ(other.at("wake_arrows"), 1);
  EXPECT_EQ(other.at("wakes_without_arrow").at("waker_outside_the_pool"), 1);
  EXPECT_EQ(other.at("wakes_without_arrow").at("io_completion_no_waker"), 1);
}

// A worker's states end at its `stopping` state event (its thread ended there): the export
// draws nothing after it, where the summary counts nothing either. Per worker and state,
// the exported slices add up to the ticks `lantern-trace stats --json` counts. (The export
// drew a stopped worker idle from its stop to the end of the trace, which another worker's
// later events set: 5 us of idle here that stats does not count.)
TEST(ChromeExport, AStoppedWorkersStatesEndAtItsStop) {
  TraceHeader h = testing::test_header(2);
  h.clock = ClockCalibration{false, 1.0, 0, 0};  // 1 tick = 1 ns
  const std::vector<Event> events = {
      make_event(1000, 0, StatePayload{WorkerState::idle, WorkerState::idle, StateReason::started}),
      make_event(2000, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::found_work}),
      make_event(5000, 0, StatePayload{WorkerState::active, WorkerState::idle, StateReason::stopping}),
      make_event(1000, 1, StatePayload{WorkerState::idle, WorkerState::idle, StateReason::started}),
      make_event(1500, 1, StatePayload{WorkerState::idle, WorkerState::active, StateReason::found_work}),
      make_event(6000, 1, StatePayload{WorkerState::active, WorkerState::idle, StateReason::out_of_work}),
      make_event(7000, 1, StatePayload{WorkerState::idle, WorkerState::sleeping, StateReason::fell_asleep}),
      make_event(10000, 1, StatePayload{WorkerState::sleeping, WorkerState::idle, StateReason::stopping}),
  };
  const auto bytes = testing::write_trace_bytes(h, events);
  const Exported e = export_trace(bytes, "stopped", 0);
  check_document(e);
  std::map<std::uint64_t, std::map<std::string, Ns>> exported;  // tid -> state -> ns
  std::map<std::uint64_t, Ns> last_end;
  for (const json& ev : e.doc.at("traceEvents")) {
    if (ev.at("ph") != "X" || ev.at("cat") != "state") continue;
    const auto tid = ev.at("tid").get<std::uint64_t>();
    const Ns begin = to_ns(ev.at("ts"));
    const Ns end = std::roundl((ev.at("ts").get<long double>() + ev.at("dur").get<long double>()) * 1000.0L);
    exported[tid][ev.at("name").get<std::string>()] += end - begin;
    last_end[tid] = std::max(last_end[tid], end);
  }
  EXPECT_EQ(last_end[1], 4000) << "worker 0's states end at its stop (5000 ticks, 4000 ns after the first event)";
  EXPECT_EQ(last_end[3], 9000) << "worker 1's at its own";
  EXPECT_EQ(exported[1], (std::map<std::string, Ns>{{"idle", 1000}, {"active", 3000}}));

  const auto in = scratch_dir() / "stopped.trace";
  const auto r = run_tool({"stats", "--json", "--no-progress", in.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json stats = json::parse(r.out);
  for (std::uint64_t w = 0; w < 2; ++w) {
    SCOPED_TRACE("worker " + std::to_string(w));
    for (const auto& [state, ticks] : stats.at("workers")[w].at("state_ticks").items()) {
      const Ns drawn = exported[2 * w + 1].count(state) ? exported[2 * w + 1][state] : 0;
      EXPECT_EQ(drawn, ticks.get<Ns>()) << state << ": the export draws what stats counts";
    }
  }
}

TEST(ChromeExport, RandomAndTruncatedTracesStillExportValidJson) {
  // Random events: unmatched ends, huge worker ids, tick steps back, lanes up to 2^64-1.
  const auto random = testing::write_trace_bytes(testing::test_header(4), testing::random_events(5000, 3));
  check_document(export_trace(random, "random", 0));
  auto cut = testing::write_trace_bytes(testing::test_header(4), testing::fork_join_events({.events = 20'000}));
  cut.resize(cut.size() - 100);
  check_document(export_trace(cut, "truncated", 1));
}

// counter_times: each counter's sample times, in file order; and every counter sample's.
std::map<std::string, std::vector<Ns>> counter_times(const json& doc, std::vector<Ns>* all = nullptr) {
  std::map<std::string, std::vector<Ns>> out;
  for (const json& ev : doc.at("traceEvents")) {
    if (ev.at("ph") != "C") continue;
    out[ev.at("name").get<std::string>()].push_back(to_ns(ev.at("ts")));
    if (all) all->push_back(to_ns(ev.at("ts")));
  }
  return out;
}

// The pool's not-ready tasks are sampled by each worker; a file holds a worker's batch
// after another's that covers later times. The counter is still written in time order
// (so are all counters together), and export --help names it.
TEST(ChromeExport, TheNotReadyCounterIsInTimeOrderAndDocumented) {
  TraceHeader h = testing::test_header(2);
  h.clock = ClockCalibration{false, 1.0, 0, 0};
  std::vector<Event> events = {
      make_event(1000, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::started}),
      make_event(1000, 1, StatePayload{WorkerState::idle, WorkerState::active, StateReason::started}),
  };
  // Worker 1's samples first in the file (later times), then worker 0's (earlier and later).
  for (std::uint64_t t : {5000, 6000, 7000}) events.push_back(make_event(t, 1, NotReadyPayload{t / 100}));
  for (std::uint64_t t : {2000, 3000, 6500}) events.push_back(make_event(t, 0, NotReadyPayload{t / 100}));
  events.push_back(make_event(2500, 0, LanePopPayload{0, 400}));
  events.push_back(make_event(5500, 1, LanePopPayload{1, 300}));
  const Exported e = export_trace(testing::write_trace_bytes(h, events), "not_ready_order", 0);
  std::vector<Ns> all;
  const auto counters = counter_times(e.doc, &all);
  ASSERT_TRUE(counters.count("not-ready tasks"));
  // Samples at 2000, 3000, 5000, 6000, 6500 and 7000 ticks; the first event is at 1000.
  EXPECT_EQ(counters.at("not-ready tasks"), (std::vector<Ns>{1000, 2000, 4000, 5000, 5500, 6000}));
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end())) << "counter samples go back in time in file order";
  const auto help = run_tool({"export", "--help"});
  EXPECT_NE(help.out.find("not-ready tasks"), std::string::npos) << help.out;
}

// export --from/--to: only the window, slices and IO cut at its edges, counters starting
// with their value at --from; times stay the whole trace's.
TEST(ChromeExport, AWindowExportsOnlyWhatOverlapsIt) {
  TraceHeader h = testing::test_header(1);
  h.clock = ClockCalibration{false, 1.0, 0, 0};  // 1 tick = 1 ns; the first event at 0 us
  const std::vector<Event> events = {
      make_event(0, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::started}),
      make_event(1'000, 0, TaskBeginPayload{0xA, TaskSource::own_lane}),
      make_event(2'000, 0, TaskEndPayload{0xA, false}),  // before the window
      make_event(3'000, 0, TaskBeginPayload{0xB, TaskSource::own_lane}),
      make_event(3'500, 0, IoSubmitPayload{9, IoKind::read, 4}),
      make_event(4'000, 0, LanePopPayload{0, 3'000}),    // lane 0 held it from 1,000 to 4,000
      make_event(6'000, 0, TaskEndPayload{0xB, false}),  // crosses the window's start
      make_event(6'500, 0, IoCompletePayload{9, 10}),
      make_event(7'000, 0, TaskBeginPayload{0xC, TaskSource::own_deque}),
      make_event(8'000, 0, TaskEndPayload{0xC, false}),  // inside
      make_event(20'000, 0, TaskBeginPayload{0xD, TaskSource::own_deque}),
      make_event(21'000, 0, TaskEndPayload{0xD, false}),  // after
      make_event(30'000, 0, StatePayload{WorkerState::active, WorkerState::idle, StateReason::stopping}),
  };
  const auto in = scratch_dir() / "window.trace";
  const auto out = scratch_dir() / "window.json";
  testing::spit(in, [&] {
    const auto b = testing::write_trace_bytes(h, events);
    return std::string(b.begin(), b.end());
  }());
  auto r = run_tool(
      {"export", "--chrome", "--no-progress", "--from", "3.8us", "--to", "10us", in.string(), "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(testing::slurp(out));
  std::map<std::string, std::pair<Ns, Ns>> tasks;
  Ns first_state = 1e30L, last_state = 0;
  bool clipped_io = false;
  for (const json& ev : doc.at("traceEvents")) {
    if (ev.at("ph") == "X") {
      const Ns b = to_ns(ev.at("ts")), d = to_ns(ev.at("dur"));
      EXPECT_GE(b, 3800) << ev;
      EXPECT_LE(b + d, 10000) << ev;
      if (ev.at("cat") == "task") tasks[ev.at("args").at("task").get<std::string>()] = {b, b + d};
      if (ev.at("cat") == "state") first_state = std::min(first_state, b), last_state = std::max(last_state, b + d);
    }
    if (ev.value("cat", "") == "io") {
      const Ns t = to_ns(ev.at("ts"));
      EXPECT_GE(t, 3800);
      if (ev.at("ph") == "e") {
        EXPECT_EQ(t, 6500);
      }
      if (ev.at("ph") == "b") clipped_io = t == 3800;
    }
  }
  EXPECT_EQ(tasks, (std::map<std::string, std::pair<Ns, Ns>>{{"0xb", {3800, 6000}}, {"0xc", {7000, 8000}}}));
  EXPECT_EQ(first_state, 3800);
  EXPECT_EQ(last_state, 10000);
  EXPECT_TRUE(clipped_io) << "the IO submitted before the window starts at its edge";
  // Lane 0 held one task from 1 us to 4 us: the counter opens at 3.8 us with depth 1.
  const json* lane = nullptr;
  for (const json& ev : doc.at("traceEvents"))
    if (ev.at("ph") == "C" && ev.at("name") == "lane 0" && !lane) lane = &ev;
  ASSERT_NE(lane, nullptr);
  EXPECT_EQ(to_ns(lane->at("ts")), 3800);
  EXPECT_EQ(lane->at("args").at("depth"), 1);

  // Bad windows are usage errors; so is a --from after the end.
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--from", "soon"},
                                              {"--from", "5us", "--to", "1us"},
                                              {"--from", "1s"},
                                              {"--around-warning", "0"},
                                              {"--around-warning", "1", "--from", "1us"}}) {
    std::vector<std::string> args = {"export", "--chrome", "--no-progress"};
    args.insert(args.end(), bad.begin(), bad.end());
    args.insert(args.end(), {in.string(), "-o", (scratch_dir() / "bad_window.json").string()});
    r = run_tool(args);
    EXPECT_EQ(r.exit_code, 2) << bad.at(0) << " " << bad.at(1);
    EXPECT_NE(r.err.find("lantern-trace export: "), std::string::npos) << r.err;
  }
}

// --around-warning N: the window around the N-th health warning (a long task here).
TEST(ChromeExport, AroundAWarningExportsItsNeighbourhood) {
  TraceHeader h = testing::test_header(1);
  h.clock = ClockCalibration{false, 1.0, 0, 0};
  const std::vector<Event> events = {
      make_event(0, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::started}),
      make_event(1'000'000, 0, TaskBeginPayload{0xA, TaskSource::own_deque}),
      make_event(1'100'000, 0, TaskEndPayload{0xA, false}),
      make_event(100'000'000, 0, TaskBeginPayload{0xB, TaskSource::own_deque}),
      make_event(125'000'000, 0, TaskEndPayload{0xB, false}),  // 25 ms: a long task
      make_event(300'000'000, 0, StatePayload{WorkerState::active, WorkerState::idle, StateReason::stopping}),
  };
  const auto in = scratch_dir() / "warning.trace";
  const auto out = scratch_dir() / "warning.json";
  const auto bytes = testing::write_trace_bytes(h, events);
  testing::spit(in, std::string(bytes.begin(), bytes.end()));
  auto r = run_tool({"export", "--chrome", "--no-progress", "--around-warning", "1", "--margin", "5ms", in.string(),
                     "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("warning 1 of 1: long task on worker 0 at 100.00 ms"), std::string::npos) << r.out;
  const json doc = json::parse(testing::slurp(out));
  std::set<std::string> tasks;
  for (const json& ev : doc.at("traceEvents")) {
    if (ev.at("ph") != "X") continue;
    EXPECT_GE(to_ns(ev.at("ts")), 95'000'000) << ev;
    EXPECT_LE(to_ns(ev.at("ts")) + to_ns(ev.at("dur")), 130'000'000) << ev;
    if (ev.at("cat") == "task") tasks.insert(ev.at("args").at("task").get<std::string>());
  }
  EXPECT_EQ(tasks, std::set<std::string>{"0xb"});
  r = run_tool({"export", "--chrome", "--no-progress", "--around-warning", "2", in.string(), "-o", out.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("there is no warning 2"), std::string::npos) << r.err;
}

// A file that is not a trace at all: an error, and no JSON written (not even "wrote").
TEST(ChromeExport, ANonTraceWritesNoOutput) {
  const auto in = scratch_dir() / "garbage.trace";
  const auto out = scratch_dir() / "garbage.json";
  testing::spit(in, std::string(4096, 'x'));
  std::filesystem::remove(out);
  const auto r = run_tool({"export", "--chrome", "--no-progress", in.string(), "-o", out.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out)) << "a JSON file was written for a non-trace";
  EXPECT_EQ(r.out.find("wrote"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("nothing could be read from it"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lantern::trace
