// SPDX-License-Identifier: Apache-2.0
// pools.cpp - lantern_bench's pools and --pin (pools.hpp).
#include "pools.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <system_error>

#include "harness.hpp"

namespace bench::scheduler {
namespace {

std::vector<pid_t> g_harness_threads;  // note_harness_threads

std::vector<pid_t> minus(const std::vector<pid_t>& a, const std::vector<pid_t>& b) {
  std::vector<pid_t> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// The calling thread's pin as this bench last set it, valid only while g_pin_generation
// is what it was then: reset_threads changes other threads' masks from outside and bumps
// it. It spares TBB's threads a system call (~1 us on a 2-vCPU VM) each time they enter
// a pinned arena on the CPU they are on.
std::atomic<unsigned> g_pin_generation{1};
thread_local int t_pinned_cpu = -1;
thread_local unsigned t_pin_generation = 0;
std::atomic<bool> g_refusal_told{false};

// pin_calling_thread: the calling thread onto `cpu` (-1: back to the process mask). A
// refusal leaves the thread where it is, and the first one is said on stderr.
void pin_calling_thread(int cpu) {
  const unsigned generation = g_pin_generation.load(std::memory_order_acquire);
  if (t_pin_generation == generation && t_pinned_cpu == cpu) return;
  if (!bench::set_thread_cpu(0, cpu)) {
    if (!g_refusal_told.exchange(true)) {
      std::fprintf(stderr, "lantern_bench: --pin: the kernel would not put a thread on CPU %d; it runs where it was\n",
                   cpu);
    }
    return;
  }
  t_pinned_cpu = cpu;
  t_pin_generation = generation;
}

// reset_threads: threads `tids` back to the process mask, from outside. A TBB worker
// pinned by an arena of a pinned benchmark may still be in it when that arena goes
// (observe(false) runs no exit callback for it), and TBB's workers serve every arena
// after: each unpinned benchmark resets them first.
void reset_threads(const std::vector<pid_t>& tids) {
  for (const pid_t tid : tids) bench::set_thread_cpu(tid, -1);
  g_pin_generation.fetch_add(1, std::memory_order_acq_rel);
}

// worker_cpus: where Lantern pinned each worker (Scheduler::worker_cpu); empty when one
// is not pinned (a synthetic topology, whose CPUs are not this machine's).
std::vector<int> worker_cpus(const lantern::Scheduler& pool) {
  std::vector<int> cpus;
  for (std::uint32_t i = 0; i < pool.worker_count(); ++i) {
    if (pool.worker_cpu(i) < 0) return {};
    cpus.push_back(pool.worker_cpu(i));
  }
  return cpus;
}

}  // namespace

std::vector<pid_t> thread_ids() {
  std::vector<pid_t> ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    ids.push_back(static_cast<pid_t>(std::stol(entry.path().filename().string())));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

void note_harness_threads() { g_harness_threads = thread_ids(); }

ArenaPin::ArenaPin(tbb::task_arena& arena, std::vector<int> cpus)
    : tbb::task_scheduler_observer(arena), cpus_(std::move(cpus)) {
  if (!cpus_.empty()) observe(true);
}

ArenaPin::~ArenaPin() { observe(false); }

void ArenaPin::on_scheduler_entry(bool) {
  const int slot = tbb::this_task_arena::current_thread_index();
  if (slot >= 0) pin_calling_thread(cpus_[static_cast<std::size_t>(slot) % cpus_.size()]);
}

Pools::Pools(unsigned workers, const std::string& topology, lantern::SleepStrategy sleep, bool pin)
    : threads_before(thread_ids()),
      lantern({.workers = workers, .topology = topology, .pin_workers = pin, .sleep_strategy = sleep}),
      lantern_threads(minus(thread_ids(), threads_before)),
      cpus(pin ? worker_cpus(lantern) : std::vector<int>{}),
      tbb(static_cast<int>(workers)),
      tbb_outside(static_cast<int>(workers), /*reserved_for_masters=*/0),
      tbb_pin(tbb, cpus),
      tbb_outside_pin(tbb_outside, cpus) {
  tbb.initialize();
  tbb_outside.initialize();
  if (cpus.empty()) {
    reset_threads(tbb_worker_threads());
    pin_calling_thread(-1);
  } else {
    pin_calling_thread(cpus[0]);
  }
}

Pools::~Pools() { pin_calling_thread(-1); }

std::vector<pid_t> Pools::tbb_worker_threads() const {
  std::vector<pid_t> skip = g_harness_threads;
  skip.insert(skip.end(), lantern_threads.begin(), lantern_threads.end());
  std::sort(skip.begin(), skip.end());
  return minus(thread_ids(), skip);
}

}  // namespace bench::scheduler
