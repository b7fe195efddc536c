// SPDX-License-Identifier: Apache-2.0
// Asynchronous IO (lantern/io.hpp, core/io/README.md) under both sleep strategies, with
// real file descriptors: pipes, eventfds and TCP sockets on loopback. Every test runs
// under a watchdog that dumps the workers' states instead of hanging.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "lantern/detail/io_context.hpp"
#include "lantern/lantern.hpp"
#include "support/pool_state.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;
using lantern::IoResult;
using lantern::Scheduler;
using lantern::SleepStrategy;
using lantern::testing::dump;
using lantern::testing::scaled;
using lantern::testing::wait_all_asleep;
using lantern::testing::Watchdog;

namespace {

// Done: a count an outside thread blocks on (a futex wait, not a sleep).
struct Done {
  std::atomic<int> n{0};
  void add() {
    n.fetch_add(1);
    n.notify_all();
  }
  void wait_for(int target) {
    for (int v = n.load(); v < target; v = n.load()) n.wait(v);
  }
};

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
};

// A listening socket on 127.0.0.1, any free port.
struct Listener {
  int fd = -1;
  sockaddr_in addr{};
  Listener() {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 128) != 0)
      throw std::runtime_error("bind/listen");
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  }
  ~Listener() { close(fd); }
};

}  // namespace

class Io : public ::testing::TestWithParam<SleepStrategy> {
 protected:
  lantern::SchedulerOptions options(std::uint32_t workers = 2) const {
    return {.workers = workers, .sleep_strategy = GetParam()};
  }
};

TEST_P(Io, StrategyIsTheOneAskedFor) {
  Scheduler pool(options());
  EXPECT_EQ(pool.sleep_strategy(), GetParam()) << pool.strategy_note();
  EXPECT_TRUE(pool.strategy_note().empty());
}

TEST_P(Io, PipeReadCompletesAfterTheWriteAndIsNotReadyUntilThen) {
  Scheduler pool(options());
  Watchdog dog("pipe read", 30s, dump(pool));
  Pipe p;
  char buf[16] = {};
  Done done;
  IoResult got;
  pool.io().read(p.r, buf, sizeof buf, [&](IoResult r) {
    got = r;
    done.add();
  });
  // The callback is a not-ready task until the data arrives.
  EXPECT_EQ(pool.not_ready_tasks(), 1u);
  ASSERT_EQ(write(p.w, "hello", 5), 5);
  done.wait_for(1);
  EXPECT_EQ(got.value, 5);
  EXPECT_EQ(std::string(buf, 5), "hello");
  pool.shutdown();
  EXPECT_EQ(pool.not_ready_tasks(), 0u);
}

TEST_P(Io, WriteToAPipeFallsBackFromSendAndReadsBack) {
  Scheduler pool(options());
  Watchdog dog("pipe write", 30s, dump(pool));
  Pipe p;
  Done done;
  IoResult got;
  const char msg[] = "through write(2)";
  pool.io().write(p.w, msg, sizeof msg, [&](IoResult r) {
    got = r;
    done.add();
  });
  done.wait_for(1);
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(got.bytes(), sizeof msg);
  char back[sizeof msg];
  ASSERT_EQ(read(p.r, back, sizeof back), static_cast<ssize_t>(sizeof back));
  EXPECT_STREQ(back, msg);
}

// io_uring cancels a request when the thread that submitted it exits; an application
// thread that starts an operation and ends must not lose it.
TEST_P(Io, OperationOutlivesTheThreadThatStartedIt) {
  Scheduler pool(options());
  Watchdog dog("op outliving its thread", 30s, dump(pool));
  Pipe p;
  char buf[8] = {};
  Done done;
  IoResult got;
  std::thread([&] {
    pool.io().read(p.r, buf, sizeof buf, [&](IoResult r) {
      got = r;
      done.add();
    });
  }).join();
  ASSERT_EQ(write(p.w, "later", 5), 5);
  done.wait_for(1);
  EXPECT_EQ(got.value, 5) << got.message();
}

// Three timeouts `gap` apart, started in the order 3, 1, 2, must fire 1, 2, 3 and none
// before its delay. The order is only a property of the timeouts while each callback runs
// before the next timeout expires: a worker kept off the CPU for a gap reaps two
// completions at once (io_uring: onto its deque, which runs the newest first), and with
// two workers either could run its callback first. So: one worker; the three are started
// from one task (submitted together; io_uring: in one io_uring_enter); and a round in
// which starting them took a gap, or a callback ran a gap late (after the next timeout
// could have expired), says nothing about the order: it is measured again with twice the
// gap (20 ms up to 1.28 s), so the gap ends up larger than this machine's wake latency in
// this run. Before: a fixed 20 ms, 2 workers, started one by one from outside, the order
// asserted whatever the timing - on one CPU shared with two busy loops 42 of 80 runs
// failed ({1,3,2}, {2,1,3}), and condvar callbacks ran 25-35 ms late in every round.
TEST_P(Io, TimeoutsFireInOrderOfTheirDelay) {
  using Clock = std::chrono::steady_clock;
  Scheduler pool(options(1));
  Watchdog dog("timeouts", 60s, dump(pool));
  int conclusive = 0;
  std::string late;
  for (std::chrono::milliseconds gap = 20ms; gap <= 1280ms && conclusive == 0; gap *= 2) {
    std::mutex m;
    std::vector<int> order;
    Clock::time_point ran[4];
    Clock::time_point start, started;
    Done done;
    pool.run([&] {
      start = Clock::now();
      for (int i : {3, 1, 2}) {
        lantern::io::timeout(gap * i, [&, i](IoResult r) {
          const auto now = Clock::now();
          EXPECT_EQ(r.value, 0) << r.message();
          {
            std::lock_guard<std::mutex> lock(m);
            order.push_back(i);
            ran[i] = now;
          }
          done.add();
        });
      }
      started = Clock::now();
    });
    done.wait_for(3);
    std::lock_guard<std::mutex> lock(m);
    // The kernel starts each timeout after `start`: none may run before its delay.
    for (int i = 1; i <= 3; ++i) EXPECT_GE(ran[i] - start, gap * i) << "timeout " << i << " fired early";
    const bool timely = started - start < gap && ran[1] < start + 2 * gap && ran[2] < start + 3 * gap;
    if (!timely) {
      const auto ms = [&](Clock::time_point t) {
        return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(t - start).count() / 1000.0);
      };
      late += "gap " + std::to_string(gap.count()) + " ms: started after " + ms(started) + " ms, ran at " + ms(ran[1]) +
              ", " + ms(ran[2]) + ", " + ms(ran[3]) + " ms\n";
      continue;
    }
    ++conclusive;
    EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  }
  if (!late.empty()) std::printf("timeouts measured again (a callback ran late, not a failure):\n%s", late.c_str());
  // Not even with 1.28 s gaps: callbacks over a second late is a failure of its own.
  EXPECT_EQ(conclusive, 1) << "no round ran each callback before the next timeout expired:\n" << late;
}

TEST_P(Io, AcceptConnectReadWriteOverLoopback) {
  Scheduler pool(options());
  Watchdog dog("loopback sockets", 30s, dump(pool));
  Listener l;
  Done done;
  std::string received;
  char server_buf[64] = {};
  // Server side: accept, then read what the client sends, inside tasks.
  pool.io().accept(l.fd, [&](IoResult a) {
    ASSERT_TRUE(a.ok()) << a.message();
    const int fd = a.fd();
    lantern::io::read(fd, server_buf, sizeof server_buf, [&, fd](IoResult r) {
      if (r.ok()) received.assign(server_buf, r.bytes());
      close(fd);
      done.add();
    });
  });
  // Client side: connect and write, also through the pool.
  const int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  static const char msg[] = "ping over io_uring";
  pool.io().connect(c, reinterpret_cast<const sockaddr*>(&l.addr), sizeof l.addr, [&](IoResult r) {
    ASSERT_TRUE(r.ok()) << r.message();
    lantern::io::write(c, msg, sizeof msg - 1, [&](IoResult w) {
      EXPECT_EQ(w.bytes(), sizeof msg - 1) << w.message();
      done.add();
    });
  });
  done.wait_for(2);
  close(c);
  EXPECT_EQ(received, msg);
}

TEST_P(Io, WritingToAClosedPeerIsAnErrorNotASignal) {
  Scheduler pool(options());
  Watchdog dog("closed peer", 30s, dump(pool));
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  close(sv[1]);
  Done done;
  IoResult got;
  static const char msg[] = "nobody listens";
  pool.io().write(sv[0], msg, sizeof msg, [&](IoResult r) {
    got = r;
    done.add();
  });
  done.wait_for(1);  // a SIGPIPE would have killed the test binary before this
  EXPECT_FALSE(got.ok());
  EXPECT_TRUE(got.value == -EPIPE || got.value == -ECONNRESET) << got.message();
  close(sv[0]);
}

TEST_P(Io, ShutdownCancelsWhatIsInFlightAndRunsEveryCallback) {
  Listener l;
  Pipe p;
  std::atomic<int> cancelled{0};
  std::atomic<int> callbacks{0};
  char buf[8];
  {
    Scheduler pool(options());
    Watchdog dog("shutdown with IO in flight", 30s, dump(pool));
    auto count = [&](IoResult r) {
      callbacks.fetch_add(1);
      if (r.value == -ECANCELED) cancelled.fetch_add(1);
    };
    pool.io().accept(l.fd, count);                // nobody connects
    pool.io().read(p.r, buf, sizeof buf, count);  // nobody writes
    pool.io().timeout(1h, count);                 // far in the future
    // And from inside a task, on a worker's own ring.
    pool.run([&] { lantern::io::timeout(1h, count); });
    pool.shutdown();
    EXPECT_EQ(pool.not_ready_tasks(), 0u);
    // After shutdown, starting IO from outside is refused like any other work.
    EXPECT_THROW(pool.io().timeout(1ms, count), lantern::ShutdownError);
  }
  EXPECT_EQ(callbacks.load(), 4);
  EXPECT_EQ(cancelled.load(), 4);
}

TEST_P(Io, CallbackExceptionsAreReportedAndWorkersSurvive) {
  std::atomic<int> handled{0};
  Scheduler pool({.workers = 2,
                  .on_unhandled_exception = [&](std::exception_ptr) { handled.fetch_add(1); },
                  .sleep_strategy = GetParam()});
  Watchdog dog("throwing callbacks", 30s, dump(pool));
  Done done;
  for (int i = 0; i < 10; ++i) {
    pool.io().timeout(0ns, [&](IoResult) {
      done.add();
      throw std::runtime_error("callback failed");
    });
  }
  done.wait_for(10);
  pool.shutdown();
  EXPECT_EQ(handled.load(), 10);
  EXPECT_EQ(pool.unhandled_exceptions(), 10u);
}

// Lost-wakeup torture with IO: completions and task submissions interleave. An outside
// thread writes into pipes that tasks read asynchronously, while other threads submit
// ordinary tasks and timeouts fire; often the whole pool is asleep when the next thing
// happens. A lost wakeup strands a callback: the watchdog fires and dumps states.
TEST_P(Io, NoLostWakeupWhenCompletionsAndSubmissionsInterleave) {
  Scheduler pool(options());
  const long rounds = scaled(3000, 300);
  Watchdog dog("IO lost-wakeup torture", 300s, dump(pool));
  constexpr int kPipes = 4;
  std::vector<std::unique_ptr<Pipe>> pipes;
  for (int i = 0; i < kPipes; ++i) pipes.push_back(std::make_unique<Pipe>());
  std::vector<char> bufs(kPipes);
  Done reads, tasks, timers;
  std::mt19937 rng(42);
  for (long round = 0; round < rounds; ++round) {
    const int which = static_cast<int>(round % kPipes);
    // A read started from inside a task (on that worker's ring) ...
    pool.spawn([&, which] {
      lantern::io::read(pipes[which]->r, &bufs[which], 1, [&](IoResult r) {
        EXPECT_EQ(r.value, 1) << r.message();
        reads.add();
      });
    });
    // ... a short timeout from outside ...
    pool.io().timeout(std::chrono::microseconds(rng() % 50), [&](IoResult) { timers.add(); });
    if (round % 3 == 0) wait_all_asleep(pool);
    // ... the data for the read, from this thread, racing with ...
    std::thread writer([&, which] {
      // The read may not be started yet; the byte waits in the pipe either way.
      ASSERT_EQ(write(pipes[which]->w, "x", 1), 1);
    });
    // ... ordinary tasks submitted from another thread.
    pool.spawn([&] { tasks.add(); });
    writer.join();
    reads.wait_for(static_cast<int>(round + 1));
    tasks.wait_for(static_cast<int>(round + 1));
  }
  timers.wait_for(static_cast<int>(rounds));
  EXPECT_EQ(reads.n.load(), rounds);
}

// An IO completion must wake a pool in which every worker sleeps.
TEST_P(Io, CompletionWakesAFullyAsleepPool) {
  Scheduler pool(options());
  const long rounds = std::getenv("IO_ROUNDS") ? std::atol(std::getenv("IO_ROUNDS")) : scaled(2000, 200);
  Watchdog dog("completion into a sleeping pool", 300s, dump(pool));
  Pipe p;
  char byte;
  Done done;
  for (long i = 0; i < rounds; ++i) {
    pool.run([&] { lantern::io::read(p.r, &byte, 1, [&](IoResult) { done.add(); }); });
    wait_all_asleep(pool);
    ASSERT_EQ(write(p.w, "y", 1), 1);
    done.wait_for(static_cast<int>(i + 1));
  }
}

TEST_P(Io, ObserverSeesSubmitAndComplete) {
  struct Counting final : lantern::Observer {
    std::atomic<int> submits{0}, completes{0};
    void on_event(std::uint32_t, lantern::EventId h, std::uint64_t, std::uint64_t) noexcept override {
      if (h == lantern::EventId::io_submit) submits.fetch_add(1);
      if (h == lantern::EventId::io_complete) completes.fetch_add(1);
    }
  } counting;
  {
    Scheduler pool({.workers = 2, .sleep_strategy = GetParam(), .observer = &counting});
    Watchdog dog("observer", 30s, dump(pool));
    Done done;
    pool.run([&] {
      for (int i = 0; i < 20; ++i) lantern::io::timeout(0ns, [&](IoResult) { done.add(); });
    });
    done.wait_for(20);
  }
  EXPECT_EQ(counting.submits.load(), 20);
  EXPECT_EQ(counting.completes.load(), 20);
}

// Kernels before 6.7 have no IORING_OP_FUTEX_WAIT: a sleeper with IO in flight then waits
// in its ring on its eventfd, which ring_slot writes (core/io/README.md). Forced here on a
// kernel that
// has futex waits: one worker (so the wake goes to the worker whose read is in flight)
// sleeps in its ring while tasks are submitted, then its read completes.
// ForcedDoorbell: rings made in its scope use the eventfd doorbell (or not); the default
// is restored when it ends, also when an assertion returns early.
struct ForcedDoorbell {
  explicit ForcedDoorbell(bool eventfd) { lantern::detail::force_eventfd_doorbell(eventfd); }
  ~ForcedDoorbell() { lantern::detail::force_eventfd_doorbell(false); }
  ForcedDoorbell(const ForcedDoorbell&) = delete;
  ForcedDoorbell& operator=(const ForcedDoorbell&) = delete;
};

TEST(IoEventfdDoorbell, WakesASleeperWithIoInFlightForWorkAndForItsCompletion) {
  ForcedDoorbell doorbell(true);
  Scheduler pool({.workers = 1, .sleep_strategy = SleepStrategy::io_uring});
  ASSERT_EQ(pool.sleep_strategy(), SleepStrategy::io_uring) << pool.strategy_note();
  Watchdog dog("eventfd doorbell", 60s, dump(pool));
  Pipe p;
  char byte;
  Done reads, tasks;
  const int rounds = static_cast<int>(scaled(200, 50));
  for (int i = 0; i < rounds; ++i) {
    pool.run([&] { lantern::io::read(p.r, &byte, 1, [&](IoResult) { reads.add(); }); });
    wait_all_asleep(pool);  // in its ring: the read is in flight
    pool.spawn([&] { tasks.add(); });
    tasks.wait_for(i + 1);
    wait_all_asleep(pool);
    ASSERT_EQ(write(p.w, "z", 1), 1);
    reads.wait_for(i + 1);
  }
}

// A sleeper in its ring whose read completes in the same wait as a waker's doorbell
// leaves as woken with the read's completion already reaped. find_work polls the ring
// only when it is busy, so IoContext::busy counts reaped completions nobody has taken
// (besides what is queued, in flight or armed); otherwise nothing takes it, while the
// sleeper's last look (has_ready) keeps sending it back to search: the worker spins,
// sleepy, for ever and the read's callback never runs. Here the pipe write and the wake
// land back to back, many times, with both doorbells; with a busy() that leaves reaped
// completions out, this test's watchdog fires in every release run.
TEST(IoDoorbell, AReadCompletingWithAWakeIsNotStranded) {
  for (const bool eventfd : {true, false}) {
    ForcedDoorbell doorbell(eventfd);
    Scheduler pool({.workers = 1, .sleep_strategy = SleepStrategy::io_uring});
    ASSERT_EQ(pool.sleep_strategy(), SleepStrategy::io_uring) << pool.strategy_note();
    Watchdog dog(eventfd ? "read with a wake, eventfd doorbell" : "read with a wake, futex doorbell", 60s, dump(pool));
    Pipe p;
    char byte;
    Done reads, tasks;
    const int rounds = static_cast<int>(scaled(3000, 300));
    for (int i = 0; i < rounds; ++i) {
      pool.run([&] { lantern::io::read(p.r, &byte, 1, [&](IoResult) { reads.add(); }); });
      wait_all_asleep(pool);  // in its ring: the read is in flight
      ASSERT_EQ(write(p.w, "z", 1), 1);
      pool.spawn([&] { tasks.add(); });
      tasks.wait_for(i + 1);
      reads.wait_for(i + 1);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, Io, ::testing::Values(SleepStrategy::condvar, SleepStrategy::io_uring),
                         [](const auto& info) { return std::string(lantern::strategy_name(info.param)); });

// Where io_uring is forbidden (here: a seccomp filter in a child process, as a container
// runtime would install), the io_uring strategy falls back to condvar with one log line,
// the pool works, and IO operations complete with -ENOSYS instead of hanging.
TEST(IoFallback, SeccompForbiddenIoUringFallsBackToCondvar) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(std::size(filter)), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
      _exit(10);
    int lines = 0;
    std::string line;
    Scheduler pool({.workers = 2, .sleep_strategy = SleepStrategy::io_uring, .log = [&](const std::string& l) {
                      ++lines;
                      line = l;
                    }});
    if (pool.sleep_strategy() != SleepStrategy::condvar) _exit(11);
    if (lines != 1 || line.find("io_uring") == std::string::npos ||
        line.find("falling back to the condvar strategy") == std::string::npos)
      _exit(12);
    if (pool.run([] { return 6 * 7; }) != 42) _exit(13);
    std::atomic<std::int64_t> result{1};
    Done done;
    pool.io().timeout(0ns, [&](IoResult r) {
      result = r.value;
      done.add();
    });
    done.wait_for(1);
    _exit(result.load() == -ENOSYS ? 0 : 14);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child died of a signal";
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "10: seccomp not installed, 11: no fallback, 12: log line, 13: pool, 14: IO result";
}
