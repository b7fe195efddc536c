// SPDX-License-Identifier: Apache-2.0
// trace_reader_fuzz.cpp - libFuzzer target for the trace reader (see run_fuzz.sh).
//
// Beyond "never crash, never leak, no undefined behaviour" (the sanitizers' job), it
// checks three properties on every input, aborting when one fails:
//   1. streaming equals whole: the same bytes fed in pieces of varying sizes yield the
//      same events and the same problems as one buffer (the incremental path is what a
//      live socket reader will use, so it must not be a second-class parser);
//   2. whatever decodes re-encodes and decodes back identically, label names included;
//   3. an intact header re-encodes to the same bytes after a parse round trip.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lantern/trace/chunk_encoder.hpp"
#include "lantern/trace/trace_decoder.hpp"
#include "lantern/trace/trace_reader.hpp"

using namespace lantern::trace;

namespace {

void require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "trace_reader_fuzz: property violated: %s\n", what);
  std::abort();
}

bool same_problems(const std::vector<TraceError>& a, const std::vector<TraceError>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].kind != b[i].kind || a[i].offset != b[i].offset || a[i].message != b[i].message) return false;
  return true;
}

TraceContents read_streamed(const std::uint8_t* data, std::size_t size) {
  TraceContents out;
  TraceDecoder decoder;
  std::size_t fed = 0, piece = 1 + (size % 13);
  for (;;) {
    switch (decoder.next()) {
      case TraceDecoder::Step::need_input:
        if (fed < size) {
          const std::size_t n = std::min(piece, size - fed);
          decoder.feed({data + fed, n});
          fed += n;
          piece = piece * 3 % 61 + 1;  // vary the piece sizes: 1..61 bytes
        } else {
          decoder.end_of_input();
        }
        break;
      case TraceDecoder::Step::header: break;
      case TraceDecoder::Step::chunk: {
        const auto& events = decoder.chunk().events;
        out.events.insert(out.events.end(), events.begin(), events.end());
        break;
      }
      case TraceDecoder::Step::problem: out.problems.push_back(decoder.problem()); break;
      case TraceDecoder::Step::end:
        out.header_ok = decoder.header_ok();
        out.header = decoder.header();
        out.labels = decoder.labels();
        return out;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const TraceContents whole = read_trace_bytes({data, size});

  const TraceContents streamed = read_streamed(data, size);
  require(streamed.events == whole.events, "streamed events equal whole-buffer events");
  require(same_problems(streamed.problems, whole.problems), "streamed problems equal whole-buffer problems");
  require(streamed.header_ok == whole.header_ok, "streamed header status equals whole-buffer");
  require(streamed.labels == whole.labels, "streamed label names equal whole-buffer label names");
  for (const auto& [id, name] : whole.labels.all())
    require(!name.empty() && name.size() <= kMaxLabelNameBytes, "every label name read is 1..255 bytes");

  if (!whole.events.empty()) {
    const std::vector<std::uint8_t> chunks = encode_chunks(whole.events, ChunkLimits{256, 50}, nullptr, &whole.labels);
    std::vector<std::uint8_t> file = encode_header(whole.header_ok ? whole.header : TraceHeader{});
    file.insert(file.end(), chunks.begin(), chunks.end());
    const TraceContents again = read_trace_bytes(file);
    require(again.events == whole.events, "decoded events re-encode to the same events");
    // Re-encoded chunks name exactly the labels their events use that the input named.
    LabelTable used;
    for (const Event& e : whole.events) {
      if (e.type != lantern::EventId::task_label || e.b == 0 || e.b > 0xFFFF'FFFFu) continue;
      if (const auto name = whole.labels.name(static_cast<std::uint32_t>(e.b)))
        used.define(static_cast<std::uint32_t>(e.b), *name);
    }
    require(again.labels == used, "decoded label names re-encode to the same names");
  }

  if (whole.header_ok && !whole.header.event_names.empty()) {
    const std::vector<std::uint8_t> encoded = encode_header(whole.header);
    const TraceContents reparsed = read_trace_bytes(encoded);
    require(reparsed.header_ok, "a re-encoded header parses");
    require(encode_header(reparsed.header) == encoded, "a header survives a parse/encode round trip");
  }
  return 0;
}
