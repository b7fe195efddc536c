// SPDX-License-Identifier: Apache-2.0
// instr_workloads.cpp - lantern_instr_bench's workloads (instr_workloads.hpp), all in
// this one translation unit, built into both programs.
#include "instr_workloads.hpp"

#include <sched.h>

#include <chrono>

#include "harness.hpp"
#include "workloads.hpp"  // bench/workloads.hpp: the jobs themselves

namespace bench::instr {
namespace {

using namespace bench::workloads;

long long run_fib() { return fib_lantern(kFibN); }
// One skynet takes ~7 ms on 2 workers: shorter than the scheduling noise of a shared
// 2-core machine (one late wake-up of the second worker is 5 %). Ten back to back inside
// one Scheduler::run make a repetition long enough to measure a few per cent.
constexpr int kSkynetRounds = 10;
long long run_skynet() {
  long long sum = 0;
  for (int i = 0; i < kSkynetRounds; ++i) sum += skynet_join(0, kSkynetLeaves);
  return sum;
}

// The spawn-heavy workloads of lantern_bench (skynet by TaskGroup, nqueens(12) with a
// TaskGroup at every row, spawn chains), where the task hooks fire once per task.
constexpr int kSkynetTgRounds = 3;
long long run_skynet_tg() {
  long long sum = 0;
  for (int i = 0; i < kSkynetTgRounds; ++i) sum += skynet_tg(0, kSkynetLeaves);
  return sum;
}
long long run_nqueens_tg() { return queens_tg(0, 0, 0); }
constexpr int kChains = 200;
long long run_chains() { return spawn_chains(kChains); }

long long run_skynet_once() { return skynet_join(0, kSkynetLeaves); }
long long run_skynet_tg_once() { return skynet_tg(0, kSkynetLeaves); }

constexpr Workload kWorkloads[] = {
    {"fib", "fib(32) join", kFibValue, run_fib},
    {"skynet", "skynet 1M x10 (join)", kSkynetSum* kSkynetRounds, run_skynet},
    {"skynet_tg", "skynet 1M x3 (TaskGroup)", kSkynetSum* kSkynetTgRounds, run_skynet_tg},
    {"nqueens_tg", "nqueens(12) TaskGroup every row", kQueensSolutions, run_nqueens_tg},
    {"chain", "spawn chain 1000 x200 (TaskGroup)", static_cast<long long>(kChainDepth) * kChains, run_chains},
};

constexpr Workload kPairedWorkloads[] = {
    kWorkloads[0],  // fib(32)
    {"skynet", "skynet 1M (join)", kSkynetSum, run_skynet_once},
    {"skynet_tg", "skynet 1M (TaskGroup)", kSkynetSum, run_skynet_tg_once},
    kWorkloads[3],  // nqueens(12)
    kWorkloads[4],  // 200 spawn chains
};

}  // namespace

std::span<const Workload> workloads() { return kWorkloads; }
std::span<const Workload> paired_workloads() { return kPairedWorkloads; }

const Workload* find_workload(const std::string& name) {
  for (const Workload& w : kWorkloads) {
    if (name == w.name) return &w;
  }
  return nullptr;
}

double run_once(lantern::Scheduler& pool, const Workload& w, const std::string& side, int* cpu) {
  long long result = 0;
  const auto start = Clock::now();
  result = pool.run([&w, cpu] {
    if (cpu) *cpu = sched_getcpu();
    return w.body();
  });
  const double seconds = bench::seconds_between(start, Clock::now());
  bench::check_equal(std::string(w.label) + ", " + side, result, w.expected);
  return seconds;
}

}  // namespace bench::instr
