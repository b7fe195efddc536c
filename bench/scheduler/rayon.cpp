// SPDX-License-Identifier: Apache-2.0
// rayon.cpp - lantern_bench --peer rayon: Lantern's fork-join kernels against rayon's,
// rayon running in a child process (lantern_rayon_peer, bench/rayon) with the same
// kernels, one pool of the same worker count pinned to the same CPUs. Repetitions
// alternate (L R, R L, ...), each timed from its own main thread around the pool's entry
// (Scheduler::run, ThreadPool::install), the pipe's round trip outside the figure.
#include <cmath>
#include <cstdio>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "lantern_bench.hpp"
#include "workloads.hpp"

#ifndef LANTERN_RAYON_PEER_PATH
#define LANTERN_RAYON_PEER_PATH ""  // not built: cargo or librust-rayon-dev missing
#endif

namespace bench::scheduler {
namespace {

using namespace bench::workloads;

// RayonKernel: one row against rayon: lantern_bench's benchmark name (also the child's
// request), the row's label, unit, figure per second, target ratio (0: none) and answer.
struct RayonKernel {
  const char* name;
  const char* label;
  const char* unit;
  double per_second;
  double target;
  long long expected;
};

// The targets: fib by join <= 0.8x rayon's join; skynet by join <= 0.9x; skynet by
// TaskGroup <= 0.5x rayon's scope; nqueens with a TaskGroup at every row <= 0.8x rayon's
// scope. parallel_for's row is for information.
const RayonKernel kRayonKernels[] = {
    {"fib", "fib(32) join", "ns/join", 1e9 / kFibJoins, 0.8, kFibValue},
    {"skynet", "skynet 1M (join)", "ms", 1e3, 0.9, kSkynetSum},
    {"skynet_taskgroup", "skynet 1M (TaskGroup / scope)", "ms", 1e3, 0.5, kSkynetSum},
    {"nqueens_tg", "nqueens(12) every row (TaskGroup / scope)", "ms", 1e3, 0.8, kQueensSolutions},
    {"parallel_for", "parallel_for sum 10M", "ms", 1e3, 0, kSumValue},
};

const RayonKernel* find_kernel(const std::string& name) {
  for (const RayonKernel& k : kRayonKernels) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

// lantern_answer: one repetition of Lantern's side of kernel k.
long long lantern_answer(const RayonKernel& k, Pools& pools, const std::vector<std::int64_t>& data) {
  const std::string name = k.name;
  if (name == "fib") return pools.lantern.run([] { return fib_lantern(kFibN); });
  if (name == "skynet") return pools.lantern.run([] { return skynet_join(0, kSkynetLeaves); });
  if (name == "skynet_taskgroup") return lantern_skynet_taskgroup(pools);
  if (name == "nqueens_tg") return lantern_nqueens_tg(pools);
  return lantern_parallel_sum(pools, data);
}

std::string format_range(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return format_number(*lo) + "-" + format_number(*hi);
}

}  // namespace

bool has_rayon_kernel(const std::string& benchmark) { return find_kernel(benchmark) != nullptr; }

void bench_rayon(Context& ctx, Pools& pools) {
  const RayonKernel& k = *find_kernel(ctx.benchmark);
  const Target target = k.target > 0 ? Target::ratio(k.target) : Target::info();
  Row row{k.label, ctx.workers, k.unit, std::nan(""), std::nan(""), target};
  row.peer = "rayon";
  const std::string path = LANTERN_RAYON_PEER_PATH;
  if (path.empty()) {
    row.target = Target::info();
    row.note = "rayon: cargo or librust-rayon-dev missing (scripts/setup.sh installs them)";
    ctx.rows.push_back(row);
    return;
  }

  std::vector<std::string> args = {"--serve", "--workers", std::to_string(ctx.workers)};
  if (!pools.cpus.empty()) {  // pinned: rayon's worker i on the CPU of Lantern's worker i
    std::string cpus;
    for (const int cpu : pools.cpus) cpus += (cpus.empty() ? "" : ",") + std::to_string(cpu);
    args.insert(args.end(), {"--cpus", cpus});
  }
  bench::Child rayon("lantern_bench", path, args);
  std::vector<std::int64_t> data;
  if (std::string(k.name) == "parallel_for") {
    data.resize(kSumN);
    std::iota(data.begin(), data.end(), std::int64_t{0});
  }

  const std::string what = std::string(k.label) + ", ";
  const Samples s = alternate(
      ctx,
      [&] {
        long long result = 0;
        const double t = time_seconds([&] { result = lantern_answer(k, pools, data); });
        bench::check_equal(what + side_label("Lantern", ctx.workers), result, k.expected);
        return t;
      },
      [&] {
        const std::string reply = rayon.ask(k.name);
        double seconds = 0;
        long long answer = 0;
        if (std::sscanf(reply.c_str(), "%lf %lld", &seconds, &answer) != 2) {
          rayon.fail("unexpected reply '" + reply + "' to '" + k.name + "'");
        }
        bench::check_equal(what + side_label("rayon", ctx.workers), answer, k.expected);
        return seconds;
      });

  // The figures per repetition, and each repetition's ratio (its Lantern run against
  // the rayon run beside it): the spread the median hides.
  std::vector<double> lantern, peer, ratios;
  int met = 0;
  for (std::size_t i = 0; i < s.lantern.size(); ++i) {
    lantern.push_back(s.lantern[i] * k.per_second);
    peer.push_back(s.tbb[i] * k.per_second);
    ratios.push_back(s.lantern[i] / s.tbb[i]);
    if (k.target > 0 && ratios.back() <= k.target) ++met;
  }
  row.lantern = bench::median(lantern);
  row.tbb = bench::median(peer);
  const auto [ratio_lo, ratio_hi] = std::minmax_element(ratios.begin(), ratios.end());
  row.note = std::to_string(lantern.size()) + " reps: Lantern " + format_range(lantern) + ", rayon " +
             format_range(peer) + " " + k.unit + "; ratio per rep " + format_ratio(*ratio_lo) + "-" +
             format_ratio(*ratio_hi);
  if (k.target > 0) row.note += ", target met in " + std::to_string(met) + " of " + std::to_string(ratios.size());
  row.values = {{"lantern_min", *std::min_element(lantern.begin(), lantern.end())},
                {"lantern_max", *std::max_element(lantern.begin(), lantern.end())},
                {"rayon_min", *std::min_element(peer.begin(), peer.end())},
                {"rayon_max", *std::max_element(peer.begin(), peer.end())},
                {"ratio_min", *ratio_lo},
                {"ratio_max", *ratio_hi},
                {"reps_met", static_cast<double>(met)},
                {"reps", static_cast<double>(ratios.size())}};
  ctx.rows.push_back(row);
}

}  // namespace bench::scheduler
