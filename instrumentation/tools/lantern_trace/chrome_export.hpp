// chrome_export.hpp - a trace as Chrome trace-event JSON (opens in ui.perfetto.dev and
// chrome://tracing).
//
// Layout: one process; per worker two threads (tracks), "worker N states" (tid 2N+1)
// and "worker N tasks" (tid 2N+2). Worker states and tasks are complete ("X") slices;
// tasks nest as they did (a join runs tasks inside the waiting one). Steals and wakes
// are flows ("s" on the victim's / waker's innermost open slice, "f" bound to the
// thief's next task slice / the wakee's next state slice). Lane queue depths are counter
// tracks ("C"), +1 on a push to a lane and -1 on lane_pop, never below 0 (a trace may
// start with tasks already queued). Drops and helps are instant events.
//
// A task slice is named by the label the task gave itself (task_label, the last one if
// several; the trace's label names), else "task". An IO operation is an async slice
// ("b"/"e", category "io", id = the operation id) from its io_submit to its io_complete,
// named by kind and fd ("read fd 7"), with the result in the end's args.
//
// Timestamps: microseconds with exactly three decimals (nanosecond resolution), rebased
// so the earliest event is at 0; ticks are converted with the header's calibration.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include "lantern/trace/label_names.hpp"
#include "lantern/trace/trace_header.hpp"

namespace lantern::trace::cli {

struct ChromeExportCounts {
  std::uint64_t state_slices = 0;
  std::uint64_t task_slices = 0;
  std::uint64_t flows = 0;
  std::uint64_t counter_samples = 0;
  std::uint64_t instants = 0;
  std::uint64_t io_slices = 0;
  std::uint64_t unmatched_task_ends = 0;
};

// write_chrome_trace sorts `events` by time (stable: each worker's order is kept) and
// writes the JSON document to `out`. Returns false if writing failed (check errno).
bool write_chrome_trace(std::FILE* out, const TraceHeader& header, const LabelTable& labels, std::vector<Event>& events,
                        std::size_t problem_count, ChromeExportCounts* counts);

}  // namespace lantern::trace::cli
