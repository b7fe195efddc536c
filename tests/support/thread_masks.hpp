// SPDX-License-Identifier: Apache-2.0
// thread_masks.hpp - which of this process' threads would take the application's signals
// (lantern/thread_signals.hpp): read from /proc/self/task/<tid>/status (SigBlk).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "lantern/thread_signals.hpp"

namespace lantern::testing {

// thread_ids: this process' threads now.
inline std::set<pid_t> thread_ids() {
  std::set<pid_t> ids;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    ids.insert(static_cast<pid_t>(std::stol(e.path().filename().string())));
  }
  return ids;
}

// blocked_signals: thread tid's blocked set as the kernel shows it (bit s-1 for signal s).
// A thread that has ended since is reported as blocking everything (it takes nothing).
inline std::uint64_t blocked_signals(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("SigBlk:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
  }
  return ~std::uint64_t{0};
}

inline std::uint64_t application_signal_bits() {
  const sigset_t set = application_signals();
  std::uint64_t bits = 0;
  for (int s = 1; s <= 64; ++s) {
    if (sigismember(&set, s) == 1) bits |= std::uint64_t{1} << (s - 1);
  }
  return bits;
}

// signal_bit: the bit of signal s in a SigBlk mask.
inline std::uint64_t signal_bit(int s) { return std::uint64_t{1} << (s - 1); }

// threads_taking_application_signals: of the threads started since `before`, those that
// leave one of application_signals() unblocked, a line each ("" when none). `allowed`:
// signals that at most one of them may leave unblocked (the flight recorder's dump
// thread takes its trigger); a second thread that does is reported.
inline std::string threads_taking_application_signals(const std::set<pid_t>& before, std::uint64_t allowed = 0) {
  const std::uint64_t want = application_signal_bits();
  std::string bad;
  std::uint64_t allowed_seen = 0;
  for (pid_t tid : thread_ids()) {
    if (before.count(tid)) continue;
    const std::uint64_t blocked = blocked_signals(tid);
    const std::uint64_t missing = want & ~blocked;
    if ((missing & ~allowed) == 0 && (missing & allowed_seen) == 0) {
      allowed_seen |= missing;
      continue;
    }
    std::ifstream comm("/proc/self/task/" + std::to_string(tid) + "/comm");
    std::string name;
    std::getline(comm, name);
    char text[160];
    std::snprintf(text, sizeof text, "thread %d (%s) blocks %016llx; missing %016llx\n", static_cast<int>(tid),
                  name.c_str(), static_cast<unsigned long long>(blocked),
                  static_cast<unsigned long long>(want & ~blocked));
    bad += text;
  }
  return bad;
}

}  // namespace lantern::testing
