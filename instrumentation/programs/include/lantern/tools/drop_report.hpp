// SPDX-License-Identifier: Apache-2.0
// drop_report.hpp - what a program that recorded events says at exit about the events
// it lost, by reason, and which of its printed figures they affect.
//
// lantern_demo, lantern_echo_server and lantern_live_demo print it after their results:
//
//   events lost: 11762 (ring_full: the worker's event ring was full (the consumer fell
//     behind); worker 0: 5120, worker 1: 6642); the trace marks each gap with a dropped
//     event. The per-worker table above is from the Recorder's exact counters ...
//
// The Recorder's exact counters never lose anything (the worker counts before it touches
// its ring), so a figure printed from them includes the lost events; a figure read from
// the trace (lantern-trace stats, the viewer, the Chrome export) is lower by them. Each
// program says which kind its figures are (`affected`). Header only: the programs link
// lantern::instrumentation already.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/stream_server.hpp"

namespace lantern::tools {

// kDropReasonTexts: each DropReason's sentence, from the vocabulary's table.
inline constexpr std::string_view kDropReasonTexts[] = {
#define LANTERN_X(name, text) text,
    LANTERN_DROP_REASONS(LANTERN_X)
#undef LANTERN_X
};

// drop_report: the lines to print (each ending in '\n'), or "" when nothing was lost.
// `recorder`: its rings' drops (reason ring_full), total and per worker. `stream` (may be
// null): events the live stream dropped for slow viewers (reason slow_viewer; the app's
// trace has them). `affected`: one sentence on what the drops do to the figures the
// program printed.
inline std::string drop_report(const instrumentation::Recorder& recorder, const instrumentation::StreamServer* stream,
                               std::string_view affected) {
  std::string out;
  std::uint64_t ring = 0;
  std::string per_worker;
  for (std::uint32_t w = 0; w < recorder.worker_count(); ++w) {
    const std::uint64_t n = recorder.snapshot(w).events_dropped;
    if (n == 0) continue;
    ring += n;
    per_worker += "; worker " + std::to_string(w) + ": " + std::to_string(n);
  }
  if (ring > 0) {
    const auto reason = static_cast<std::size_t>(DropReason::ring_full);
    out += "events lost: " + std::to_string(ring) + " (" + std::string(kDropReasonNames[reason]) + ": " +
           std::string(kDropReasonTexts[reason]) + per_worker +
           "); each gap is marked with a dropped event in the trace (and in flight dumps and the live stream). " +
           std::string(affected) + "\n";
  }
  if (stream) {
    if (const std::uint64_t slow = stream->stats().events_dropped; slow > 0) {
      const auto reason = static_cast<std::size_t>(DropReason::slow_viewer);
      out += "events lost for slow viewers: " + std::to_string(slow) + " (" + std::string(kDropReasonNames[reason]) +
             ": " + std::string(kDropReasonTexts[reason]) +
             "); those viewers were told of each gap; the trace file and the figures above are not affected\n";
    }
  }
  return out;
}

}  // namespace lantern::tools
