// SPDX-License-Identifier: Apache-2.0
// thread_signals.cpp - see lantern/thread_signals.hpp.
#include "lantern/thread_signals.hpp"

#include <pthread.h>

#include <cstring>

namespace lantern {

sigset_t application_signals() noexcept {
  sigset_t set;
  sigfillset(&set);
  // Synchronous signals (blocking one and then raising it kills the process), the
  // profiling timers, SIGXCPU, the two that cannot be blocked, and the terminal's
  // SIGTTIN and SIGTTOU (blocked, a task reading the terminal from the background would
  // get EIO instead of stopping the process).
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT, SIGPIPE, SIGXFSZ, SIGPROF, SIGVTALRM,
                SIGXCPU, SIGKILL, SIGSTOP, SIGTTIN, SIGTTOU}) {
    sigdelset(&set, s);
  }
  return set;
}

ApplicationSignalsBlocked::ApplicationSignalsBlocked() noexcept {
  const sigset_t set = application_signals();
  pthread_sigmask(SIG_BLOCK, &set, &previous_);
}

ApplicationSignalsBlocked::~ApplicationSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

void name_thread(std::thread& thread, const char* name) noexcept {
  if (!thread.joinable()) return;
  char cut[16] = {};
  std::strncpy(cut, name, sizeof(cut) - 1);
  pthread_setname_np(thread.native_handle(), cut);
}

}  // namespace lantern
