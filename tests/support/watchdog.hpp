// SPDX-License-Identifier: Apache-2.0
// watchdog.hpp - every concurrency test runs under a Watchdog: if the guarded scope has
// not finished within its limit, the watchdog prints what it was waiting for and a dump
// of the scheduler's worker states, then aborts the test binary (a loud failure ctest
// reports) instead of letting the test hang until CI's timeout.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "lantern/thread_signals.hpp"

namespace lantern::testing {

// Sanitizers slow code down 5-20x; the limits are written for an optimised build.
inline double sanitizer_slowdown() {
#if defined(__SANITIZE_THREAD__)
  return 10.0;
#elif defined(__SANITIZE_ADDRESS__)
  return 4.0;
#else
  return 1.0;
#endif
}

class Watchdog {
 public:
  Watchdog(std::string what, std::chrono::milliseconds limit, std::function<std::string()> dump = {})
      : what_(std::move(what)), dump_(std::move(dump)) {
    const auto scaled = std::chrono::milliseconds(static_cast<long long>(limit.count() * sanitizer_slowdown()));
    // Started as Lantern starts its threads: tests that send the process a signal check
    // that one of their own threads takes it, and the watchdog is not one of those.
    thread_ = lantern::start_thread([this, scaled] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (cv_.wait_for(lock, scaled, [this] { return done_; })) return;
      std::fprintf(stderr, "\nWATCHDOG: '%s' did not finish within %lld ms\n", what_.c_str(),
                   static_cast<long long>(scaled.count()));
      if (dump_) std::fprintf(stderr, "%s\n", dump_().c_str());
      std::fflush(stderr);
      std::abort();
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::string what_;
  std::function<std::string()> dump_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// scaled(n): an iteration count reduced under sanitizers (by a third of their slowdown:
// sanitizer runs are where races show, so they keep most of the work), never below
// `floor`.
inline long scaled(long n, long floor = 1) {
  const double divisor = sanitizer_slowdown() > 1 ? sanitizer_slowdown() / 3 : 1.0;
  const long s = static_cast<long>(static_cast<double>(n) / divisor);
  return s < floor ? floor : s;
}

}  // namespace lantern::testing
