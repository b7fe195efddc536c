// SPDX-License-Identifier: Apache-2.0
// graph_bench.cpp - lantern_graph_bench: lantern::TaskGraph against oneTBB's flow graph.
//
// Same process, same worker counts, alternating repetitions, every answer checked,
// medians and their ratio in one table (run with --help for the list). Each graph is
// built once per side and pool; a repetition times `--runs` consecutive runs of it.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include "harness.hpp"
#include "lantern/graph.hpp"
#include "lantern/lantern.hpp"
#include "lantern/tools/program_cli.hpp"

namespace {

using bench::Row;
using bench::Target;
using namespace std::chrono_literals;
namespace flow = tbb::flow;

constexpr const char* kUsage = R"(usage: lantern_graph_bench [options]

Runs lantern::TaskGraph and oneTBB's flow graph (continue_node + make_edge, default
policy: every node runs as a task; try_put into the sources, graph::wait_for_all) side
by side in one process, on 1 worker and on all hardware threads (a Lantern Scheduler of
W workers; a tbb::task_arena of W slots that the main thread joins with execute()).
Each graph is built once, outside the timed region; a repetition times --runs
consecutive runs of it, started from inside the pool (Lantern: Scheduler::run, then
TaskGraph::run on the worker; TBB: task_arena::execute, then try_put + wait_for_all).
One warm-up and --reps measured repetitions per side, alternating (L T, T L, ...),
10 ms idle before each. Figure: microseconds per graph run, median of the repetitions;
lower is better. Task bodies are a few instructions, so this measures the schedulers'
per-task cost. Exit status: 0 if every answer was right (even if targets were missed),
2 on a wrong answer or bad usage, 3 on a hang (no progress for 120 s).

options:
  -h, --help           this text
  --version            print the version
  --reps N             measured repetitions per side, 1 to 1000 (default 7)
  --runs N             graph runs per repetition, 1 to 100000 (default 10)
  --only NAME[,NAME]   run only these benchmarks
  --workers LIST       worker counts, e.g. 1,2 (default: 1 and hardware_concurrency)
  --quick              CI smoke test: 2 reps of 2 runs unless --reps or --runs says
                       otherwise (same graphs, answers checked)
  --markdown           print the table as Markdown (for bench/RESULTS.md)
  --json               print the rows as JSON, one object a line, on stdout (every
                       other line goes to stderr)

benchmarks (target for each: Lantern/TBB <= 1.0):
  chain       10,000 tasks, each after the previous one (one source, one sink).
  tree_down   binary tree of 65,536 (2^16) tasks in heap order, each task after its
              parent: the broadcast direction, one source, 32,768 sinks.
  tree_up     the same tree in the reduction direction, each task after its children:
              32,768 sources, one sink.
  wavefront   256 x 256 blocks, each after its left and upper neighbours (65,536 tasks).
)";

struct Config {
  int reps = 7;
  int runs = 10;
  bench::Output output;  // --markdown, --json
  std::vector<unsigned> workers;
  std::vector<std::string> only;
};

using Context = bench::Context<Config>;

constexpr const char* kBenchmarks[] = {"chain", "tree_down", "tree_up", "wavefront"};

// parse_command_line fills *config; it returns the exit status to end with at once
// after --help, --version or bad usage (program_cli.hpp), nullopt to run.
std::optional<int> parse_command_line(int argc, char** argv, Config* config) {
  lantern::tools::Program program("lantern_graph_bench", kUsage);
  auto& app = program.app();
  bool quick = false;
  CLI::Option* reps = lantern::tools::number_option(app, "--reps", &config->reps, 1, 1000);
  CLI::Option* runs = lantern::tools::number_option(app, "--runs", &config->runs, 1, 100000);
  lantern::tools::choice_list_option(app, "--only", &config->only, {std::begin(kBenchmarks), std::end(kBenchmarks)});
  lantern::tools::number_list_option(app, "--workers", &config->workers, 1u, lantern::kMaxWorkers);
  app.add_flag("--quick", quick);
  app.add_flag("--markdown", config->output.markdown);
  app.add_flag("--json", config->output.json);
  if (const auto exit = program.parse(argc, argv)) return exit;
  if (quick && reps->count() == 0) config->reps = 2;
  if (quick && runs->count() == 0) config->runs = 2;
  if (config->workers.empty()) {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    config->workers = {1};
    if (hw > 1) config->workers.push_back(hw);
  }
  if (config->only.empty()) config->only.assign(std::begin(kBenchmarks), std::end(kBenchmarks));
  return std::nullopt;
}

// Shape: one benchmark's DAG as data, built into both graph types the same way. Task i
// runs body(i, generation); edges[k] = {from, to}. check(generation) verifies the
// results of the last run (the generation changes every run, so stale results fail).
struct Shape {
  const char* name;
  std::size_t tasks;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  std::function<void(std::uint32_t, std::int64_t)> body;
  std::function<std::pair<std::int64_t, std::int64_t>(std::int64_t)> got_expected;
};

Shape make_shape(const std::string& name, std::vector<std::int64_t>& v) {
  Shape s{};
  if (name == "chain") {
    constexpr std::uint32_t n = 10'000;
    v.assign(n, 0);
    s = {"chain 10k",
         n,
         {},
         [&v](std::uint32_t i, std::int64_t gen) { v[i] = i == 0 ? gen : v[i - 1] + 1; },
         [&v](std::int64_t gen) { return std::make_pair(v[n - 1], gen + n - 1); }};
    for (std::uint32_t i = 1; i < n; ++i) s.edges.emplace_back(i - 1, i);
  } else if (name == "tree_down" || name == "tree_up") {
    // Heap order: task k is node k + 1; node j's parent is j / 2, its children 2j, 2j + 1.
    constexpr std::uint32_t n = 1u << 16;
    v.assign(n + 2, 0);
    const bool down = name == "tree_down";
    if (down) {
      s = {"tree_down 2^16",
           n,
           {},
           [&v](std::uint32_t k, std::int64_t gen) {
             const std::uint32_t j = k + 1;
             v[j] = j == 1 ? gen : v[j / 2] + 1;
           },
           [&v](std::int64_t gen) { return std::make_pair(v[n], gen + 16); }};  // node 65536 is at depth 16
    } else {
      s = {"tree_up 2^16",
           n,
           {},
           [&v](std::uint32_t k, std::int64_t gen) {
             const std::uint32_t j = k + 1;
             std::int64_t sum = gen;
             if (2 * j <= n) sum += v[2 * j];
             if (2 * j + 1 <= n) sum += v[2 * j + 1];
             v[j] = sum;
           },
           [&v](std::int64_t gen) { return std::make_pair(v[1], gen * n); }};
    }
    for (std::uint32_t j = 2; j <= n; ++j) {
      if (down)
        s.edges.emplace_back(j / 2 - 1, j - 1);
      else
        s.edges.emplace_back(j - 1, j / 2 - 1);
    }
  } else {
    constexpr std::uint32_t side = 256;
    v.assign(side * side, 0);
    s = {"wavefront 256x256",
         side * side,
         {},
         [&v](std::uint32_t k, std::int64_t gen) {
           const std::uint32_t r = k / side, c = k % side;
           std::int64_t m = gen - 1;
           if (r > 0) m = std::max(m, v[k - side]);
           if (c > 0) m = std::max(m, v[k - 1]);
           v[k] = m + 1;
         },
         [&v](std::int64_t gen) { return std::make_pair(v[side * side - 1], gen + 2 * (side - 1)); }};
    for (std::uint32_t k = 0; k < side * side; ++k) {
      if (k / side > 0) s.edges.emplace_back(k - side, k);
      if (k % side > 0) s.edges.emplace_back(k - 1, k);
    }
  }
  return s;
}

// The TBB side: nodes are created inside the arena, so the graph attaches to it.
struct TbbGraph {
  explicit TbbGraph(const Shape& shape, std::int64_t& generation) {
    nodes.reserve(shape.tasks);
    std::vector<int> predecessors(shape.tasks, 0);
    for (const auto& e : shape.edges) ++predecessors[e.second];
    for (std::uint32_t i = 0; i < shape.tasks; ++i) {
      nodes.push_back(std::make_unique<flow::continue_node<flow::continue_msg>>(
          g, [&shape, &generation, i](const flow::continue_msg&) { shape.body(i, generation); }));
      if (predecessors[i] == 0) sources.push_back(nodes.back().get());
    }
    for (const auto& e : shape.edges) flow::make_edge(*nodes[e.first], *nodes[e.second]);
  }
  void run() {
    for (auto* s : sources) s->try_put(flow::continue_msg());
    g.wait_for_all();
  }
  flow::graph g;
  std::vector<std::unique_ptr<flow::continue_node<flow::continue_msg>>> nodes;
  std::vector<flow::continue_node<flow::continue_msg>*> sources;
};

void bench_shape(const Context& ctx) {
  const char* key = ctx.benchmark;
  std::vector<std::int64_t> lantern_values, tbb_values;
  std::int64_t lantern_gen = 0, tbb_gen = 0;
  const Shape lantern_shape = make_shape(key, lantern_values);
  const Shape tbb_shape = make_shape(key, tbb_values);

  lantern::Scheduler pool({.workers = ctx.workers});
  tbb::task_arena arena(static_cast<int>(ctx.workers));
  arena.initialize();
  // Built once; the bodies read the generation, which each run bumps.
  lantern::TaskGraph lantern_graph;
  std::vector<lantern::GraphTask> tasks;
  tasks.reserve(lantern_shape.tasks);
  for (std::uint32_t i = 0; i < lantern_shape.tasks; ++i) {
    tasks.push_back(lantern_graph.add([&lantern_shape, &lantern_gen, i] { lantern_shape.body(i, lantern_gen); }));
  }
  for (const auto& e : lantern_shape.edges) tasks[e.first].precede(tasks[e.second]);
  lantern_graph.validate();
  std::unique_ptr<TbbGraph> tbb_graph;
  arena.execute([&] { tbb_graph = std::make_unique<TbbGraph>(tbb_shape, tbb_gen); });

  auto check = [&](const char* side, const Shape& shape, std::int64_t gen) {
    const auto [got, expected] = shape.got_expected(gen);
    bench::check_equal(std::string(shape.name) + ", " + side + ", " + std::to_string(ctx.workers) + " workers", got,
                       expected);
  };
  auto lantern_rep = [&] {
    const auto start = bench::Clock::now();
    pool.run([&] {
      for (int r = 0; r < ctx.config.runs; ++r) {
        ++lantern_gen;
        lantern_graph.run(pool);
      }
    });
    const double seconds = bench::seconds_between(start, bench::Clock::now());
    check("Lantern", lantern_shape, lantern_gen);
    return seconds;
  };
  auto tbb_rep = [&] {
    const auto start = bench::Clock::now();
    arena.execute([&] {
      for (int r = 0; r < ctx.config.runs; ++r) {
        ++tbb_gen;
        tbb_graph->run();
      }
    });
    const double seconds = bench::seconds_between(start, bench::Clock::now());
    check("TBB", tbb_shape, tbb_gen);
    return seconds;
  };
  // Alternating, L T, T L, ..., after one warm-up each.
  const auto s = bench::rotate(
      ctx, 2, [&](std::size_t v) { return v == 0 ? lantern_rep() : tbb_rep(); }, ctx.config.reps);
  arena.execute([&] { tbb_graph.reset(); });
  const double per_run_us = 1e6 / ctx.config.runs;
  ctx.rows.push_back({lantern_shape.name, ctx.workers, "us/run", bench::median(s[0]) * per_run_us,
                      bench::median(s[1]) * per_run_us, Target::ratio(1.0)});
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (const auto exit = parse_command_line(argc, argv, &config)) return *exit;
  const unsigned widest = *std::max_element(config.workers.begin(), config.workers.end());
  tbb::global_control tbb_threads(tbb::global_control::max_allowed_parallelism,
                                  std::max<std::size_t>(widest + 1, std::thread::hardware_concurrency()));
  std::string worker_list;
  for (unsigned w : config.workers) worker_list += (worker_list.empty() ? "" : ",") + std::to_string(w);
  std::FILE* text = config.output.text();
  std::fprintf(text,
               "lantern_graph_bench: %d measured reps of %d runs per side (+1 warm-up, alternating), workers %s\n",
               config.reps, config.runs, worker_list.c_str());
  std::fflush(text);
  const bench::Progress progress;
  bench::Watchdog watchdog(120s);
  std::vector<Row> rows;
  for (const char* key : kBenchmarks) {
    if (std::find(config.only.begin(), config.only.end(), key) == config.only.end()) continue;
    for (unsigned workers : config.workers) {
      bench_shape(Context{config, progress, watchdog, rows, key, workers});
      progress.clear();
    }
  }
  bench::report(config.output, rows, /*cpu_speeds=*/false);
  return 0;
}
