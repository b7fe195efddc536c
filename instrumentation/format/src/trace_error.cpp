// SPDX-License-Identifier: Apache-2.0
// trace_error.cpp - names of error kinds.
#include "lantern/trace/trace_error.hpp"

namespace lantern::trace {

std::string_view kind_name(TraceErrorKind kind) noexcept {
  switch (kind) {
    case TraceErrorKind::io: return "io";
    case TraceErrorKind::not_a_trace: return "not_a_trace";
    case TraceErrorKind::unsupported_version: return "unsupported_version";
    case TraceErrorKind::corrupt_header: return "corrupt_header";
    case TraceErrorKind::truncated: return "truncated";
    case TraceErrorKind::corrupt_chunk: return "corrupt_chunk";
    case TraceErrorKind::table_mismatch: return "table_mismatch";
    case TraceErrorKind::unknown_event_type: return "unknown_event_type";
    case TraceErrorKind::invalid_argument: return "invalid_argument";
  }
  return "unknown";
}

std::string describe(const TraceError& error) {
  return std::string(error.warning() ? "warning: " : "error: ") + error.message;
}

}  // namespace lantern::trace
