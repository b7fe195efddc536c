// SPDX-License-Identifier: Apache-2.0
// echo_load.hpp - a load client for the echo server: N connections, each sending a
// message, waiting for every byte of it to come back (compared byte for byte), and
// sending the next. One thread, non-blocking sockets and epoll, so its own cost is
// small and the same in every run; the server under test is what varies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "percentile.hpp"

namespace lantern::examples {

struct LoadOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  int connections = 1;
  double seconds = 1.0;                       // stop after this long (0: no time limit) ...
  std::uint64_t messages_per_connection = 0;  // ... or after this many each (0: no limit)
  std::size_t min_bytes = 64;                 // message sizes, uniform in [min, max]
  std::size_t max_bytes = 64;
  std::uint64_t seed = 1;                // message contents: every byte value occurs
  std::function<void(double)> progress;  // called with the fraction done, now and then
};

struct LoadResult {
  std::uint64_t requests = 0;    // messages echoed back completely
  std::uint64_t bytes = 0;       // bytes received back
  std::uint64_t mismatches = 0;  // bytes that came back different
  std::uint64_t errors = 0;      // connections that failed (connect, reset, early close)
  std::string first_error;
  double seconds = 0;
  // Per-message round trip, from a histogram in the project's latency buckets (within
  // 6.25 %, any scale): p50/p99 say whether they lie beyond the top bucket.
  Percentile p50, p99;
  double p50_us = 0, p99_us = 0, max_us = 0;  // p50.us, p99.us; max_us is exact
  double requests_per_second() const { return seconds > 0 ? static_cast<double>(requests) / seconds : 0; }
};

// run_load connects, runs, and closes every connection. Never throws for network
// errors: they are counted in the result.
LoadResult run_load(const LoadOptions& options);

}  // namespace lantern::examples
