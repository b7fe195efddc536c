// SPDX-License-Identifier: Apache-2.0
// fib.hpp - the tests' fork-join workload: fib(n) through lantern::join, so each call
// makes fib(n+1)-1 joins (e.g. fib(20): 10,945).
#pragma once

#include <cstdint>

#include "lantern/join.hpp"

namespace lantern::testing {

inline std::uint64_t fib(int n) {
  if (n < 2) return static_cast<std::uint64_t>(n);
  std::uint64_t a = 0, b = 0;
  lantern::join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}

}  // namespace lantern::testing
