// SPDX-License-Identifier: Apache-2.0
// lantern_bench.hpp - what lantern_bench's benchmarks share: the configuration, the
// context a benchmark runs in, the repetition loop that alternates the two sides, and
// the benchmarks themselves, one file each in this folder (main.cpp lists and runs them).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness.hpp"
#include "lantern/lantern.hpp"
#include "pools.hpp"
#include "workloads.hpp"

namespace bench::scheduler {

struct Config {
  int reps = 7;                   // measured repetitions per side (plus one warm-up)
  bool quick = false;             // CI smoke: few reps, short idle test, few wake samples
  bench::Output output;           // --markdown, --json
  std::vector<unsigned> workers;  // worker counts to run; default 1 and all hardware threads
  std::vector<std::string> only;  // benchmark names; empty means the default set
  std::string topology;           // Lantern's SchedulerOptions::topology ("" = this machine)
  lantern::SleepStrategy sleep = lantern::SleepStrategy::condvar;  // Lantern's sleep strategy
  int wake_samples = 2000;                                         // per side and worker count
  std::chrono::milliseconds idle_duration{2000};
  bool pin = false;    // pin both sides' threads: slot i on the i-th CPU
  bool rayon = false;  // --peer rayon: the peer is rayon in a child process (rayon.cpp)
};

using Context = bench::Context<Config>;

struct Samples {
  std::vector<double> lantern, tbb;  // seconds per repetition, warm-up excluded
};

// alternate runs one warm-up and config.reps measured repetitions of each side, in the
// order L T, T L, L T, ... with a 10 ms pause before each. Each function returns the
// seconds its repetition measured (and checks its own answer).
inline Samples alternate(const Context& ctx, const std::function<double()>& lantern_rep,
                         const std::function<double()>& tbb_rep) {
  auto s = bench::rotate(
      ctx, 2, [&](std::size_t v) { return v == 0 ? lantern_rep() : tbb_rep(); }, ctx.config.reps);
  return {std::move(s[0]), std::move(s[1])};
}

// time_seconds runs fn once and returns how long it took.
template <class F>
double time_seconds(F&& fn) {
  const auto start = Clock::now();
  fn();
  return bench::seconds_between(start, Clock::now());
}

inline std::string side_label(const char* side, unsigned workers) {
  return std::string(side) + ", " + std::to_string(workers) + (workers == 1 ? " worker" : " workers");
}

// race: alternate() where each side's repetition is one call of a function that returns
// its answer (lantern_answer on Lantern's pool, tbb_answer in TBB's arena), checked
// against `expected` ("LABEL, Lantern, 2 workers: got ..., expected ...").
template <class LanternAnswer, class TbbAnswer>
Samples race(const Context& ctx, const std::string& label, long long expected, LanternAnswer&& lantern_answer,
             TbbAnswer&& tbb_answer) {
  auto timed = [&](const char* side, auto& answer) {
    long long result = 0;
    const double t = time_seconds([&] { result = answer(); });
    bench::check_equal(label + ", " + side_label(side, ctx.workers), result, expected);
    return t;
  };
  return alternate(
      ctx, [&] { return timed("Lantern", lantern_answer); }, [&] { return timed("TBB", tbb_answer); });
}

// parallel_for's problem: the sum of kSumN int64 (0, 1, ...) in chunks of kSumGrain
// (workloads.hpp, shared with the A/B kernels).
using bench::workloads::kSumGrain;
using bench::workloads::kSumN;
using bench::workloads::kSumValue;

// The Lantern side of the kernels the rayon peer runs too (rayon.cpp): one repetition on
// pools.lantern, run() included, returning its answer; the very code of the rows against
// oneTBB.
long long lantern_skynet_taskgroup(Pools& pools);                                        // skynet.cpp
long long lantern_nqueens_tg(Pools& pools);                                              // nqueens.cpp
std::int64_t lantern_parallel_sum(Pools& pools, const std::vector<std::int64_t>& data);  // parallel_for.cpp

// The benchmarks, in the order of the default set (main.cpp's --help describes each).
void bench_fib(Context& ctx, Pools& pools);               // fib.cpp
void bench_skynet(Context& ctx, Pools& pools);            // skynet.cpp
void bench_skynet_taskgroup(Context& ctx, Pools& pools);  // skynet.cpp
void bench_nqueens(Context& ctx, Pools& pools);           // nqueens.cpp
void bench_nqueens_tg(Context& ctx, Pools& pools);        // nqueens.cpp
void bench_parallel_for(Context& ctx, Pools& pools);      // parallel_for.cpp
void bench_spawn_chain(Context& ctx, Pools& pools);       // spawn_chain.cpp
void bench_taskgroup_chain(Context& ctx, Pools& pools);   // taskgroup_chain.cpp
void bench_wake(Context& ctx, Pools& pools);              // wake.cpp
void bench_idle(Context& ctx, Pools& pools);              // idle.cpp
void bench_lane_flood(Context& ctx, Pools& pools);        // lane_flood.cpp (opt-in)

// --peer rayon: the benchmark ctx.benchmark against rayon (rayon.cpp); false when rayon
// has no such kernel.
bool has_rayon_kernel(const std::string& benchmark);
void bench_rayon(Context& ctx, Pools& pools);

}  // namespace bench::scheduler
