// SPDX-License-Identifier: Apache-2.0
// thread_failure_test.cpp - a Scheduler whose worker threads the system will not all give
// (pthread_create fails: EAGAIN at a thread limit) throws std::system_error from its
// constructor, having stopped the workers it had started (not destroying joinable
// std::threads, which would end the program in std::terminate).
//
// This binary interposes pthread_create (std::thread calls it through the dynamic
// linker): while `g_allow` is non-negative, that many more threads are created, and the
// next creation fails with EAGAIN. Not built with a sanitizer, whose runtime intercepts
// pthread_create itself.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <system_error>

#include "lantern/lantern.hpp"
#include "support/watchdog.hpp"

namespace {
std::atomic<int> g_allow{-1};  // -1: no failure
std::atomic<int> g_refused{0};
}  // namespace

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  using Real = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "pthread_create"));
  for (int allow = g_allow.load(); allow >= 0;) {
    if (allow == 0) {
      g_refused.fetch_add(1);
      return EAGAIN;
    }
    if (g_allow.compare_exchange_weak(allow, allow - 1)) break;
  }
  return real(thread, attr, start, arg);
}

using namespace std::chrono_literals;

TEST(ThreadFailure, TheConstructorThrowsAndStopsTheWorkersItStarted) {
  lantern::testing::Watchdog dog("thread failure", 60s);
  for (const auto strategy : {lantern::SleepStrategy::condvar, lantern::SleepStrategy::io_uring}) {
    for (int allowed = 0; allowed < 4; ++allowed) {
      g_refused.store(0);
      g_allow.store(allowed);
      try {
        lantern::Scheduler pool({.workers = 4, .sleep_strategy = strategy});
        ADD_FAILURE() << "a pool of 4 workers was made with only " << allowed << " threads";
      } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), std::errc::resource_unavailable_try_again) << e.what();
      }
      g_allow.store(-1);
      EXPECT_EQ(g_refused.load(), 1) << allowed << " threads allowed";
    }
    // The threads refused, the next pool is whole.
    lantern::Scheduler pool({.workers = 4, .sleep_strategy = strategy});
    EXPECT_EQ(pool.run([] { return 6 * 7; }), 42);
  }
}
