// SPDX-License-Identifier: Apache-2.0
// synthetic_trace.hpp - realistic-looking traces of any size, for tests and benchmarks.
//
// A deterministic simulation of workers going through periods of 20 ms: woken, busy with
// short (nested) tasks found on their own deque, by stealing, in lanes or by helping;
// then searching, sleepy and asleep. It emits the same events, in the same per-worker
// order, as core's hooks would, and interleaves workers the way the collector does
// (whole per-worker runs). With `problems` it also plants one of each health warning:
// a long task, a long search, work queued while everyone sleeps, dropped events.
// Real runs are better pictures; this is what makes a 10,000,000-event trace in seconds.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "lantern/trace/event_table.hpp"
#include "lantern/trace/trace_header.hpp"

namespace lantern::viewer {

struct SyntheticOptions {
  std::uint32_t workers = 4;
  std::uint64_t target_events = 200000;  // generation stops at the first period past this
  std::uint64_t seed = 42;
  std::uint32_t sockets = 2;  // topology: workers split evenly over sockets
  bool problems = true;       // plant one of each health warning
  double ns_per_tick = 0.4;   // a 2.5 GHz TSC
};

trace::TraceHeader synthetic_header(const SyntheticOptions& options);
// generate_synthetic calls `sink` with batches (one per period) until the target is met.
void generate_synthetic(const SyntheticOptions& options,
                        const std::function<void(std::span<const trace::Event>)>& sink);
// synthetic_trace_bytes: a whole trace file's bytes (header + chunks).
std::vector<std::uint8_t> synthetic_trace_bytes(const SyntheticOptions& options);
bool write_synthetic_trace(const std::string& path, const SyntheticOptions& options, std::string* error);

}  // namespace lantern::viewer
