// SPDX-License-Identifier: Apache-2.0
// pools.hpp - lantern_bench's pools of one worker count W: a Lantern Scheduler and two
// oneTBB arenas of the same concurrency, and --pin, which puts both sides' threads on
// the same CPUs.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <string>
#include <vector>

#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>

#include "lantern/lantern.hpp"

namespace bench::scheduler {

// thread_ids: every thread of this process, from /proc/self/task, ascending.
std::vector<pid_t> thread_ids();

// note_harness_threads: the threads that exist now (main, the watchdog) belong to
// neither pool; main calls it once they are started.
void note_harness_threads();

// ArenaPin (--pin): every thread that enters `arena` is pinned to the CPU of its slot,
// slot i on cpus[i % size], the CPU Lantern pinned its worker i to. It stays pinned when
// it leaves (so a worker that comes back pays nothing); the Pools of an unpinned
// benchmark unpin TBB's threads first, and ~Pools the main thread.
class ArenaPin final : public tbb::task_scheduler_observer {
 public:
  ArenaPin(tbb::task_arena& arena, std::vector<int> cpus);
  ~ArenaPin() override;
  void on_scheduler_entry(bool) override;

 private:
  const std::vector<int> cpus_;
};

// Pools: a Lantern Scheduler and two TBB arenas, all of the same concurrency W.
//  - lantern: W workers; the main thread blocks in run() or waits outside.
//  - tbb: for execute(). Its W slots are the main thread, which joins the arena in
//    execute(), plus W - 1 TBB workers (TBB's default of one slot kept for the caller).
//  - tbb_outside: for enqueue() from the main thread, which stays outside the arena, so
//    no slot is kept for it: W TBB workers. (Enqueueing into `tbb` would leave a
//    2-thread arena with a single worker.)
// Pinned (pin): Lantern's workers pinned by Lantern, TBB's threads by ArenaPin, and the
// main thread on the first CPU (it runs TBB's side inside execute() as slot 0, and
// submits Lantern's; ArenaPin moves it when it takes another slot) until ~Pools. A
// synthetic topology (--topology), whose CPUs are not this machine's, pins nothing.
// Unpinned: every thread but the harness's on the process's CPU mask.
struct Pools {
  Pools(unsigned workers, const std::string& topology, lantern::SleepStrategy sleep, bool pin);
  ~Pools();
  Pools(const Pools&) = delete;
  Pools& operator=(const Pools&) = delete;

  // The threads Lantern's constructor started (its workers), and TBB's: every other
  // thread that is not the harness's (TBB starts its workers lazily, so ask late).
  std::vector<pid_t> lantern_worker_threads() const { return lantern_threads; }
  std::vector<pid_t> tbb_worker_threads() const;

  std::vector<pid_t> threads_before;
  lantern::Scheduler lantern;
  std::vector<pid_t> lantern_threads;
  const std::vector<int> cpus;  // pinned: where Lantern pinned each worker; else empty
  tbb::task_arena tbb;
  tbb::task_arena tbb_outside;
  // Declared after the arenas: they stop observing before the arenas go.
  ArenaPin tbb_pin;
  ArenaPin tbb_outside_pin;
};

}  // namespace bench::scheduler
