// clock.cpp - TSC detection and calibration against steady_clock.
#include "lantern/clock.hpp"

#include <fstream>
#include <string>
#include <thread>

#if LANTERN_HAS_RDTSC
#include <cpuid.h>
#endif

namespace lantern {
namespace detail {

std::uint64_t steady_now_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

bool tsc_usable() noexcept {
#if LANTERN_HAS_RDTSC
  // CPUID leaf 0x80000007, EDX bit 8: invariant TSC (constant rate, runs in deep C-states).
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000007u) {
    if (__get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8))) return true;
  }
  // Hypervisors often hide the CPUID bit but the kernel still reports it.
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos && line.find(" nonstop_tsc") != std::string::npos;
    }
  }
#endif
  return false;
}

}  // namespace detail

const TickCalibration& calibration() noexcept {
  static const TickCalibration value = [] {
    TickCalibration cal;
    cal.tsc = LANTERN_HAS_RDTSC && detail::tsc_usable();
    const std::uint64_t t0 = ticks_now();
    const std::int64_t n0 = static_cast<std::int64_t>(detail::steady_now_ns());
    cal.base_ticks = t0;
    cal.base_ns = n0;
    if (!cal.tsc) return cal;
    // Spin (not sleep: a sleep's wake-up jitter would be measured too) for ~5 ms.
    std::uint64_t t1 = t0;
    std::int64_t n1 = n0;
    while (n1 - n0 < 5'000'000) {
      t1 = ticks_now();
      n1 = static_cast<std::int64_t>(detail::steady_now_ns());
    }
    cal.ns_per_tick = static_cast<double>(n1 - n0) / static_cast<double>(t1 - t0);
    return cal;
  }();
  return value;
}

}  // namespace lantern
