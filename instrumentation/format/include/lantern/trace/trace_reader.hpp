// SPDX-License-Identifier: Apache-2.0
// trace_reader.hpp - reads a trace from a file or a byte buffer.
//
// A thin driver around TraceDecoder: it feeds the decoder 1 MiB at a time and collects
// the problems it reports, so a caller sees chunks one by one and a list of problems.
// Reading never throws and never stops early on damage it can read past (see
// TraceDecoder); it stops only when nothing more can be read.
//
//   auto reader = TraceReader::open("run.trace");
//   while (reader.next_chunk())
//     for (const Event& e : reader.chunk().events) use(e);
//   for (const TraceError& p : reader.problems()) print(describe(p));
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lantern/trace/trace_decoder.hpp"

namespace lantern::trace {

class TraceReader {
 public:
  // open reads the file at `path`. If it cannot be opened, the reader is empty and
  // problems() holds one io error naming the file and the OS's reason.
  static TraceReader open(const std::string& path);
  // from_bytes reads a trace held in memory; `bytes` must outlive the reader.
  static TraceReader from_bytes(std::span<const std::uint8_t> bytes, std::string name = "<memory>");

  ~TraceReader();
  TraceReader(TraceReader&&) noexcept;
  TraceReader& operator=(TraceReader&&) noexcept;

  // read_header reads up to the end of the file header; true if it was intact.
  bool read_header();
  // next_chunk advances to the next intact chunk; false when no more can be read.
  bool next_chunk();
  const DecodedChunk& chunk() const noexcept;
  // labels: the label names of every chunk read so far (chunk().labels: this chunk's).
  const LabelTable& labels() const noexcept;

  const TraceHeader& header() const noexcept;
  bool header_ok() const noexcept;
  // problems found so far, in stream order (warnings included).
  const std::vector<TraceError>& problems() const noexcept;
  bool has_errors() const noexcept;  // a problem that is not a warning
  bool io_failed() const noexcept;   // the file could not be opened or read

  std::uint64_t bytes_read() const noexcept;
  std::uint64_t total_bytes() const noexcept;  // the file's size; 0 if unknown
  const std::string& name() const noexcept;

 private:
  struct Impl;
  explicit TraceReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// TraceContents is a whole trace in memory.
struct TraceContents {
  TraceHeader header;
  bool header_ok = false;
  std::vector<Event> events;  // in file order: per-worker time order, workers interleaved
  LabelTable labels;          // names of the task labels the events use
  std::vector<ChunkInfo> chunks;
  std::vector<TraceError> problems;
};

// read_trace / read_trace_bytes read everything (convenient for tests and small files).
TraceContents read_trace(const std::string& path);
TraceContents read_trace_bytes(std::span<const std::uint8_t> bytes);

}  // namespace lantern::trace
