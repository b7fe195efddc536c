// SPDX-License-Identifier: Apache-2.0
// off_main.cpp - lantern_instr_bench_off: the compiled-out side of lantern_instr_bench.
// Built against lantern_core_no_observer (LANTERN_OBSERVER=0: every observer hook
// compiled out, in the library and in join.hpp's inline code), it runs only the
// workloads (instr_workloads.cpp) and prints machine-readable lines; lantern_instr_bench
// drives it as a subprocess over a pipe, one repetition per request, so that its
// repetitions interleave with the in-process variants.
#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include "harness.hpp"
#include "instr_workloads.hpp"
#include "lantern/lantern.hpp"
#include "lantern/tools/program_cli.hpp"

#if LANTERN_OBSERVER
#error "lantern_instr_bench_off must be built against lantern_core_no_observer (LANTERN_OBSERVER=0)"
#endif

namespace {

constexpr const char* kUsage = R"(usage: lantern_instr_bench_off [--workers N] [--reps N] [--serve]

The compiled-out side of lantern_instr_bench: the overhead section's workloads (fib(32)
and skynet 1M, ten times per repetition, by lantern::join; skynet 1M by a TaskGroup per
node, three times; nqueens(12) with a TaskGroup at every row; 200 spawn chains), built
against lantern_core_no_observer (LANTERN_OBSERVER=0, every observer hook compiled out). lantern_instr_bench runs it for you (--serve); run alone
it does 1 warm-up and --reps (default 7) measured runs of each workload on one pool and
prints one machine-readable line per workload:
  compiled_out workload=fib workers=2 seconds=0.0123,0.0124,...

options:
  -h, --help    this text
  --version     print the version
  --workers N   pool width, 1 to 1024 (default: all hardware threads)
  --reps N      measured runs of each workload, 1 to 1000 (default 7)
  --serve       answer requests on stdin, one line each (a workload's name: fib, skynet,
                skynet_tg, nqueens_tg, chain; or quit), with one "NAME seconds=S
                result=R" line per request (the parent checks R)

Exit status 0; 2 on a wrong answer or bad usage; 1 on an unknown request.
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace bench::instr;
  unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  int reps = 7;
  bool serve = false;
  lantern::tools::Program program("lantern_instr_bench_off", kUsage);
  auto& app = program.app();
  lantern::tools::number_option(app, "--workers", &workers, 1u, lantern::kMaxWorkers);
  lantern::tools::number_option(app, "--reps", &reps, 1, 1000);
  app.add_flag("--serve", serve);
  if (const auto exit = program.parse(argc, argv)) return *exit;
  lantern::Scheduler pool({.workers = workers});
  const std::string side = "compiled out, " + std::to_string(workers) + " workers";
  if (!serve) {
    for (const Workload& w : workloads()) {
      std::string times;
      for (int r = 0; r <= reps; ++r) {
        bench::settle();
        const double s = run_once(pool, w, side);
        if (r > 0) times += (times.empty() ? "" : ",") + std::to_string(s);
      }
      std::printf("compiled_out workload=%s workers=%u seconds=%s\n", w.name, workers, times.c_str());
    }
    return 0;
  }
  std::printf("%s observer=%d workers=%u\n", kReadyWord, LANTERN_OBSERVER, pool.worker_count());
  std::fflush(stdout);
  char line[256];
  while (std::fgets(line, sizeof line, stdin)) {
    std::string request(line);
    request.erase(request.find_last_not_of("\r\n") + 1);
    if (request == "quit") break;
    const Workload* w = find_workload(request);
    if (!w) {
      std::fprintf(stderr, "lantern_instr_bench_off: unknown request '%s'\n", request.c_str());
      return 1;
    }
    long long result = 0;
    const auto start = bench::Clock::now();
    result = pool.run([w] { return w->body(); });
    const double seconds = bench::seconds_between(start, bench::Clock::now());
    std::printf("%s seconds=%.9f result=%lld\n", w->name, seconds, result);
    std::fflush(stdout);
  }
  return 0;
}
