// SPDX-License-Identifier: Apache-2.0
// trace_error.hpp - what can go wrong with a trace, as values.
//
// Neither the writer nor the reader throws across its API or aborts: every problem is a
// TraceError with a kind (for code), the byte offset where it was found (for tools and
// for a human with a hex dump) and a message that explains it in full sentences, naming
// the file where there is one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lantern::trace {

enum class TraceErrorKind : std::uint8_t {
  io,                   // the OS refused: open/read/write failed (message has the errno text)
  not_a_trace,          // the bytes do not start with the Lantern magic
  unsupported_version,  // a newer (or impossible) format version: the reader stops
  corrupt_header,       // the file header failed its checksum or does not parse
  truncated,            // the bytes end inside the header or a chunk
  corrupt_chunk,        // bad magic, checksum, lengths or event encoding; reading resumes
  table_mismatch,       // warning: the file's event table differs from this reader's
  unknown_event_type,   // warning: events of types this reader does not know were skipped
  invalid_argument,     // a caller error (e.g. bytes given as chunks are not chunks)
};

// kind_name is a stable lower-case identifier, e.g. "corrupt_chunk".
std::string_view kind_name(TraceErrorKind kind) noexcept;

// is_warning: the problem does not make the data read wrong (a reader still reports it).
constexpr bool is_warning(TraceErrorKind kind) noexcept {
  return kind == TraceErrorKind::table_mismatch || kind == TraceErrorKind::unknown_event_type;
}

struct TraceError {
  TraceErrorKind kind = TraceErrorKind::io;
  std::uint64_t offset = 0;  // byte offset in the file or stream the problem refers to
  std::string message;       // complete sentence(s); already contains the offset

  bool warning() const noexcept { return is_warning(kind); }
};

// describe: "error: <message>" or "warning: <message>", for printing.
std::string describe(const TraceError& error);

}  // namespace lantern::trace
