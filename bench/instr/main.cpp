// SPDX-License-Identifier: Apache-2.0
// main.cpp - lantern_instr_bench: what Lantern's instrumentation costs.
//
// Two programs run the workloads (instr_workloads.cpp):
//   lantern_instr_bench      links lantern::core (LANTERN_OBSERVER=1) and
//                            lantern::instrumentation; measures everything. This file
//                            has its command line and the run; each section is in a
//                            file of its own beside it.
//   lantern_instr_bench_off  off_main.cpp, built against lantern_core_no_observer
//                            (LANTERN_OBSERVER=0: every hook compiled out, in the library
//                            and in join.hpp's inline code), which this program drives
//                            as a subprocess over a pipe, one repetition per request, so
//                            that its repetitions interleave with the in-process variants.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "instr_bench.hpp"
#include "lantern/tools/program_cli.hpp"

namespace {

using namespace bench::instr;
using namespace std::chrono_literals;

constexpr const char* kUsage = R"(usage: lantern_instr_bench [options]

What Lantern's instrumentation (lantern::instrumentation::Recorder, an Observer, and a
Collector draining its rings on its own thread into a sink that only counts) costs, in
one process, checking every answer. Each benchmark does one warm-up and --reps measured
repetitions of each of its variants, rotating the variants' order every repetition with
a 10 ms pause before each, and reports medians in one table.

The table is bench/harness.hpp's, whose columns are named for lantern_bench: here
"Lantern" is the variant measured, "TBB" is its baseline and "L/TBB" is variant/baseline.

options:
  -h, --help          this text
  --version           print the version
  --reps N            measured repetitions per variant, median reported, 1 to 1000
                      (default 7)
  --workers N         pool width for overhead and collector, 1 to 1024 (default: all
                      hardware threads)
  --only LIST         sections to run, of: event,ring,overhead,paired,collector,trace
                      (default: all)
  --paired-rounds N   rounds per workload and worker count in section paired, 6 to
                      100000 (default 300)
  --paired-unpinned   section paired without pinning the pools' workers: on a host
                      whose CPUs run at different speeds, a pool then runs at the
                      speed of whichever CPU its workers settled on
  --quick             CI smoke test: 2 reps (unless --reps is given), 200,000 event
                      calls, 2 fibs per collector repetition, 1 per trace repetition,
                      6 paired rounds (unless --paired-rounds is given); every answer is
                      still checked
  --markdown          print the table as Markdown (for bench/RESULTS.md)
  --json              print the rows as JSON, one object a line, on stdout (every
                      other line goes to stderr)
  --off-path PATH     lantern_instr_bench_off to run (default: the one built beside this)
  --raw               also print every repetition's figure (seconds), in run order, to stderr

sections:
  event      A. One recorded event against one rdtsc, on the main thread, 2,000,000
             calls per repetition: recorder.on_event(0, EventId::task_begin, i, 0) on a
             1-worker Recorder at level full while a Collector with a 100 us period
             drains it (so the ring does not stay full), vs __rdtsc() added into a
             volatile. Figures: ns per call; dropped fraction noted. Target: ratio <=
             1.5. Info rows, same call: a Collector with default options (adaptive period),
             no collector (ring full: the drop path), level states (counted, not
             recorded); and on_event(push) at level off (one counter, nothing recorded).
  ring       A2. The worker's ring alone: push of one 32-byte event into Lantern's
             EventRing against Boost.Lockfree's spsc_queue, same capacity (32768),
             while a consumer thread drains each. Figures: producer time per
             delivered event (failed pushes are counted and noted, with the time per
             attempt). Target: ratio < 1.0.
  overhead   B. fib(32) and skynet 1M (ten back to back per repetition) by lantern::join, skynet 1M by a
             TaskGroup per node (three per repetition), nqueens(12) with a TaskGroup at every row and
             200 spawn chains of 1000 through a TaskGroup, on a pool of all workers, for:
             compiled out (lantern_instr_bench_off, LANTERN_OBSERVER=0, a subprocess,
             one repetition per request), no observer attached, and a Recorder at off,
             states, tasks and full (one Recorder, set_level; its Collector with a
             counting sink is started before and stopped after each repetition).
             Figures: ms; baseline: no observer (same run) for Recorder off and
             states (rows "... / no observer"), compiled out for the others (each
             note gives both). Target: full <= 1.15 x compiled out on the join
             workloads; the others are info (states is judged by B2, below).
  paired     B2. The bounds on recording (level states at most 2 % over no observer,
             level tasks at most 5 %; level graph, which records every join as a
             task, reported), timed so that a few per cent can be resolved on a host
             whose speed wanders by far more: on 1 worker and on --workers, pools run
             each workload once per round (fib(32), one skynet 1M by join, one by a
             TaskGroup per node, nqueens(12), 200 spawn chains), rotating their order,
             with a 2 ms pause before each run: no observer; a Recorder at level
             states with its Collector running throughout; on fib, skynet by TaskGroup
             and nqueens also Recorders at levels tasks and graph, likewise, and one
             at tasks without the task graph's events (spawn, wait_begin, wait_end,
             signal_set, satisfy: what they add to tasks is the difference); and a
             second pool with no observer, the control. The pools are made anew every
             50 rounds (one pool instance can run faster or slower than an identical
             one for as long as it lives). Every pool's workers are pinned, worker i
             to the i-th CPU (SchedulerOptions::pin_workers), so the pools of a round
             run on the same CPUs: unpinned, a pool's worker stays on the CPU it
             settled on, and where the host runs one vCPU slower than the other a
             whole pool instance is that much slower (--paired-unpinned shows it). The
             note counts the rounds whose observed and unobserved runs began on
             different CPUs: 0 on 1 worker when pinned; on more, the first task starts
             on whichever worker takes it, so there it says nothing. Each round gives
             one ratio level / no observer; the figure is the upper end of the 95 %
             confidence interval of their median (distribution-free, by order
             statistics; --paired-rounds rounds, default 300), so PASS means an
             overhead above the target is ruled out, not only that the median is
             below it. Targets: states <= 1.02, tasks <= 1.05, graph info. The note
             gives the median, the interval, the control's median and interval (two
             identical pools: it should hold 0) and the medians in ms.

  collector  C. fib(32) 10 times back to back at level full, Collector running: events
             drained (collector.events_collected()) per second of wall time against
             events produced per second (Recorder counters); "L/TBB" is then the fraction
             collected, and the dropped fraction is noted. With default CollectorOptions
             and, alternating, a Collector with a 100 us period. Info.
  trace      D. A real trace file of the heaviest stream fib can make: fib(32) 3 times
             per repetition on a pool of all workers, Recorder at full recording every
             own-deque push (deque_push_sample 1), a Collector with a 100 us period
             writing through a TraceFileSink into a file in the temporary directory;
             then the file is read back with TraceReader. Figures: events drained and
             written per second against events produced per second; bytes per event of
             the file (target <= 8); events read per second. Checks: the file reads back
             with no problem and holds exactly the events written, which are exactly the
             events drained.

Exit status: 0 when every answer was right, even if targets were missed; 2 on a wrong
answer (or broken event accounting) or bad usage; 3 when nothing progressed for 120 s;
4 when the compiled-out subprocess could not be run.
)";

constexpr const char* kSections[] = {"event", "ring", "overhead", "paired", "collector", "trace"};

// parse_command_line fills *config; it returns the exit status to end with at once
// after --help, --version or bad usage (program_cli.hpp), nullopt to run.
std::optional<int> parse_command_line(int argc, char** argv, Config* config) {
  lantern::tools::Program program("lantern_instr_bench", kUsage);
  auto& app = program.app();
  CLI::Option* reps = lantern::tools::number_option(app, "--reps", &config->reps, 1, 1000);
  CLI::Option* rounds = lantern::tools::number_option(app, "--paired-rounds", &config->paired_rounds, 6, 100000);
  lantern::tools::number_option(app, "--workers", &config->workers, 1u, lantern::kMaxWorkers);
  lantern::tools::choice_list_option(app, "--only", &config->only, {std::begin(kSections), std::end(kSections)});
  app.add_option("--off-path", config->off_path);
  app.add_flag("--quick", config->quick);
  app.add_flag("--markdown", config->output.markdown);
  app.add_flag("--json", config->output.json);
  app.add_flag("--raw", config->raw);
  app.add_flag("--paired-unpinned", config->paired_unpinned);
  if (const auto exit = program.parse(argc, argv)) return exit;
  if (config->quick) {
    if (reps->count() == 0) config->reps = 2;
    config->event_calls = 200'000;
    config->collector_fibs = 2;
    config->trace_fibs = 1;
    if (rounds->count() == 0) config->paired_rounds = 6;
  }
  if (config->workers == 0) config->workers = std::max(1u, std::thread::hardware_concurrency());
  if (config->only.empty()) config->only.assign(std::begin(kSections), std::end(kSections));
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (const auto exit = parse_command_line(argc, argv, &config)) return *exit;
  auto wants = [&](const char* section) {
    return std::find(config.only.begin(), config.only.end(), section) != config.only.end();
  };
  std::FILE* text = config.output.text();
#if !LANTERN_OBSERVER
  std::fprintf(
      text, "lantern_instr_bench: built with LANTERN_OBSERVER=OFF: no hook reaches the Recorder, nothing to measure\n");
  return 0;
#endif
  std::string paired;
  if (wants("paired")) {
    paired = ", paired: " + std::to_string(config.paired_rounds) + " rounds (+1 warm-up) on 1 and " +
             std::to_string(config.workers) + " workers";
  }
  std::fprintf(text, "lantern_instr_bench: %d measured reps per variant (+1 warm-up, rotating order), %u workers%s%s\n",
               config.reps, config.workers, config.quick ? ", --quick" : "", paired.c_str());
  bench::print_cpu_speeds("at the start", text);

  const bench::Progress progress;
  bench::Watchdog watchdog(120s);
  std::vector<bench::Row> rows;
  auto run = [&](const char* section, unsigned workers, auto&& body) {
    Context ctx{config, progress, watchdog, rows, section, workers};
    body(ctx);
    progress.clear();
  };
  if (wants("event")) run("event", 1, [](Context& ctx) { bench_event(ctx); });
  if (wants("ring")) run("ring", 1, [](Context& ctx) { bench_ring(ctx); });
  if (wants("overhead") || wants("collector")) {
    ObserverPools pools(config, config.workers);
    if (wants("overhead")) run("overhead", config.workers, [&](Context& ctx) { bench_overhead(ctx, pools); });
    if (wants("collector")) run("collector", config.workers, [&](Context& ctx) { bench_collector(ctx, pools); });
    pools.finish();
  }
  if (wants("paired")) {
    // On 1 worker and on --workers: the bound is measured on both.
    for (const unsigned workers : std::set<unsigned>{1u, config.workers}) {
      run("paired", workers, [workers](Context& ctx) { bench_paired(ctx, workers); });
    }
  }
  if (wants("trace")) run("trace", config.workers, [](Context& ctx) { bench_trace(ctx); });
  std::fprintf(text,
               "\ncolumns: \"Lantern\" = the variant measured, \"TBB\" = its baseline (one rdtsc; compiled out, or no "
               "observer where the row says so; "
               "events produced/s), \"L/TBB\" = variant / baseline\n");
  bench::report(config.output, rows, /*cpu_speeds=*/true);
  return 0;
}
