// SPDX-License-Identifier: Apache-2.0
// trace_writer.hpp - writes a trace (header, then chunks) to a file or any byte sink.
//
// The collector hands it batches of Events; it encodes them into chunks and passes each
// completed chunk to the sink in one call, so a sink (a file, a socket) always receives
// whole chunks and a crash mid-recording leaves a file whose every complete chunk reads.
// flush() completes the current chunk early, e.g. on a timer so a live reader is never
// more than a moment behind.
//
// Errors are values: every call returns false once the writer has failed, and error()
// says why, naming the file and the OS's reason. Nothing throws, nothing aborts.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lantern/trace/chunk_encoder.hpp"
#include "lantern/trace/trace_error.hpp"
#include "lantern/trace/trace_header.hpp"

namespace lantern::trace {

// ByteSink receives the trace's bytes in order: the header first, then whole chunks,
// one call each. It returns false and sets `error` (a sentence naming the destination)
// on failure; an exception it throws is caught and reported the same way.
using ByteSink = std::function<bool(std::span<const std::uint8_t> bytes, std::string& error)>;

struct WriterOptions {
  ChunkLimits chunk_limits;
  // labels: where the names of task labels come from (each chunk carries the names its
  // task_label events use); null writes no names. Must outlive the writer.
  const LabelNames* labels = nullptr;
};

struct WriterStats {
  std::uint64_t events = 0;           // encoded into chunks (written or pending)
  std::uint64_t rejected_events = 0;  // skipped: their type is not in the event table
  std::uint64_t chunks = 0;           // handed to the sink
  std::uint64_t bytes = 0;            // handed to the sink, header included
};

class TraceWriter {
 public:
  // create opens (creating or truncating) `path` and writes the header. On failure the
  // writer is not ok() and error() says why. Only a regular file, or a new one, is
  // written: a FIFO, a device or a directory is refused at once and left untouched
  // (never waited on: opening a FIFO nobody reads would block forever). A write that
  // fails before the first chunk is complete (a disk already full) removes the file,
  // which was never a trace; after that, a failed write leaves every complete chunk
  // readable (a reader reports the cut as `truncated`).
  static TraceWriter create(const std::string& path, const TraceHeader& header, WriterOptions options = {});
  // to_sink writes to `sink`; `sink_name` names the destination in messages.
  static TraceWriter to_sink(ByteSink sink, std::string sink_name, const TraceHeader& header,
                             WriterOptions options = {});

  ~TraceWriter();  // closes; call close() first to learn whether that succeeded
  TraceWriter(TraceWriter&&) noexcept;
  TraceWriter& operator=(TraceWriter&&) noexcept;

  bool ok() const noexcept;
  // error: the first failure (sticky), or nullptr.
  const TraceError* error() const noexcept;

  // write encodes events; full chunks go to the sink at once. Events whose type is not
  // in the table are counted in stats().rejected_events and skipped.
  bool write(std::span<const Event> events) noexcept;
  bool write(const Event& event) noexcept { return write(std::span<const Event>(&event, 1)); }
  // write_chunks passes already-encoded chunks (ChunkEncoder output, e.g. kept by a
  // flight recorder) to the sink after checking each is one intact chunk (header and
  // payload checksums). The open chunk is flushed first so the file stays in order.
  bool write_chunks(std::span<const std::uint8_t> chunk_bytes) noexcept;
  // flush completes the open chunk (if any) and hands it to the sink.
  bool flush() noexcept;
  // close flushes and closes the file. Further writes fail.
  bool close() noexcept;

  const WriterStats& stats() const noexcept;
  const std::string& name() const noexcept;

 private:
  struct Impl;
  explicit TraceWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lantern::trace
