// SPDX-License-Identifier: Apache-2.0
// chrome_export.hpp - a trace as Chrome trace-event JSON (opens in ui.perfetto.dev and
// chrome://tracing), drawn from the one fold of the trace (lantern::analysis): the
// export decodes no payload and folds no event itself.
//
// Layout: one process; per worker two threads (tracks), "worker N states" (tid 2N+1)
// and "worker N tasks" (tid 2N+2). Worker states (category "state") and tasks (category
// "task") are complete ("X") slices; tasks nest as they ran (a join runs tasks inside
// the waiting one). A worker's states end where its time does (Analysis::span_end: its
// `stopping` state event, else the end of the trace), so per worker and state the
// slices add up to the time lantern-trace stats counts. Lane queue depths are counter tracks ("C"), from each lane
// pop's wait (the task sat in the lane from pop - wait to pop, as the viewer draws it), and the pool's not-ready tasks
// a counter of its own. Helps, drops and deadlock reports are instant events; so is EVERY wake ("wake", on the woken
// worker's states track, with waker, cause and latency). IO operations are async slices ("b"/"e", category "io") from
// io_submit to io_complete, named by kind and fd ("read fd 7"), on the submitting worker's
// tasks track (tid 2N+2, so Perfetto nests them under that worker). Counter samples of all
// counters are written in time order.
//
// A window (ExportWindow, `export --from/--to` or `--around-warning`): only what overlaps
// [from, to] is written, slices and IO cut at its edges (args "clipped": true), counters
// starting with their value at `from`; an arrow only when both its ends are inside.
// Timestamps stay those of the whole trace (the first event is 0), as the viewer and stats
// give times.
//
// Arrows (flow events, category "state", bound to state slices at both ends so that the
// flow's category is the category of the slices it binds to, which Chrome DevTools'
// trace engine requires): a wake runs FROM the waker's state slice at the time of the
// wake call (wake time - latency) TO the woken worker's state slice at the wake; a steal
// from the victim's state slice to the thief's at the steal. A wake has no arrow when
// its waker is outside the pool or when it was an IO completion (no waker): the export
// counts those (ChromeExportCounts, and "otherData" in the JSON) instead of dropping them
// silently. "wake_arrows" in otherData is the analysis' count (Summary::wake_arrows, what
// lantern-trace stats prints as "by a worker of the pool"); "wake_arrows_drawn" says how
// many of them are flows here: in a dump or a live stream an end can fall where its
// worker has no state slice yet (before its first state event), and has no flow.
//
// Timestamps: microseconds rebased so the earliest event is at 0, in units of 1/1024 us
// (0.98 ns), written exactly: every ts and dur parses to a double with no rounding, so
// where one slice ends exactly where the next begins, ts + dur equals the next ts.
#pragma once

#include <cstdint>
#include <cstdio>

#include "lantern/analysis/analysis.hpp"
#include "lantern/trace/trace_header.hpp"

namespace lantern::trace::cli {

struct ChromeExportCounts {
  std::uint64_t state_slices = 0;
  std::uint64_t task_slices = 0;
  std::uint64_t flows = 0;  // steal_flows + wake_flows
  std::uint64_t steal_flows = 0;
  std::uint64_t wake_flows = 0;   // wake arrows drawn
  std::uint64_t wake_arrows = 0;  // Summary::wake_arrows: wakes by a worker of the pool (wake_flows + wakes_unbound)
  std::uint64_t wakes = 0;        // wake instants: every wake
  std::uint64_t wakes_from_outside = 0;  // no arrow: the waker is not a worker of the pool
  std::uint64_t wakes_by_io = 0;         // no arrow: an IO completion has no waker
  std::uint64_t wakes_unbound =
      0;  // a wake arrow not drawn: an end has no state slice (before a worker's first state event, after its stop)
  std::uint64_t steals_unbound = 0;  // the same, for steals
  std::uint64_t counter_samples = 0;
  std::uint64_t instants = 0;
  std::uint64_t io_slices = 0;
  std::uint64_t unmatched_task_ends = 0;
};

// ExportWindow: the part of the trace to write, in ticks (the analysis' clock).
struct ExportWindow {
  analysis::Tick from = 0;
  analysis::Tick to = ~analysis::Tick{0};
  bool whole() const noexcept { return from == 0 && to == ~analysis::Tick{0}; }
};

// write_chrome_trace writes the analysed trace (or the window of it) to `out`. Returns
// false if writing failed (check errno).
bool write_chrome_trace(std::FILE* out, const TraceHeader& header, const analysis::Analysis& analysis,
                        std::size_t problem_count, ChromeExportCounts* counts, const ExportWindow& window = {});

}  // namespace lantern::trace::cli
