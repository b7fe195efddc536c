// SPDX-License-Identifier: Apache-2.0
// trace_decoder.hpp - the incremental trace parser: bytes in, header/chunks/problems out.
//
// TraceDecoder never reads anything itself. Whoever has bytes (a file reader, a socket,
// a test feeding one byte at a time) feed()s them and calls next() until it asks for
// more input; end_of_input() says no more will come, which is when an incomplete chunk
// becomes "truncated". The reader and a live stream therefore share one parser, and
// one set of robustness rules (README "Robustness"):
//   - every complete, intact chunk is delivered, whatever surrounds it;
//   - a damaged chunk (magic, checksums, lengths, event encoding) is reported with its
//     offset, and parsing resumes at the next intact chunk header found by scanning;
//   - a damaged file header is reported, and the chunks after it are still read;
//   - only "not a trace", "written in another format version" and a cut-off header
//     stop parsing.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "lantern/trace/chunk_decoder.hpp"
#include "lantern/trace/label_names.hpp"
#include "lantern/trace/trace_error.hpp"
#include "lantern/trace/trace_header.hpp"

namespace lantern::trace {

class TraceDecoder {
 public:
  enum class Step : std::uint8_t {
    need_input,  // feed() more bytes, or end_of_input()
    header,      // header() is available (it was intact)
    chunk,       // chunk() holds the next chunk until the next call to next()
    problem,     // problem() holds a warning or error; parsing continues unless it is the end
    end,         // nothing more will come
  };

  TraceDecoder();

  // feed appends bytes that arrived. Copies them; the span may be reused afterwards.
  void feed(std::span<const std::uint8_t> bytes);
  // end_of_input: no more bytes will be fed.
  void end_of_input() noexcept { eof_ = true; }

  // next parses as far as the bytes fed so far allow and reports one step.
  Step next();

  // header_ok: an intact header was read (else header() holds defaults).
  bool header_ok() const noexcept { return header_ok_; }
  const TraceHeader& header() const noexcept { return header_; }
  const DecodedChunk& chunk() const noexcept { return chunk_; }
  // labels: every label name the chunks delivered so far defined (an id keeps its first).
  const LabelTable& labels() const noexcept { return labels_; }
  const TraceError& problem() const noexcept { return problem_; }

  // consumed: the stream offset up to which bytes have been parsed (or skipped).
  std::uint64_t consumed() const noexcept { return base_ + head_; }
  std::uint64_t received() const noexcept { return base_ + buffer_.size(); }

 private:
  enum class State : std::uint8_t { header_prefix, header_body, chunk, resync, done };

  std::size_t available() const noexcept { return buffer_.size() - head_; }
  const std::uint8_t* at(std::uint64_t offset) const noexcept { return buffer_.data() + (offset - base_); }
  void report(TraceErrorKind kind, std::uint64_t offset, std::string message);
  void stop();
  bool parse_header_prefix();
  bool parse_header_body();
  bool parse_chunk();
  bool resync();
  bool intact_chunk_after(std::uint64_t from) const;
  void start_resync(std::uint64_t damaged_at, std::uint64_t scan_from, std::string what);

  std::vector<std::uint8_t> buffer_;
  std::size_t head_ = 0;    // parse position within buffer_
  std::uint64_t base_ = 0;  // stream offset of buffer_[0]
  bool eof_ = false;
  State state_ = State::header_prefix;

  std::uint16_t version_ = 0;
  // chunk_version_: the version chunks are decoded as: the file's once its header is
  // intact, else this reader's (a damaged header's version field is not believed).
  std::uint16_t chunk_version_ = kFormatVersion;
  std::uint32_t header_length_ = 0;
  bool header_ok_ = false;
  bool header_reported_ = false;
  std::uint32_t known_types_;  // the file's event-table size, or this reader's
  TraceHeader header_;

  std::uint64_t damaged_at_ = 0;  // resync: where the damage was found ...
  std::uint64_t scan_from_ = 0;   // ... and where scanning for a chunk magic continues
  std::string damage_;            // ... and what it was

  std::uint64_t unknown_type_events_ = 0;
  DecodedChunk chunk_;
  LabelTable labels_;
  bool chunk_ready_ = false;  // parse_chunk delivered chunk_
  TraceError problem_;
  std::deque<TraceError> pending_;
};

}  // namespace lantern::trace
