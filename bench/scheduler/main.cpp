// SPDX-License-Identifier: Apache-2.0
// main.cpp - lantern_bench: Lantern's scheduler core against oneTBB.
//
// Every benchmark runs both schedulers in the same process, on the same worker counts,
// alternating their repetitions so that machine noise hits both, checks every answer,
// and reports medians in one table (run with --help for the list). This file has the
// command line and the run; each benchmark is in a file of its own beside it
// (lantern_bench.hpp lists them), the pools in pools.cpp.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <tbb/global_control.h>

#include "lantern/tools/program_cli.hpp"
#include "lantern/tools/topology_check.hpp"
#include "lantern_bench.hpp"

namespace {

using namespace bench::scheduler;
using namespace std::chrono_literals;

constexpr const char* kUsage = R"(usage: lantern_bench [options]

Runs Lantern's scheduler core and oneTBB side by side in one process, on 1 worker and
on all hardware threads (a Lantern Scheduler and a tbb::task_arena of the same
concurrency), checks every answer and prints one table: the median of each side, the
ratio Lantern/TBB (lower is better for every figure here), the target and PASS/MISS.
Repetitions alternate between the two sides (L T, T L, ...) after one warm-up each,
with a 10 ms pause before each so that both pools start asleep. Times are end to end
from the main thread: Lantern's run() hands the job to a worker and blocks, TBB's
execute() lets the main thread join the arena. Where the main thread only submits
(spawn_chain, wake, idle), TBB gets an arena whose W slots all go to TBB workers.
Exit status: 0 when every answer was right, even if targets were missed; 2 on a wrong
answer or bad usage; 3 when a benchmark made no progress for 120 s (a hang).

options:
  -h, --help           this text
  --version            print the version
  --reps N             measured repetitions per side, median reported, 1 to 1000
                       (default 7)
  --only NAME[,NAME]   run only these benchmarks (names below)
  --workers LIST       worker counts, e.g. 1,2 (default: 1 and hardware_concurrency)
  --quick              CI smoke test: 2 reps (unless --reps is given), 20 wake
                       samples (unless --wake-samples is given), 0.3 s idle test;
                       same problem sizes, so every answer is still checked
  --wake-samples N     wake latency samples per side and worker count, 20 to 100000
                       (default 2000; about 85 s per worker count)
  --markdown           print the table as Markdown (for bench/RESULTS.md)
  --json               print the rows as JSON, one object a line, on stdout (every
                       other line goes to stderr)
  --topology SPEC      Lantern's topology, e.g. "2 sockets x 8 cores x 2 threads"
                       (default: read this machine's)
  --sleep STRATEGY     Lantern's sleep strategy: condvar (default) or io_uring
  --peer NAME          the peer: tbb (default) or rayon. rayon runs the kernels
                       rayon has (fib, skynet, skynet_taskgroup as a rayon::scope per
                       node, nqueens_tg as a scope at every row, parallel_for) in a
                       child process, lantern_rayon_peer (bench/rayon), a pool of the
                       same worker count, pinned with --pin to the CPUs of Lantern's
                       workers, its repetitions alternating with Lantern's; default
                       5 reps (--reps). Targets: fib <= 0.8, skynet <= 0.9,
                       skynet_taskgroup <= 0.5, nqueens_tg <= 0.8; each row's note
                       gives both sides' range and each repetition's ratio. Where the
                       build found no cargo, each row says so
  --pin                pin both sides' threads, Lantern's worker i and the thread in
                       TBB's arena slot i alike, to the CPU Lantern pins its worker i
                       to (the i-th of its topology), and the main thread to the first
                       (or, once it has run TBB's side in an arena slot, to that
                       slot's CPU), so that the two sides of a row run on the same
                       CPUs (TBB's side pays its observer's callback on each arena
                       entry); for every benchmark but wake, idle and
                       lane_flood, whose figure is the kernel's placement of a woken
                       or preempted thread (their threads are unpinned first). A
                       synthetic --topology pins nothing. Every run prints how fast
                       each CPU is at its start and end: where they differ, a
                       1-worker row unpinned compares two CPUs as much as two
                       schedulers

benchmarks (default set, in this order):
  fib           fib(32) by binary fork-join: lantern::join / tbb::parallel_invoke.
                Figure: ns per join (total time / 3524577 joins). Target ratio <= 0.5.
  skynet        10-ary tree of 1,000,000 leaves, leaf i returns i, sum 499999500000.
                Lantern: each node splits its 10 children with nested lantern::join;
                TBB: task_group run x10 + wait per node. Figure: ms. Target ratio <= 1.0.
  skynet_taskgroup  the same tree, both sides with the same decomposition: a
                lantern::TaskGroup / tbb::task_group per node, 10 spawns (run) then
                wait. 1,111,110 tasks. Figure: ms. Target ratio <= 0.5.
  nqueens       nqueens(12) = 14200: one task per queen placement in each of the
                first 3 rows (Lantern TaskGroup / tbb::task_group), serial below.
                Figure: ms. Target ratio <= 1.0.
  nqueens_tg    nqueens(12) = 14200 with a TaskGroup / tbb::task_group at every row:
                a task for each legal placement, down to the leaves (856,188 tasks).
                Figure: ms. Target ratio <= 0.7.
  parallel_for  sum of 10,000,000 int64 with grain 1024: lantern::parallel_for with a
                (begin, end) body / tbb::parallel_for over a blocked_range with the
                simple_partitioner; each chunk adds its partial sum to one atomic.
                Figure: ms. Target ratio <= 1.0.
  spawn_chain   task i spawns task i+1, 1000 deep (Scheduler::spawn / task_group::run;
                the first task enters from the main thread by spawn / arena.enqueue),
                the main thread blocks on an atomic the last task sets. Figure: ns per
                spawn, from the first task's start to the last task's start / 999.
                Target ratio <= 0.7. A note gives how long task 0's own spawn took
                on each side: in a pool that starts asleep, that spawn finds the
                other workers asleep and would wake one (Lantern's poster wakes one
                ahead of it after a posted task fanned out: SLEEP.md's fan-out
                credit).
  taskgroup_chain  200 chains of 1000 through a TaskGroup / tbb::task_group inside one
                task (Scheduler::run / arena.execute): task i of a chain spawns task
                i+1 into the chain's group, and the task that made the group waits on
                it (the instrumentation bench's paired chain). Figure: ns per spawn.
                Target ratio <= 0.7, as the spawn chain's.
  wake          wake latency: both pools idle for 20 ms (Lantern's verified: every
                worker counted as sleeping and in state sleeping), then the main thread
                submits one task (Scheduler::spawn / task_arena::enqueue) that stamps
                its start. 2000 samples per side (--wake-samples), interleaved.
                Figures: p50 and p99 in us. Targets: Lantern p99 <= TBB p99 (ratio
                <= 1.0), p50 ratio <= 0.8. (p99 is the 20th-slowest of 2000 wakes; at
                500 samples it is the 5th, and a few late wakes of the host's on
                either side decide it: TBB's own p99 ranges 60-143 us over four such
                runs.) lantern_wake_diag (bench/diagnostics) takes the same samples
                with the floor beside them, a bare FUTEX_WAKE.
  idle          idle CPU: one tiny task every 10 ms for 2 s from the main thread
                (Scheduler::spawn / task_arena::enqueue), each side on its own; the
                CPU time of the pool's own threads (/proc/self/task/*/schedstat; not
                the ticking main thread) over wall time, in % of one core; the note
                gives the whole process (getrusage). Measured once per side per run.
                Target: Lantern <= 0.5 %.

opt-in (only with --only):
  lane_flood    4 outside threads each submit 20,000 tiny tasks (Scheduler::spawn /
                task_arena::enqueue) into a pool of W workers while a 5th outside
                thread spins (an oversubscribed machine). Figure: ms until every task
                ran. Target ratio <= 1.0.
)";

// Benchmark: one entry of the list. pinnable: --pin applies. Not to the rows whose
// figure is the kernel's placement of a woken or preempted thread (wake, idle,
// lane_flood): pinned, every wake of a 1-worker pool crosses to the worker's CPU (a
// halted vCPU on a VM), and two TBB threads pinned to one CPU take turns by time slice
// (TBB's 1-worker wake p99 reads 3.8 ms pinned, its idle CPU 24 % of a core).
struct Benchmark {
  const char* name;
  void (*run)(Context&, Pools&);
  bool in_default_set = true;
  bool pinnable = true;
};

constexpr Benchmark kBenchmarks[] = {
    {"fib", bench_fib},
    {"skynet", bench_skynet},
    {"skynet_taskgroup", bench_skynet_taskgroup},
    {"nqueens", bench_nqueens},
    {"nqueens_tg", bench_nqueens_tg},
    {"parallel_for", bench_parallel_for},
    {"spawn_chain", bench_spawn_chain},
    {"taskgroup_chain", bench_taskgroup_chain},
    {"lane_flood", bench_lane_flood, /*in_default_set=*/false, /*pinnable=*/false},
    {"wake", bench_wake, true, false},
    {"idle", bench_idle, true, false},
};

// parse_command_line fills *config; it returns the exit status to end with at once
// after --help, --version or bad usage (program_cli.hpp), nullopt to run.
std::optional<int> parse_command_line(int argc, char** argv, Config* config) {
  lantern::tools::Program program("lantern_bench", kUsage);
  auto& app = program.app();
  std::vector<std::string> names, default_set;
  for (const Benchmark& b : kBenchmarks) {
    (b.in_default_set ? default_set : names).push_back(b.name);
  }
  names.insert(names.begin(), default_set.begin(), default_set.end());  // --only's list: the default set first
  std::string sleep = lantern::strategy_name(config->sleep);
  CLI::Option* reps = lantern::tools::number_option(app, "--reps", &config->reps, 1, 1000);
  CLI::Option* wake_samples = lantern::tools::number_option(app, "--wake-samples", &config->wake_samples, 20, 100000);
  lantern::tools::choice_list_option(app, "--only", &config->only, names);
  lantern::tools::number_list_option(app, "--workers", &config->workers, 1u, lantern::kMaxWorkers);
  app.add_flag("--quick", config->quick);
  app.add_flag("--markdown", config->output.markdown);
  app.add_flag("--json", config->output.json);
  app.add_option("--topology", config->topology)->check(lantern::tools::topology_check());
  lantern::tools::choice_option(app, "--sleep", &sleep, {"condvar", "io_uring"});
  app.add_flag("--pin", config->pin);
  std::string peer = "tbb";
  lantern::tools::choice_option(app, "--peer", &peer, {"tbb", "rayon"});
  if (const auto exit = program.parse(argc, argv)) return exit;
  config->sleep = *lantern::parse_strategy(sleep);
  config->rayon = peer == "rayon";
  if (config->rayon) {
    if (reps->count() == 0) config->reps = 5;
    std::erase_if(default_set, [](const std::string& name) { return !has_rayon_kernel(name); });
    for (const std::string& name : config->only) {
      if (!has_rayon_kernel(name)) {
        std::fprintf(stderr, "lantern_bench: --peer rayon: rayon has no '%s' kernel\n", name.c_str());
        return 2;
      }
    }
  }
  if (config->quick) {
    if (reps->count() == 0) config->reps = 2;
    if (wake_samples->count() == 0) config->wake_samples = 20;
    config->idle_duration = 300ms;
  }
  if (config->workers.empty()) {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    config->workers = {1};
    if (hw > 1) config->workers.push_back(hw);
  }
  if (config->only.empty()) config->only = default_set;
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (const auto exit = parse_command_line(argc, argv, &config)) return *exit;
  bench::process_cpu_mask();  // read before anything is pinned
  std::FILE* text = config.output.text();

  // TBB's default is hardware_concurrency threads in all, the caller included, i.e.
  // hardware_concurrency - 1 workers. Allow as many workers as the widest Lantern pool,
  // which tbb_outside needs (its W slots are all for workers); arenas still cap each
  // benchmark at W threads.
  const unsigned widest = *std::max_element(config.workers.begin(), config.workers.end());
  tbb::global_control tbb_threads(tbb::global_control::max_allowed_parallelism,
                                  std::max<std::size_t>(widest + 1, std::thread::hardware_concurrency()));

  std::string worker_list;
  for (unsigned w : config.workers) worker_list += (worker_list.empty() ? "" : ",") + std::to_string(w);
  const std::string topology = config.topology.empty() ? "of this machine" : "\"" + config.topology + "\"";
  std::fprintf(
      text,
      "lantern_bench: %d measured reps per side (+1 warm-up, alternating), workers %s, topology %s, sleep %s%s%s%s\n",
      config.reps, worker_list.c_str(), topology.c_str(), lantern::strategy_name(config.sleep),
      config.quick ? ", --quick" : "", config.pin ? ", --pin" : "", config.rayon ? ", peer rayon" : "");
  bench::print_cpu_speeds("at the start", text);

  const bench::Progress progress;
  bench::Watchdog watchdog(120s);
  note_harness_threads();  // main and the watchdog: in neither pool's figure
  std::vector<bench::Row> rows;
  for (const Benchmark& b : kBenchmarks) {
    if (std::find(config.only.begin(), config.only.end(), b.name) == config.only.end()) continue;
    for (unsigned workers : config.workers) {
      Context ctx{config, progress, watchdog, rows, b.name, workers};
      progress.show(b.name, workers, "starting");
      watchdog.beat(b.name);
      Pools pools(workers, config.topology, config.sleep, config.pin && b.pinnable);
      (config.rayon ? bench_rayon : b.run)(ctx, pools);
      progress.clear();
    }
  }
  bench::report(config.output, rows, /*cpu_speeds=*/true);
  return 0;
}
