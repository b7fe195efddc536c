// SPDX-License-Identifier: Apache-2.0
// synthetic_trace.hpp - made-up but plausible traces for tests, benchmarks and fuzz seeds.
//
// fork_join_events simulates what the recorder would capture from a recursive fork-join
// program: per-worker streams of state changes, pushes, nested task begin/end (join runs
// a child inline, then pops or loses the other), steals, failed steal rounds, helps,
// wakes and lane pops, with task ids that look like heap addresses. The streams are
// handed out in per-worker batches, as a collector draining rings would.
// random_events is the opposite: every type with extreme values, to stress the encoding.
#pragma once

#include <cstdint>
#include <vector>

#include "lantern/trace/chunk_encoder.hpp"
#include "lantern/trace/label_names.hpp"
#include "lantern/trace/trace_header.hpp"

namespace lantern::trace::testing {

struct ForkJoinOptions {
  std::uint32_t workers = 4;
  std::uint64_t events = 100'000;  // approximate total
  std::uint64_t seed = 1;
  std::uint32_t batch = 512;  // events drained from one worker at a time
  std::uint32_t labels = 0;   // > 0: about half the tasks label themselves with ids 1..labels
};

std::vector<Event> fork_join_events(const ForkJoinOptions& options);

// random_events: `count` events of every type from many workers (ids up to 2^32-1),
// ticks with large gaps, backward steps and values up to 2^64-1, payloads 0..2^64-1.
std::vector<Event> random_events(std::uint64_t count, std::uint64_t seed);

// test_labels: names for label ids 1..count, ASCII and multi-byte UTF-8 alike.
LabelTable test_labels(std::uint32_t count);

// test_header: a header with every field set (including a negative os_cpu).
TraceHeader test_header(std::uint32_t workers);

// write_trace_bytes writes header + events through TraceWriter into memory.
std::vector<std::uint8_t> write_trace_bytes(const TraceHeader& header, const std::vector<Event>& events,
                                            ChunkLimits limits = {}, const LabelNames* labels = nullptr);

}  // namespace lantern::trace::testing
