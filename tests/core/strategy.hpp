// SPDX-License-Identifier: Apache-2.0
// strategy.hpp - what the protocol tests share (core_protocol_tests: sleep_test.cpp,
// helping_test.cpp, stealing_test.cpp, deadlock_test.cpp, waits_test.cpp). Strategy:
// the fixture of every TEST_P there, run under both sleep strategies (instantiated once,
// in strategy.cpp). HoldWorker: an observer that stops one worker inside a hook, to
// force an interleaving.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "lantern/lantern.hpp"

namespace lantern::testing {

class Strategy : public ::testing::TestWithParam<SleepStrategy> {
 protected:
  SchedulerOptions options(std::uint32_t workers, Observer* observer = nullptr) const {
    SchedulerOptions o;
    o.workers = workers;
    o.sleep_strategy = GetParam();
    o.observer = observer;
    o.log = [](const std::string&) {};  // the io_uring fallback note, if any
    return o;
  }
};

// HoldWorker: what the holding observers share. Each stops worker `target` inside one
// hook, once it is armed, until the test sets `release`; `held` says it is there.
class HoldWorker : public Observer {
 public:
  std::atomic<bool> armed{false};
  std::atomic<std::uint32_t> target{~0u};
  std::atomic<bool> held{false};
  std::atomic<bool> release{false};

 protected:
  bool is_target(std::uint32_t worker) const noexcept { return armed.load() && worker == target.load(); }
  void hold() noexcept {
    armed = false;
    held = true;
    while (!release.load()) std::this_thread::yield();
  }
};

}  // namespace lantern::testing
