// SPDX-License-Identifier: Apache-2.0
// helping_bench - lanes served during fork-join (core/helping/README.md, "On the join
// path"), and what the join-path help check costs fib, in one run.
//
// Built twice: lantern_helping_bench (the check every LANTERN_JOIN_HELP_INTERVAL joins)
// and lantern_helping_bench_nocheck (-DLANTERN_JOIN_HELP_INTERVAL=0: join without it,
// so a lane task waits for the fork-join work to end). lantern_helping_bench runs the
// nocheck build as a child process and alternates repetitions between the two (the
// check's first), so both variants are measured in the same run, under the same load.
//
//   lane:  fib(36) by join on W workers (1, 2); 20 ms in, an outside thread submits a
//          task into lane 0 (help_min_wait 50 us). Figure: how long after becoming
//          eligible (submit + 50 us) it started, ms. Target: <= 1 ms with the check.
//          Without the check the task waits for fib's end (about a second): one
//          repetition of that variant per worker count unless --reps-nocheck says more.
//   fib:   fib(32) by lantern::join on W workers, with the check / without it.
//          Target: ratio <= 1.02. And oneTBB's parallel_invoke in a W-thread arena,
//          for scale (info).
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "lantern/lantern.hpp"
#include "lantern/tools/program_cli.hpp"
#include "tbb_workloads.hpp"
#include "workloads.hpp"

namespace {

using bench::Clock;
using bench::workloads::fib_lantern;  // fib by lantern::join
using bench::workloads::fib_tbb;      // fib by tbb::parallel_invoke
using bench::workloads::kFibValue;    // fib(32)

constexpr bool kHasCheck = lantern::detail::Worker::kJoinHelpInterval != 0;
// The same source builds both programs; each names itself in its messages.
constexpr const char* kProgram = kHasCheck ? "lantern_helping_bench" : "lantern_helping_bench_nocheck";

constexpr long long kFib36 = 14930352;

// lane_delay_ms: the lane scenario once; ms from eligible to start.
double lane_delay_ms(std::uint32_t workers) {
  lantern::SchedulerOptions o;
  o.workers = workers;
  o.help_min_wait_us = 50;
  lantern::Scheduler pool(o);
  std::atomic<bool> started{false};
  Clock::time_point submitted, ran;
  std::atomic<bool> done{false};
  std::thread outside([&] {
    while (!started.load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the scenario: 20 ms into fib
    submitted = Clock::now();
    pool.submit_to_lane(0, [&] {
      ran = Clock::now();
      done = true;
    });
  });
  const long long r = pool.run([&] {
    started = true;
    return fib_lantern(36);
  });
  outside.join();
  while (!done.load()) std::this_thread::yield();  // the lane task runs before the pool idles
  bench::check_equal("fib(36) in the lane scenario", r, kFib36);
  const auto eligible = submitted + std::chrono::microseconds(50);
  return std::chrono::duration<double, std::milli>(ran - eligible).count();
}

// FibPool: fib(32) by join on a pool of W workers, once per call; seconds.
struct FibPool {
  explicit FibPool(std::uint32_t workers) : pool(lantern::SchedulerOptions{.workers = workers}) {}
  double once() {
    bench::settle();
    const auto t0 = Clock::now();
    const long long r = pool.run([] { return fib_lantern(32); });
    const double s = bench::seconds_between(t0, Clock::now());
    bench::check_equal("fib(32) by join", r, kFibValue);
    return s;
  }
  lantern::Scheduler pool;
};

// serve: the child side. Requests, one per line: "fib W" (one fib(32) repetition on a
// W-worker pool, kept between requests), "lane W" (the lane scenario once). Replies:
// "seconds=S" / "ms=M". Ends at end of input.
int serve() {
  std::unique_ptr<FibPool> pool;
  char line[128];
  while (std::fgets(line, sizeof line, stdin)) {
    unsigned w = 0;
    if (std::sscanf(line, "fib %u", &w) == 1) {
      if (!pool || pool->pool.worker_count() != w) pool = std::make_unique<FibPool>(w);
      std::printf("seconds=%.9f\n", pool->once());
    } else if (std::sscanf(line, "lane %u", &w) == 1) {
      std::printf("ms=%.6f\n", lane_delay_ms(w));
    } else {
      std::fprintf(stderr, "%s --serve: unknown request '%s'\n", kProgram, line);
      return 2;
    }
    std::fflush(stdout);
  }
  return 0;
}

double reply_number(bench::Child& child, const std::string& request, const char* format) {
  const std::string reply = child.ask(request);
  double v = 0;
  if (std::sscanf(reply.c_str(), format, &v) != 1) child.fail("unexpected reply '" + reply + "' to '" + request + "'");
  return v;
}

const char* kUsage = R"(usage: lantern_helping_bench [options]

Lanes served during fork-join (core/helping/README.md, "On the join path"), and what the
join path's help check costs, in one run: this program has the check (every
LANTERN_JOIN_HELP_INTERVAL joins), lantern_helping_bench_nocheck is the same source
built without it; this program starts it as a child process and alternates
repetitions with it. Prints one table (medians); "Lantern" is the variant with the
check, "TBB" the column of its baseline (named for lantern_bench's table).

  lane   fib(36) by join on W workers; 20 ms in an outside thread submits a task into
         lane 0 (help_min_wait 50 us). Figure: ms from eligible (submit + 50 us) to
         its start. Target: <= 1 ms with the check. The baseline (no check) waits for
         fib's end, about a second, so it runs --reps-nocheck times.
  fib    fib(32) by lantern::join, with the check / without. Target: ratio <= 1.02.
         Also oneTBB's parallel_invoke in a W-thread arena against the check (info).

options:
  -h, --help            this text
  --version             print the version
  --reps N              repetitions per variant (default 7)
  --reps-nocheck N      lane repetitions of the variant without the check (default 1)
  --workers LIST        worker counts, e.g. 1,2 (default 1,2)
  --markdown            print the table as Markdown (for bench/RESULTS.md)
  --json                print the rows as JSON, one object a line, on stdout (every
                        other line goes to stderr)
  --nocheck-path PATH   lantern_helping_bench_nocheck to run (default: beside this one)

Exit status: 0 when every answer was right (even if targets were missed), 1 on a
failed child, 2 on bad usage or a wrong answer, 3 on a hang (no progress for 300 s).
)";

// The variant without the check only serves lantern_helping_bench's requests.
const char* kNocheckUsage = R"(usage: lantern_helping_bench_nocheck --serve

lantern_helping_bench's source built without the join path's help check
(LANTERN_JOIN_HELP_INTERVAL=0). It is not run by hand: lantern_helping_bench starts it
as its child (--serve) and alternates repetitions with it. Run lantern_helping_bench.

options:
  -h, --help            this text
  --version             print the version
  --serve               answer lantern_helping_bench's requests on stdin/stdout

Exit status: 0 at the end of its input, 2 on bad usage.
)";

}  // namespace

int main(int argc, char** argv) {
  lantern::tools::Program program(kProgram, kHasCheck ? kUsage : kNocheckUsage);
  unsigned reps = 7, reps_nocheck = 1;
  bench::Output output;
  bool serve_mode = false;
  std::vector<std::uint32_t> worker_counts = {1, 2};
  std::string nocheck_path = LANTERN_HELPING_NOCHECK_PATH;
  auto& app = program.app();
  lantern::tools::number_option(app, "--reps", &reps, 1u, 1000u);
  lantern::tools::number_option(app, "--reps-nocheck", &reps_nocheck, 1u, 1000u);
  lantern::tools::number_list_option<std::uint32_t>(app, "--workers", &worker_counts, 1, lantern::kMaxWorkers);
  app.add_flag("--markdown", output.markdown);
  app.add_flag("--json", output.json);
  app.add_option("--nocheck-path", nocheck_path);
  app.add_flag("--serve", serve_mode)->group("");  // the child's side (internal)
  if (const auto exit = program.parse(argc, argv)) return *exit;
  if (serve_mode) return serve();
  if (!kHasCheck) return program.usage_error("this is the variant without the check; run lantern_helping_bench");

  bench::Child nocheck(kProgram, nocheck_path, {"--serve"});
  bench::Watchdog watchdog(std::chrono::seconds(300));
  bench::Progress progress;
  std::vector<bench::Row> rows;
  std::fprintf(output.text(),
               "%s: %u repetitions per variant, alternating with %s; join-path help check every %u joins\n\n", kProgram,
               reps, nocheck_path.c_str(), lantern::detail::Worker::kJoinHelpInterval);
  std::fflush(output.text());
  for (const std::uint32_t w : worker_counts) {
    std::vector<double> with, without;
    for (unsigned i = 0; i < std::max(reps, reps_nocheck); ++i) {
      progress.show("lane", w, std::to_string(i) + "/" + std::to_string(reps));
      if (i < reps) with.push_back(lane_delay_ms(w));
      if (i < reps_nocheck) without.push_back(reply_number(nocheck, "lane " + std::to_string(w), "ms=%lf"));
      watchdog.beat("lane");
    }
    char note[160];
    std::snprintf(note, sizeof note, "with the check: min %.3f, max %.3f ms over %zu runs", bench::percentile(with, 0),
                  bench::percentile(with, 100), with.size());
    rows.push_back({"lane task start after eligible (check / none)", w, "ms", bench::median(with),
                    bench::median(without), bench::Target::lantern(1.0), note});
  }
  for (const std::uint32_t w : worker_counts) {
    FibPool pool(w);
    tbb::task_arena arena(static_cast<int>(w));
    std::vector<double> with, without, tbb_times;
    pool.once();  // warm-up, both sides
    reply_number(nocheck, "fib " + std::to_string(w), "seconds=%lf");
    for (unsigned i = 0; i < reps; ++i) {
      progress.show("fib", w, std::to_string(i) + "/" + std::to_string(reps));
      if (i % 2 == 0) {
        with.push_back(pool.once());
        without.push_back(reply_number(nocheck, "fib " + std::to_string(w), "seconds=%lf"));
      } else {
        without.push_back(reply_number(nocheck, "fib " + std::to_string(w), "seconds=%lf"));
        with.push_back(pool.once());
      }
      bench::settle();
      const auto t0 = Clock::now();
      long long r = 0;
      arena.execute([&] { r = fib_tbb(32); });
      tbb_times.push_back(bench::seconds_between(t0, Clock::now()));
      bench::check_equal("fib(32) by tbb::parallel_invoke", r, kFibValue);
      watchdog.beat("fib");
    }
    rows.push_back({"fib(32) join: check / none", w, "ms", bench::median(with) * 1e3, bench::median(without) * 1e3,
                    bench::Target::ratio(1.02)});
    rows.push_back({"fib(32) join with check / oneTBB", w, "ms", bench::median(with) * 1e3,
                    bench::median(tbb_times) * 1e3, bench::Target::info()});
  }
  progress.clear();
  output.rows(rows);
  return 0;
}
