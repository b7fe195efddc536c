// options.hpp - how a Scheduler is configured.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>

namespace lantern {

class Observer;

struct SchedulerOptions {
  // Number of worker threads. 0 means std::thread::hardware_concurrency(). More than
  // kMaxWorkers is refused with std::invalid_argument.
  std::uint32_t workers = 0;

  // Topology the steal order is derived from. Empty: read /sys/devices/system. Otherwise
  // a spec such as "2 sockets x 8 cores x 2 threads" (see topology.hpp); a bad spec is
  // refused with std::invalid_argument naming the bad token.
  std::string topology;

  // Pin worker i to the OS CPU of topology CPU i % cpu_count (sysfs topologies only;
  // ignored for spec topologies, whose CPUs are synthetic).
  bool pin_workers = false;

  // Fairness-aware helping (core/src/HELPING.md). Off: plain work stealing, where a
  // lane's tasks can wait as long as its worker is busy with fork-join work.
  bool helping = true;

  // A lane's head is helped when it has waited longer than this and longer than
  // help_bias times the helping worker's own average wait.
  double help_min_wait_us = 50.0;

  // Receives the exception of a spawned task (nobody waits for it). Default: print one
  // line to stderr. Either way the worker survives and unhandled_exceptions() counts it.
  std::function<void(std::exception_ptr)> on_unhandled_exception;

  // Receives every scheduler hook (observer.hpp). Must outlive the Scheduler.
  Observer* observer = nullptr;
};

inline constexpr std::uint32_t kMaxWorkers = 1024;

// ShutdownError: work was submitted to a scheduler that is shutting down or stopped.
class ShutdownError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace lantern
