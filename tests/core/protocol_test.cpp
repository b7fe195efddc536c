// The protocol's promises under adversarial timing (issue 11): the destructor against
// outside threads, a latch's setter against a waiter that returns at once, a wake for
// work against a latch set at the same moment, join's second half when the first throws,
// helping on the join path, nested-wait depth, deadlock detection. Each test was seen to
// fail on the code before its fix (see the comment on each).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "lantern/detail/sleep.hpp"
#include "lantern/lantern.hpp"
#include "support/fib.hpp"
#include "support/pool_state.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;
using lantern::Scheduler;
using lantern::SleepStrategy;
using lantern::testing::dump;
using lantern::testing::scaled;
using lantern::testing::wait_all_asleep;
using lantern::testing::Watchdog;

namespace {

class Strategy : public ::testing::TestWithParam<SleepStrategy> {
 protected:
  lantern::SchedulerOptions options(std::uint32_t workers, lantern::Observer* observer = nullptr) const {
    lantern::SchedulerOptions o;
    o.workers = workers;
    o.sleep_strategy = GetParam();
    o.observer = observer;
    o.log = [](const std::string&) {};  // the io_uring fallback note, if any
    return o;
  }
};

std::string strategy_name(const ::testing::TestParamInfo<SleepStrategy>& info) {
  return lantern::strategy_name(info.param);
}

// ---------------------------------------------------------------------------------
// Defect 1: outside threads that published work (Signal::set, submit, spawn, IO starts,
// a latch's set) touched the pool's sleep state after a worker could finish that work,
// the pool drain and the destructor free the pool. Before the fix ThreadSanitizer
// reported the race (Sleep::new_jobs / wake_slot against ~Registry) in most runs and
// AddressSanitizer a heap-use-after-free in some.
// ---------------------------------------------------------------------------------
TEST_P(Strategy, OutsideThreadsRaceTheDestructor) {
  const long iterations = scaled(120, 12);
  std::atomic<long> iteration{0};
  std::atomic<int> phase{0};  // 0: running, 1: destroying, 2: joined
  Watchdog dog("shutdown torture", 60s, [&] {
    return "iteration " + std::to_string(iteration.load()) + ", phase " + std::to_string(phase.load()) +
           " (0: outside threads running, 1: destructor running, 2: destroyed)";
  });
  constexpr int kThreads = 3;
  for (long it = 0; it < iterations; ++it) {
    iteration = it;
    phase = 0;
    // The Scheduler in raw storage: the outside threads call it while its destructor
    // drains (they then get ShutdownError), which a unique_ptr's reset would not allow.
    alignas(Scheduler) unsigned char storage[sizeof(Scheduler)];
    Scheduler* pool = new (storage) Scheduler(options(2));
    std::vector<std::unique_ptr<lantern::Signal>> gate, wake;
    for (int i = 0; i < kThreads; ++i) {
      gate.push_back(std::make_unique<lantern::Signal>());
      wake.push_back(std::make_unique<lantern::Signal>());
      // The drain waits for this task, which the outside thread releases last of all:
      // its Signal::set then races the destructor's free.
      pool->spawn_after({*gate[i]}, [] {});
      // A worker sleeps on a latch that the outside thread sets (Latch::set from outside).
      pool->spawn([s = wake[i].get()] { s->wait(); });
    }
    std::atomic<int> started{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        bool counted = false;
        for (unsigned round = 0;; ++round) {
          try {
            auto f = pool->submit([] { return 1; });
            pool->spawn([] {});
            lantern::TaskHandle h = pool->spawn_handle([] {});
            pool->io().timeout(0ns, [](lantern::IoResult) {});
            if (round % 4 == 0) h.wait();  // an outside thread blocked on a worker's set
          } catch (const lantern::ShutdownError&) {
            break;
          }
          if (!counted) {
            counted = true;
            started.fetch_add(1);
          }
        }
        // Last acts, racing the destructor's free: set the latch a worker sleeps on and
        // release the task the drain waits for.
        wake[i]->set();
        gate[i]->set();
      });
    }
    while (started.load() < kThreads) std::this_thread::yield();
    phase = 1;
    pool->~Scheduler();
    phase = 2;
    for (auto& t : threads) t.join();
  }
}

// ---------------------------------------------------------------------------------
// Defect 2: Latch::set read the sleeping worker's index from the latch after its
// exchange had published SET, when the waiter may already have returned and freed (or
// reused) the latch. Before the fix ThreadSanitizer reported the read against the
// waiter's delete in this test.
// ---------------------------------------------------------------------------------
TEST(Latch, SetterDoesNotTouchTheLatchOnceTheWaiterCanSeeSet) {
  using lantern::detail::Latch;
  const long rounds = scaled(5000, 1000);
  Watchdog dog("latch handoff", 60s);
  std::atomic<Latch*> handoff{nullptr};
  std::thread setter([&] {
    for (long i = 0; i < rounds; ++i) {
      Latch* l;
      while (!(l = handoff.exchange(nullptr, std::memory_order_acquire))) std::this_thread::yield();
      l->set();
    }
  });
  for (long i = 0; i < rounds; ++i) {
    // A latch on the heap, claimed for sleeping as a waiting worker would: the setter
    // sees SLEEPING and must wake worker 7 without touching the latch again, because
    // the waiter frees it the moment it sees SET.
    auto* latch = new Latch(nullptr, false);
    ASSERT_TRUE(latch->get_sleepy(7));
    ASSERT_TRUE(latch->fall_asleep());
    handoff.store(latch, std::memory_order_release);
    while (!latch->probe()) std::this_thread::yield();
    delete latch;
  }
  setter.join();
}

// HoldWorker: what the observers below share. Each stops worker `target` inside one
// hook, once it is armed, until the test sets `release`; `held` says it is there.
class HoldWorker : public lantern::Observer {
 public:
  std::atomic<bool> armed{false};
  std::atomic<std::uint32_t> target{~0u};
  std::atomic<bool> held{false};
  std::atomic<bool> release{false};

 protected:
  bool is_target(std::uint32_t worker) const noexcept { return armed.load() && worker == target.load(); }
  void hold() noexcept {
    armed = false;
    held = true;
    while (!release.load()) std::this_thread::yield();
  }
};

// ---------------------------------------------------------------------------------
// Defect 3: a worker woken for new work whose own latch was set meanwhile went back to
// its task without searching: the wake was used up, the work sat in a lane and the
// other worker slept. The test forces that interleaving: an observer holds the waiting
// worker right after it was woken for work until the Signal its task waits on is set.
// Before the fix job J waited for T1's whole run in every forced trial (both
// strategies); after it, J starts while T1 still runs.
// ---------------------------------------------------------------------------------
class HoldWokenWorker final : public HoldWorker {
 public:
  HoldWokenWorker() { interest.store(bit(lantern::Hook::wake), std::memory_order_relaxed); }
  void on_event(std::uint32_t worker, lantern::Hook hook, std::uint64_t a, std::uint64_t) noexcept override {
    if (hook != lantern::Hook::wake) return;
    if (lantern::WakePayload::decode(a, 0).why != lantern::WakeCause::work) return;
    if (is_target(worker)) hold();
  }
};

TEST_P(Strategy, ALatchNeverSwallowsAWakeForWork) {
  HoldWokenWorker observer;
  Scheduler pool(options(2, &observer));
  Watchdog dog("wake for work vs latch set", 120s, dump(pool));
  int forced = 0;
  // Under condvar the first sleeper in index order gets the wake, so every trial forces
  // the interleaving. Under io_uring the kernel hands the hint to whichever sleeper
  // armed its read first: a no-op task first sends the other worker round once (so T1's
  // worker is first in line), and a trial where the other worker still gets J's wake
  // proves nothing and is repeated.
  for (int trial = 0; trial < 40 && forced < 5; ++trial) {
    wait_all_asleep(pool);
    lantern::Signal signal;
    std::atomic<std::uint32_t> t1_worker{~0u};
    std::atomic<bool> j_started{false};
    std::atomic<bool> t1_done{false};
    std::atomic<bool> t1_saw_j{false};
    // T1 waits on the Signal; its worker sleeps on the latch.
    pool.submit_to_lane(0, [&] {
      t1_worker = lantern::detail::tls_worker->index;
      signal.wait();
      // The latch is set. J must get a worker while T1 keeps this one busy; give up
      // after a bound (the failure) rather than hang.
      const auto deadline = std::chrono::steady_clock::now() + 2s * lantern::testing::sanitizer_slowdown();
      while (!j_started.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      t1_saw_j = j_started.load();
      t1_done = true;
    });
    while (t1_worker.load() == ~0u) std::this_thread::yield();
    wait_all_asleep(pool);  // T1's worker on the latch, the other one idle
    if (GetParam() == SleepStrategy::io_uring) {
      pool.submit([] {}).get();
      wait_all_asleep(pool);
    }
    observer.target = t1_worker.load();
    observer.held = false;
    observer.release = false;
    observer.armed = true;
    // J from outside: a sleeper is woken for it.
    auto j = pool.submit([&] { j_started = true; });
    // Wait until either T1's worker was woken for J (the interleaving) or the other
    // worker took J (not this trial).
    while (!observer.held.load() && !j_started.load()) std::this_thread::yield();
    const bool forced_now = observer.held.load();
    observer.armed = false;
    signal.set();             // the latch is SET while T1's worker has not searched yet
    observer.release = true;  // let it go on
    j.get();
    while (!t1_done.load()) std::this_thread::yield();
    if (!forced_now) continue;
    ++forced;
    EXPECT_TRUE(t1_saw_j.load()) << "trial " << trial << ": J waited for T1's whole run while a worker slept";
    if (!t1_saw_j.load()) break;  // once is enough
  }
  std::printf("forced the interleaving in %d trials\n", forced);
  EXPECT_GE(forced, 1) << "the interleaving was never forced";
}

// The same family, found by the spin model (core/model/sleep.pml): the waiting worker is
// idle and awake when J is posted, so the poster wakes nobody (an awake searcher will
// find it) - and then the latch is set and the worker returns to T1 without searching.
// The observer holds the worker right after it announced "idle" until J is posted and
// the Signal set. Before the fix J waited for T1's whole run (both strategies).
class HoldIdleWorker final : public HoldWorker {
 public:
  HoldIdleWorker() { interest.store(bit(lantern::Hook::state), std::memory_order_relaxed); }
  void on_event(std::uint32_t worker, lantern::Hook hook, std::uint64_t a, std::uint64_t) noexcept override {
    if (hook != lantern::Hook::state || lantern::StatePayload::decode(a, 0).to != lantern::WorkerState::idle) return;
    if (is_target(worker)) hold();
  }
};

TEST_P(Strategy, ALatchNeverStrandsWorkAnIdlePosterCountedOn) {
  HoldIdleWorker observer;
  Scheduler pool(options(2, &observer));
  Watchdog dog("idle worker vs latch set", 120s, dump(pool));
  int forced = 0;
  for (int trial = 0; trial < 20 && forced < 5; ++trial) {
    wait_all_asleep(pool);
    lantern::Signal signal;
    std::atomic<bool> j_started{false};
    std::atomic<bool> t1_done{false};
    std::atomic<bool> t1_saw_j{false};
    std::atomic<bool> go{false};
    observer.held = false;
    observer.release = false;
    pool.submit_to_lane(0, [&] {
      observer.target = lantern::detail::tls_worker->index;
      observer.armed = true;
      go = true;
      signal.wait();  // finds nothing, goes idle: held there by the observer
      const auto deadline = std::chrono::steady_clock::now() + 2s * lantern::testing::sanitizer_slowdown();
      while (!j_started.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      t1_saw_j = j_started.load();
      t1_done = true;
    });
    while (!go.load()) std::this_thread::yield();
    while (!observer.held.load()) std::this_thread::yield();
    // The other worker must be asleep (the woken one could have woken it); if not, this
    // trial proves nothing.
    const bool other_asleep = pool.sleep_snapshot().sleeping == 1;
    auto j = pool.submit([&] { j_started = true; });
    signal.set();
    observer.release = true;
    j.get();
    while (!t1_done.load()) std::this_thread::yield();
    if (!other_asleep) continue;
    ++forced;
    EXPECT_TRUE(t1_saw_j.load()) << "trial " << trial << ": J waited for T1's whole run while a worker slept";
    if (!t1_saw_j.load()) break;  // once is enough
  }
  std::printf("forced the interleaving in %d trials\n", forced);
  EXPECT_GE(forced, 1) << "the interleaving was never forced";
}

// ---------------------------------------------------------------------------------
// Defect 4: join(a, b) skipped b when a threw, unless b had been stolen. Before the fix
// b ran 0 times in 200 on one worker.
// ---------------------------------------------------------------------------------
TEST_P(Strategy, JoinRunsTheSecondHalfWhenTheFirstThrows) {
  for (std::uint32_t workers : {1u, 2u}) {
    Scheduler pool(options(workers));
    Watchdog dog("join with a throwing first half", 30s, dump(pool));
    std::atomic<int> b_ran{0};
    int caught = 0;
    // Caught on the worker (as in the depth test: no other thread reads an exception
    // object whose reference count libstdc++ keeps uninstrumented).
    for (int i = 0; i < 200; ++i) {
      const bool ok = pool.run([&] {
        try {
          lantern::join([] { throw std::runtime_error("a failed"); }, [&] { b_ran.fetch_add(1); });
        } catch (const std::runtime_error& e) {
          return std::string(e.what()) == "a failed";
        }
        return false;
      });
      if (ok) ++caught;
    }
    EXPECT_EQ(caught, 200);
    EXPECT_EQ(b_ran.load(), 200) << workers << " worker(s)";
    // b throwing too: a's exception wins, b still ran to completion.
    std::atomic<int> b_done{0};
    EXPECT_TRUE(pool.run([&] {
      try {
        lantern::join([] { throw std::runtime_error("a"); },
                      [&] {
                        b_done.fetch_add(1);
                        throw std::logic_error("b");
                      });
      } catch (const std::runtime_error&) {
        return true;
      }
      return false;
    }));
    EXPECT_EQ(b_done.load(), 1);
  }
}

// The same promise off the pool, where join runs its halves serially on the calling
// thread: b still runs when a throws, and parallel_for, built on join, skips only the
// indices it would skip on a worker (here none: every chunk is one index).
TEST(Join, OffThePoolTheSecondHalfStillRunsWhenTheFirstThrows) {
  int b_ran = 0;
  EXPECT_THROW(lantern::join([] { throw std::runtime_error("a"); }, [&] { ++b_ran; }), std::runtime_error);
  EXPECT_EQ(b_ran, 1);
  // Both throw: a's exception wins, as on a worker.
  try {
    lantern::join([] { throw std::runtime_error("a"); },
                  [&] {
                    ++b_ran;
                    throw std::logic_error("b");
                  });
    ADD_FAILURE() << "join did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "a");
  }
  EXPECT_EQ(b_ran, 2);
  // Only b throws: b's exception.
  EXPECT_THROW(lantern::join([] {}, [] { throw std::logic_error("b"); }), std::logic_error);

  std::vector<int> seen(8, 0);
  EXPECT_THROW(lantern::parallel_for(0, 8, 1,
                                     [&](std::size_t i) {
                                       ++seen[i];
                                       if (i == 0) throw std::runtime_error("body 0");
                                     }),
               std::runtime_error);
  EXPECT_EQ(seen, std::vector<int>(8, 1)) << "off the pool, a throwing body stopped the other indices";
}

// ---------------------------------------------------------------------------------
// Defect 7: each task submits one child and waits for it; every wait runs the child on
// the same stack. Before the fix about 30,000 levels overflowed the worker's stack
// (SIGSEGV, no message: this test crashed). Now the wait past max_wait_depth throws.
// ---------------------------------------------------------------------------------
TEST_P(Strategy, DeeplyNestedWaitsThrowInsteadOfOverflowingTheStack) {
  for (std::uint32_t limit : {0u, 10u}) {  // 0: the default limit
    std::function<int(int)> level;          // declared before the pool: outlives its tasks
    auto o = options(1);                    // one worker: every level nests on one stack
    if (limit) o.max_wait_depth = limit;
    Scheduler pool(o);
    Watchdog dog("nested waits", 60s, dump(pool));
    std::atomic<std::uint32_t> deepest{0};
    std::atomic<bool> refused{false};  // the task left behind by the refused wait then returns at once
    level = [&](int d) -> int {
      const std::uint32_t depth = lantern::detail::tls_worker->wait_depth();
      if (depth > deepest.load()) deepest = depth;
      if (d == 0 || refused.load()) return 0;
      auto child = pool.submit([&level, d] { return level(d - 1); });
      try {
        return child.get() + 1;
      } catch (const lantern::WaitDepthError&) {
        refused = true;
        throw;
      }
    };
    const std::uint32_t max = limit ? limit : lantern::SchedulerOptions{}.max_wait_depth;
    // A chain within the limit completes.
    EXPECT_EQ(pool.run([&] { return level(static_cast<int>(max) - 1); }), static_cast<int>(max) - 1);
    // A chain far deeper than any stack allows fails with the documented exception.
    // Caught on the worker: the exception object is shared with the futures' states,
    // whose last reference a worker may drop while this thread reads it (libstdc++'s
    // uninstrumented reference count would then be a false ThreadSanitizer report).
    const std::string message = pool.run([&] {
      try {
        level(100000);
        return std::string("a 100,000-level chain of waits did not throw");
      } catch (const lantern::WaitDepthError& e) {
        return std::string(e.what());
      }
    });
    EXPECT_NE(message.find("max_wait_depth"), std::string::npos) << message;
    EXPECT_EQ(deepest.load(), max) << "the deepest wait a task ran in";
  }
  lantern::SchedulerOptions bad;
  bad.max_wait_depth = 0;
  EXPECT_THROW(Scheduler{bad}, std::invalid_argument);
}

// ---------------------------------------------------------------------------------
// Defect 5: helping lived only in find_work, which a fork-join computation whose halves
// are not stolen never calls: a lane task submitted during fib waited until fib ended.
// Before the fix (checked by building this test with -DLANTERN_JOIN_HELP_INTERVAL=0)
// the lane task started after fib in every run on 1 worker.
// ---------------------------------------------------------------------------------
TEST_P(Strategy, LanesAreHelpedDuringForkJoin) {
  for (std::uint32_t workers : {1u, 2u}) {
    Scheduler pool(options(workers));
    Watchdog dog("lane task during fib", 120s, dump(pool));
    std::atomic<bool> fib_started{false};
    std::atomic<bool> fib_done{false};
    std::atomic<bool> lane_ran{false};
    std::atomic<bool> lane_ran_during_fib{false};
    std::atomic<bool> lane_submitted{false};
    std::thread outside([&] {
      while (!fib_started.load()) std::this_thread::yield();
      pool.submit_to_lane(0, [&] {
        lane_ran_during_fib = !fib_done.load();
        lane_ran = true;
      });
      lane_submitted = true;
    });
    // fib until the lane task ran, in rounds (bounded: 200 rounds of fib(25) after the
    // submission). Rounds before the submission do not count: the outside thread may not
    // get a CPU for a while on a loaded machine (or under TSan), and 200 rounds counted
    // from fib's start could end before it submitted - a failure with a correct scheduler.
    // The watchdog bounds the wait for the submission.
    pool.run([&] {
      fib_started = true;
      for (int round = 0; round < 200 && !lane_ran.load();) {
        const bool counts = lane_submitted.load();
        lantern::testing::fib(25);
        if (counts) ++round;
      }
      fib_done = true;
    });
    outside.join();
    pool.run([] {});
    EXPECT_TRUE(lane_ran_during_fib.load()) << workers << " worker(s): the lane task waited for fork-join to end";
  }
}

// ---------------------------------------------------------------------------------
// A worker that new_jobs counted on must not leave the job to a sleeper's dreams. Two
// workers asleep; an outside thread submits A then B at once. A's post wakes one
// worker; B's post sees that worker idle and awake and wakes nobody ("the searchers
// will find it"). The woken worker takes A from its own lane, and A holds it (as any
// long task does) until B starts. B sits in the other lane while the other worker
// sleeps: before the fix work_found woke a sleeper only when the queue it took from
// held more, so B waited for A to end (here: A's 1 s bound, every repetition; the
// full deadlock test below hung under TSan on exactly this, with "worker 0: sleeping,
// lane=1" and worker 1 running). SLEEP.md, "A worker counted on that takes other work".
// ---------------------------------------------------------------------------------
TEST_P(Strategy, AWorkerCountedOnThatTakesOtherWorkWakesASleeperForTheRest) {
  const long reps = scaled(20, 4);
  for (long rep = 0; rep < reps; ++rep) {
    Scheduler pool(options(2));
    Watchdog dog("counted-on worker takes other work", 30s, dump(pool));
    wait_all_asleep(pool);
    std::atomic<int> started{0};
    std::atomic<int> saw_both{0};
    auto task = [&] {
      started.fetch_add(1);
      // Bounded: without the fix the other job would start only after this one ends.
      const auto deadline = std::chrono::steady_clock::now() + 1s * lantern::testing::sanitizer_slowdown();
      while (started.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      if (started.load() == 2) saw_both.fetch_add(1);
    };
    auto a = pool.submit(task);
    auto b = pool.submit(task);
    a.get();
    b.get();
    // Whichever started first saw the other start while it ran (the second always does).
    ASSERT_EQ(saw_both.load(), 2) << "repetition " << rep << ": the second job waited for the first to end";
  }
}

// ---------------------------------------------------------------------------------
// Defect 6: a waiting worker runs any task, including one that waits for something set
// only after the outer wait returns: every worker then sleeps with live jobs forever.
// Lantern detects it (core/README.md, "Waits"): once every worker is blocked in a nested
// wait with nothing ready, the deadlock hook fires once and describe_state() says so,
// naming each wait. Before the detection neither happened (the bounded wait below
// failed); the test thread then rescues the pool by setting the Signal.
// ---------------------------------------------------------------------------------
class CountDeadlocks final : public lantern::Observer {
 public:
  CountDeadlocks() { interest.store(bit(lantern::Hook::deadlock), std::memory_order_relaxed); }
  void on_event(std::uint32_t, lantern::Hook hook, std::uint64_t a, std::uint64_t b) noexcept override {
    if (hook != lantern::Hook::deadlock) return;
    const auto p = lantern::DeadlockPayload::decode(a, b);
    blocked_workers = p.blocked_workers;
    unfinished_tasks = p.unfinished_tasks;
    reports.fetch_add(1);
  }
  std::atomic<int> reports{0};
  std::atomic<std::uint64_t> blocked_workers{0};
  std::atomic<std::uint64_t> unfinished_tasks{0};
};

// wait_for_state polls describe_state() (yielding, bounded by the caller's watchdog)
// until `pred` holds; returns the last dump.
template <class Pred>
std::string wait_for_state(const Scheduler& pool, Pred pred) {
  for (;;) {
    std::string s = pool.describe_state();
    if (pred(s)) return s;
    std::this_thread::yield();
  }
}

bool says_deadlock(const std::string& s) { return s.find("deadlock suspected") != std::string::npos; }

TEST_P(Strategy, NestedWaitsThatCanOnlyEndFromOutsideAreReportedAsASuspectedDeadlock) {
  for (std::uint32_t workers : {1u, 2u}) {
    CountDeadlocks observer;
    Scheduler pool(options(workers, &observer));
    // 10 s (100 s under TSan): fails loudly with the dump well inside ctest's 600 s.
    Watchdog dog("suspected deadlock", 10s, dump(pool));
    lantern::Signal gate;  // the outer tasks would set it after their TaskGroup wait returns
    std::atomic<std::uint32_t> started{0};
    std::atomic<int> inner_done{0};
    std::vector<lantern::Future<void>> outers;
    for (std::uint32_t i = 0; i < workers; ++i) {
      outers.push_back(pool.submit([&] {
        // One outer task per worker: each holds its worker until all have started (a
        // sleeper is woken for the others even if the worker counted on for them took
        // this one: AWorkerCountedOnThatTakesOtherWorkWakesASleeperForTheRest).
        started.fetch_add(1);
        while (started.load() < workers) std::this_thread::yield();
        lantern::TaskGroup group(pool);
        group.spawn([&] {
          gate.wait();  // set only after the outer wait below returns: never, alone
          inner_done.fetch_add(1);
        });
        group.wait();
        gate.set();
      }));
    }
    const std::string state = wait_for_state(pool, says_deadlock);
    // The hook fired once (before the flag describe_state reads was published).
    EXPECT_EQ(observer.reports.load(), 1) << state;
    EXPECT_EQ(observer.blocked_workers.load(), workers);
    EXPECT_GE(observer.unfinished_tasks.load(), 2u * workers) << state;  // outers and inners
    EXPECT_NE(state.find("every worker is blocked in a wait with nothing ready"), std::string::npos) << state;
    for (std::uint32_t i = 0; i < workers; ++i) {
      EXPECT_NE(state.find("worker " + std::to_string(i) + " in "), std::string::npos) << state;
    }
    // The innermost wait is the Signal's (the inner task ran on the waiting worker) or,
    // if another worker took the inner task, the TaskGroup's.
    EXPECT_NE(state.find("Signal::wait"), std::string::npos) << state;
    // Rescue from outside: everything finishes and the report ends.
    gate.set();
    for (auto& f : outers) f.get();
    EXPECT_EQ(inner_done.load(), static_cast<int>(workers));
    pool.run([] {});
    EXPECT_FALSE(says_deadlock(pool.describe_state())) << pool.describe_state();
    EXPECT_EQ(observer.reports.load(), 1);
  }
}

// Ordinary nested fork-join is never reported. When a worker finishes the stolen half of
// a join (or a TaskGroup's last task) it sets the owner's latch and goes back to its own
// wait; the owner, blocked in its wait, keeps its flag up until its next probe of the
// latch (or until it wakes, if it slept on it). The check used to read the flags only,
// so that moment looked like "every worker blocked with nothing ready": on 2 workers,
// 100 TaskGroup fib(16) gave 300-470 reports and 100 join fib(18) 2-33. The check now
// also requires each blocked worker's latch to be unset (Worker::still_blocked).
// Nothing here waits on anything an outside thread sets, so any report is wrong. More
// workers than cores as well: a preempted owner keeps its stale flag up for longer.
long long fib_by_join(int n) {
  if (n < 2) return n;
  long long a = 0, b = 0;
  lantern::join([&] { a = fib_by_join(n - 1); }, [&] { b = fib_by_join(n - 2); });
  return a + b;
}

long long fib_by_task_group(int n) {
  if (n < 2) return n;
  long long a = 0, b = 0;
  lantern::TaskGroup group;
  group.spawn([&] { a = fib_by_task_group(n - 1); });
  group.spawn([&] { b = fib_by_task_group(n - 2); });
  group.wait();
  return a + b;
}

TEST_P(Strategy, OrdinaryNestedForkJoinIsNeverReportedAsADeadlock) {
  for (std::uint32_t workers : {2u, 3u}) {
    CountDeadlocks observer;
    Scheduler pool(options(workers, &observer));
    Watchdog dog("nested fork-join, " + std::to_string(workers) + " workers", 60s, dump(pool));
    const long reps = scaled(100, 10);
    for (long rep = 0; rep < reps; ++rep) {
      ASSERT_EQ(pool.run([] { return fib_by_task_group(16); }), 987);
      ASSERT_EQ(pool.run([] { return fib_by_join(18); }), 2584);
    }
    EXPECT_EQ(observer.reports.load(), 0) << workers << " workers, " << reps << " repetitions of each\n"
                                          << pool.describe_state();
  }
}

// A task waiting on a Signal that the main thread will set is not a deadlock, but from
// inside the pool it looks the same as one when it holds every worker: on one worker it
// is reported as suspected (the documented limit); on two, the other worker is idle in
// its own loop, not blocked in a wait, and nothing is reported.
TEST_P(Strategy, AnOutsideSignalWaitIsSuspectedOnlyWhenItHoldsEveryWorker) {
  for (std::uint32_t workers : {1u, 2u}) {
    CountDeadlocks observer;
    Scheduler pool(options(workers, &observer));
    Watchdog dog("outside signal wait", 10s, dump(pool));
    lantern::Signal from_main;
    auto waiter = pool.submit([&] { from_main.wait(); });
    std::string state = wait_for_state(pool, [&](const std::string& s) {
      if (s.find("blocked in Signal::wait") == std::string::npos) return false;
      return workers == 1 ? says_deadlock(s) : pool.sleep_snapshot().sleeping == workers;
    });
    if (workers == 1) {
      EXPECT_EQ(observer.reports.load(), 1) << state;
    } else {
      // Both asleep: the waiter's last search has run its check; the idle one never blocks in a wait.
      state = pool.describe_state();
      EXPECT_FALSE(says_deadlock(state)) << state;
      EXPECT_EQ(observer.reports.load(), 0) << state;
    }
    from_main.set();
    waiter.get();
    pool.run([] {});
    EXPECT_FALSE(says_deadlock(pool.describe_state())) << pool.describe_state();
    EXPECT_EQ(observer.reports.load(), workers == 1 ? 1 : 0);
  }
}

// ---------------------------------------------------------------------------------
// The fan-out credit (Sleep::kFanOutCredit, SLEEP.md "The fan-out credit"): a posted task
// whose spawn had to wake a sleeper makes the next posts wake one worker more, so that
// their spawns do not pay for a cross-CPU wake on the task's path; posts of tasks that
// do not fan out keep waking one worker each. Counted by the woken workers' wake hooks
// (a wake's waker is the posting thread or the pushing worker). Without the credit every
// post below wakes exactly one worker and the test fails at the first post after the
// fan-out.
// ---------------------------------------------------------------------------------
struct CountWakes final : lantern::Observer {
  std::atomic<int> outside{0}, by_worker{0};
  CountWakes() { interest.store(bit(lantern::Hook::wake), std::memory_order_relaxed); }
  void on_event(std::uint32_t, lantern::Hook hook, std::uint64_t a, std::uint64_t b) noexcept override {
    if (hook != lantern::Hook::wake) return;
    // Wakes for work only: a worker that fell asleep in its TaskGroup's wait is woken
    // by the finishing task through the latch, which is not what is counted here.
    const lantern::WakePayload wake = lantern::WakePayload::decode(a, b);
    if (wake.why != lantern::WakeCause::work) return;
    (wake.from_outside() ? outside : by_worker).fetch_add(1);
  }
};

TEST_P(Strategy, APostWhoseTaskFannedOutWakesOneWorkerMoreForTheNextPosts) {
  CountWakes wakes;
  Scheduler pool(options(2, &wakes));
  Watchdog dog("fan-out credit", 120s, dump(pool));
  // One post, counted once both workers sleep again: every wake it caused has been
  // reported by then (a waker takes its sleeper out of the count before returning, and
  // the sleeper reports the wake before it can count itself again).
  auto post = [&](std::function<void()> task) {
    wait_all_asleep(pool);
    wakes.outside = 0;
    wakes.by_worker = 0;
    pool.submit(std::move(task)).get();
    wait_all_asleep(pool);
    return std::pair<int, int>(wakes.outside.load(), wakes.by_worker.load());
  };
  const auto fan_out = [] {
    lantern::TaskGroup group;
    group.spawn([] {});
    group.wait();
  };
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(post([] {}), std::make_pair(1, 0)) << "a post that does not fan out, " << i;
  }
  // The posted task's spawn finds the other worker asleep and wakes it itself.
  EXPECT_EQ(post(fan_out), std::make_pair(1, 1)) << "the first fan-out";
#if LANTERN_OBSERVER
  constexpr int kCredit = static_cast<int>(lantern::detail::Sleep::kFanOutCredit);
  // The next kCredit posts wake both workers from the posting thread; then one again.
  for (int i = 0; i < kCredit; ++i) EXPECT_EQ(post([] {}), std::make_pair(2, 0)) << "post " << i << " after it";
  EXPECT_EQ(post([] {}), std::make_pair(1, 0)) << "the credit is spent";
  // A fan-out refills the credit: the next post wakes both workers again. (Not asserted:
  // whether that post's own spawn still finds the second worker awake. It does when the
  // first starts the task within the second's 10 us (at most 32 rounds) of searching; under a sanitizer, or
  // when the host is slow to run the first one's vCPU, the second may already have gone
  // back to sleep, and the spawn wakes it again: CI saw (2, 1) once under ASan.)
  EXPECT_EQ(post(fan_out), std::make_pair(1, 1)) << "a fan-out refills the credit";
  EXPECT_EQ(post([] {}), std::make_pair(2, 0)) << "the post after it wakes both again";
#endif
}

// ---------------------------------------------------------------------------------
// A lone task (SLEEP.md, "A lone task"). A thief takes a deque's only task on its second
// sighting; a search a wake pointed at takes it at once, and a worker does not sleep
// while the deque it declined such a task in still holds it. Before the rule, an idle
// worker took the next link of a chain of spawns a few nanoseconds before its owner
// would pop it, about every 2 us, and the chain bounced between the workers:
// 12,600-17,600 steals in 200 chains of 1,000 (bench/RESULTS.md, "Session 12"). This
// test, without the rule on a quiet machine: 10,000-48,000 of a pass's 400,000 links
// stolen, in every run of three (it can pass without the rule when the thief gets little
// CPU: under load or TSan).
// ---------------------------------------------------------------------------------
class CountSteals final : public lantern::Observer {
 public:
  CountSteals() { interest.store(bit(lantern::Hook::steal), std::memory_order_relaxed); }
  void on_event(std::uint32_t, lantern::Hook hook, std::uint64_t, std::uint64_t) noexcept override {
    if (hook == lantern::Hook::steal) steals.fetch_add(1, std::memory_order_relaxed);
  }
  std::atomic<long> steals{0};
};

void chain_link(lantern::TaskGroup& group, long& steps, int i, int depth) {
  ++steps;  // sequential: link i happens-before link i + 1
  if (i + 1 < depth) group.spawn([&group, &steps, i, depth] { chain_link(group, steps, i + 1, depth); });
}

TEST_P(Strategy, AChainOfSpawnsStaysOnItsWorker) {
  CountSteals observer;
  Scheduler pool(options(2, &observer));
  Watchdog dog("a chain of spawns on 2 workers", 60s, dump(pool));
  constexpr int kChains = 400;
  constexpr int kDepth = 1000;
  constexpr long kLinks = long{kChains} * kDepth;
  // Several passes, each from a pool.run: whether the idle worker gets into step with the
  // chain varies from pass to pass (without the rule about a third of the passes on a
  // quiet machine bounced, with 9-10 % of their links stolen; the others 0.1 %).
  long worst = 0;
  std::string per_pass;
  for (int pass = 0; pass < 8; ++pass) {
    const long before = observer.steals.load();
    const long steps = pool.run([] {
      long total = 0;
      for (int c = 0; c < kChains; ++c) {
        long s = 0;
        lantern::TaskGroup group;
        group.spawn([&] { chain_link(group, s, 0, kDepth); });
        group.wait();
        total += s;
      }
      return total;
    });
    ASSERT_EQ(steps, kLinks);
    const long steals = observer.steals.load() - before;
    worst = std::max(worst, steals);
    per_pass += " " + std::to_string(steals);
  }
  std::printf("steals per pass of %d chains of %d spawns:%s\n", kChains, kDepth, per_pass.c_str());
  EXPECT_LT(worst, kLinks / 100) << "the idle worker took links their owner was about to pop (steals per pass:"
                                 << per_pass << ")\n"
                                 << pool.describe_state();
}

// The rule may leave a task for a while, never for good: a task that spawns one child
// and then blocks outside Lantern until that child has run gets it run by the other
// worker, whether that worker was asleep at the spawn (the wake points at the deque) or
// searching (second sighting; it does not sleep while the task is there). Without those
// the child could wait for its spawner forever (core/model/sleep.pml checks the last
// look before sleeping; -DBUG_SLEEP_ON_DECLINED is its counterexample).
TEST_P(Strategy, ALoneTaskIsTakenWhileItsSpawnerBlocksOutsideLantern) {
  Scheduler pool(options(2));
  Watchdog dog("a lone child while its spawner blocks", 60s, dump(pool));
  const int trials = static_cast<int>(scaled(200, 40));
  for (int trial = 0; trial < trials; ++trial) {
    if (trial % 2 == 0) wait_all_asleep(pool);  // odd trials: the other worker may be searching
    std::atomic<bool> child_ran{false};
    pool.run([&] {
      lantern::TaskGroup group;
      group.spawn([&] {
        child_ran.store(true);
        child_ran.notify_one();
      });
      child_ran.wait(false);  // outside Lantern: only the other worker can run the child
      group.wait();
    });
    ASSERT_TRUE(child_ran.load());
  }
}

// Rule 1 of "A lone task", forced: the other worker's idle rounds miss the child (it is
// spawned while that worker is held inside its third failed steal round), its idle period
// is older than kDeclineSpinLimitNs (so a decline no longer restarts its spin phase), and
// the first search that sees the child is its search before sleeping, which declines it.
// Without the last look at the declined deque (Worker::declined_still_there) it then
// slept, with the child's spawner blocked outside Lantern: the child waited for the
// spawner's whole 2 s bound in every forced trial.
class HoldInFailedRound final : public HoldWorker {
 public:
  HoldInFailedRound() { interest.store(bit(lantern::Hook::steal_round_failed), std::memory_order_relaxed); }
  void on_event(std::uint32_t worker, lantern::Hook hook, std::uint64_t, std::uint64_t) noexcept override {
    if (hook != lantern::Hook::steal_round_failed || !is_target(worker)) return;
    if (skip.fetch_sub(1) > 0) return;  // hold in the (skip + 1)-th failed round
    hold();
  }
  std::atomic<int> skip{0};
};

TEST_P(Strategy, AWorkerNeverSleepsOnALoneTaskItDeclined) {
  HoldInFailedRound observer;
  Scheduler pool(options(2, &observer));
  Watchdog dog("a lone task declined before sleeping", 120s, dump(pool));
  const auto spawner_bound = 2s * lantern::testing::sanitizer_slowdown();
  int forced = 0;
  for (int trial = 0; trial < 10 && forced < 3; ++trial) {
    wait_all_asleep(pool);
    observer.held = false;
    observer.release = false;
    std::atomic<bool> child_ran{false};
    bool was_forced = false;
    bool ran_while_blocked = false;
    pool.submit_to_lane(0, [&] {
         const std::uint32_t me = lantern::detail::tls_worker->index;
         observer.target = 1 - me;
         observer.skip = 2;
         observer.armed = true;
         lantern::TaskGroup group;
         group.spawn([] {});  // a push into an empty deque: wakes the other worker
         group.wait();
         const auto give_up = std::chrono::steady_clock::now() + 1s;
         while (!observer.held.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
         if (!observer.held.load()) {  // it never failed three rounds: this trial proves nothing
           observer.armed = false;
           return;
         }
         was_forced = true;
         const auto held_at = std::chrono::steady_clock::now();
         group.spawn([&] { child_ran = true; });  // the only task of our deque, unseen by it
         // A time bound, not synchronisation: the held worker's idle period must be older
         // than kDeclineSpinLimitNs when it goes on.
         while (std::chrono::steady_clock::now() - held_at < 2ms) std::this_thread::yield();
         observer.release = true;
         // Blocked outside Lantern: only the other worker can run the child.
         const auto deadline = std::chrono::steady_clock::now() + spawner_bound;
         while (!child_ran.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
         ran_while_blocked = child_ran.load();
         group.wait();
       })
        .get();
    observer.release = true;
    if (!was_forced) continue;
    ++forced;
    EXPECT_TRUE(ran_while_blocked) << "trial " << trial << ": the child waited for its spawner's whole bound\n"
                                   << pool.describe_state();
    if (!ran_while_blocked) break;
  }
  std::printf("forced the interleaving in %d trials\n", forced);
  EXPECT_GE(forced, 1) << "the interleaving was never forced";
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Strategies, Strategy, ::testing::Values(SleepStrategy::condvar, SleepStrategy::io_uring),
                         strategy_name);
