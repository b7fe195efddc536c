// SPDX-License-Identifier: Apache-2.0
// Lantern's threads never take the application's signals (lantern/thread_signals.hpp):
// a signal sent to the process reaches one of the application's threads, whatever the
// workers are doing, and every thread the pool starts blocks application_signals() and
// is named lantern-<what>.
#include <gtest/gtest.h>

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "lantern/io.hpp"
#include "lantern/scheduler.hpp"
#include "lantern/thread_signals.hpp"
#include "support/pool_state.hpp"
#include "support/thread_masks.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;
using lantern::testing::Watchdog;

namespace {

std::atomic<int> g_handled{0};
std::atomic<long> g_handler_thread{0};
void on_signal(int) {
  g_handler_thread.store(::syscall(SYS_gettid));
  g_handled.fetch_add(1);
}

long this_thread_id() { return ::syscall(SYS_gettid); }

// Handler installs on_signal for sig for one test and puts the old action back.
struct Handler {
  int sig;
  struct sigaction old {};
  explicit Handler(int s) : sig(s) {
    g_handled = 0;
    g_handler_thread = 0;
    struct sigaction a {};
    a.sa_handler = on_signal;
    sigemptyset(&a.sa_mask);
    a.sa_flags = SA_RESTART;
    sigaction(sig, &a, &old);
  }
  ~Handler() { sigaction(sig, &old, nullptr); }
};

sigset_t only(int sig) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  return set;
}

// send_to_process: kill(getpid(), sig) from a thread that blocks sig, as another process
// would send it: the kernel picks the thread that takes it among those not blocking it.
void send_to_process(int sig) {
  std::thread sender([sig] {
    const sigset_t set = only(sig);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    ::syscall(SYS_kill, getpid(), sig);
  });
  sender.join();
}

// The main thread blocks sig while it is sent (as glibc and the sanitizers do for a moment
// inside some calls): no Lantern thread may take it meanwhile. When the main thread
// unblocks it, it runs the handler itself.
void expect_main_thread_takes(int sig) {
  Handler handler(sig);
  const sigset_t set = only(sig);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  send_to_process(sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);  // a pending signal is delivered here
  while (g_handled.load() == 0) std::this_thread::yield();
  EXPECT_EQ(g_handler_thread.load(), this_thread_id()) << "signal " << sig << " ran its handler on another thread";
  EXPECT_EQ(g_handled.load(), 1);
}

}  // namespace

TEST(ThreadSignals, TheSetHoldsTheApplicationsSignalsAndNotTheSynchronousOnes) {
  const sigset_t set = lantern::application_signals();
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD, SIGWINCH, SIGRTMIN, SIGRTMAX}) {
    EXPECT_EQ(sigismember(&set, s), 1) << s;
  }
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT, SIGPIPE, SIGPROF, SIGKILL, SIGSTOP, SIGTTIN,
                SIGTTOU}) {
    EXPECT_EQ(sigismember(&set, s), 0) << s;
  }
}

TEST(ThreadSignals, EveryThreadThePoolStartsBlocksThemAndTheCallersMaskIsKept) {
  sigset_t mine_before;
  pthread_sigmask(SIG_BLOCK, nullptr, &mine_before);
  Watchdog watchdog("pool threads", 10s);  // started first: not one of the threads counted below
  const auto before = lantern::testing::thread_ids();
  lantern::Scheduler pool({.workers = 2});
  // The condvar strategy's IO completer starts with the first IO operation (where
  // io_uring is refused, e.g. by a container's seccomp profile, there is none: -ENOSYS).
  std::atomic<bool> fired{false};
  std::atomic<int> result{0};
  pool.run([&] {
    lantern::io::timeout(0ns, [&](lantern::IoResult r) {
      result = static_cast<int>(r.value);
      fired = true;
    });
  });
  while (!fired.load()) std::this_thread::yield();
  const auto threads = lantern::testing::thread_ids();
  const std::size_t completer = result.load() == -ENOSYS ? 0 : 1;
  EXPECT_GE(threads.size(), before.size() + 2 + completer) << "2 workers and the IO completer";
  EXPECT_EQ(lantern::testing::threads_taking_application_signals(before), "");
  // Each is named for top -H, gdb and perf (lantern::name_thread), before it is used.
  std::multiset<std::string> names;
  for (pid_t tid : threads) {
    if (before.count(tid)) continue;
    std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/comm");
    std::string name;
    std::getline(in, name);
    names.insert(name);
  }
  EXPECT_EQ(names.count("lantern-w0"), 1u);
  EXPECT_EQ(names.count("lantern-w1"), 1u);
  EXPECT_EQ(names.count("lantern-io"), completer);
  for (const std::string& name : names) EXPECT_EQ(name.rfind("lantern-", 0), 0u) << name;
  sigset_t mine_after;
  pthread_sigmask(SIG_BLOCK, nullptr, &mine_after);
  for (int s = 1; s <= SIGRTMAX; ++s) EXPECT_EQ(sigismember(&mine_before, s), sigismember(&mine_after, s)) << s;
}

TEST(ThreadSignals, ASignalToTheProcessGoesToTheApplicationNotToASleepingWorker) {
  lantern::Scheduler pool({.workers = 2});
  Watchdog watchdog("signal with the workers asleep", 10s, lantern::testing::dump(pool));
  for (int round = 0; round < 5; ++round) {
    lantern::testing::wait_all_asleep(pool);
    expect_main_thread_takes(round % 2 ? SIGUSR1 : SIGTERM);
  }
}

TEST(ThreadSignals, ASignalToTheProcessGoesToTheApplicationNotToARunningTask) {
  lantern::Scheduler pool({.workers = 2});
  Watchdog watchdog("signal with the workers running", 10s, lantern::testing::dump(pool));
  std::atomic<bool> stop{false};
  std::atomic<int> running{0};
  for (int i = 0; i < 2; ++i) {
    pool.spawn([&] {
      running.fetch_add(1);
      while (!stop.load()) {
      }
    });
  }
  while (running.load() < 2) std::this_thread::yield();
  for (int round = 0; round < 5; ++round) expect_main_thread_takes(round % 2 ? SIGUSR2 : SIGINT);
  stop = true;
}
