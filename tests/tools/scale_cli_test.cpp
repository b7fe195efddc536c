// SPDX-License-Identifier: Apache-2.0
// scale_cli_test.cpp - `lantern-trace scale` and diff's work/span/parallelism, on the
// real binary: a real recorded run (a labelled fan-out next to a labelled chain of
// spawn_after tasks), a version-4 trace (no task graph) and bad options.
//   - The text and the JSON print the same numbers, and they are the numbers
//     lantern::analysis::scalability() returns for the same file (the one analysis; the
//     tool adds none of its own): the JSON's figures equal them exactly, the text's are
//     them formatted as the text formats them.
//   - A version-4 trace prints "not computed: REASON" for the graph's figures, never a
//     number, and null in JSON.
//   - Bad --workers, --topology, --what-if and --top values are usage errors (exit 2,
//     on stderr, prefixed "lantern-trace scale:"), with nothing on stdout.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lantern/analysis/analysis.hpp"
#include "lantern/analysis/scalability.hpp"
#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/lantern.hpp"
#include "lantern/trace/crc32c.hpp"
#include "lantern/trace/trace_reader.hpp"
#include "lantern/trace/varint.hpp"
#include "support/run_command.hpp"
#include "support/synthetic_trace.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;
using lantern::analysis::format_duration_ns;
using lantern::analysis::Scalability;
using lantern::trace::testing::CommandResult;
using lantern::trace::testing::run_tool;
using lantern::trace::testing::scratch_dir;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void spin_for(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// record_run: 2 workers at level graph: a TaskGroup of 8 "fan" tasks (200 us each) and,
// beside it, a chain of 6 "chain" tasks (300 us each), each spawned after the one before.
std::string record_run() {
  const std::string path = (scratch_dir() / "run.trace").string();
  constexpr std::uint32_t kWorkers = 2;
  lantern::instrumentation::Recorder recorder(kWorkers,
                                              {.level = lantern::trace::Level::graph, .ring_capacity = 1 << 18});
  lantern::Scheduler pool({.workers = kWorkers, .observer = &recorder});
  lantern::testing::Watchdog dog("scale_cli_test run", 60s, [&] { return pool.describe_state(); });
  const auto header = lantern::instrumentation::make_trace_header(pool, recorder, "scale_cli_test");
  auto sink = std::make_shared<lantern::instrumentation::TraceFileSink>(path, header);
  EXPECT_TRUE(sink->ok()) << sink->error();
  lantern::instrumentation::Collector collector(recorder);
  collector.attach(sink);
  collector.start();
  static const lantern::Label fan = lantern::label("fan"), chain = lantern::label("chain");
  pool.run([&] {
    lantern::TaskGroup group(pool);
    for (int i = 0; i < 8; ++i) {
      group.spawn([] {
        lantern::label_task(fan);
        spin_for(200us);
      });
    }
    auto link = [] {
      lantern::label_task(chain);
      spin_for(300us);
    };
    lantern::TaskHandle last = pool.spawn_handle(link);
    for (int i = 1; i < 6; ++i) last = pool.spawn_after({last}, link);
    group.wait();
    last.wait();
  });
  pool.shutdown();
  collector.stop();
  EXPECT_TRUE(sink->ok()) << sink->error();
  return path;
}

// analyse: the file folded by the one analysis, as lantern-trace reads it.
void analyse(const std::string& path, lantern::analysis::Analysis& a) {
  auto reader = lantern::trace::TraceReader::open(path);
  reader.read_header();
  a.set_header(reader.header(), reader.header_ok());
  while (reader.next_chunk()) {
    a.add(reader.chunk());
    a.advance_health();
  }
  a.finish();
}

// version4_trace: a synthetic fork-join run written as version 5, its header's version
// field then set to 4 (the events use no id past 14, so they read the same): a trace
// from before the task graph.
std::string version4_trace() {
  using namespace lantern::trace;
  namespace synth = lantern::trace::testing;
  const auto events = synth::fork_join_events({.workers = 2, .events = 4'000, .seed = 7, .labels = 2});
  std::vector<std::uint8_t> bytes = synth::write_trace_bytes(synth::test_header(2), events);
  store_le<std::uint16_t>(bytes.data() + 8, 4);
  const std::uint32_t len = load_le<std::uint32_t>(bytes.data() + 12);
  store_le<std::uint32_t>(bytes.data() + len - 4, crc32c({bytes.data(), len - 4}));
  const std::string path = (scratch_dir() / "version4.trace").string();
  synth::spit(path, std::string(bytes.begin(), bytes.end()));
  return path;
}

// line_of: the text's line that starts with `start` ("" when none).
std::string line_of(const std::string& text, const std::string& start) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    const std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    if (line.rfind(start, 0) == 0) return line;
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return "";
}

std::string two_decimals(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// json_equals: a JSON number against an optional figure (null for nullopt).
void expect_figure(const json& j, const std::optional<double>& v, const char* what) {
  if (!v) {
    EXPECT_TRUE(j.is_null()) << what << ": " << j;
    return;
  }
  ASSERT_TRUE(j.is_number()) << what << ": " << j;
  EXPECT_EQ(j.get<double>(), *v) << what;
}

class ScaleCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { run_ = new std::string(record_run()); }
  static void TearDownTestSuite() { delete run_; }
  static inline std::string* run_ = nullptr;
};

TEST_F(ScaleCli, TextAndJsonPrintWhatScalabilityReturns) {
  const std::vector<std::string> options = {"--workers", "1,2,4,64", "--what-if", "chain=50", "--top", "3"};
  std::vector<std::string> json_args = {"scale", "--json"}, text_args = {"scale"};
  json_args.insert(json_args.end(), options.begin(), options.end());
  text_args.insert(text_args.end(), options.begin(), options.end());
  json_args.push_back(*run_);
  text_args.push_back(*run_);
  const CommandResult as_json = run_tool(json_args), as_text = run_tool(text_args);
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  ASSERT_EQ(as_text.exit_code, 0) << as_text.err;
  EXPECT_EQ(as_json.err, "");
  EXPECT_EQ(as_text.err, "");

  // The same figures, computed here from the same file with the same options.
  lantern::analysis::Analysis a;
  analyse(*run_, a);
  lantern::analysis::ScaleOptions options_here;
  options_here.workers = {1, 2, 4, 64};
  options_here.what_if = {{"chain", 50}};
  options_here.top_labels = 3;
  const Scalability s = lantern::analysis::scalability(a, options_here);
  if (!s.has_graph) GTEST_SKIP() << "this build's recorder reports no task-graph events";
  ASSERT_TRUE(s.work_ns && s.span_ns && s.parallelism) << "a level-graph run has a task graph";

  const json j = json::parse(as_json.out);
  expect_figure(j["work_ns"], s.work_ns, "work");
  expect_figure(j["span_ns"], s.span_ns, "span");
  expect_figure(j["parallelism"], s.parallelism, "parallelism");
  expect_figure(j["burdened_span_ns"], s.burdened_span_ns, "burdened span");
  expect_figure(j["burdened_parallelism"], s.burdened_parallelism, "burdened parallelism");
  expect_figure(j["measured_ns"], s.measured_ns, "measured");
  EXPECT_EQ(j["measured_workers"].get<std::uint32_t>(), s.measured_workers);
  ASSERT_EQ(j["curve"].size(), s.curve.size());
  ASSERT_EQ(j["critical_path"].size(), s.critical_path.size());
  ASSERT_EQ(j["labels"].size(), s.labels.size());

  // The text: each figure as the text formats it, on its line.
  const std::string& t = as_text.out;
  EXPECT_TRUE(has(line_of(t, "work T1 "), format_duration_ns(*s.work_ns))) << t;
  EXPECT_TRUE(has(line_of(t, "span "), format_duration_ns(*s.span_ns))) << t;
  EXPECT_TRUE(has(line_of(t, "parallelism "), two_decimals(*s.parallelism))) << t;
  if (s.burdened_span_ns) {
    EXPECT_TRUE(has(line_of(t, "burdened span "), format_duration_ns(*s.burdened_span_ns))) << t;
  }
  if (s.measured_ns) {
    EXPECT_TRUE(has(line_of(t, "measured time "), format_duration_ns(*s.measured_ns))) << t;
  }
  EXPECT_TRUE(has(line_of(t, "workers "), std::to_string(s.measured_workers))) << t;
  for (std::size_t i = 0; i < s.curve.size(); ++i) {
    const auto& p = s.curve[i];
    EXPECT_EQ(j["curve"][i]["workers"].get<std::uint32_t>(), p.workers);
    expect_figure(j["curve"][i]["simulated_ns"], p.simulated_ns, "simulated");
    expect_figure(j["curve"][i]["lower_ns"], p.lower_ns, "lower bound");
    expect_figure(j["curve"][i]["upper_ns"], p.upper_ns, "upper bound");
    char start[16];
    std::snprintf(start, sizeof start, "%8u ", p.workers);
    const std::string row = line_of(t, start);
    ASSERT_FALSE(row.empty()) << "no curve row for " << p.workers << " workers in:\n" << t;
    EXPECT_TRUE(has(row, format_duration_ns(p.lower_ns))) << row;
    EXPECT_TRUE(has(row, format_duration_ns(p.upper_ns))) << row;
    EXPECT_TRUE(has(row, p.simulated_ns ? format_duration_ns(*p.simulated_ns) : "not computed")) << row;
  }
  EXPECT_TRUE(has(t, "critical path: " + std::to_string(s.critical_path.size()) + " stretches, span " +
                         format_duration_ns(*s.span_ns)))
      << t;
  for (int k = 0; k < lantern::analysis::kEdgeKindCount; ++k) {
    const std::string name(lantern::analysis::kEdgeKindNames[k]);
    const std::string by_edge = t.substr(t.find("span by the edge"));  // "  spawn" is a cost's line too
    EXPECT_TRUE(
        has(line_of(by_edge, "  " + name + " "), format_duration_ns(s.span_by_edge[static_cast<std::size_t>(k)])))
        << name << "\n"
        << t;
    EXPECT_EQ(j["span_by_edge"][name].get<double>(), s.span_by_edge[static_cast<std::size_t>(k)]) << name;
  }
  bool chain_seen = false;
  for (std::size_t i = 0; i < s.labels.size(); ++i) {
    const auto& l = s.labels[i];
    EXPECT_EQ(j["labels"][i]["name"].get<std::string>(), l.name);
    EXPECT_EQ(j["labels"][i]["span_ns"].get<double>(), l.span_ns);
    if (l.name != "chain") continue;
    chain_seen = true;
    const std::string row = line_of(t, "chain ");
    EXPECT_TRUE(has(row, format_duration_ns(l.work_ns))) << row;
    EXPECT_TRUE(has(row, format_duration_ns(l.span_ns))) << row;
    ASSERT_TRUE(l.what_if) << "--what-if chain=50 gives the chain a what-if";
    for (std::size_t k = 0; k < l.what_if_workers.size(); ++k) {
      EXPECT_TRUE(has(row, "P=" + std::to_string(l.what_if_workers[k]) + " " + format_duration_ns(l.baseline_ns[k]) +
                               " -> " + format_duration_ns(l.what_if_ns[k])))
          << row;
    }
  }
  EXPECT_TRUE(chain_seen) << "the chain's label is ranked";
  // Every sentence on what was not computed, and every note, in both.
  for (const std::string& why : s.not_computed) EXPECT_TRUE(has(t, why)) << why;
  for (const std::string& note : s.notes) EXPECT_TRUE(has(t, note)) << note;
  EXPECT_EQ(j["not_computed"].size(), s.not_computed.size());
}

TEST_F(ScaleCli, DiffPrintsEachRunsWorkSpanAndParallelism) {
  lantern::analysis::Analysis a;
  analyse(*run_, a);
  lantern::analysis::ScaleOptions one;
  one.workers = {1};
  one.top_labels = 0;
  const Scalability s = lantern::analysis::scalability(a, one);
  if (!s.has_graph) GTEST_SKIP() << "this build's recorder reports no task-graph events";
  ASSERT_TRUE(s.work_ns && s.span_ns && s.parallelism);
  const std::string v4 = version4_trace();

  CommandResult r = run_tool({"diff", *run_, v4});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "   work " + format_duration_ns(*s.work_ns) + ", span " + format_duration_ns(*s.span_ns) +
                             ", parallelism " + two_decimals(*s.parallelism) + "\n"))
      << r.out;
  // B's reason once, as the analysis words it (the figures it names, then why).
  const std::string b_line = line_of(r.out, "   work, span, parallelism, ");
  EXPECT_TRUE(has(b_line, " are not computed: ") && !has(b_line, "not computed: work")) << r.out;
  // The task-graph rows: A's figures, '-' for B's, nothing marked (B has none to compare).
  const std::string work_row = line_of(r.out, "  work ");
  EXPECT_TRUE(has(work_row, format_duration_ns(*s.work_ns))) << r.out;
  EXPECT_TRUE(work_row.ends_with("          -       -")) << work_row;

  r = run_tool({"diff", "--json", *run_, v4});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  expect_figure(j["a"]["work_ns"], s.work_ns, "A's work");
  expect_figure(j["a"]["span_ns"], s.span_ns, "A's span");
  expect_figure(j["a"]["parallelism"], s.parallelism, "A's parallelism");
  EXPECT_FALSE(j["a"].contains("graph_not_computed"));
  EXPECT_TRUE(j["b"]["work_ns"].is_null());
  EXPECT_TRUE(j["b"]["span_ns"].is_null());
  EXPECT_TRUE(j["b"]["parallelism"].is_null());
  EXPECT_FALSE(j["b"]["graph_not_computed"].get<std::string>().empty());
  ASSERT_EQ(j["graph"].size(), 3u);
  for (const json& row : j["graph"]) {
    EXPECT_TRUE(row["b"].is_null()) << row;
    EXPECT_FALSE(row["notable"].get<bool>()) << row;
  }
  expect_figure(j["graph"][0]["a"], s.work_ns, "A's work in the graph rows");

  // The same trace twice: no graph row is notable (compare_counts_test marks a change).
  r = run_tool({"diff", "--json", *run_, *run_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json same = json::parse(r.out);
  ASSERT_EQ(same["graph"].size(), 3u);
  for (const json& row : same["graph"]) EXPECT_FALSE(row["notable"].get<bool>()) << row;
}

TEST_F(ScaleCli, AVersion4TraceSaysWhatIsNotComputed) {
  const std::string v4 = version4_trace();
  CommandResult r = run_tool({"scale", v4});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* figure : {"work T1 ", "span ", "parallelism ", "burdened span ", "burdened parallelism "}) {
    // "work T1    not computed: REASON": no number between the figure's name and it.
    const std::string line = line_of(r.out, figure);
    ASSERT_GE(line.size(), std::string(figure).size()) << figure << " in:\n" << r.out;
    const std::string value = line.substr(std::string(figure).size());
    EXPECT_EQ(value.substr(value.find_first_not_of(' ')).rfind("not computed: ", 0), 0u) << line;
  }
  EXPECT_TRUE(has(r.out, "critical path: not computed: ")) << r.out;

  r = run_tool({"scale", "--json", v4});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  for (const char* key : {"work_ns", "span_ns", "parallelism", "burdened_span_ns", "burdened_parallelism"})
    EXPECT_TRUE(j[key].is_null()) << key << ": " << j[key];
  EXPECT_FALSE(j["has_graph"].get<bool>());
  ASSERT_FALSE(j["not_computed"].empty());
  // Nothing simulated and no span: no machine and no span by edge kind (not zeros).
  EXPECT_TRUE(j["topology"].is_null()) << j["topology"];
  EXPECT_TRUE(j["span_by_edge"].is_null()) << j["span_by_edge"];
}

// --from/--to: the figures of the tasks that began in the window, as scalability()
// gives them for that window, and the window in the title.
TEST_F(ScaleCli, AWindowAnalysesTheTasksThatBeganInIt) {
  lantern::analysis::Analysis a;
  analyse(*run_, a);
  const double length_ns = a.ticks_to_ns(static_cast<double>(a.last_tick() - a.first_tick()));
  const double to_ns = std::round(length_ns / 2);
  char to_text[64];
  std::snprintf(to_text, sizeof to_text, "%.0fns", to_ns);
  // The tick lantern-trace takes for it (cli.hpp, tick_after_first).
  const auto to_tick = static_cast<lantern::analysis::Tick>(static_cast<double>(a.first_tick()) + a.ns_to_ticks(to_ns));
  lantern::analysis::ScaleOptions one;
  one.workers = {1, 2};
  one.top_labels = 0;
  const Scalability s = lantern::analysis::scalability(a, one, a.first_tick(), to_tick);
  const Scalability whole = lantern::analysis::scalability(a, one);
  ASSERT_LT(s.tasks, whole.tasks) << "half the run should hold fewer tasks than the whole";

  CommandResult r = run_tool({"scale", "--json", "--workers", "1,2", "--top", "0", "--to", to_text, *run_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["tasks"].get<std::uint64_t>(), s.tasks);
  expect_figure(j["work_ns"], s.work_ns, "the window's work");
  expect_figure(j["span_ns"], s.span_ns, "the window's span");

  r = run_tool({"scale", "--workers", "1,2", "--from", "0", "--to", to_text, *run_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, ": scalability of the recorded run from 0 ns to " + format_duration_ns(to_ns) + " (of "))
      << r.out;
}

TEST_F(ScaleCli, BadValuesAreUsageErrors) {
  const struct {
    std::vector<std::string> args;
    const char* message;
  } bad[] = {
      {{"--workers", "0"}, "--workers takes a list of numbers from 1 to 1024, not '0'"},
      {{"--workers", "1,x"}, "--workers takes a list of numbers from 1 to 1024, not '1,x'"},
      {{"--workers", "2048"}, "--workers takes a list of numbers from 1 to 1024, not '2048'"},
      {{"--workers", ","}, "--workers takes a list of numbers"},
      {{"--topology", "3 bananas"},
       "--topology takes a spec such as \"2 sockets x 32 cores x 2 threads\", not '3 bananas'"},
      {{"--topology", "0 cores"}, "--topology takes a spec"},
      {{"--topology", "nonsense"},
       "--topology takes a spec such as \"2 sockets x 32 cores x 2 threads\", not 'nonsense': expected a number"},
      {{"--what-if", "chain"}, "--what-if takes LABEL=PCT (0 < PCT <= 100), not 'chain'"},
      {{"--what-if", "chain=0"}, "not 'chain=0'"},
      {{"--what-if", "chain=101"}, "not 'chain=101'"},
      {{"--what-if", "chain=x"}, "not 'chain=x'"},
      {{"--what-if", "chain=50", "--what-if", "=50"}, "not '=50'"},
      {{"--top", "x"}, "--top takes a number from 0 to 1000, not 'x'"},
      {{"--what-if", "chain=20", "--what-if", "chain=60"}, "--what-if names 'chain' twice"},
      {{"--from", "soon"}, "--from 'soon' is not a time (e.g. 1.02s, 1020ms, 80us)"},
      {{"--from", "2ms", "--to", "1ms"}, "--to is before --from"},
      {{"--from", "1000s"}, "--from 1000s is after the trace's end"},
      {{"--bogus"}, "unknown option '--bogus'"},
      {{"--json=yes"}, "takes no value"},
  };
  for (const auto& b : bad) {
    std::vector<std::string> args = {"scale"};
    args.insert(args.end(), b.args.begin(), b.args.end());
    args.push_back(*run_);
    const CommandResult r = run_tool(args);
    EXPECT_EQ(r.exit_code, 2) << b.message << ": " << r.err;
    EXPECT_EQ(r.out, "") << b.message;
    EXPECT_EQ(r.err.rfind("lantern-trace scale: ", 0), 0u) << r.err;
    EXPECT_TRUE(has(r.err, b.message)) << "expected '" << b.message << "' in: " << r.err;
    EXPECT_TRUE(has(r.err, "(see lantern-trace scale --help)")) << r.err;
  }
  // Two FILEs, none, and a label no task has (known only once the trace is read).
  CommandResult r = run_tool({"scale", *run_, *run_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "lantern-trace scale: expected one FILE")) << r.err;
  r = run_tool({"scale"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "lantern-trace scale: missing FILE")) << r.err;
  r = run_tool({"scale", "--what-if", "nosuch=50", *run_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(has(r.err, "lantern-trace scale: --what-if: no task in " + *run_ + " has the label 'nosuch'")) << r.err;
  // Not a trace: the usual error, nothing on stdout.
  const std::string garbage = (scratch_dir() / "garbage.trace").string();
  lantern::trace::testing::spit(garbage, std::string(3000, 'x'));
  r = run_tool({"scale", garbage});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(has(r.err, "lantern-trace scale: " + garbage + ": error: not a Lantern trace")) << r.err;
  r = run_tool({"scale", (scratch_dir() / "missing.trace").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "cannot open trace file")) << r.err;
}

TEST_F(ScaleCli, TheChartShowsEveryCurvePoint) {
  const CommandResult r = run_tool({"scale", "--workers", "1,2,8,64", *run_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (has(r.out, "(the trace holds no task-graph events)"))
    GTEST_SKIP() << "this build's recorder reports no task-graph events";
  EXPECT_TRUE(has(r.out, "speedup T1/T_P (log scale): * simulated, : between the bounds, o measured")) << r.out;
  EXPECT_TRUE(has(r.out, "    1    2    8   64  workers")) << r.out;
  const std::size_t chart = r.out.find("speedup T1/T_P");
  const std::size_t axis = r.out.find("workers", chart);
  EXPECT_NE(r.out.substr(chart, axis - chart).find('*'), std::string::npos) << r.out;
}

}  // namespace
