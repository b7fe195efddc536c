// SPDX-License-Identifier: Apache-2.0
// instr_workloads.hpp - lantern_instr_bench's workloads (the fork-join jobs of
// bench/workloads.hpp, each one repetition's worth), and what the two programs that run
// them share: lantern_instr_bench (main.cpp) and lantern_instr_bench_off (off_main.cpp,
// the same workloads built against the core with every observer hook compiled out).
#pragma once

#include <span>
#include <string>

#include "lantern/lantern.hpp"

namespace bench::instr {

// Workload: one fork-join job, run inside Scheduler::run from the main thread.
struct Workload {
  const char* name;     // protocol word and --only-style name
  const char* label;    // table label
  long long expected;   // the answer
  long long (*body)();  // runs inside Scheduler::run
};

// workloads: the overhead section's, one repetition each: fib(32), ten skynet 1M by
// join, three by a TaskGroup per node, nqueens(12) with a TaskGroup at every row, 200
// spawn chains of 1000.
std::span<const Workload> workloads();

// paired_workloads: the same jobs one instance each (one skynet, not ten or three): the
// shorter a run, the closer in time the runs of one paired round.
std::span<const Workload> paired_workloads();

// find_workload: the workload named `name`, or nullptr.
const Workload* find_workload(const std::string& name);

// run_once runs `w` once on `pool`, checks the answer ("LABEL, SIDE: got ...") and
// returns the seconds it took. cpu: if given, set to the CPU the run's first task began on.
double run_once(lantern::Scheduler& pool, const Workload& w, const std::string& side, int* cpu = nullptr);

// The compiled-out side's protocol, one line each way:
//   child, once started:  "lantern_instr_bench_off ready observer=0 workers=W"
//   parent:               a workload's name         child: "NAME seconds=S result=R"
//   parent:               "quit" (or EOF)           child exits 0
constexpr const char* kReadyWord = "lantern_instr_bench_off ready";

}  // namespace bench::instr
