// SPDX-License-Identifier: Apache-2.0
// trace_decoder.cpp - the parsing state machine behind TraceReader and live streams.
//
// States: header_prefix (magic, version, length) -> header_body (fields, CRC) -> chunk
// (one chunk per step) <-> resync (scanning for the next intact chunk header after
// damage) -> done. The buffer only ever holds the unparsed tail of the stream, so memory
// stays bounded by the largest chunk (kMaxChunkPayload) plus one fed block.
#include "lantern/trace/trace_decoder.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "lantern/trace/crc32c.hpp"
#include "lantern/trace/varint.hpp"

namespace lantern::trace {
namespace {

std::string hex_bytes(const std::uint8_t* p, std::size_t n) {
  std::string s;
  char tmp[4];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(tmp, sizeof tmp, i ? " %02x" : "%02x", p[i]);
    s += tmp;
  }
  return s;
}

std::string hex32(std::uint32_t v) {
  char tmp[16];
  std::snprintf(tmp, sizeof tmp, "0x%08x", v);
  return tmp;
}

}  // namespace

TraceDecoder::TraceDecoder() : known_types_(static_cast<std::uint32_t>(kEventCount)) {}

void TraceDecoder::feed(std::span<const std::uint8_t> bytes) {
  if (state_ == State::done || eof_) return;  // nothing more will be parsed
  // Drop the parsed prefix once it is worth the move: at least half the buffer or 1 MiB.
  if (head_ > 0 && (head_ == buffer_.size() || head_ >= buffer_.size() / 2 || head_ >= (1u << 20))) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(head_));
    base_ += head_;
    head_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

void TraceDecoder::report(TraceErrorKind kind, std::uint64_t offset, std::string message) {
  pending_.push_back(TraceError{kind, offset, std::move(message)});
}

void TraceDecoder::stop() {
  if (state_ == State::done) return;
  state_ = State::done;
  if (unknown_type_events_ > 0) {
    report(TraceErrorKind::unknown_event_type, 0,
           std::to_string(unknown_type_events_) + " events of types this reader does not know (ids " +
               std::to_string(kEventCount) + " and up, from the file's newer event table) were skipped");
  }
}

TraceDecoder::Step TraceDecoder::next() {
  for (;;) {
    if (!pending_.empty()) {
      problem_ = std::move(pending_.front());
      pending_.pop_front();
      return Step::problem;
    }
    switch (state_) {
      case State::header_prefix:
        if (!parse_header_prefix()) return Step::need_input;
        break;
      case State::header_body:
        if (!parse_header_body()) return Step::need_input;
        if (header_ok_ && !header_reported_) {
          header_reported_ = true;
          // The header step comes first; a table-mismatch warning queued with it follows.
          return Step::header;
        }
        break;
      case State::chunk:
        chunk_ready_ = false;
        if (!parse_chunk()) return Step::need_input;
        if (chunk_ready_) return Step::chunk;
        break;
      case State::resync:
        if (!resync()) return Step::need_input;
        break;
      case State::done: return Step::end;
    }
  }
}

// parse_header_prefix: returns false when more input is needed.
bool TraceDecoder::parse_header_prefix() {
  const std::size_t avail = available();
  const std::uint8_t* p = buffer_.data() + head_;
  const std::size_t n = std::min<std::size_t>(avail, kFileMagic.size());
  if (n > 0 && std::memcmp(p, kFileMagic.data(), n) != 0) {  // (an empty buffer's data() may be null)
    // Wait for all 8 bytes (or the end), so the message is the same however bytes arrive.
    if (n < kFileMagic.size() && !eof_) return false;
    report(TraceErrorKind::not_a_trace, 0,
           "not a Lantern trace: it starts with bytes " + hex_bytes(p, n) + ", a Lantern trace with " +
               hex_bytes(kFileMagic.data(), kFileMagic.size()));
    stop();
    return true;
  }
  if (avail < kHeaderPrefixBytes) {
    if (!eof_) return false;
    if (avail == 0) {
      report(TraceErrorKind::not_a_trace, 0, "not a Lantern trace: it is empty (0 bytes)");
    } else {
      report(TraceErrorKind::truncated, 0,
             "truncated at offset 0 (" + std::to_string(avail) + " bytes of an incomplete file header)");
    }
    stop();
    return true;
  }
  version_ = load_le<std::uint16_t>(p + 8);
  header_length_ = load_le<std::uint32_t>(p + 12);
  const bool length_ok = header_length_ >= kMinHeaderBytes && header_length_ <= kMaxHeaderBytes;
  if ((version_ < kOldestReadableVersion || version_ > kFormatVersion) && version_ != 0) {
    // A bit flip can fake another version: when the whole header is at hand, its CRC
    // (frozen across versions) tells a real newer or older file from a damaged one.
    if (length_ok && avail < header_length_ && !eof_) return false;
    const bool intact = length_ok && avail >= header_length_ &&
                        load_le<std::uint32_t>(p + header_length_ - 4) == crc32c({p, header_length_ - 4});
    if (intact || !length_ok || avail < header_length_) {
      if (version_ > kFormatVersion) {
        report(TraceErrorKind::unsupported_version, 8,
               "this trace needs format version " + std::to_string(version_) + "; this reader supports " +
                   supported_versions() + " (read it with a newer lantern-trace)");
      } else {
        // Older versions encode events differently (version 1 numbered them before task
        // labels and IO events; version 2 stored push's b plainly), so reading them as
        // this version would mislabel or garble events: refuse, and say what to do.
        report(TraceErrorKind::unsupported_version, 8,
               "this trace uses format version " + std::to_string(version_) +
                   ", written by an older Lantern whose event ids and encoding differ; this reader supports " +
                   supported_versions() +
                   " only. Record the trace again with this build, or read it with the lantern-trace of the "
                   "Lantern that wrote it (format version " +
                   std::to_string(version_) + ")");
      }
      stop();
      return true;
    }
    start_resync(0, kHeaderPrefixBytes,
                 "the file header is damaged: its version field reads " + std::to_string(version_) +
                     " but the header fails its checksum; reading chunks as version " + std::to_string(kFormatVersion));
    return true;
  }
  if (version_ == 0 || !length_ok) {
    start_resync(0, kHeaderPrefixBytes,
                 version_ == 0
                     ? std::string("the file header is damaged: format version 0 does not exist")
                     : "the file header is damaged: its length " + std::to_string(header_length_) + " is outside [" +
                           std::to_string(kMinHeaderBytes) + ", " + std::to_string(kMaxHeaderBytes) + "]");
    return true;
  }
  state_ = State::header_body;
  return true;
}

bool TraceDecoder::parse_header_body() {
  const std::size_t avail = available();
  if (avail < header_length_) {
    if (!eof_) return false;
    // Chunks after the prefix mean the length field is what is damaged, not the file.
    if (intact_chunk_after(kHeaderPrefixBytes)) {
      start_resync(0, kHeaderPrefixBytes,
                   "the file header is damaged: its length " + std::to_string(header_length_) +
                       " runs past the end of the file (" + std::to_string(received()) + " bytes)");
      return true;
    }
    report(TraceErrorKind::truncated, 0,
           "truncated at offset 0 (" + std::to_string(avail) + " bytes of an incomplete file header of " +
               std::to_string(header_length_) + " bytes)");
    stop();
    return true;
  }
  const std::uint8_t* p = buffer_.data() + head_;
  const std::uint32_t stored = load_le<std::uint32_t>(p + header_length_ - 4);
  const std::uint32_t computed = crc32c({p, header_length_ - 4});
  if (stored != computed) {
    start_resync(0, kHeaderPrefixBytes,
                 "the file header is damaged: checksum mismatch (stored " + hex32(stored) + ", computed " +
                     hex32(computed) + "); its fields are ignored and chunks are still read");
    return true;
  }
  std::string why;
  auto parsed = parse_header_fields({p + kHeaderPrefixBytes, header_length_ - kHeaderPrefixBytes - 4}, version_, &why);
  if (!parsed) {
    start_resync(0, kHeaderPrefixBytes, "the file header is damaged: " + why + " does not parse");
    return true;
  }
  header_ = std::move(*parsed);
  header_ok_ = true;
  chunk_version_ = version_;
  if (!header_.event_names.empty())
    known_types_ = static_cast<std::uint32_t>(
        std::min<std::size_t>(header_.event_names.size(), has_type_escape(version_) ? kMaxEventTypes : kMaxTypesInTag));
  if (std::string mismatch = table_mismatch(header_.event_names); !mismatch.empty())
    report(TraceErrorKind::table_mismatch, 0, "event-table mismatch: " + mismatch);
  head_ += header_length_;
  state_ = State::chunk;
  return true;
}

bool TraceDecoder::parse_chunk() {
  const std::uint64_t offset = consumed();
  const std::size_t avail = available();
  const std::uint8_t* p = buffer_.data() + head_;
  if (avail < kChunkHeaderBytes) {
    if (!eof_) return false;
    if (avail > 0) {
      if (std::memcmp(p, kChunkMagicBytes.data(), std::min<std::size_t>(avail, 4)) == 0) {
        report(TraceErrorKind::truncated, offset,
               "truncated at offset " + std::to_string(offset) + " (" + std::to_string(avail) +
                   " bytes of an incomplete chunk): the file holds everything up to that point, where the "
                   "recording stopped (a failed write, a full disk, a crash); every chunk before it was read");
      } else {
        report(TraceErrorKind::corrupt_chunk, offset,
               "the last " + std::to_string(avail) + " bytes, at offset " + std::to_string(offset) +
                   ", are not a chunk (no chunk magic)");
      }
    }
    stop();
    return true;
  }
  ChunkHeader h;
  std::string why;
  switch (parse_chunk_header(p, &h, &why)) {
    case ChunkHeaderStatus::ok: break;
    case ChunkHeaderStatus::bad_magic:
      start_resync(offset, offset + 1,
                   "corrupt chunk at offset " + std::to_string(offset) + ": bad chunk magic (" + hex_bytes(p, 4) + ")");
      return true;
    case ChunkHeaderStatus::bad_checksum:
      start_resync(offset, offset + 1,
                   "corrupt chunk at offset " + std::to_string(offset) + ": the chunk header fails its checksum");
      return true;
    case ChunkHeaderStatus::bad_lengths:
      start_resync(offset, offset + 1, "corrupt chunk at offset " + std::to_string(offset) + ": " + why);
      return true;
  }
  const std::size_t total = kChunkHeaderBytes + h.payload_length;
  if (avail < total) {
    if (!eof_) return false;
    report(TraceErrorKind::truncated, offset,
           "truncated at offset " + std::to_string(offset) + " (" + std::to_string(avail) +
               " bytes of an incomplete chunk): the file holds everything up to that point, where the "
               "recording stopped (a failed write, a full disk, a crash); every chunk before it was read");
    stop();
    return true;
  }
  const std::span<const std::uint8_t> payload(p + kChunkHeaderBytes, h.payload_length);
  const std::uint32_t computed = crc32c(payload);
  if (computed != h.payload_crc) {
    start_resync(offset, offset + total,
                 "corrupt chunk at offset " + std::to_string(offset) + ": payload checksum mismatch (stored " +
                     hex32(h.payload_crc) + ", computed " + hex32(computed) + ")");
    return true;
  }
  if (auto error = decode_payload(payload, h, known_types_, offset + kChunkHeaderBytes, &chunk_, chunk_version_)) {
    start_resync(offset, offset + total, "corrupt chunk at offset " + std::to_string(offset) + ": " + *error);
    return true;
  }
  chunk_.info = ChunkInfo{offset, h.payload_length, h.event_count, h.min_tick, h.max_tick};
  unknown_type_events_ += chunk_.unknown_type_events;
  for (const auto& [id, name] : chunk_.labels) labels_.define(id, name);
  head_ += total;
  chunk_ready_ = true;
  return true;
}

bool TraceDecoder::intact_chunk_after(std::uint64_t from) const {
  const std::uint8_t* const end = buffer_.data() + buffer_.size();
  for (const std::uint8_t* p = at(from); end - p >= static_cast<std::ptrdiff_t>(kChunkHeaderBytes); ++p) {
    ChunkHeader h;
    if (*p == kChunkMagicBytes[0] && parse_chunk_header(p, &h) == ChunkHeaderStatus::ok) return true;
  }
  return false;
}

void TraceDecoder::start_resync(std::uint64_t damaged_at, std::uint64_t scan_from, std::string what) {
  damaged_at_ = damaged_at;
  scan_from_ = scan_from;
  damage_ = std::move(what);
  head_ = static_cast<std::size_t>(scan_from - base_);
  state_ = State::resync;
}

// resync scans for the next chunk magic whose header is intact. Returns false when more
// input is needed; the damage is reported once, when it is known where reading resumes.
bool TraceDecoder::resync() {
  const TraceErrorKind kind = damaged_at_ == 0 ? TraceErrorKind::corrupt_header : TraceErrorKind::corrupt_chunk;
  const std::uint8_t* const end = buffer_.data() + buffer_.size();
  const std::uint8_t* p = at(scan_from_);
  while (end - p >= 4) {
    p = static_cast<const std::uint8_t*>(std::memchr(p, kChunkMagicBytes[0], static_cast<std::size_t>(end - p - 3)));
    if (p == nullptr) break;
    if (std::memcmp(p, kChunkMagicBytes.data(), 4) != 0) {
      ++p;
      continue;
    }
    const std::uint64_t candidate = base_ + static_cast<std::uint64_t>(p - buffer_.data());
    if (end - p < static_cast<std::ptrdiff_t>(kChunkHeaderBytes) && !eof_) {
      scan_from_ = candidate;
      head_ = static_cast<std::size_t>(candidate - base_);
      return false;  // cannot tell yet whether this is a chunk
    }
    ChunkHeader h;
    // At the end of input an incomplete header after a magic is taken as the start of a
    // truncated chunk, which the chunk state then reports as such.
    if (end - p < static_cast<std::ptrdiff_t>(kChunkHeaderBytes) ||
        parse_chunk_header(p, &h) == ChunkHeaderStatus::ok) {
      report(kind, damaged_at_,
             damage_ + "; skipped " + std::to_string(candidate - damaged_at_) +
                 " bytes, resumed at the next chunk at offset " + std::to_string(candidate));
      head_ = static_cast<std::size_t>(candidate - base_);
      state_ = State::chunk;
      return true;
    }
    ++p;
  }
  // No magic in what we have: keep the last 3 bytes, a magic may straddle the next feed.
  const std::uint64_t received_end = base_ + buffer_.size();
  scan_from_ = std::max(scan_from_, received_end >= 3 ? received_end - 3 : 0);
  head_ = static_cast<std::size_t>(scan_from_ - base_);
  if (!eof_) return false;
  report(kind, damaged_at_,
         damage_ + "; no intact chunk follows: the " + std::to_string(received_end - damaged_at_) +
             " bytes to the end (offset " + std::to_string(received_end) + ") were skipped");
  head_ = buffer_.size();
  stop();
  return true;
}

}  // namespace lantern::trace
