// SPDX-License-Identifier: Apache-2.0
// chunk_decoder.cpp - the inverse of chunk_encoder.cpp, strict about every byte.
#include "lantern/trace/chunk_decoder.hpp"

#include <limits>

#include "lantern/trace/crc32c.hpp"
#include "lantern/trace/varint.hpp"
#include "worker_model.hpp"

namespace lantern::trace {

ChunkHeaderStatus parse_chunk_header(const std::uint8_t* bytes, ChunkHeader* out, std::string* why) {
  if (load_le<std::uint32_t>(bytes) != kChunkMagic) return ChunkHeaderStatus::bad_magic;
  if (load_le<std::uint32_t>(bytes + 32) != crc32c({bytes, 32})) return ChunkHeaderStatus::bad_checksum;
  ChunkHeader h;
  h.payload_length = load_le<std::uint32_t>(bytes + 4);
  h.event_count = load_le<std::uint32_t>(bytes + 8);
  h.payload_crc = load_le<std::uint32_t>(bytes + 12);
  h.min_tick = load_le<std::uint64_t>(bytes + 16);
  h.max_tick = load_le<std::uint64_t>(bytes + 24);
  *out = h;
  auto impossible = [&](std::string text) {
    if (why) *why = std::move(text);
    return ChunkHeaderStatus::bad_lengths;
  };
  if (h.payload_length > kMaxChunkPayload)
    return impossible("payload length " + std::to_string(h.payload_length) + " exceeds the format's limit of " +
                      std::to_string(kMaxChunkPayload));
  if (h.event_count == 0) return impossible("event count is 0 (writers never write empty chunks)");
  if (static_cast<std::uint64_t>(h.event_count) * kMinEventBytes + kMinLabelTableBytes > h.payload_length)
    return impossible(std::to_string(h.event_count) + " events and a label table cannot fit in " +
                      std::to_string(h.payload_length) + " payload bytes");
  if (h.min_tick > h.max_tick)
    return impossible("min tick " + std::to_string(h.min_tick) + " is after max tick " + std::to_string(h.max_tick));
  return ChunkHeaderStatus::ok;
}

namespace {

// decode_label_table reads the table that follows a payload's events (README "Chunk
// payload: labels"): a count, then (id, name) with ids increasing.
std::optional<std::string> decode_label_table(const std::uint8_t*& p, const std::uint8_t* end,
                                              const std::uint8_t* begin, std::uint64_t payload_offset,
                                              DecodedChunk* out) {
  auto at = [&](const std::uint8_t* q) { return std::to_string(payload_offset + (q - begin)); };
  const std::uint8_t* const table = p;
  std::uint64_t count;
  if (!get_varint(p, end, count))
    return "the label table at offset " + at(table) + " is missing or cut off (the payload ended after its events)";
  // Each definition takes at least 3 bytes (id, length, one byte of name): a larger
  // count is damage, not a reason to allocate.
  if (count > static_cast<std::uint64_t>(end - p) / 3)
    return "the label table at offset " + at(table) + " claims " + std::to_string(count) + " labels in " +
           std::to_string(end - p) + " bytes";
  out->labels.reserve(count);
  std::uint64_t previous = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint8_t* const entry = p;
    std::uint64_t id, length;
    if (!get_varint(p, end, id) || !get_varint(p, end, length))
      return "label definition " + std::to_string(i) + " at offset " + at(entry) + " is cut off";
    if (id == 0 || id > std::numeric_limits<std::uint32_t>::max() || id <= previous)
      return "label definition " + std::to_string(i) + " at offset " + at(entry) + " has id " + std::to_string(id) +
             (id <= previous && id != 0 ? ", not above the previous one's" : ", outside 1..2^32-1");
    if (length == 0 || length > kMaxLabelNameBytes || length > static_cast<std::uint64_t>(end - p))
      return "label definition " + std::to_string(i) + " at offset " + at(entry) + " has a name of " +
             std::to_string(length) + " bytes (1.." + std::to_string(kMaxLabelNameBytes) + " allowed, " +
             std::to_string(end - p) + " left)";
    out->labels.emplace_back(static_cast<std::uint32_t>(id), std::string(reinterpret_cast<const char*>(p), length));
    p += length;
    previous = id;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> decode_payload(std::span<const std::uint8_t> payload, const ChunkHeader& header,
                                          std::uint32_t known_types, std::uint64_t payload_offset, DecodedChunk* out,
                                          std::uint16_t version) {
  const bool escaped_types = has_type_escape(version);
  // The model is per call: decoding is reentrant and every chunk starts from nothing.
  thread_local detail::ChunkModel model;
  model.reset();
  out->events.resize(header.event_count);
  out->unknown_type_events = 0;
  out->labels.clear();
  Event* next = out->events.data();
  const std::uint8_t* const begin = payload.data();
  const std::uint8_t* const end = begin + payload.size();
  const std::uint8_t* p = begin;
  std::uint32_t index = 0;
  auto fail = [&](const std::uint8_t* at, const std::string& what) {
    out->events.resize(static_cast<std::size_t>(next - out->events.data()));
    return "event " + std::to_string(index) + " at offset " + std::to_string(payload_offset + (at - begin)) + " " +
           what;
  };

  for (; index < header.event_count; ++index) {
    const std::uint8_t* const event_start = p;
    if (p >= end) return fail(p, "is missing: the payload ended after " + std::to_string(index) + " events");
    const std::uint8_t tag = *p++;
    std::uint32_t type = tag & kTagTypeMask;
    if (type == kTagTypeEscape && escaped_types) {
      std::uint64_t rest;
      if (!get_varint(p, end, rest) || rest >= kMaxEventTypes - kTagTypeEscape)
        return fail(event_start, "has a cut-off or impossible escaped type");
      type += static_cast<std::uint32_t>(rest);
    }
    if (type >= known_types)
      return fail(event_start, "has type " + std::to_string(type) + ", which the event table (" +
                                   std::to_string(known_types) + " types) does not have");
    std::uint64_t v;
    if (tag & kTagNewWorker) {
      if (!get_varint(p, end, v)) return fail(event_start, "has a cut-off or overlong worker id");
      if (v > std::numeric_limits<std::uint32_t>::max()) return fail(event_start, "has a worker id above 32 bits");
      model.switch_to(static_cast<std::uint32_t>(v));
    }
    if (!get_varint(p, end, v)) return fail(event_start, "has a cut-off or overlong tick delta");
    const std::uint64_t base = model.tick_base();
    std::uint64_t ticks;
    if (tag & kTagTicksBackward) {
      if (v > base) return fail(event_start, "steps its tick back below zero");
      ticks = base - v;
    } else {
      ticks = base + v;
      if (ticks < base) return fail(event_start, "has a tick past 2^64");
    }
    if (ticks < header.min_tick || ticks > header.max_tick)
      return fail(event_start, "has tick " + std::to_string(ticks) + ", outside the chunk's range [" +
                                   std::to_string(header.min_tick) + ", " + std::to_string(header.max_tick) + "]");
    detail::WorkerModel& w = model.current();
    std::uint64_t a;
    if (tag & kTagPredictedA) {
      const auto predicted = w.predicted_a(type);
      if (!predicted) return fail(event_start, "claims a predicted payload where nothing predicts one");
      a = *predicted;
    } else {
      if (!get_varint(p, end, v)) return fail(event_start, "has a cut-off or overlong payload a");
      a = a_is_task_id(type) ? w.last_task + static_cast<std::uint64_t>(unzigzag(v)) : v;
    }
    std::uint64_t b = 0;
    if (!(tag & kTagZeroB) && !get_varint(p, end, b)) return fail(event_start, "has a cut-off or overlong payload b");
    if (b_is_interleaved(type)) b = deinterleave_halves(b);
    model.observe(type, ticks, a);
    if (type >= static_cast<std::uint32_t>(kEventCount)) {
      ++out->unknown_type_events;  // a newer table's event: decoded to stay in step, not delivered
      continue;
    }
    next->ticks = ticks;
    next->worker = model.current_id();
    next->type = static_cast<EventId>(type);
    next->a = a;
    next->b = b;
    ++next;
  }
  out->events.resize(static_cast<std::size_t>(next - out->events.data()));
  if (auto error = decode_label_table(p, end, begin, payload_offset, out)) return error;
  if (p != end) {
    return "the payload has " + std::to_string(end - p) + " bytes after its label table (at offset " +
           std::to_string(payload_offset + (p - begin)) + ")";
  }
  return std::nullopt;
}

std::optional<std::string> decode_chunk(std::span<const std::uint8_t> bytes, DecodedChunk* out) {
  if (bytes.size() < kChunkHeaderBytes) return "fewer bytes than a chunk header";
  ChunkHeader h;
  std::string why;
  switch (parse_chunk_header(bytes.data(), &h, &why)) {
    case ChunkHeaderStatus::ok: break;
    case ChunkHeaderStatus::bad_magic: return "bad chunk magic";
    case ChunkHeaderStatus::bad_checksum: return "chunk header checksum mismatch";
    case ChunkHeaderStatus::bad_lengths: return "impossible chunk header: " + why;
  }
  if (bytes.size() != kChunkHeaderBytes + h.payload_length)
    return "the chunk header announces " + std::to_string(h.payload_length) + " payload bytes but " +
           std::to_string(bytes.size() - kChunkHeaderBytes) + " follow";
  const auto payload = bytes.subspan(kChunkHeaderBytes);
  if (crc32c(payload) != h.payload_crc) return "payload checksum mismatch";
  out->info = {0, h.payload_length, h.event_count, h.min_tick, h.max_tick};
  return decode_payload(payload, h, static_cast<std::uint32_t>(kEventCount), kChunkHeaderBytes, out);
}

}  // namespace lantern::trace
