// SPDX-License-Identifier: Apache-2.0
// topology_probe - prints this process's topology as lantern::core reads it (hwloc) and
// the CPUs a scheduler started here pins its workers to, one line each; run by
// topology_test.cpp under `taskset -c 0` to check a process restricted to a cpuset.
#include <sched.h>

#include <cstdio>
#include <vector>

#include "lantern/lantern.hpp"

int main() {
  std::vector<std::string> warnings;
  const lantern::Topology t = lantern::Topology::from_machine(&warnings);
  std::printf("topology: %s\n", t.describe().c_str());
  std::printf("os_cpus:");
  for (const lantern::CpuInfo& cpu : t.cpus()) std::printf(" %d", cpu.os_cpu);
  std::printf("\n");
  for (const std::string& w : warnings) std::printf("warning: %s\n", w.c_str());
  // A scheduler started here: its topology and where its (pinned) workers run.
  lantern::SchedulerOptions options;
  options.workers = 3;
  options.pin_workers = true;
  lantern::Scheduler pool(options);
  std::printf("scheduler: %s\n", pool.topology().describe().c_str());
  std::printf("worker cpus:");
  for (int i = 0; i < 6; ++i) std::printf(" %d", pool.submit([] { return sched_getcpu(); }).get());
  std::printf("\n");
  std::printf("worker_cpu:");
  for (std::uint32_t i = 0; i < pool.worker_count(); ++i) std::printf(" %d", pool.worker_cpu(i));
  std::printf("\n");
  return 0;
}
