// SPDX-License-Identifier: Apache-2.0
// options.hpp - how a Scheduler is configured.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lantern {

class Observer;

// How idle workers sleep (core/sleep/README.md, core/io/README.md).
//  * condvar: each sleeper blocks on its own futex word (the name is the classic design's:
//    a futex word does the condition variable's work with one wake). Asynchronous IO
//    (lantern/io.hpp) then completes on one shared io_uring reaped by a completer thread,
//    which hands each finished operation to the pool like a task submitted from outside.
//  * io_uring: each worker owns an io_uring for its own IO. A sleeper with none of its IO
//    in flight blocks on its futex word as under condvar; one with IO in flight waits in
//    its ring, where a futex wait on that same word is armed beside its operations, so
//    either a waker or a completion wakes it: a completion wakes the very worker that
//    submitted the operation and its task runs there.
// Where io_uring cannot be set up (an old kernel, kernel.io_uring_disabled, a seccomp
// filter) io_uring falls back to condvar and says so in one line through `log`.
enum class SleepStrategy : std::uint8_t { condvar, io_uring };
const char* strategy_name(SleepStrategy s) noexcept;
// parse_strategy: the inverse of strategy_name ("condvar", "io_uring"), for options.
std::optional<SleepStrategy> parse_strategy(std::string_view name) noexcept;

struct SchedulerOptions {
  // Number of worker threads. 0 means std::thread::hardware_concurrency(). More than
  // kMaxWorkers is refused with std::invalid_argument.
  std::uint32_t workers = 0;

  // Topology the steal order is derived from. Empty: read /sys/devices/system. Otherwise
  // a spec such as "2 sockets x 8 cores x 2 threads" (see topology.hpp); a bad spec is
  // refused with std::invalid_argument naming the bad token.
  std::string topology;

  // Pin worker i to the OS CPU of topology CPU i % cpu_count (this machine's topology
  // only; ignored for spec topologies, whose CPUs are synthetic, and for a CPU outside
  // the constructing thread's affinity mask). Scheduler::worker_cpu says where each went.
  bool pin_workers = false;

  // Fairness-aware helping (core/helping/README.md). Off: plain work stealing, where a
  // lane's tasks can wait as long as its worker is busy with fork-join work.
  bool helping = true;

  // A lane's head is helped when it has waited longer than this and, for another
  // worker's lane, longer than Worker::kHelpBias (4) times the helping worker's own
  // lane's average wait.
  double help_min_wait_us = 50.0;

  // Receives the exception of a spawned task (nobody waits for it). Default: print one
  // line to stderr. Either way the worker survives and unhandled_exceptions() counts it.
  std::function<void(std::exception_ptr)> on_unhandled_exception;

  SleepStrategy sleep_strategy = SleepStrategy::condvar;

  // Submission queue entries per io_uring (each worker's under io_uring, the shared one
  // under condvar). More operations than this may be in flight; the queue only bounds
  // how many are submitted at once.
  std::uint32_t io_queue_depth = 256;

  // Receives the scheduler's rare one-line notices (the io_uring fallback). Default:
  // print the line to stderr.
  std::function<void(const std::string&)> log;

  // Receives every scheduler hook (observer.hpp). Must outlive the Scheduler.
  Observer* observer = nullptr;

  // How deeply waits may nest on one worker. A wait on a worker (Future::get/wait,
  // TaskHandle::wait, Signal::wait, TaskGroup::wait, TaskGraph::run, join's wait for a
  // stolen half) runs
  // other tasks on the same stack, and those may wait in turn: a chain of tasks that each
  // wait for the next grows the worker's stack by one level per task, and about 30,000
  // levels overflow an 8 MiB thread stack (fewer under sanitizers). A Future, TaskHandle,
  // Signal, TaskGroup or TaskGraph wait that would go deeper than this throws
  // WaitDepthError instead (a TaskGroup's also cancels its tasks not started, and its
  // destructor cancels rather than nest deeper: task_group.hpp); join's waits count but
  // never throw (join cannot abandon a stolen half).
  // Must be at least 1.
  std::uint32_t max_wait_depth = 1000;
};

inline constexpr std::uint32_t kMaxWorkers = 1024;

// WaitDepthError: a wait would nest deeper than SchedulerOptions::max_wait_depth on
// one worker (see there); thrown by the wait, before it starts waiting.
class WaitDepthError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ShutdownError: work was submitted to a scheduler that is shutting down or stopped.
class ShutdownError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace lantern
