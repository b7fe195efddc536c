// SPDX-License-Identifier: Apache-2.0
// signal_trigger.cpp - see lantern/instrumentation/signal_trigger.hpp.
#include "lantern/instrumentation/signal_trigger.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>

#include "lantern/thread_signals.hpp"

namespace lantern::instrumentation {

namespace {

// The handler's whole state. The pipe is made once and never closed (a handler that read
// the descriptor just before a trigger stopped still writes to this pipe, never to a
// descriptor reused since); `g_live` says whether a trigger listens.
std::once_flag g_pipe_once;
int g_pipe[2] = {-1, -1};
int g_pipe_errno = 0;
std::atomic<bool> g_live{false};
std::atomic<std::uint64_t> g_requests{0};
std::mutex g_take_mutex;  // one take() or stop at a time
bool g_taken = false;     // guarded by g_take_mutex
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

void on_trigger_signal(int) {
  if (!g_live.load(std::memory_order_relaxed)) return;  // dormant: the signal does nothing
  const int saved_errno = errno;
  g_requests.fetch_add(1, std::memory_order_relaxed);
  const char wake = 'd';
  // Non-blocking: a full pipe already holds a wake-up, so a lost byte loses nothing.
  [[maybe_unused]] const ssize_t n = write(g_pipe[1], &wake, 1);
  errno = saved_errno;
}

void make_pipe() {
  if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe_errno = errno;
}

void drain_pipe(bool* requested, bool* quit) {
  char buffer[256];
  for (ssize_t n; (n = read(g_pipe[0], buffer, sizeof(buffer))) > 0;) {
    for (ssize_t i = 0; i < n; ++i) {
      if (buffer[i] == 'q') {
        if (quit) *quit = true;
      } else if (requested) {
        *requested = true;
      }
    }
  }
}

bool is_ours(const struct sigaction& a) { return !(a.sa_flags & SA_SIGINFO) && a.sa_handler == &on_trigger_signal; }

// refused_signal: why a trigger must not take `signo`, or nullptr.
const char* refused_signal(int signo) {
  switch (signo) {
    case SIGKILL:
    case SIGSTOP: return "cannot be caught";
    case SIGSEGV:
    case SIGBUS:
    case SIGFPE:
    case SIGILL:
    case SIGTRAP:
    case SIGSYS:
    case SIGABRT: return "is raised by the kernel for a fault";
    case SIGPIPE:
    case SIGXFSZ: return "is raised by a failed write (a dump writes files)";
    default: break;
  }
  if (signo < 1 || signo > SIGRTMAX) return "is not a signal";
  if (signo > 31 && signo < SIGRTMIN) return "is a real-time signal glibc keeps for itself";
  return nullptr;
}

}  // namespace

std::string signal_label(int signo) {
  if (signo >= SIGRTMIN && signo <= SIGRTMAX) {
    return signo == SIGRTMIN ? "SIGRTMIN" : "SIGRTMIN+" + std::to_string(signo - SIGRTMIN);
  }
  if (const char* abbrev = sigabbrev_np(signo)) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(signo);
}

std::optional<int> parse_trigger_signal(std::string_view text, std::string* why) {
  std::string upper;
  for (char c : text) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "NONE") return 0;
  std::string_view name = upper;
  if (name.substr(0, 3) == "SIG") name.remove_prefix(3);
  int signo = -1;
  if (!name.empty() && std::isdigit(static_cast<unsigned char>(name.front()))) {
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), signo);
    if (ec != std::errc() || end != name.data() + name.size()) signo = -1;
  } else {
    for (int s = 1; s < 32; ++s) {
      const char* abbrev = sigabbrev_np(s);
      if (abbrev && name == abbrev) signo = s;
    }
  }
  // Appended, not `"\"" + std::string(text)`: GCC 12 warns (-Wrestrict) on that form.
  std::string quoted(1, '"');
  quoted.append(text).push_back('"');
  if (signo < 0) {
    if (why) *why = quoted + " is not a signal; give USR2, USR1, a signal number, or none";
    return std::nullopt;
  }
  if (const char* refused = refused_signal(signo)) {
    if (why) *why = quoted + " (" + signal_label(signo) + ") " + refused + "; give USR2, USR1, another signal, or none";
    return std::nullopt;
  }
  return signo;
}

std::unique_ptr<SignalTrigger> SignalTrigger::take(int signo, Action action, std::string* error) {
  const auto fail = [error](std::string why) -> std::unique_ptr<SignalTrigger> {
    if (error) *error = std::move(why);
    return nullptr;
  };
  if (const char* refused = refused_signal(signo)) return fail(signal_label(signo) + " " + refused);
  std::call_once(g_pipe_once, make_pipe);
  if (g_pipe[0] < 0) return fail(std::string("cannot create the signal pipe: ") + std::strerror(g_pipe_errno));
  std::lock_guard<std::mutex> lock(g_take_mutex);
  if (g_taken) return fail("another part of Lantern in this process already takes a dump signal");
  struct sigaction now {};
  if (sigaction(signo, nullptr, &now) != 0) return fail(signal_label(signo) + ": " + std::strerror(errno));
  const bool ignored = !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_IGN;
  const bool free = ignored || is_ours(now) || (!(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL);
  if (!free) {
    return fail(signal_label(signo) +
                " already has a handler in this process (the application's); Lantern leaves it alone. "
                "Dump from the application's own thread (Observation::dump_flight) when its handler has noted "
                "the signal, or give the flight recorder another signal (LANTERN_FLIGHT_SIGNAL=USR1, a number, "
                "or none)");
  }
  std::unique_ptr<SignalTrigger> trigger(new SignalTrigger(signo, std::move(action), ignored));
  drain_pipe(nullptr, nullptr);  // wake-ups left from a trigger before this one
  g_requests.store(0, std::memory_order_relaxed);
  try {
    trigger->thread_ = start_thread("lantern-flight", [t = trigger.get()] { t->run(); });
  } catch (const std::system_error& e) {
    return fail(std::string("cannot start the signal thread: ") + e.what());
  }
  g_live.store(true, std::memory_order_relaxed);
  struct sigaction action_now {};
  action_now.sa_handler = &on_trigger_signal;
  sigemptyset(&action_now.sa_mask);
  action_now.sa_flags = SA_RESTART;
  sigaction(signo, &action_now, nullptr);
  g_taken = true;
  return trigger;
}

SignalTrigger::SignalTrigger(int signo, Action action, bool was_ignored)
    : signo_(signo), action_(std::move(action)), was_ignored_(was_ignored) {}

SignalTrigger::~SignalTrigger() {
  std::lock_guard<std::mutex> lock(g_take_mutex);
  // Harmless from here on: ignored if it was (switching from a handler to SIG_IGN leaves
  // no moment at the default), else Lantern's handler stays, dormant.
  g_live.store(false, std::memory_order_relaxed);
  if (was_ignored_) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(signo_, &ignore, nullptr);
  }
  const char stop = 'q';
  // The pipe is non-blocking: if it is full of wake-ups the thread is draining it.
  while (write(g_pipe[1], &stop, 1) != 1 && (errno == EAGAIN || errno == EINTR)) std::this_thread::yield();
  if (thread_.joinable()) thread_.join();
  g_taken = false;
}

void SignalTrigger::run() {
  // Started with the application's signals blocked (lantern/thread_signals.hpp), but this
  // thread takes its own trigger: then the signal works even when every thread of the
  // application blocks it (a program that blocks all signals and sigwaits).
  sigset_t trigger;
  sigemptyset(&trigger);
  sigaddset(&trigger, signo_);
  pthread_sigmask(SIG_UNBLOCK, &trigger, nullptr);
  for (;;) {
    pollfd p{g_pipe[0], POLLIN, 0};
    if (poll(&p, 1, -1) < 0 && errno != EINTR) break;
    // Every byte written so far: requests that arrived before this action are all its.
    bool quit = false, requested = false;
    drain_pipe(&requested, &quit);
    if (requested) {
      const std::uint64_t signals = g_requests.exchange(0, std::memory_order_relaxed);
      action_(signals > 0 ? signals : 1);
    }
    if (quit) break;  // a request that came with the stop was still served
  }
}

}  // namespace lantern::instrumentation
