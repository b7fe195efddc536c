// SPDX-License-Identifier: Apache-2.0
// tbb_workloads.hpp - oneTBB's side of the fork-join workloads that more than one
// benchmark races against Lantern's (workloads.hpp): fib(32) by tbb::parallel_invoke, in
// lantern_bench's fib row and lantern_helping_bench's oneTBB row. The constants are
// workloads.hpp's.
#pragma once

#include <tbb/parallel_invoke.h>

namespace bench::workloads {
namespace {  // internal to each benchmark, as workloads.hpp's are

long long fib_tbb(int n) {
  if (n < 2) return n;
  long long a = 0, b = 0;
  tbb::parallel_invoke([&] { a = fib_tbb(n - 1); }, [&] { b = fib_tbb(n - 2); });
  return a + b;
}

}  // namespace
}  // namespace bench::workloads
