// SPDX-License-Identifier: Apache-2.0
// thread_signals.hpp - Lantern's own threads never take the application's signals.
//
// A signal sent to a process (kill, Ctrl-C, `kill -USR2 PID`) is delivered to one of
// its threads that does not block it, chosen by the kernel. Every thread Lantern starts
// (workers, the IO completer, the collector, the flight recorder's dump thread, the
// stream server, the Prometheus exposer's threads) blocks the
// asynchronous signals an application handles, so such a signal always reaches one of
// the application's own threads: a handler never runs on a worker in the middle of a
// task, and a thread that blocks a signal for a moment (as glibc and the sanitizers do
// inside some calls) does not send it to a worker asleep in the kernel.
//
// Blocked: every signal but the synchronous ones (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
// SIGTRAP, SIGSYS, SIGABRT, SIGPIPE, SIGXFSZ), the profiling timers (SIGPROF, SIGVTALRM:
// a CPU profiler samples where the time goes, and the workers are where it goes),
// SIGXCPU (a CPU-time limit: the process is out of time whichever thread is told),
// SIGTTIN and SIGTTOU (terminal job control: a task that reads or writes the terminal
// from the background stops the process, as it does without Lantern), and SIGKILL and SIGSTOP (which
// nothing blocks). The one exception: the flight recorder's dump thread takes its own
// trigger (SIGUSR2 by default, LANTERN_FLIGHT_SIGNAL), so `kill -USR2` dumps even in an
// application that blocks every signal in all its threads.
//
// A signal sent to one worker stays pending on it: pthread_kill, a per-thread timer
// (SIGEV_THREAD_ID), F_SETOWN_EX, or alarm() meant to interrupt a blocking call in a task.
// A task that needs one unblocks it itself (pthread_sigmask) or waits for it with
// sigwait / signalfd. Profilers (SIGPROF, perf) need nothing.
//
// Tasks run with that mask too, and a process a task starts inherits it: start one with
// posix_spawnattr_setsigmask (an empty set) and POSIX_SPAWN_SETSIGMASK, as open_viewer
// does. A shell (std::system, popen) clears its mask as it starts.
#pragma once

#include <signal.h>

#include <thread>
#include <utility>

namespace lantern {

// application_signals: the set above.
sigset_t application_signals() noexcept;

// ApplicationSignalsBlocked blocks application_signals() in the calling thread for its
// lifetime and restores the thread's mask after. A thread started meanwhile inherits the
// mask, so it never takes one of those signals, not even before its first instruction.
// Lantern wraps the start of every thread it owns (and of threads a library starts for
// it) in one.
class ApplicationSignalsBlocked {
 public:
  ApplicationSignalsBlocked() noexcept;
  ~ApplicationSignalsBlocked();
  ApplicationSignalsBlocked(const ApplicationSignalsBlocked&) = delete;
  ApplicationSignalsBlocked& operator=(const ApplicationSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

// name_thread names `thread` for top -H, ps -L, gdb and perf (/proc/PID/task/TID/comm):
// Lantern's threads are "lantern-<what>" ("lantern-w0", "lantern-collect"). The kernel
// keeps at most 15 characters; a longer name is cut to 15. Best effort: a thread that
// is gone already keeps no name.
void name_thread(std::thread& thread, const char* name) noexcept;

// start_thread: std::thread(fn), started with application_signals() blocked; given a
// name, named (name_thread) before this returns.
template <class F>
std::thread start_thread(F&& fn) {
  ApplicationSignalsBlocked blocked;
  return std::thread(std::forward<F>(fn));
}
template <class F>
std::thread start_thread(const char* name, F&& fn) {
  std::thread thread = start_thread(std::forward<F>(fn));
  name_thread(thread, name);
  return thread;
}

}  // namespace lantern
