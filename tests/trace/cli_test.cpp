// SPDX-License-Identifier: Apache-2.0
// cli_test.cpp - the real lantern-trace binary on good, cut-off, foreign and missing
// files and on bad options: exit codes (0 ok, 1 trace problems, 2 usage/IO) and the
// lines a user relies on. A crash would show as exit code -1.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lantern/trace/crc32c.hpp"
#include "lantern/trace/varint.hpp"
#include "support/run_command.hpp"
#include "support/synthetic_trace.hpp"

namespace lantern::trace {
namespace {

using testing::CommandResult;
using testing::run_tool;
using testing::scratch_dir;

class Cli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto events = testing::fork_join_events({.workers = 3, .events = 30'000, .seed = 4});
    bytes_ = testing::write_trace_bytes(testing::test_header(3), events, ChunkLimits{8192, 1000});
    good_ = write("good.trace", bytes_);
    cut_at_ = bytes_.size() - 1000;
    truncated_ = write("truncated.trace", std::vector<std::uint8_t>(bytes_.begin(), bytes_.begin() + cut_at_));
    garbage_ = write("garbage.trace", std::vector<std::uint8_t>(5000, 0x3C));
  }
  static std::string write(const std::string& name, const std::vector<std::uint8_t>& bytes) {
    const auto path = scratch_dir() / name;
    testing::spit(path, std::string(bytes.begin(), bytes.end()));
    return path.string();
  }
  static bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
  // level_events: a 2-worker fork-join run as a Recorder at `level` records it (the
  // events of higher levels left out).
  static std::vector<Event> level_events(Level level, std::uint64_t seed) {
    auto events = testing::fork_join_events({.workers = 2, .events = 4'000, .seed = seed});
    std::erase_if(events, [level](const Event& e) { return info(e.type).level > level; });
    return events;
  }
  // write_at_level: `events` in a trace file whose header says `level` (nullopt: says none).
  static std::string write_at_level(const std::string& name, const std::vector<Event>& events,
                                    std::optional<Level> level) {
    TraceHeader header = testing::test_header(2);
    header.level = level;
    return write(name, testing::write_trace_bytes(header, events));
  }

  static inline std::vector<std::uint8_t> bytes_;
  static inline std::string good_, truncated_, garbage_;
  static inline std::size_t cut_at_ = 0;
};

TEST_F(Cli, InfoPrintsTheMeasuredEventCost) {
  TraceHeader h = testing::test_header(3);
  h.event_cost_ns = 27.3;
  const auto events = testing::fork_join_events({.workers = 3, .events = 2'000, .seed = 5});
  const CommandResult r = run_tool({"info", write("cost.trace", testing::write_trace_bytes(h, events))});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "event cost  27.3 ns per recorded event")) << r.out;
}

TEST_F(Cli, GoodFileEveryCommandSucceeds) {
  CommandResult r = run_tool({"info", good_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "producer    lantern trace tests"));
  EXPECT_TRUE(has(r.out, "workers     3"));
  EXPECT_TRUE(has(r.out, "bytes/event"));
  EXPECT_TRUE(has(r.out, "task_begin"));
  EXPECT_TRUE(has(r.out, "duration"));
  EXPECT_TRUE(has(r.out, "problems    none"));
  EXPECT_TRUE(has(r.out, "event cost  not measured")) << r.out;  // test_header measures none
  EXPECT_TRUE(r.err.empty()) << r.err;                           // no progress bar off a terminal

  r = run_tool({"stats", good_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* part :
       {"active", "sleeping", "steals by distance: smt", "ready wait (lane_pop):", "p99", "task duration"})
    EXPECT_TRUE(has(r.out, part)) << part << "\n" << r.out;

  r = run_tool({"validate", good_});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "ok: no problems"));

  r = run_tool({"export", "--chrome", good_, "-o", (scratch_dir() / "good.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "task slices"));
  r = run_tool({"export", "--chrome", good_, "--output=-"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{\"traceEvents\":[", 0), 0u);
}

// Drop markers are shown by reason: the app's full rings and a live stream's slow viewer
// are different causes (the second means the app lost nothing).
TEST_F(Cli, DroppedEventsAreShownByReason) {
  auto events = testing::fork_join_events({.workers = 2, .events = 2'000, .seed = 7});
  const std::uint64_t last = events.back().ticks;
  events.push_back(make_event(last + 1, 0, DroppedPayload{30, DropReason::ring_full}));
  events.push_back(make_event(last + 2, 1, DroppedPayload{500, DropReason::slow_viewer}));
  const std::string path = write("drops.trace", testing::write_trace_bytes(testing::test_header(2), events));
  CommandResult r = run_tool({"info", path});
  EXPECT_TRUE(has(r.out, "dropped     530 events lost (2 markers); ring_full: 30; slow_viewer: 500")) << r.out;
  r = run_tool({"stats", path});
  EXPECT_TRUE(has(r.out, "dropped: 530 events lost (2 markers); ring_full: 30; slow_viewer: 500")) << r.out;
  r = run_tool({"stats", "--json", path});
  EXPECT_TRUE(has(r.out, "\"dropped_by_reason\":{\"ring_full\":30,\"slow_viewer\":500,\"before_attach\":0}")) << r.out;
}

TEST_F(Cli, LabelsAreListedAndTheirTasksTimed) {
  const LabelTable names = testing::test_labels(4);
  const auto events = testing::fork_join_events({.workers = 2, .events = 20'000, .seed = 6, .labels = 4});
  const std::string path =
      write("labels.trace", testing::write_trace_bytes(testing::test_header(2), events, {}, &names));
  CommandResult r = run_tool({"info", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "labels      4 named")) << r.out;
  for (const auto& [id, name] : names.all()) EXPECT_TRUE(has(r.out, name)) << name << "\n" << r.out;
  EXPECT_TRUE(has(r.out, "task_label")) << r.out;

  r = run_tool({"stats", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "task duration by label")) << r.out;
  for (const auto& [id, name] : names.all()) EXPECT_TRUE(has(r.out, name)) << name << "\n" << r.out;
  EXPECT_TRUE(has(r.out, "(no label)")) << r.out;

  // The unlabelled trace says so.
  r = run_tool({"info", good_});
  EXPECT_TRUE(has(r.out, "labels      none")) << r.out;
  EXPECT_FALSE(has(run_tool({"stats", good_}).out, "by label"));
}

// A label is bytes from the application: one that is not UTF-8 (byte 0xff) comes out
// of every JSON lantern-trace writes as U+FFFD, so that JSON parsers read the file
// (diff --json wrote the raw byte, which python3's json and nlohmann reject).
TEST_F(Cli, ALabelThatIsNotUtf8IsValidJsonEverywhere) {
  LabelTable names;
  names.define(1, "bad\xff label");
  names.define(2, "cut \xe2\x82");  // a multi-byte sequence cut short at the end
  const auto events = testing::fork_join_events({.workers = 2, .events = 4'000, .seed = 8, .labels = 2});
  const std::string path =
      write("not_utf8.trace", testing::write_trace_bytes(testing::test_header(2), events, {}, &names));
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
      {"stats", {"stats", "--json", path}},
      {"diff", {"diff", "--json", path, path}},
      {"export", {"export", "--chrome", path, "-o", "-"}},
  };
  for (const auto& [what, args] : commands) {
    const CommandResult r = run_tool(args);
    ASSERT_EQ(r.exit_code, 0) << what << ": " << r.err;
    EXPECT_TRUE(has(r.out, "\"bad\\ufffd label\"")) << what << ": " << r.out.substr(0, 2000);
    EXPECT_TRUE(has(r.out, "\"cut \\ufffd\\ufffd\"")) << what << ": " << r.out.substr(0, 2000);
    EXPECT_TRUE(nlohmann::json::accept(r.out)) << what;  // nlohmann checks UTF-8 too
    const auto file = scratch_dir() / ("not_utf8_" + what + ".json");
    testing::spit(file, r.out);
    const std::string python =
        "python3 -c 'import json, sys; json.loads(open(sys.argv[1], \"rb\").read())' " + testing::quote(file.string());
    EXPECT_EQ(std::system(python.c_str()), 0) << what << ": python3's json rejects " << file;
  }
}

TEST_F(Cli, TruncatedFileReportsProblemAndWhatWasRead) {
  const std::string truncated_line = "truncated at offset";
  CommandResult r = run_tool({"info", truncated_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, truncated_line)) << r.err;  // problems on stderr, the report on stdout
  EXPECT_FALSE(has(r.out, truncated_line)) << r.out;
  EXPECT_TRUE(has(r.err, "bytes of an incomplete chunk")) << r.err;
  EXPECT_TRUE(has(r.out, "problems    1 (listed on stderr)")) << r.out;
  EXPECT_TRUE(has(r.out, "task_begin"));

  r = run_tool({"stats", truncated_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, truncated_line)) << r.err;
  EXPECT_TRUE(has(r.out, "task duration")) << r.out;

  r = run_tool({"validate", truncated_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, truncated_line)) << r.err;
  EXPECT_FALSE(has(r.out, truncated_line)) << r.out;
  EXPECT_TRUE(has(r.out, "invalid: 1 error, 0 warnings")) << r.out;

  const auto json = scratch_dir() / "truncated.json";
  r = run_tool({"export", "--chrome", truncated_, "-o", json.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, truncated_line));
  EXPECT_GT(std::filesystem::file_size(json), 1000u);  // still written
}

TEST_F(Cli, CorruptChunkIsReportedWithItsOffset) {
  std::vector<std::uint8_t> bytes = bytes_;
  const std::uint32_t header = load_le<std::uint32_t>(bytes.data() + 12);
  bytes[header + kChunkHeaderBytes + 10] ^= 0x10;  // inside the first chunk's payload
  const std::string path = write("flipped.trace", bytes);
  const CommandResult r = run_tool({"validate", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, "corrupt chunk at offset " + std::to_string(header) + ": payload checksum mismatch")) << r.err;
  const CommandResult info = run_tool({"info", path});
  EXPECT_EQ(info.exit_code, 1);
  EXPECT_TRUE(has(info.err, "resumed at the next chunk")) << info.err;
}

TEST_F(Cli, ForeignAndNewerFilesAreNamedAsSuch) {
  for (const char* command : {"info", "stats", "validate"}) {
    const CommandResult r = run_tool({command, garbage_});
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_TRUE(has(r.out + r.err, "not a Lantern trace")) << command << r.out << r.err;
  }
  const std::string empty = write("empty.trace", {});
  EXPECT_TRUE(has(run_tool({"validate", empty}).err, "it is empty"));

  auto as_version = [&](std::uint16_t version) {
    std::vector<std::uint8_t> bytes = bytes_;
    store_le<std::uint16_t>(bytes.data() + 8, version);
    const std::uint32_t len = load_le<std::uint32_t>(bytes.data() + 12);
    store_le<std::uint32_t>(bytes.data() + len - 4, crc32c({bytes.data(), len - 4}));
    return bytes;
  };
  const std::string ours = std::to_string(kFormatVersion), next = std::to_string(kFormatVersion + 1);
  const CommandResult r = run_tool({"validate", write("newer.trace", as_version(kFormatVersion + 1))});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, "needs format version " + next + "; this reader supports versions 3 to " + ours)) << r.err;
  // A version-1 file (event ids before task labels) is refused, saying what to do.
  for (const char* command : {"info", "stats", "validate"}) {
    const CommandResult old = run_tool({command, write("version1.trace", as_version(1))});
    EXPECT_EQ(old.exit_code, 1) << command;
    EXPECT_TRUE(has(old.out + old.err, "format version 1")) << command << old.out << old.err;
    EXPECT_TRUE(has(old.out + old.err, "Record the trace again")) << command << old.out << old.err;
  }
}

TEST_F(Cli, WorkersOutsideTheHeaderFailValidation) {
  TraceHeader h = testing::test_header(2);  // the events come from 3 workers
  const auto bytes = testing::write_trace_bytes(h, testing::fork_join_events({.workers = 3, .events = 3000}));
  const CommandResult r = run_tool({"validate", write("workers.trace", bytes)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, "workers the header does not have")) << r.err;
}

// The format's bound on worker ids (kMaxWorkers, 4096): every reader drops an event from
// a higher worker as damage, so validate must not call such a trace clean, whatever the
// header declares (it said "ok" while info, stats and export dropped every event).
TEST_F(Cli, WorkersAboveTheFormatsBoundFailValidation) {
  std::vector<Event> events;
  for (int i = 0; i < 4; ++i) {
    events.push_back(
        make_event(100 + i, 4500, StatePayload{WorkerState::idle, WorkerState::active, StateReason::found_work}));
  }
  TraceHeader many = testing::test_header(5000);
  CommandResult r = run_tool({"validate", write("w5000.trace", testing::write_trace_bytes(many, events))});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "the header declares 5000 workers, more than a trace may have (4096)")) << r.err;
  EXPECT_TRUE(has(r.err, "4 events come from workers at or above the format's limit of 4096")) << r.err;
  TraceHeader unsaid = testing::test_header(0);  // 0: the writer did not say
  r = run_tool({"validate", write("w0.trace", testing::write_trace_bytes(unsaid, events))});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "4 events come from workers at or above the format's limit of 4096")) << r.err;
  // And what the others make of it: the same 4 events, rejected as damage.
  r = run_tool({"info", write("w5000b.trace", testing::write_trace_bytes(many, events))});
  EXPECT_TRUE(has(r.out + r.err, "4 more events, as damage")) << r.out << r.err;
}

// Events from 4,096 workers whose ids rise through the file, under a header that declares
// fewer (0: unsaid, 2) or more (4,097 and 65,536: above the format's bound, so ignored) workers: every
// reader grows its per-worker state as the ids come, and must stay linear in the events
// plus the workers they name (re-laying out a W x W steal matrix per new id was cubic:
// minutes at 4,096 workers). Each command gets 20 s on a loaded 2-core machine, where
// the same events under a header saying 4,096 take a fraction of a second.
TEST_F(Cli, ManyUndeclaredWorkersReadInLinearTime) {
  constexpr std::uint32_t kWorkers = 4096;
  std::vector<Event> events;
  std::uint64_t t = 1000;
  for (int round = 0; round < 2; ++round) {
    for (std::uint32_t w = 0; w < kWorkers; ++w) {
      const std::uint64_t task = 0x10000 + (static_cast<std::uint64_t>(w) << 8) + round;
      events.push_back(
          make_event(t++, w, StatePayload{WorkerState::idle, WorkerState::active, StateReason::found_work}));
      events.push_back(
          make_event(t++, w, StealPayload{(w + 1) % kWorkers, StealDistance::smt, TaskSource::stolen_deque}));
      events.push_back(make_event(t++, w, TaskBeginPayload{task, TaskSource::stolen_deque}));
      events.push_back(make_event(t++, w, ReleasePayload{task + 0x1000000, task}));
      events.push_back(make_event(t++, w, IoSubmitPayload{task, IoKind::read, 3}));
      events.push_back(make_event(t++, w, IoCompletePayload{task, 10}));
      events.push_back(make_event(t++, w, TaskEndPayload{task, false}));
      events.push_back(
          make_event(t++, w, StatePayload{WorkerState::active, WorkerState::idle, StateReason::out_of_work}));
    }
  }
  for (const std::uint32_t declared : {0u, 2u, kWorkers + 1, kWorkers, 1u << 16}) {
    const std::string path = write("workers" + std::to_string(declared) + ".trace",
                                   testing::write_trace_bytes(testing::test_header(declared), events));
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"info", path}, {"stats", path}, {"validate", path}, {"export", "--chrome", path, "-o", path + ".json"}}) {
      const auto start = std::chrono::steady_clock::now();
      const CommandResult r = run_tool(args, 60);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_NE(r.exit_code, 137) << args[0] << " with " << declared << " declared workers was killed after 60 s";
      EXPECT_NE(r.exit_code, -1) << args[0] << " crashed: " << r.err;
      EXPECT_LT(seconds, 20.0) << args[0] << " with " << declared << " declared workers";
      if (args[0] == "info") {
        EXPECT_TRUE(has(r.out, "steal ")) << r.out;
        EXPECT_TRUE(has(r.out, std::to_string(events.size()))) << r.out;
      }
    }
  }
}

TEST_F(Cli, MissingFilesAndBadOptionsExitTwo) {
  const std::string missing = (scratch_dir() / "no-such.trace").string();
  for (const char* command : {"info", "stats", "validate"}) {
    const CommandResult r = run_tool({command, missing});
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_TRUE(has(r.err, "cannot open trace file '" + missing + "': No such file or directory")) << r.err;
  }
  CommandResult r = run_tool({"export", "--chrome", missing, "-o", (scratch_dir() / "x.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "cannot open trace file"));
  EXPECT_FALSE(std::filesystem::exists(scratch_dir() / "x.json"));

  r = run_tool({"info", scratch_dir().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "directory")) << r.err;

  const struct {
    std::vector<std::string> args;
    const char* message;
  } bad[] = {
      {{"info"}, "missing FILE"},
      {{"info", good_, good_}, "expected one FILE"},
      {{"info", "--bogus", good_}, "unknown option '--bogus'"},
      {{"stats", "-x", good_}, "unknown option '-x'"},
      {{"validate"}, "missing FILE"},
      {{"export", good_, "-o", "x.json"}, "--chrome"},
      {{"export", "--chrome", good_}, "missing -o"},
      {{"export", "--chrome", good_, "-o"}, "needs a value"},
      {{"export", "--chrome=yes", good_, "-o", "x.json"}, "takes no value"},
      {{"export", "--chrome", good_, "-o", "/nonexistent-dir/x.json"}, "cannot create '/nonexistent-dir/x.json'"},
      {{"frobnicate", good_}, "unknown command 'frobnicate'"},
      {{}, "usage: lantern-trace COMMAND"},
  };
  for (const auto& b : bad) {
    r = run_tool(b.args);
    EXPECT_EQ(r.exit_code, 2) << b.message;
    EXPECT_TRUE(has(r.err, b.message)) << "expected '" << b.message << "' in: " << r.err;
  }
}

TEST_F(Cli, HelpForEveryCommand) {
  CommandResult r = run_tool({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(has(r.out, "usage: lantern-trace COMMAND"));
  for (const char* command : {"info", "stats", "export", "validate", "diff", "scale"}) {
    r = run_tool({command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_TRUE(has(r.out, std::string("usage: lantern-trace ") + command)) << r.out;
    EXPECT_TRUE(has(r.out, "exit status")) << command;
    EXPECT_EQ(run_tool({"help", command}).out, r.out);
  }
}

// A percentile is never above the max (nor below the min) of its samples: one labelled
// task of 2.90 ms sits in the bucket [2.88, 3.15) ms, whose midpoint (3.01 ms) stats used
// to print as its p50 beside a max of 2.90 ms. Stats (text and JSON) and diff agree.
TEST_F(Cli, PercentilesStayWithinTheSamples) {
  TraceHeader header = testing::test_header(1);
  header.clock = ClockCalibration{false, 1.0, 0, 0};  // 1 tick = 1 ns: durations exact
  header.level = Level::tasks;
  LabelTable names;
  names.define(1, "fib");
  const std::uint64_t task = 0x7f00'1000, start = 10'000, ns = 2'900'000;
  const std::vector<Event> events = {
      make_event(1'000, 0, StatePayload{WorkerState::idle, WorkerState::idle, StateReason::started}),
      make_event(start - 1, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::found_work}),
      make_event(start, 0, TaskBeginPayload{task, TaskSource::own_lane}),
      make_event(start + 1, 0, TaskLabelPayload{task, 1}),
      make_event(start + ns, 0, TaskEndPayload{task, false}),
      make_event(start + ns + 1, 0, StatePayload{WorkerState::active, WorkerState::idle, StateReason::stopping}),
  };
  const std::string path = write("one_task.trace", testing::write_trace_bytes(header, events, {}, &names));
  CommandResult r = run_tool({"stats", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out,
                  "task duration (inclusive of nested tasks): 1 samples, p50 2.90 ms, p90 2.90 ms, p99 2.90 ms, "
                  "max 2.90 ms"))
      << r.out;
  char row[160];  // the by-label table's row: label, tasks, p50, p90, p99, max
  std::snprintf(row, sizeof row, "%-28s%10d%11s%11s%11s%11s", "fib", 1, "2.90 ms", "2.90 ms", "2.90 ms", "2.90 ms");
  EXPECT_TRUE(has(r.out, row)) << r.out;
  r = run_tool({"stats", "--json", path});
  for (const std::string key : {"\"task_duration\":{\"count\":1,", "\"fib\":{\"count\":1,"}) {
    const std::size_t at = r.out.find(key);
    ASSERT_NE(at, std::string::npos) << key << "\n" << r.out;
    const std::string want = "\"p50_ns\":2900000,\"p90_ns\":2900000,\"p99_ns\":2900000,\"max_ns\":2900000";
    EXPECT_EQ(r.out.substr(at + key.size(), want.size()), want) << key;
  }
  r = run_tool({"diff", path, path, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "\"p50_ns\": 2900000.0, \"p90_ns\": 2900000.0, \"p99_ns\": 2900000.0, \"max_ns\": 2900000.0"))
      << r.out;
  EXPECT_FALSE(has(r.out, "3014656")) << "the bucket's midpoint, above every sample";
}

// One share per worker and state, whatever prints it: a trace that starts mid-run (a
// flight-recorder window) has time whose state is unknown - here worker 1's first state
// event in the window does not name a state this reader knows as where it came from (a
// newer recorder's state, or a damaged byte), and worker 3 only pushes work from inside
// a task that began before the window. `stats` and `diff A A` (table and JSON) print the
// same shares for every worker: of its whole span, the unknown part one share of it.
// (diff divided by known-state time only: worker 1's active share read 1/(1-unknown)
// times what stats printed, and diff had no unknown row.)
TEST_F(Cli, StatsAndDiffPrintOneShareForATraceThatStartsMidRun) {
  const auto all = testing::fork_join_events({.workers = 3, .events = 12'000, .seed = 11});
  std::vector<std::uint64_t> ticks;
  for (const Event& e : all) ticks.push_back(e.ticks);
  std::sort(ticks.begin(), ticks.end());
  const std::uint64_t window = ticks[ticks.size() / 2], late = ticks.back();
  // Worker 1's window opens with failed steal rounds; its first state event comes a
  // quarter of the way in, from a state this reader does not know.
  std::uint64_t first_state = 0;
  for (const Event& e : all)
    if (e.worker == 1 && e.type == EventId::state && e.ticks >= window + (late - window) / 4) {
      first_state = e.ticks;
      break;
    }
  ASSERT_GT(first_state, 0u);
  std::vector<Event> events;
  for (int k = 0; k < 8; ++k)
    events.push_back(make_event(window + k * (first_state - window) / 8, 1, StealRoundFailedPayload{2, 0}));
  for (Event e : all) {
    if (e.ticks < (e.worker == 1 ? first_state : window)) continue;  // the window starts mid-run
    if (e.worker == 1 && e.ticks == first_state && e.type == EventId::state) e.a = (e.a & 0xFF) | 0x7Fu << 8;
    events.push_back(e);
  }
  for (std::uint64_t t = window + 5; t < late; t += (late - window) / 8) {
    events.push_back(make_event(t, 3, PushPayload::into_lane(0x7f00'2000 + t, 1)));  // worker 3: pushes only
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.worker < b.worker; });
  const std::string path = write("mid_run.trace", testing::write_trace_bytes(testing::test_header(4), events));

  // stats --json: ticks per state and unknown; the share is of their sum (the span).
  CommandResult r = run_tool({"stats", "--json", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto stats = nlohmann::json::parse(r.out);
  ASSERT_EQ(stats.at("workers").size(), 4u);
  std::map<std::pair<unsigned, std::string>, double> stats_share;
  for (unsigned w = 0; w < 4; ++w) {
    const auto& t = stats.at("workers")[w].at("state_ticks");
    double span = 0;
    for (const auto& [name, v] : t.items()) span += v.get<double>();
    ASSERT_GT(span, 0) << "worker " << w;
    for (const auto& [name, v] : t.items()) stats_share[{w, name}] = v.get<double>() / span;
  }
  const double unknown_1 = stats_share[{1u, "unknown"}], unknown_3 = stats_share[{3u, "unknown"}];
  ASSERT_GT(unknown_1, 0.05) << "worker 1 has unknown time before its first state event";
  ASSERT_LT(unknown_1, 0.95);
  ASSERT_EQ(unknown_3, 1.0) << "worker 3's state is never said";

  // diff --json A A: the same shares, unknown included wherever stats has any.
  r = run_tool({"diff", "--json", path, path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto diff = nlohmann::json::parse(r.out);
  std::map<std::pair<unsigned, std::string>, double> diff_share;
  for (const auto& row : diff.at("state_shares")) {
    const std::pair<unsigned, std::string> key{row.at("worker").get<unsigned>(), row.at("state").get<std::string>()};
    diff_share[key] = row.at("a").get<double>();
    EXPECT_EQ(row.at("a").get<double>(), row.at("b").get<double>());
    EXPECT_FALSE(row.at("notable").get<bool>());
  }
  for (const auto& [key, share] : stats_share) {
    if (share == 0 && key.second == "unknown") continue;  // no unknown time: no row
    ASSERT_TRUE(diff_share.count(key)) << "worker " << key.first << " " << key.second << ": no diff row";
    EXPECT_NEAR(diff_share[key], share, 1e-6) << "worker " << key.first << " " << key.second;
  }

  // The tables, as printed: stats' row per worker and diff's rows, to the tenth.
  const CommandResult text = run_tool({"stats", path});
  const CommandResult table = run_tool({"diff", path, path});
  ASSERT_EQ(text.exit_code, 0);
  ASSERT_EQ(table.exit_code, 0);
  const std::vector<std::string> slots = {"active", "idle", "sleepy", "sleeping", "unknown"};
  std::map<std::pair<std::string, std::string>, std::string> printed_stats, printed_diff;
  std::istringstream in(text.out.substr(text.out.find("time share by state")));
  for (std::string line; std::getline(in, line) && line.find("steals by distance") == std::string::npos;) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string x; fields >> x;) f.push_back(x);
    if (f.size() < 6 || f[0].find_first_not_of("0123456789") != std::string::npos) continue;
    for (std::size_t k = 0; k < slots.size(); ++k)
      if (f[1 + k] != "-") printed_stats[{f[0], slots[k]}] = f[1 + k];
  }
  std::istringstream rows(table.out.substr(table.out.find("state shares")));
  for (std::string line; std::getline(rows, line) && !line.empty();) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string x; fields >> x;) f.push_back(x);
    if (f.size() == 5 && f[0].find_first_not_of("0123456789") == std::string::npos) printed_diff[{f[0], f[1]}] = f[2];
  }
  ASSERT_EQ(printed_stats.size(), 4u * 4u + 2u) << text.out;  // 4 states a worker, unknown for workers 1 and 3
  EXPECT_EQ(printed_diff, printed_stats) << "stats:\n" << text.out << "\ndiff:\n" << table.out;
}

// A figure without samples says why, from the recording level in the trace header: the
// ready wait comes from lane_pop events, recorded at level full only.
TEST_F(Cli, NoSamplesSaysWhyFromTheHeadersLevel) {
  const auto events = level_events(Level::tasks, 9);
  const std::string tasks = write_at_level("level_tasks.trace", events, Level::tasks);
  CommandResult r = run_tool({"stats", tasks});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "recorded at level tasks")) << r.out;
  EXPECT_TRUE(has(r.out,
                  "ready wait (lane_pop): no samples: not recorded at level tasks: lane_pop events are recorded "
                  "at level full and above"))
      << r.out;
  r = run_tool({"stats", "--json", tasks});
  EXPECT_TRUE(has(r.out, "\"level\":\"tasks\"")) << r.out;
  EXPECT_TRUE(has(r.out, "\"no_samples\":\"not recorded at level tasks: lane_pop events")) << r.out;
  EXPECT_TRUE(has(run_tool({"info", tasks}).out, "level       tasks (when recording started)"));

  // Recorded at level full, and still none: they did not happen.
  const std::string full = write_at_level("level_full.trace", events, Level::full);
  r = run_tool({"stats", full});
  EXPECT_TRUE(has(r.out,
                  "ready wait (lane_pop): no samples: none happened (the trace was recorded at level full, "
                  "which records lane_pop events)"))
      << r.out;

  // A header that does not say its level (older traces) is not guessed at.
  const std::string unsaid = write_at_level("level_unknown.trace", events, std::nullopt);
  r = run_tool({"stats", unsaid});
  EXPECT_TRUE(has(r.out,
                  "ready wait (lane_pop): no samples: no lane_pop events in the trace; they are recorded at level "
                  "full and above, and the trace's header does not say its level"))
      << r.out;
  EXPECT_TRUE(has(r.out, "recorded at level (not in the header)")) << r.out;
  r = run_tool({"stats", "--json", unsaid});
  EXPECT_TRUE(has(r.out, "\"level\":null")) << r.out;
}

// A count the trace's level does not record is unknown, not 0: at level states (state
// changes and wakes only) stats printed 0 tasks, steals and helps per worker and diff
// "0 tasks", where the Recorder's counters had thousands. Now: "-" with a line saying
// from which level they are recorded (text), null (JSON), and diff the same.
TEST_F(Cli, CountsTheLevelDoesNotRecordAreNotPrintedAsZero) {
  const std::string states = write_at_level("level_states.trace", level_events(Level::states, 12), Level::states);
  CommandResult r = run_tool({"stats", states});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out.substr(r.out.find("time share by state")));
  int rows = 0;
  for (std::string line; std::getline(in, line) && !line.empty();) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string x; fields >> x;) f.push_back(x);
    if (f.size() != 10 || (f[0] != "all" && f[0].find_first_not_of("0123456789") != std::string::npos)) continue;
    ++rows;
    EXPECT_EQ(f[6], "-") << "tasks: " << line;
    EXPECT_EQ(f[7], "-") << "steals: " << line;
    EXPECT_EQ(f[8], "-") << "helps: " << line;
    EXPECT_NE(f[9], "-") << "wakes are recorded at level states: " << line;
  }
  EXPECT_EQ(rows, 3) << r.out;  // workers 0 and 1, and "all"
  EXPECT_TRUE(has(r.out,
                  "tasks, steals, helps: not recorded at level states (task_begin, steal, help events are recorded at "
                  "level tasks and above)"))
      << r.out;
  EXPECT_TRUE(has(r.out, "steals by distance: not recorded at level states")) << r.out;

  r = run_tool({"stats", "--json", states});
  const auto stats = nlohmann::json::parse(r.out);
  for (const auto& w : stats.at("workers")) {
    EXPECT_TRUE(w.at("tasks").is_null()) << w;
    EXPECT_TRUE(w.at("steals").is_null()) << w;
    EXPECT_TRUE(w.at("helps").is_null()) << w;
    EXPECT_TRUE(w.at("wakes").is_number()) << w;
  }
  EXPECT_TRUE(stats.at("tasks").is_null());
  EXPECT_TRUE(stats.at("tasks_by_label").is_null());
  EXPECT_TRUE(stats.at("steals_by_distance").is_null());
  EXPECT_TRUE(has(stats.at("not_recorded").at("task_begin").get<std::string>(), "not recorded at level states"))
      << r.out;
  EXPECT_FALSE(stats.at("not_recorded").contains("wake")) << r.out;

  // diff: the run's tasks and steals, and its steals by distance, are not recorded either.
  r = run_tool({"diff", states, good_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, ", - tasks, - steals\n   - tasks: not recorded at level states: task_begin events")) << r.out;
  EXPECT_FALSE(has(r.out, " 0 tasks")) << r.out;
  std::istringstream distance(r.out.substr(r.out.find("steals by distance")));
  std::string line;
  std::getline(distance, line);
  std::getline(distance, line);
  for (int d = 0; d < kDistanceCount && std::getline(distance, line); ++d) {
    std::istringstream fields(line);
    std::string name, a;
    fields >> name >> a;
    EXPECT_EQ(a, "-") << line;
  }
  r = run_tool({"diff", "--json", states, good_});
  const auto diff = nlohmann::json::parse(r.out);
  EXPECT_TRUE(diff.at("a").at("tasks").is_null());
  EXPECT_TRUE(diff.at("a").at("steals").is_null());
  EXPECT_TRUE(has(diff.at("a").at("tasks_not_recorded").get<std::string>(), "not recorded at level states"));
  EXPECT_TRUE(diff.at("b").at("tasks").is_number());
  for (const auto& row : diff.at("steals_by_distance")) EXPECT_TRUE(row.at("a").is_null()) << row;
  for (const auto& row : diff.at("task_durations")) EXPECT_TRUE(row.at("a").at("tasks").is_null()) << row;

  // The Chrome export's steal count too.
  r = run_tool({"export", "--chrome", states, "-o", "-"});
  EXPECT_TRUE(nlohmann::json::parse(r.out).at("otherData").at("steals").is_null()) << r.out.substr(r.out.size() - 400);
  r = run_tool({"export", "--chrome", good_, "-o", "-"});
  EXPECT_TRUE(nlohmann::json::parse(r.out).at("otherData").at("steals").is_number());
}

// An empty latency figure says why in diff too, as in stats: "-" in its cells and the
// analysis' reason below the table (diff printed "0 ns" percentiles), a field in JSON.
TEST_F(Cli, DiffSaysWhyAFigureIsEmpty) {
  const std::string tasks = write_at_level("diff_level_tasks.trace", level_events(Level::tasks, 13), Level::tasks);
  CommandResult r = run_tool({"diff", tasks, good_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string table = r.out.substr(r.out.find("latency histograms"));
  std::istringstream in(table);
  bool seen = false;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string x; fields >> x;) f.push_back(x);
    if (f.size() < 5 || f[0] != "ready") continue;
    seen = true;
    EXPECT_EQ(f[2], "0") << line;  // A n
    EXPECT_EQ(f[4], "-") << "A p50: " << line;
    EXPECT_EQ(f[7], "-") << "A p90: " << line;  // (B p50 is two fields: "9.73 us")
    EXPECT_EQ(f[10], "-") << "A p99: " << line;
  }
  EXPECT_TRUE(seen) << r.out;
  EXPECT_TRUE(
      has(table, "  A ready wait: no samples: not recorded at level tasks: lane_pop events are recorded at level full"))
      << table;
  r = run_tool({"diff", "--json", tasks, good_});
  const auto diff = nlohmann::json::parse(r.out);
  for (const auto& row : diff.at("latency")) {
    if (row.at("what") != "ready wait") continue;
    EXPECT_EQ(row.at("a").at("count").get<int>(), 0);
    EXPECT_TRUE(has(row.at("a").at("no_samples").get<std::string>(), "not recorded at level tasks: lane_pop events"))
        << row;
  }
}

// Tasks per label are one number in every view: the tasks begun (stats --json
// tasks_by_label, the Chrome export's slices), with durations over those that ended.
// diff's "A tasks" column counted duration samples only: 1 here, where stats said 2.
TEST_F(Cli, TasksPerLabelAreTheTasksBegunInEveryView) {
  TraceHeader header = testing::test_header(1);
  header.clock = ClockCalibration{false, 1.0, 0, 0};
  header.level = Level::tasks;
  LabelTable names;
  names.define(1, "fib");
  const std::uint64_t done = 0x7f00'1000, running = 0x7f00'2000;
  const std::vector<Event> events = {
      make_event(1'000, 0, StatePayload{WorkerState::idle, WorkerState::active, StateReason::started}),
      make_event(2'000, 0, TaskBeginPayload{done, TaskSource::own_lane}),
      make_event(2'001, 0, TaskLabelPayload{done, 1}),
      make_event(9'000, 0, TaskEndPayload{done, false}),
      make_event(10'000, 0, TaskBeginPayload{running, TaskSource::own_lane}),
      make_event(10'001, 0, TaskLabelPayload{running, 1}),  // never ends in the trace
  };
  const std::string path = write("label_counts.trace", testing::write_trace_bytes(header, events, {}, &names));
  CommandResult r = run_tool({"stats", "--json", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto stats = nlohmann::json::parse(r.out);
  ASSERT_EQ(stats.at("tasks_by_label").at("fib").get<int>(), 2);
  EXPECT_EQ(stats.at("duration_by_label").at("fib").at("count").get<int>(), 1);

  r = run_tool({"diff", "--json", path, path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto diff = nlohmann::json::parse(r.out);
  bool seen = false;
  for (const auto& row : diff.at("task_durations")) {
    if (row.at("label") != "fib") continue;
    seen = true;
    EXPECT_EQ(row.at("a").at("tasks").get<int>(), 2) << row;
    EXPECT_EQ(row.at("a").at("count").get<int>(), 1) << "durations: the task that ended";
  }
  EXPECT_TRUE(seen) << r.out;
  r = run_tool({"diff", path, path});
  EXPECT_TRUE(has(r.out, "task durations by label (tasks: begun; mean and p90: of those that ended)")) << r.out;
  char row[160];
  std::snprintf(row, sizeof row, "  %-16s %9d %9d %10s", "fib", 2, 2, "7.00 us");
  EXPECT_TRUE(has(r.out, row)) << r.out;
}

// One event count: the analysis', in stats (text and JSON) and info. An event rejected
// as damage (a state outside the table, a worker id no trace can have) is counted apart,
// printed when there are any, and is in neither the count nor the counts by type (stats'
// text printed every decoded event; the JSON counted the bad state, not the bad worker).
TEST_F(Cli, RejectedEventsAreCountedApartAndShown) {
  auto events = testing::fork_join_events({.workers = 2, .events = 2'000, .seed = 14});
  const std::uint64_t last = events.back().ticks, total = events.size() + 2;
  events.push_back(
      make_event(last + 1, 0, StatePayload{WorkerState::idle, static_cast<WorkerState>(9), StateReason::woken}));
  events.push_back(
      make_event(last + 2, 5000, StatePayload{WorkerState::idle, WorkerState::active, StateReason::woken}));
  TraceHeader header = testing::test_header(2);
  const std::string path = write("rejected.trace", testing::write_trace_bytes(header, events));
  CommandResult r = run_tool({"stats", "--json", path});
  const auto stats = nlohmann::json::parse(r.out);
  const std::uint64_t kept = stats.at("events").get<std::uint64_t>();
  EXPECT_EQ(stats.at("rejected_events").get<std::uint64_t>(), 2u) << r.out;
  EXPECT_EQ(kept, total - 2);
  std::uint64_t by_type = 0;
  for (const auto& [name, n] : stats.at("events_by_type").items()) by_type += n.get<std::uint64_t>();
  EXPECT_EQ(by_type, kept) << "events by type count the events kept";
  r = run_tool({"stats", path});
  EXPECT_EQ(r.out.rfind(std::to_string(kept) + " events over", 0), 0u) << r.out;
  EXPECT_TRUE(has(r.out, "2 more events rejected as damage (impossible worker id, type or state) and left out"))
      << r.out;
  r = run_tool({"info", path});
  EXPECT_TRUE(has(r.out, "events      " + std::to_string(kept) + " (")) << r.out;
  EXPECT_TRUE(has(r.out, "rejected    2 more events")) << r.out;
  EXPECT_FALSE(has(run_tool({"info", good_}).out, "rejected")) << "shown only when there are any";
}

// validate checks payload values against the vocabulary's tables: a state, a steal
// distance, a wake cause outside its table is an error (it said "ok" and exit 0).
TEST_F(Cli, ValidateChecksPayloadValues) {
  auto events = testing::fork_join_events({.workers = 2, .events = 2'000, .seed = 15});
  std::uint64_t last = 0;  // after every worker's last event: no clock runs backwards
  for (const Event& e : events) last = std::max(last, e.ticks);
  const std::string clean = write("values_ok.trace", testing::write_trace_bytes(testing::test_header(2), events));
  EXPECT_EQ(run_tool({"validate", clean}).exit_code, 0);
  events.push_back(
      make_event(last + 1, 1, StatePayload{WorkerState::idle, static_cast<WorkerState>(9), StateReason::woken}));
  events.push_back(make_event(last + 2, 0, StealPayload{1, static_cast<StealDistance>(77), TaskSource::stolen_deque}));
  events.push_back(make_event(last + 3, 0, WakePayload{1, static_cast<WakeCause>(5), 10}));
  const std::string bad = write("values_bad.trace", testing::write_trace_bytes(testing::test_header(2), events));
  const CommandResult r = run_tool({"validate", bad});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "error: 3 events carry a value outside its table")) << r.err;
  EXPECT_TRUE(has(r.err, "the first, worker 1's state's to (9) at tick " + std::to_string(last + 1))) << r.err;
  EXPECT_TRUE(has(r.out, "invalid: 1 error, 0 warnings")) << r.out;
}

}  // namespace
}  // namespace lantern::trace
