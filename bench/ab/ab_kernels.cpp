// SPDX-License-Identifier: Apache-2.0
// ab_kernels.cpp - one kernel of bench/ab/ab.py, compiled against some commit's core.
//
// ab.py builds this file once per kernel (AB_KERNEL names it) against the core of each
// commit it compares, so that both sides run the very same kernel source and differ only
// in the core: the kernels are bench/workloads.hpp's (lantern_bench's rows),
// parallel_for's sum and a TaskGraph wavefront, and use the public API only (Scheduler,
// join, TaskGroup, parallel_for, TaskGraph), which an older commit has too. The program runs one warm-up and `reps`
// timed repetitions on a Scheduler of `workers` pinned workers, checks every answer
// (exit 2 on a wrong one), and prints one line: the kernel, its unit and every
// repetition's figure. CLOCK `wall` (the default) times each repetition end to end from
// the main thread; `thread` times the CPU time of the worker thread that runs the
// kernel's root task, from inside it (1 worker only: there it is all the kernel's work),
// which a loaded machine's other processes do not inflate by preempting it.
//
//   lantern_ab_KERNEL WORKERS REPS [wall|thread]
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <numeric>
#include <vector>

#include "lantern/graph.hpp"
#include "lantern/join.hpp"
#include "lantern/scheduler.hpp"
#include "lantern/task_group.hpp"
#include "workloads.hpp"

namespace {

using namespace bench::workloads;

// thread_seconds: this thread's CPU time.
double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// timed: runs body() inside a task and adds that thread's CPU time for it to *cpu.
template <class Body>
auto timed(double* cpu, Body body) {
  const double start = thread_seconds();
  auto result = body();
  *cpu += thread_seconds() - start;
  return result;
}

struct Kernel {
  const char* name;
  const char* unit;
  double per_second;  // the figure is seconds times this
  long long expected;
};

#if AB_KERNEL == 1
constexpr Kernel kKernel{"fib_join", "ns/join", 1e9 / kFibJoins, kFibValue};
long long run_once(lantern::Scheduler& pool, double* cpu) {
  return pool.run([cpu] { return timed(cpu, [] { return fib_lantern(kFibN); }); });
}
#elif AB_KERNEL == 2
constexpr Kernel kKernel{"skynet_join", "ms", 1e3, kSkynetSum};
long long run_once(lantern::Scheduler& pool, double* cpu) {
  return pool.run([cpu] { return timed(cpu, [] { return skynet_join(0, kSkynetLeaves); }); });
}
#elif AB_KERNEL == 3
constexpr Kernel kKernel{"skynet_taskgroup", "ms", 1e3, kSkynetSum};
long long run_once(lantern::Scheduler& pool, double* cpu) {
  return pool.run([cpu] { return timed(cpu, [] { return skynet_tg(0, kSkynetLeaves); }); });
}
#elif AB_KERNEL == 4
constexpr Kernel kKernel{"nqueens_tg", "ms", 1e3, kQueensSolutions};
long long run_once(lantern::Scheduler& pool, double* cpu) {
  return pool.run([cpu] { return timed(cpu, [] { return queens_tg(0, 0, 0); }); });
}
#elif AB_KERNEL == 5
constexpr Kernel kKernel{"parallel_for", "ms", 1e3, kSumValue};
long long run_once(lantern::Scheduler& pool, double* cpu) {
  static const std::vector<std::int64_t> data = [] {
    std::vector<std::int64_t> d(kSumN);
    std::iota(d.begin(), d.end(), std::int64_t{0});
    return d;
  }();
  std::atomic<std::int64_t> total{0};
  pool.run([&] {
    return timed(cpu, [&] {
      lantern::parallel_for(0, kSumN, kSumGrain, [&](std::size_t begin, std::size_t end) {
        total.fetch_add(sum_chunk(data, begin, end), std::memory_order_relaxed);
      });
      return 0;
    });
  });
  return total.load();
}
#elif AB_KERNEL == 6
constexpr Kernel kKernel{"fib_join_extern", "ns/join", 1e9 / kFibJoins, kFibValue};
}  // namespace
long long fib_extern(int n);
namespace {
long long run_once(lantern::Scheduler& pool, double* cpu) {
  return pool.run([cpu] { return timed(cpu, [] { return fib_extern(kFibN); }); });
}
#elif AB_KERNEL == 7
// graph_wavefront: a TaskGraph of kWave x kWave empty nodes, each after its left and
// upper neighbours (two dependencies: one satisfied, one released), run whole each time:
// the dependency path's cost (lantern_graph_bench's wavefront row, against oneTBB).
constexpr int kWave = 100;
constexpr Kernel kKernel{"graph_wavefront", "us", 1e6, static_cast<long long>(kWave) * kWave};
std::atomic<long long> graph_nodes_run{0};
lantern::TaskGraph& wavefront() {
  static lantern::TaskGraph* graph = [] {
    auto* g = new lantern::TaskGraph;
    std::vector<lantern::GraphTask> cells;
    cells.reserve(static_cast<std::size_t>(kWave) * kWave);
    for (int r = 0; r < kWave; ++r)
      for (int c = 0; c < kWave; ++c) {
        cells.push_back(g->add([] { graph_nodes_run.fetch_add(1, std::memory_order_relaxed); }));
        if (c > 0) cells[cells.size() - 2].precede(cells.back());
        if (r > 0) cells[cells.size() - 1 - kWave].precede(cells.back());
      }
    return g;
  }();
  return *graph;
}
long long run_once(lantern::Scheduler& pool, double* cpu) {
  lantern::TaskGraph& g = wavefront();  // built outside the timing
  graph_nodes_run.store(0, std::memory_order_relaxed);
  pool.run([&] {
    return timed(cpu, [&] {
      g.run(pool);
      return 0;
    });
  });
  return graph_nodes_run.load(std::memory_order_relaxed);
}
#else
#error \
    "AB_KERNEL: 1 fib_join, 2 skynet_join, 3 skynet_taskgroup, 4 nqueens_tg, 5 parallel_for, 6 fib_join_extern, 7 graph_wavefront"
#endif

}  // namespace

#if AB_KERNEL == 6
// fib_extern: fib by join as an application writes it, a function with external linkage
// (bench/workloads.hpp's is internal, which changes what g++ inlines).
long long fib_extern(int n) {
  if (n < 2) return n;
  long long a = 0, b = 0;
  lantern::join([&] { a = fib_extern(n - 1); }, [&] { b = fib_extern(n - 2); });
  return a + b;
}
#endif

int main(int argc, char** argv) {
  const char* const program = argc > 0 ? argv[0] : "lantern_ab";
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "%s: usage: %s WORKERS REPS [wall|thread] (run by bench/ab/ab.py)\n", program, program);
    return 2;
  }
  const long workers = std::strtol(argv[1], nullptr, 10);
  const long reps = std::strtol(argv[2], nullptr, 10);
  if (workers < 1 || workers > 1024 || reps < 1 || reps > 1000) {
    std::fprintf(stderr, "%s: WORKERS must be 1 to 1024 and REPS 1 to 1000\n", program);
    return 2;
  }
  const bool thread_clock = argc == 4 && std::strcmp(argv[3], "thread") == 0;
  if (argc == 4 && !thread_clock && std::strcmp(argv[3], "wall") != 0) {
    std::fprintf(stderr, "%s: the clock is wall or thread, not '%s'\n", program, argv[3]);
    return 2;
  }
  if (thread_clock && workers != 1) {
    std::fprintf(stderr, "%s: the thread clock needs 1 worker\n", program);
    return 2;
  }
  lantern::SchedulerOptions options;
  options.workers = static_cast<std::uint32_t>(workers);
  options.pin_workers = true;
  lantern::Scheduler pool(options);
  std::printf("%s %s", kKernel.name, kKernel.unit);
  for (long rep = -1; rep < reps; ++rep) {  // rep -1: the warm-up
    double cpu = 0;
    const auto start = std::chrono::steady_clock::now();
    const long long answer = run_once(pool, &cpu);
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
    const double took = thread_clock ? cpu : wall.count();
    if (answer != kKernel.expected) {
      std::fprintf(stderr, "\n%s: %s gave %lld, expected %lld\n", program, kKernel.name, answer, kKernel.expected);
      return 2;
    }
    if (rep >= 0) std::printf(" %.4f", took * kKernel.per_second);
  }
  std::printf("\n");
  return 0;
}
