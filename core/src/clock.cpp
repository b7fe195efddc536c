// SPDX-License-Identifier: Apache-2.0
// clock.cpp - TSC detection and calibration against steady_clock.
#include "lantern/clock.hpp"

#include <algorithm>
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
    // A single (ticks, ns) pair at each end of a window is wrong whenever the thread is
    // preempted between the two reads (seen: 10x on a loaded 2-core VM). So each end is
    // read as tick, ns, tick - the ns reading lies between the two ticks - and a window
    // counts only if both brackets are tight. The median of five such windows is used.
    struct Reading {
      std::uint64_t ticks;
      std::int64_t ns;
      std::uint64_t spread;
    };
    auto read = [] {
      Reading best{0, 0, ~std::uint64_t{0}};
      for (int i = 0; i < 8; ++i) {
        const std::uint64_t a = ticks_now();
        const std::int64_t ns = static_cast<std::int64_t>(detail::steady_now_ns());
        const std::uint64_t b = ticks_now();
        if (b - a < best.spread) best = {a + (b - a) / 2, ns, b - a};
      }
      return best;
    };
    double rates[5];
    int n = 0;
    for (int attempt = 0; attempt < 20 && n < 5; ++attempt) {
      const Reading start = read();
      Reading end = start;
      while (end.ns - start.ns < 2'000'000) end = read();
      // A bracket wider than ~2 us means the thread was preempted mid-reading.
      if (start.spread > 5000 || end.spread > 5000 || end.ticks <= start.ticks) continue;
      rates[n++] = static_cast<double>(end.ns - start.ns) / static_cast<double>(end.ticks - start.ticks);
    }
    if (n == 0) {  // never a clean window: fall back to the whole span, the best we have
      const Reading end = read();
      rates[n++] = static_cast<double>(end.ns - n0) / static_cast<double>(end.ticks > t0 ? end.ticks - t0 : 1);
    }
    std::sort(rates, rates + n);
    cal.ns_per_tick = rates[n / 2];
    const Reading base = read();
    cal.base_ticks = base.ticks;
    cal.base_ns = base.ns;
    return cal;
  }();
  return value;
}

}  // namespace lantern
