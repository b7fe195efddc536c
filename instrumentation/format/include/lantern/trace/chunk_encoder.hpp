// SPDX-License-Identifier: Apache-2.0
// chunk_encoder.hpp - turns in-memory Events into self-contained chunks of bytes.
//
// A chunk is the unit of the trace file: a 36-byte header with checksums, then the
// events, delta- and varint-encoded (README "Chunk payload"). Each chunk decodes on its
// own, so the encoder's output can go straight to a file, be kept in memory by a flight
// recorder and written later (TraceWriter::write_chunks), or be sent over a socket.
//
// Events given to one encoder must be in time order per worker (as a worker's ring holds
// them); different workers may interleave freely. Out-of-order ticks still round-trip,
// they only cost more bytes.
//
// Labels: the encoder notes the label ids of the chunk's task_label events and, when it
// finishes the chunk, appends their names from its LabelNames (if it was given one) as
// the chunk's label table, so the chunk names its own labels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "lantern/trace/event_table.hpp"
#include "lantern/trace/label_names.hpp"

namespace lantern::trace {

// ChunkLimits: when a chunk counts as full. Smaller chunks lose less to one corrupt
// byte and reach a live reader sooner; larger ones amortise the 36-byte header.
struct ChunkLimits {
  std::size_t target_payload_bytes = 64u << 10;  // full once the payload reaches this
  std::uint32_t max_events = 1u << 16;           // ... or holds this many events
};

class ChunkEncoder {
 public:
  enum class AddResult : std::uint8_t {
    added,
    rejected_type,  // the type is not in the event table: a reader could not decode it
    chunk_full,     // the chunk is at the format's hard size limit: finish_chunk() first
  };

  // `labels` (may be null: no names are written) must outlive the encoder.
  explicit ChunkEncoder(ChunkLimits limits = {}, const LabelNames* labels = nullptr);
  ~ChunkEncoder();
  ChunkEncoder(ChunkEncoder&&) noexcept;
  ChunkEncoder& operator=(ChunkEncoder&&) noexcept;

  // add encodes one event into the open chunk. May throw std::bad_alloc, nothing else.
  AddResult add(const Event& event);
  // full: the open chunk reached its limits; call finish_chunk() (add still works until
  // the hard limit, so a caller may finish a batch first).
  bool full() const noexcept;
  bool empty() const noexcept;
  std::uint32_t event_count() const noexcept;
  std::size_t payload_bytes() const noexcept;  // of the events so far (the label table comes on finish)

  // finish_chunk appends the open chunk (header, events, label table) to `out` and opens
  // an empty one. Returns the bytes appended; 0 (nothing appended) when the chunk was empty.
  std::size_t finish_chunk(std::vector<std::uint8_t>& out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// encode_chunks encodes `events` into as many chunks as `limits` need and returns their
// bytes, naming labels from `labels` (if given). Events with a type outside the table are
// skipped; *rejected (if given) counts them.
std::vector<std::uint8_t> encode_chunks(std::span<const Event> events, ChunkLimits limits = {},
                                        std::uint64_t* rejected = nullptr, const LabelNames* labels = nullptr);

}  // namespace lantern::trace
