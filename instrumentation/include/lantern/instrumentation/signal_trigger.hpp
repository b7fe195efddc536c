// SPDX-License-Identifier: Apache-2.0
// signal_trigger.hpp - a signal that makes Lantern act (the flight recorder's dump), taken
// only when the application does not handle it, and never fatal once taken.
//
// SignalTrigger::take(signo, action) installs a handler for `signo` whose whole work is
// async-signal-safe (a lock-free counter and one byte written to a non-blocking pipe);
// a thread of its own, named "lantern-flight", runs `action` for each wake-up, with the
// number of signals it serves. Signals that arrive while `action` runs are served by one
// more call after it (the kernel itself merges a signal sent while the same one is still
// pending: such signals were never delivered and cannot be counted).
//
// The rules, so that Lantern coexists with the application that links it:
//  - It never takes a signal the application handles. take() asks the kernel
//    (sigaction) what the signal does now; a handler that is not Lantern's own (a
//    function, SA_SIGINFO or not) makes it refuse, with a sentence that names the
//    signal and says what to do instead. SIG_DFL and SIG_IGN are free to take.
//  - Once taken, the signal is never fatal again: when the trigger stops, a signal that
//    was ignored before is ignored again, and one whose default was to end the process
//    keeps a handler that does nothing (Lantern's, dormant). The process said it handles
//    the signal; a signal that arrives during exit, after the trigger stopped, must not
//    kill it with status 128+signo and lose what it had yet to print.
//  - One trigger at a time in a process; the pipe the handler writes to lives as long as
//    the process, so a signal arriving while a trigger stops never writes to a closed
//    (or reused) descriptor.
// An application that handles the signal itself and still wants dumps on it calls
// Observation::dump_flight (or FlightRecorder::dump_to_new_file) from its own thread when
// its handler has noted the signal (a flag or a pipe: the dump allocates and writes files,
// nothing a signal handler may do), or picks another signal (LANTERN_FLIGHT_SIGNAL).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace lantern::instrumentation {

class SignalTrigger {
 public:
  using Action = std::function<void(std::uint64_t signals)>;

  // take: the trigger, or nullptr and *error (a sentence) when `signo` cannot be taken:
  // the application handles it, another trigger holds one, it is not a signal a trigger
  // can use (see parse_trigger_signal), or the pipe or thread could not be made.
  static std::unique_ptr<SignalTrigger> take(int signo, Action action, std::string* error);
  // Stops the thread (a request that came before is still served) and leaves the signal
  // harmless as described above.
  ~SignalTrigger();
  SignalTrigger(const SignalTrigger&) = delete;
  SignalTrigger& operator=(const SignalTrigger&) = delete;

  int signo() const noexcept { return signo_; }

 private:
  SignalTrigger(int signo, Action action, bool was_ignored);
  void run();

  int signo_;
  Action action_;
  bool was_ignored_;
  std::thread thread_;
};

// parse_trigger_signal reads a signal a trigger may use: "USR2", "SIGUSR1" (any case),
// a number ("12", "40" for a real-time signal), or "none" (0: no signal). Refused, with
// *why: what is not a signal, and the signals a trigger must not take: those that
// cannot be caught (KILL, STOP), those the kernel raises for a fault or a failed write
// (SEGV, BUS, FPE, ILL, TRAP, SYS, ABRT, PIPE, XFSZ), and the real-time signals glibc
// keeps for itself (below SIGRTMIN).
std::optional<int> parse_trigger_signal(std::string_view text, std::string* why);

// signal_label: "SIGUSR2", "SIGRTMIN+3", or "signal 40" - how messages name a signal.
std::string signal_label(int signo);

}  // namespace lantern::instrumentation
