// SPDX-License-Identifier: Apache-2.0
// sink.hpp - what the collector feeds: live model, metrics aggregator, trace writer.
#pragma once

#include <span>
#include <string>

#include "lantern/trace/event_table.hpp"

namespace lantern::instrumentation {

// Sink receives batches of events on the collector's thread. Within a batch, each
// worker's events are contiguous and in that worker's order; batches arrive in order.
// A sink must not block for long: every sink shares the collector's thread.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void on_batch(std::span<const trace::Event> events) = 0;
  // on_flush: the collector stops or was asked to flush; write out anything buffered.
  virtual void on_flush() {}
  // failure: empty while the sink works; once it has failed for good (a trace file's
  // disk filled up, its path cannot be written), one sentence naming what failed and
  // why. Sticky; callable from any thread. Collector::failures() gathers them, so a
  // program can report the failure and exit non-zero.
  virtual std::string failure() const { return {}; }
};

}  // namespace lantern::instrumentation
