// SPDX-License-Identifier: Apache-2.0
// idle.cpp - lantern_bench's idle row: idle CPU. One tiny task every 10 ms for 2 s
// (--quick: 0.3 s) from the main thread (Scheduler::spawn / task_arena::enqueue), each
// side on its own; the figure is the CPU time of the pool's own threads
// (/proc/self/task/*/schedstat; not the ticking main thread) over wall time, in % of one
// core; the note gives the whole process (getrusage). Measured once per side per run.
#include <sys/resource.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "lantern_bench.hpp"

namespace bench::scheduler {
namespace {

constexpr auto kIdleTick = std::chrono::milliseconds(10);

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// thread_cpu_ns: CPU time thread `tid` has run, in ns (schedstat's first field: exact,
// unlike stat's utime/stime in clock ticks). 0 for a thread that is gone.
std::uint64_t thread_cpu_ns(pid_t tid) {
  std::FILE* f = std::fopen(("/proc/self/task/" + std::to_string(tid) + "/schedstat").c_str(), "r");
  if (!f) return 0;
  unsigned long long ns = 0;
  if (std::fscanf(f, "%llu", &ns) != 1) ns = 0;
  std::fclose(f);
  return ns;
}

// IdleCpu: over one idle run, the CPU time of the pool's own threads (the figure) and
// of the whole process (which includes the ticking main thread), both in % of one core.
struct IdleCpu {
  double pool_percent, process_percent;
};

// idle_cpu submits one tiny task every kIdleTick for `duration` from the main thread.
// `threads` lists the pool's threads; asked at the start and at the end (a pool may
// start threads lazily: those count from zero).
IdleCpu idle_cpu(Context& ctx, const char* side, std::chrono::milliseconds duration,
                 const std::function<void(std::function<void()>)>& submit,
                 const std::function<std::vector<pid_t>()>& threads) {
  std::atomic<int> ran{0};
  auto task = [&ran] {
    ran.fetch_add(1, std::memory_order_release);
    ran.notify_one();
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the other pool fall asleep first
  std::map<pid_t, std::uint64_t> start_ns;
  for (pid_t t : threads()) start_ns[t] = thread_cpu_ns(t);
  const double cpu_start = cpu_seconds();
  const auto start = Clock::now();
  int submitted = 0;
  for (auto next = start; next < start + duration; next += kIdleTick) {
    std::this_thread::sleep_until(next);
    submit(task);
    ++submitted;
  }
  for (int seen = ran.load(std::memory_order_acquire); seen != submitted; seen = ran.load(std::memory_order_acquire)) {
    ran.wait(seen, std::memory_order_acquire);
  }
  const double wall = bench::seconds_between(start, Clock::now());
  const double cpu = cpu_seconds() - cpu_start;
  std::uint64_t pool_ns = 0;
  for (pid_t t : threads()) {
    const auto it = start_ns.find(t);
    pool_ns += thread_cpu_ns(t) - (it == start_ns.end() ? 0 : it->second);
  }
  bench::check_equal(std::string("idle tasks run, ") + side_label(side, ctx.workers), ran.load(), submitted);
  return {static_cast<double>(pool_ns) * 1e-9 / wall * 100.0, cpu / wall * 100.0};
}

}  // namespace

void bench_idle(Context& ctx, Pools& pools) {
  ctx.step(0, 2);
  const IdleCpu lantern = idle_cpu(
      ctx, "Lantern", ctx.config.idle_duration,
      [&](std::function<void()> task) { pools.lantern.spawn(std::move(task)); },
      [&] { return pools.lantern_worker_threads(); });
  ctx.step(1, 2);
  const IdleCpu tbb = idle_cpu(
      ctx, "TBB", ctx.config.idle_duration,
      [&](std::function<void()> task) { pools.tbb_outside.enqueue(std::move(task)); },
      [&] { return pools.tbb_worker_threads(); });
  ctx.rows.push_back(
      {"idle CPU, 10 ms ticks",
       ctx.workers,
       "% core",
       lantern.pool_percent,
       tbb.pool_percent,
       Target::lantern(0.5),
       "the pool's own threads (/proc/self/task/*/schedstat); whole process (getrusage, includes the "
       "ticking main thread): Lantern " +
           bench::format_number(lantern.process_percent) + " %, TBB " + bench::format_number(tbb.process_percent) +
           " %",
       {{"lantern_process_percent", lantern.process_percent}, {"tbb_process_percent", tbb.process_percent}}});
}

}  // namespace bench::scheduler
