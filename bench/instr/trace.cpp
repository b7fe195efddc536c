// SPDX-License-Identifier: Apache-2.0
// trace.cpp - lantern_instr_bench's section D, trace: a real trace file of the heaviest
// stream fib can make, written through a TraceFileSink and read back with TraceReader.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "instr_bench.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/trace/trace_reader.hpp"

namespace bench::instr {

void bench_trace(Context& ctx) {
  namespace fs = std::filesystem;
  using lantern::instrumentation::TraceFileSink;
  const Workload& fib = workloads()[0];
  const std::string side = "trace, Recorder full, every push, " + std::to_string(ctx.workers) + " workers";
  const fs::path path = fs::temp_directory_path() / ("lantern_instr_bench_" + std::to_string(getpid()) + ".trace");
  Recorder recorder(ctx.workers, {.level = Level::full, .deque_push_sample = 1});
  Collector collector(recorder, {.min_period = kFastPeriod, .max_period = kFastPeriod});
  lantern::Scheduler pool({.workers = ctx.workers, .observer = &recorder});
  const lantern::trace::TraceHeader header =
      lantern::instrumentation::make_trace_header(pool, recorder, "lantern_instr_bench");
  std::vector<double> produced_per_s, written_per_s, dropped, bytes_per_event, read_per_s, written_events;
  const int total = ctx.config.reps + 1;
  for (int r = 0; r < total; ++r) {
    ctx.step(r, total);
    bench::settle();
    auto sink = std::make_shared<TraceFileSink>(path.string(), header);
    if (!sink->ok()) bench::wrong_answer("trace: cannot write " + path.string() + ": " + sink->error());
    collector.attach(sink);
    collector.start();
    const Totals before = totals(recorder);
    const std::uint64_t drained_before = collector.events_collected();
    const auto start = Clock::now();
    for (int i = 0; i < ctx.config.trace_fibs; ++i) run_once(pool, fib, side);
    const double wall = bench::seconds_between(start, Clock::now());
    const Totals after = totals(recorder);
    const std::uint64_t drained_in_run = collector.events_collected() - drained_before;  // the timed rate's
    collector.stop();  // the final drain, then the sink's flush: the file is complete
    collector.detach(sink.get());
    // stop() also drained what was left in the rings, and what the workers recorded as
    // they went idle: part of the file, not of the timed rate.
    const std::uint64_t drained = collector.events_collected() - drained_before;
    const lantern::trace::WriterStats stats = sink->stats();
    if (!sink->ok()) bench::wrong_answer("trace: writing " + path.string() + " failed: " + sink->error());
    bench::check_equal("trace: events written = events drained", static_cast<long long>(stats.events),
                       static_cast<long long>(drained));
    const auto read_start = Clock::now();
    auto reader = lantern::trace::TraceReader::open(path.string());
    std::uint64_t read = 0;
    while (reader.next_chunk()) read += reader.chunk().events.size();
    const double read_seconds = bench::seconds_between(read_start, Clock::now());
    if (reader.has_errors() || !reader.header_ok()) {
      bench::wrong_answer("trace: " + path.string() + " does not read back cleanly (" +
                          std::to_string(reader.problems().size()) + " problems)");
    }
    bench::check_equal("trace: events read = events written", static_cast<long long>(read),
                       static_cast<long long>(stats.events));
    std::error_code ignored;
    fs::remove(path, ignored);
    if (r == 0) continue;  // warm-up
    const double produced = static_cast<double>(after.produced - before.produced);
    produced_per_s.push_back(produced / wall);
    written_per_s.push_back(static_cast<double>(drained_in_run) / wall);
    dropped.push_back(static_cast<double>(after.dropped - before.dropped) / std::max(1.0, produced));
    bytes_per_event.push_back(static_cast<double>(stats.bytes) /
                              static_cast<double>(std::max<std::uint64_t>(1, stats.events)));
    read_per_s.push_back(static_cast<double>(read) / read_seconds);
    written_events.push_back(static_cast<double>(stats.events));
  }
  const double no_baseline = std::nan("");
  const std::string per_rep = std::to_string(ctx.config.trace_fibs) + " fib(32) per repetition, every push recorded; " +
                              bench::format_number(bench::median(written_events) / 1e6) + " M events per file (median)";
  ctx.rows.push_back({"trace: drained and written / produced, fib at full", ctx.workers, "M events/s",
                      bench::median(written_per_s) / 1e6, bench::median(produced_per_s) / 1e6, Target::info(),
                      "dropped " + percent(bench::median(dropped)) + " of the events produced (median; max " +
                          percent(*std::max_element(dropped.begin(), dropped.end())) + "); collector period 100 us; " +
                          per_rep});
  ctx.rows.push_back({"trace: file size, fib at full", ctx.workers, "bytes/event", bench::median(bytes_per_event),
                      no_baseline, Target::lantern(8.0), "header and chunk framing included; " + per_rep});
  ctx.rows.push_back({"trace: read back (TraceReader)", 1, "M events/s", bench::median(read_per_s) / 1e6, no_baseline,
                      Target::info(), "checksums verified, events decoded; the file just written (in the page cache)"});
}

}  // namespace bench::instr
