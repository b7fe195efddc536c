// SPDX-License-Identifier: Apache-2.0
// clock.hpp - the one clock every Lantern timestamp is taken from.
//
// On x86-64 with an invariant TSC the clock is rdtsc: ~20 cycles, no syscall, monotonic
// across cores. Elsewhere (or when the TSC is not invariant) it falls back to
// steady_clock nanoseconds, so ticks are then nanoseconds. TickCalibration converts
// ticks to nanoseconds; it is measured once per process against steady_clock and
// travels in every trace so a reader can convert without re-measuring.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define LANTERN_HAS_RDTSC 1
#else
#define LANTERN_HAS_RDTSC 0
#endif

namespace lantern {

// TickCalibration maps ticks to steady_clock: ns = (ticks - base_ticks) * ns_per_tick + base_ns.
struct TickCalibration {
  bool tsc = false;  // true: ticks are TSC cycles; false: ticks are ns
  double ns_per_tick = 1.0;
  std::uint64_t base_ticks = 0;  // a tick reading ...
  std::int64_t base_ns = 0;      // ... and the steady_clock ns taken at the same moment
};

namespace detail {
bool tsc_usable() noexcept;  // invariant TSC present (decided once, cached)
std::uint64_t steady_now_ns() noexcept;
}  // namespace detail

// ticks_now is the hot-path timestamp.
inline std::uint64_t ticks_now() noexcept {
#if LANTERN_HAS_RDTSC
  static const bool use_tsc = detail::tsc_usable();
  if (use_tsc) return __rdtsc();
#endif
  return detail::steady_now_ns();
}

// calibration returns the process-wide calibration (measured on first call, ~5 ms).
const TickCalibration& calibration() noexcept;

// ticks_to_ns converts a tick interval to nanoseconds.
inline double ticks_to_ns(std::uint64_t ticks) noexcept {
  return static_cast<double>(ticks) * calibration().ns_per_tick;
}
// ns_to_ticks converts nanoseconds to a tick interval.
inline std::uint64_t ns_to_ticks(double ns) noexcept {
  return static_cast<std::uint64_t>(ns / calibration().ns_per_tick);
}

}  // namespace lantern
