// SPDX-License-Identifier: Apache-2.0
// taskgroup_chain.cpp - lantern_bench's taskgroup_chain row: 200 chains of 1000 through
// a TaskGroup / tbb::task_group inside one task (Scheduler::run / arena.execute): task i
// of a chain spawns task i + 1 into the chain's group, and the task that made the group
// waits on it. Lantern's side is lantern_instr_bench's chain workload (workloads.hpp,
// spawn_chains). Figure: ns per spawn.
#include <tbb/task_group.h>

#include "lantern_bench.hpp"
#include "workloads.hpp"

namespace bench::scheduler {
namespace {

constexpr int kGroupChains = 200;
using bench::workloads::kChainDepth;

// tbb_group_step: workloads.hpp's chain_step on a tbb::task_group.
void tbb_group_step(tbb::task_group& group, long long& steps, int i) {
  ++steps;
  if (i + 1 < kChainDepth) group.run([&group, &steps, i] { tbb_group_step(group, steps, i + 1); });
}

long long tbb_chains(int chains) {
  long long total = 0;
  for (int c = 0; c < chains; ++c) {
    long long steps = 0;
    tbb::task_group group;
    group.run([&] { tbb_group_step(group, steps, 0); });
    group.wait();
    total += steps;
  }
  return total;
}

}  // namespace

void bench_taskgroup_chain(Context& ctx, Pools& pools) {
  constexpr long long kSteps = static_cast<long long>(kGroupChains) * kChainDepth;
  const Samples s = race(
      ctx, "taskgroup_chain", kSteps,
      [&] { return pools.lantern.run([] { return bench::workloads::spawn_chains(kGroupChains); }); },
      [&] { return pools.tbb.execute([] { return tbb_chains(kGroupChains); }); });
  ctx.rows.push_back({"TaskGroup chain 1000 x200", ctx.workers, "ns/spawn", bench::median(s.lantern) * 1e9 / kSteps,
                      bench::median(s.tbb) * 1e9 / kSteps, Target::ratio(0.7)});
}

}  // namespace bench::scheduler
