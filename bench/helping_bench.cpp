// helping_bench - lanes served during fork-join (core/src/HELPING.md, "On the join
// path"; issue 11 defect 5), and what the join-path help check costs fib.
//
// Built twice: lantern_helping_bench (the check every LANTERN_JOIN_HELP_INTERVAL joins)
// and lantern_helping_bench_nocheck (-DLANTERN_JOIN_HELP_INTERVAL=0: join without it,
// the code before the fix). Run both, alternately, several times; compare medians.
//
//   lane:  fib(36) by join on W workers (1, 2); 20 ms in, an outside thread submits a
//          task into lane 0 (help_min_wait 50 us). Reports how long after becoming
//          eligible (submit + 50 us) it started, in ms.
//   fib:   fib(32) by lantern::join on 2 workers, and by tbb::parallel_invoke in a
//          2-thread arena, median of 7 runs each, ms; and the ratio.
#include <tbb/global_control.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "lantern/lantern.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t fib(int n) {
  if (n < 2) return static_cast<std::uint64_t>(n);
  std::uint64_t a = 0, b = 0;
  lantern::join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}

std::uint64_t tbb_fib(int n) {
  if (n < 2) return static_cast<std::uint64_t>(n);
  std::uint64_t a = 0, b = 0;
  tbb::parallel_invoke([&] { a = tbb_fib(n - 1); }, [&] { b = tbb_fib(n - 2); });
  return a + b;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

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
  pool.run([&] {
    started = true;
    volatile std::uint64_t r = fib(36);
    (void)r;
  });
  outside.join();
  while (!done.load()) std::this_thread::yield();
  const auto eligible = submitted + std::chrono::microseconds(50);
  return std::chrono::duration<double, std::milli>(ran - eligible).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  std::printf("variant: %s (LANTERN_JOIN_HELP_INTERVAL=%u)\n",
              lantern::detail::Worker::kJoinHelpInterval ? "join-path help check" : "no join-path check",
              lantern::detail::Worker::kJoinHelpInterval);
  for (std::uint32_t w : {1u, 2u}) {
    std::vector<double> d;
    for (int i = 0; i < reps; ++i) d.push_back(lane_delay_ms(w));
    std::printf("lane task start after eligible, fib(36) on %u worker(s): median %.3f ms (min %.3f, max %.3f, %d runs)\n",
                w, median(d), *std::min_element(d.begin(), d.end()), *std::max_element(d.begin(), d.end()), reps);
  }
  std::vector<double> lt, tt;
  {
    lantern::Scheduler pool({.workers = 2});
    tbb::task_arena arena(2);
    for (int i = 0; i < 7; ++i) {
      auto t0 = Clock::now();
      volatile std::uint64_t r = pool.run([] { return fib(32); });
      lt.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      t0 = Clock::now();
      arena.execute([&] { r = tbb_fib(32); });
      tt.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      (void)r;
    }
  }
  std::printf("fib(32) 2 workers: lantern join median %.2f ms, oneTBB parallel_invoke median %.2f ms, ratio %.3f\n",
              median(lt), median(tt), median(lt) / median(tt));
  return 0;
}
