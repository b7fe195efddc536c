// SPDX-License-Identifier: Apache-2.0
// helping_test.cpp - the help check (core/helping/README.md): a lane task is not starved
// by workers that keep producing their own work, whether they find it through find_work
// (a flood of self-spawning tasks) or never call find_work (fork-join whose halves are
// not stolen: the check on the join path).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "lantern/lantern.hpp"
#include "strategy.hpp"
#include "support/fib.hpp"
#include "support/pool_state.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;

namespace lantern::testing {
namespace {

// Fairness: both workers flood themselves with self-spawning tasks while one task waits
// in worker 0's lane. Measured in flood tasks run before the lane task starts, not in
// seconds.
struct FloodResult {
  long flood_tasks_before_lane_task;
  long ran_while_submitting;  // flood tasks between the baseline read and submit_to_lane's return
  long flood_total;
};

// The flood runs kFloodAfterSubmit tasks past the submission, however long the submitter
// takes to get there: a submitter kept off the CPU while the other worker floods (it
// spins in yield() for the first 500) must still leave most of the flood after its
// submission, or "without helping the lane task waits for most of the flood" could fail
// with a correct scheduler.
constexpr long kFloodAfterSubmit = 19500;

FloodResult run_flood(bool helping) {
  Scheduler pool({.workers = 2, .helping = helping});
  Watchdog dog(std::string("flood, helping=") + (helping ? "on" : "off"), 120s, dump(pool));
  std::atomic<long> flood_total{std::numeric_limits<long>::max()};  // set at the submission
  std::atomic<long> flood_done{0};
  std::atomic<long> seen_at{-1};
  std::atomic<bool> lane_task_submitted{false};

  // Each flood task spins ~2 us and spawns its successor onto its own deque, so both
  // workers stay busy with fork-join work for the whole flood.
  struct Flood {
    Scheduler* pool;
    std::atomic<long>* done;
    const std::atomic<long>* total;
    void operator()() const {
      const auto until = std::chrono::steady_clock::now() + 2us;
      while (std::chrono::steady_clock::now() < until) {
      }
      const long k = done->fetch_add(1) + 1;
      if (k + 1 < total->load()) {  // two successors keep both workers' deques non-empty
        pool->spawn(*this);
      }
    }
  };
  lantern::Future<void> lane_task;
  long submitted_at = 0;
  long after_submit = 0;
  pool.run([&] {
    for (int i = 0; i < 4; ++i) pool.spawn(Flood{&pool, &flood_done, &flood_total});
    // Let the flood get going, then submit the probe task into worker 0's lane. The count
    // is measured from the value seen just before the submit, not from 500: this thread
    // may be preempted inside yield() while the other worker runs thousands of tasks.
    while ((submitted_at = flood_done.load()) < 500) std::this_thread::yield();
    lane_task = pool.submit_to_lane(0, [&] { seen_at.store(flood_done.load()); });
    // The lane task entered the lane somewhere between these two reads; if this thread
    // lost the CPU in between, the other worker's tasks make the count ambiguous.
    after_submit = flood_done.load();
    flood_total = after_submit + kFloodAfterSubmit;
    lane_task_submitted = true;
  });
  lane_task.get();
  pool.shutdown();
  return {seen_at.load() - submitted_at, after_submit - submitted_at, flood_done.load()};
}

// The help check lives in find_work, which a fork-join computation whose tasks are not
// stolen never calls; join runs it too, every kJoinHelpInterval joins
// (Worker::help_from_join), and so does TaskGroup::wait, every kJoinHelpInterval tasks it
// runs from its own deque (counted once a wait while the countdown covers the group).
// lane_task_runs_during runs `round` (one round of such a computation, on a worker) over
// and over until a lane task submitted from outside meanwhile has run, and says whether it ran before the rounds ended
// (bounded: 200 rounds after the submission). Rounds before the submission do not count: the outside thread may not get
// a CPU for a while on a loaded machine (or under TSan), and 200 rounds counted from the start could end before it
// submitted - a failure with a correct scheduler. The watchdog bounds the wait for the submission.
template <class Round>
void expect_lane_served_during(Scheduler& pool, const char* what, std::uint32_t workers, Round round) {
  Watchdog dog(std::string("lane task during ") + what, 120s, dump(pool));
  std::atomic<bool> started{false};
  std::atomic<bool> done{false};
  std::atomic<bool> lane_ran{false};
  std::atomic<bool> lane_ran_during{false};
  std::atomic<bool> lane_submitted{false};
  std::thread outside([&] {
    while (!started.load()) std::this_thread::yield();
    pool.submit_to_lane(0, [&] {
      lane_ran_during = !done.load();
      lane_ran = true;
    });
    lane_submitted = true;
  });
  pool.run([&] {
    started = true;
    for (int r = 0; r < 200 && !lane_ran.load();) {
      const bool counts = lane_submitted.load();
      round();
      if (counts) ++r;
    }
    done = true;
  });
  outside.join();
  pool.run([] {});
  EXPECT_TRUE(lane_ran_during.load()) << workers << " worker(s): the lane task waited for " << what << " to end";
}

// fib through a TaskGroup per node: the node's wait runs both children from its own deque.
std::uint64_t fib_task_group(int n) {
  if (n < 2) return static_cast<std::uint64_t>(n);
  std::uint64_t a = 0, b = 0;
  lantern::TaskGroup group;
  group.spawn([&] { a = fib_task_group(n - 1); });
  group.spawn([&] { b = fib_task_group(n - 2); });
  group.wait();
  return a + b;
}

// fib through spawn_handle and TaskHandle::wait: one child spawned, the other run here.
std::uint64_t fib_handles(Scheduler& pool, int n) {
  if (n < 2) return static_cast<std::uint64_t>(n);
  std::uint64_t a = 0;
  lantern::TaskHandle left = pool.spawn_handle([&pool, &a, n] { a = fib_handles(pool, n - 1); });
  const std::uint64_t b = fib_handles(pool, n - 2);
  left.wait();
  return a + b;
}

// Without the check on the join path (this test built with -DLANTERN_JOIN_HELP_INTERVAL=0)
// a lane task submitted during fib starts after fib in every run on 1 worker.
TEST_P(Strategy, LanesAreHelpedDuringForkJoin) {
  for (std::uint32_t workers : {1u, 2u}) {
    Scheduler pool(options(workers));
    expect_lane_served_during(pool, "fib by join", workers, [] { lantern::testing::fib(25); });
  }
}

// The same under TaskGroup fork-join: without the check in TaskGroup::wait's own-deque
// loop the lane task starts after the rounds on 1 worker.
TEST_P(Strategy, LanesAreHelpedDuringTaskGroupForkJoin) {
  for (std::uint32_t workers : {1u, 2u}) {
    Scheduler pool(options(workers));
    expect_lane_served_during(pool, "fib by TaskGroup", workers, [] { fib_task_group(23); });
  }
}

// One wide group: thousands of leaf tasks spawned, then one wait, which runs them all
// from its own deque (more than the countdown covers at once, so the wait counts them
// down one by one). Without that the lane task starts after the rounds on 1 worker.
TEST_P(Strategy, LanesAreHelpedDuringAWideTaskGroup) {
  for (std::uint32_t workers : {1u, 2u}) {
    Scheduler pool(options(workers));
    std::vector<std::uint64_t> out(3 * lantern::detail::Worker::kJoinHelpInterval);
    expect_lane_served_during(pool, "a wide TaskGroup", workers, [&out] {
      lantern::TaskGroup group;
      for (std::size_t i = 0; i < out.size(); ++i) group.spawn([&out, i] { out[i] = i * i; });
      group.wait();
    });
  }
}

// A spawn/wait tree of TaskHandles: each wait goes through find_work (wait_until), whose
// own help check serves the lane.
TEST_P(Strategy, LanesAreHelpedDuringATaskHandleTree) {
  for (std::uint32_t workers : {1u, 2u}) {
    Scheduler pool(options(workers));
    expect_lane_served_during(pool, "fib by TaskHandle", workers, [&pool] { fib_handles(pool, 18); });
  }
}

// parallel_for splits its range with join: join's check serves the lane.
TEST_P(Strategy, LanesAreHelpedDuringParallelFor) {
  for (std::uint32_t workers : {1u, 2u}) {
    Scheduler pool(options(workers));
    std::vector<std::uint64_t> out(1 << 16);
    expect_lane_served_during(pool, "parallel_for", workers, [&out] {
      lantern::parallel_for(0, out.size(), 1, [&out](std::size_t i) { out[i] = i * i; });
    });
  }
}

}  // namespace

TEST(Fairness, HelpingBoundsLaneWaitUnderFlood) {
  // A run whose submitter was preempted between its baseline read and the enqueue (more
  // than 200 flood tasks, i.e. >= 0.2 ms, in a window of about a microsecond) cannot say
  // when the lane task entered the lane: it is measured again (at most 5 runs).
  FloodResult with{};
  for (int run = 0; run < 5; ++run) {
    with = run_flood(true);
    if (with.ran_while_submitting <= 200) break;
    std::printf("helping on: %ld flood tasks ran while the submitter submitted; measured again\n",
                with.ran_while_submitting);
  }
  const FloodResult without = run_flood(false);
  std::printf("flood tasks run before the lane task: helping on %ld, helping off %ld (of %ld)\n",
              with.flood_tasks_before_lane_task, without.flood_tasks_before_lane_task, without.flood_total);
  ASSERT_LE(with.ran_while_submitting, 200) << "every run's submitter was preempted while submitting";
  // With helping, the lane task starts after at most a few hundred flood tasks (the
  // 50 us threshold is ~25 flood tasks; checks happen every 16 tasks per worker).
  EXPECT_LT(with.flood_tasks_before_lane_task, 2000);
  // Without helping, it waits until the flood has (nearly) drained.
  EXPECT_GT(without.flood_tasks_before_lane_task, kFloodAfterSubmit / 2);
}

}  // namespace lantern::testing
