// SPDX-License-Identifier: Apache-2.0
// chunk_decoder.hpp - checks a chunk header and decodes a chunk payload back to Events.
//
// TraceDecoder uses these for files and streams; they are public so that a consumer
// holding single chunks (a flight recorder's, or one received over a socket) can decode
// them without a file around them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "lantern/trace/event_table.hpp"
#include "lantern/trace/format.hpp"

namespace lantern::trace {

struct ChunkHeader {
  std::uint32_t payload_length = 0;
  std::uint32_t event_count = 0;
  std::uint32_t payload_crc = 0;
  std::uint64_t min_tick = 0;
  std::uint64_t max_tick = 0;
};

enum class ChunkHeaderStatus : std::uint8_t {
  ok,
  bad_magic,
  bad_checksum,  // the header's own CRC does not match: its fields cannot be trusted
  bad_lengths,   // checksum fine but the fields are impossible (a writer bug or forgery)
};

// parse_chunk_header reads the kChunkHeaderBytes at `bytes` into *out and checks them.
// On bad_lengths, *why says which field is impossible.
ChunkHeaderStatus parse_chunk_header(const std::uint8_t* bytes, ChunkHeader* out, std::string* why = nullptr);

// ChunkInfo describes one chunk as found in a file or stream.
struct ChunkInfo {
  std::uint64_t offset = 0;  // of the chunk header
  std::uint32_t payload_bytes = 0;
  std::uint32_t event_count = 0;  // as stored; events.size() is smaller by any skipped events
  std::uint64_t min_tick = 0;
  std::uint64_t max_tick = 0;
};

struct DecodedChunk {
  ChunkInfo info;
  std::vector<Event> events;
  std::uint32_t unknown_type_events = 0;  // of types known to the file's table but not this reader's
  // The chunk's label table: (id, name) in increasing id order, the names of (at least)
  // the labels its task_label events use.
  std::vector<std::pair<std::uint32_t, std::string>> labels;
};

// decode_payload decodes a chunk's payload (checksum already verified) into out->events
// and out->labels.
// `known_types` is the file's event-table size: ids at or above it are damage, ids in
// [kEventCount, known_types) are decoded and skipped. `payload_offset` is used for
// error messages only. `version`: the file's format version (whether tags escape ids
// past 14). Returns an explanation on malformed payloads (out is then partial).
std::optional<std::string> decode_payload(std::span<const std::uint8_t> payload, const ChunkHeader& header,
                                          std::uint32_t known_types, std::uint64_t payload_offset, DecodedChunk* out,
                                          std::uint16_t version = kFormatVersion);

// decode_chunk decodes one whole chunk (header + payload) held in memory, e.g. from
// ChunkEncoder::finish_chunk. Returns an explanation when the bytes are not one valid chunk.
std::optional<std::string> decode_chunk(std::span<const std::uint8_t> bytes, DecodedChunk* out);

}  // namespace lantern::trace
