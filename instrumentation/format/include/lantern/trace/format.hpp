// SPDX-License-Identifier: Apache-2.0
// format.hpp - the constants of the Lantern trace file format (see ../../../README.md for
// the byte-by-byte specification). Everything a writer and a reader must agree on lives
// here, so the two can never drift apart.
//
// Rules that are frozen across *all* versions (a reader relies on them to refuse a newer
// file politely): the 8-byte file magic at offset 0, the u16 version at offset 8, the u32
// header length at offset 12, and a CRC-32C over the header's bytes in its last 4 bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "lantern/trace/event_table.hpp"
#include "lantern/trace/label_names.hpp"

namespace lantern::trace {

// kFormatVersion is the version this library writes; it reads kOldestReadableVersion ..
// kFormatVersion. Bump it only for changes an older reader would misread; appending header fields is not such a
// change (readers skip header bytes they do not know, see README "Versioning").
// Version 2: event ids 10-14 changed (task_label, io_submit, io_complete, not_ready;
// dropped moved from 10 to 14), chunks carry a label table after their events,
// task_label's task id is predicted and delta-coded like task_end's.
// Version 3: push's b is stored with its two 32-bit halves interleaved (b_is_interleaved
// below): an own-deque push carries depth << 32, which as a plain varint took 5-6 bytes
// of a ~10-byte event. Older files are refused with a message saying how to read them.
// Version 4: task_end's b is threw | off_cpu_ticks << 1 (the time a long task's thread
// waited for a CPU), where a version-3 reader takes any non-zero b for "threw". A
// version-3 file reads as version 4 unchanged: its b is 0 or 1.
// Version 5: the tag's type field escapes: 0-14 are event ids, 15 says a varint follows
// the tag with the id less 15 (the task graph's events are ids 16-19). Versions 3 and 4
// have no escape (15 is deadlock) and read unchanged; they simply hold no task graph.
inline constexpr std::uint16_t kFormatVersion = 5;
inline constexpr std::uint16_t kOldestReadableVersion = 3;

// supported_versions: how readers name what they read ("versions 3 to 4").
inline std::string supported_versions() {
  return kOldestReadableVersion == kFormatVersion
             ? "version " + std::to_string(kFormatVersion)
             : "versions " + std::to_string(kOldestReadableVersion) + " to " + std::to_string(kFormatVersion);
}

// kFileMagic starts every trace. The leading 0x89 (not ASCII) makes a text file or a
// 7-bit transfer fail the check at once.
inline constexpr std::array<std::uint8_t, 8> kFileMagic = {0x89, 'L', 'A', 'N', 'T', 'E', 'R', 'N'};

// The file header's fixed prefix: magic, u16 version, u16 reserved (0), u32 header length.
inline constexpr std::size_t kHeaderPrefixBytes = 16;
// Bounds on the whole header's length (prefix + fields + CRC): anything outside is damage.
inline constexpr std::uint32_t kMinHeaderBytes = kHeaderPrefixBytes + 4;
inline constexpr std::uint32_t kMaxHeaderBytes = 16u << 20;
// kUnknownLevel: the header's recording_level byte when the writer was given no level.
inline constexpr std::uint8_t kUnknownLevel = 0xFF;
// kMaxWorkers: the most workers a trace may have (core's pools have at most 1024). An
// event from worker kMaxWorkers or above is damage to every reader (the analysis
// rejects it, lantern-trace validate reports it), whatever the header says.
inline constexpr std::uint32_t kMaxWorkers = 4096;
// Longest string a header field may carry; longer strings are cut by the writer.
inline constexpr std::size_t kMaxHeaderString = 64u << 10;

// kChunkMagic starts every chunk (bytes on disk: 'L' 'C' 'K' 0xA7). It is what a reader
// scans for to resynchronise after damage; the chunk header CRC then rules out payload
// bytes that merely happen to look like a magic.
inline constexpr std::array<std::uint8_t, 4> kChunkMagicBytes = {'L', 'C', 'K', 0xA7};
inline constexpr std::uint32_t kChunkMagic = 0xA74B434Cu;  // the same bytes read as little-endian

// Chunk header layout (little-endian): magic u32, payload_length u32, event_count u32,
// payload_crc u32, min_tick u64, max_tick u64, header_crc u32 (CRC-32C of bytes 0..31).
inline constexpr std::size_t kChunkHeaderBytes = 36;
// A chunk payload larger than this is damage, not data: the writer's chunks are far
// smaller (64 KiB by default), and the bound keeps a corrupt length from making a reader
// wait for, or allocate, gigabytes.
inline constexpr std::uint32_t kMaxChunkPayload = 16u << 20;
// Every encoded event takes at least a tag byte and a tick-delta byte.
inline constexpr std::uint32_t kMinEventBytes = 2;
// After its events a payload carries its label table: a varint count, then per label a
// varint id and a string (varint length, 1..kMaxLabelNameBytes bytes). An empty table is
// the one byte 0, so the smallest payload is an event and that byte.
inline constexpr std::uint32_t kMinLabelTableBytes = 1;
// The most one label definition can take: id (5), length (2: names are at most 255 bytes).
inline constexpr std::size_t kMaxLabelDefinitionBytes = 5 + 2 + kMaxLabelNameBytes;
static_assert(kMaxLabelNameBytes < (1u << 14), "a label name's length must fit in a 2-byte varint");
// The longest encoding of one event: tag, escaped type (2), worker (5), tick delta (10),
// a (10), b (10).
inline constexpr std::size_t kMaxEventBytes = 38;

// Event tag byte: the type in the low 4 bits, four flags above it. From version 5 the
// type field's largest value is an escape: the id less kTagTypeEscape follows the tag
// as a varint (before the worker), so ids past 14 cost one more byte.
inline constexpr std::uint8_t kTagTypeMask = 0x0F;
inline constexpr std::uint8_t kTagTypeEscape = 0x0F;
inline constexpr std::uint16_t kFirstVersionWithTypeEscape = 5;
inline constexpr std::uint8_t kTagNewWorker = 0x10;      // W: a worker varint follows
inline constexpr std::uint8_t kTagZeroB = 0x20;          // Z: b is 0 and omitted
inline constexpr std::uint8_t kTagPredictedA = 0x40;     // P: a equals the prediction, omitted
inline constexpr std::uint8_t kTagTicksBackward = 0x80;  // N: the tick delta is subtracted
// The most event types a file's table may name: ids are bytes (lantern::EventId).
inline constexpr int kMaxEventTypes = 256;
// Versions 3 and 4 hold at most 16 (the 4-bit type field without its escape).
inline constexpr int kMaxTypesInTag = 16;
static_assert(kEventCount <= kMaxEventTypes, "event ids are bytes");
// has_type_escape: whether `version`'s tags escape ids past 14.
constexpr bool has_type_escape(std::uint16_t version) noexcept { return version >= kFirstVersionWithTypeEscape; }

// Per-type encoding rules of format versions 3 to 5. They are part of the format, not of the
// event table: a reader must decode a type it does not know (from a newer table) the same
// way, so only these four ids use task-id coding; every other id encodes a and b as
// plain varints.
constexpr bool a_is_task_id(std::uint32_t type_id) noexcept {
  // task_begin, task_end, push, task_label; from version 5 spawn, wait_begin, wait_end
  // (whose a is a task's or a group's address, near the worker's last task id)
  return type_id == 1 || type_id == 2 || type_id == 3 || type_id == 10 || type_id == 16 || type_id == 17 ||
         type_id == 18;
}
// b_is_label_id: task_label's b names a label, which the chunk's label table defines.
constexpr bool b_is_label_id(std::uint32_t type_id) noexcept { return type_id == 10; }
// b_is_interleaved (version 3): push's b is two 32-bit fields, the queue (low) and the
// own deque's depth (high), so one of them is 0 and the other small. It is stored as
// interleave_halves(b) - low half on the even bits, high half on the odd bits - which is
// small whenever both halves are: depth 5 takes one byte instead of five.
constexpr bool b_is_interleaved(std::uint32_t type_id) noexcept { return type_id == 3; }

// spread_bits moves bit i of x's low 32 bits to bit 2i; gather_bits undoes it.
constexpr std::uint64_t spread_bits(std::uint64_t x) noexcept {
  x &= 0xFFFF'FFFFull;
  x = (x | (x << 16)) & 0x0000'FFFF'0000'FFFFull;
  x = (x | (x << 8)) & 0x00FF'00FF'00FF'00FFull;
  x = (x | (x << 4)) & 0x0F0F'0F0F'0F0F'0F0Full;
  x = (x | (x << 2)) & 0x3333'3333'3333'3333ull;
  x = (x | (x << 1)) & 0x5555'5555'5555'5555ull;
  return x;
}
constexpr std::uint64_t gather_bits(std::uint64_t x) noexcept {
  x &= 0x5555'5555'5555'5555ull;
  x = (x | (x >> 1)) & 0x3333'3333'3333'3333ull;
  x = (x | (x >> 2)) & 0x0F0F'0F0F'0F0F'0F0Full;
  x = (x | (x >> 4)) & 0x00FF'00FF'00FF'00FFull;
  x = (x | (x >> 8)) & 0x0000'FFFF'0000'FFFFull;
  x = (x | (x >> 16)) & 0x0000'0000'FFFF'FFFFull;
  return x;
}
// interleave_halves is a bijection on 64-bit values; deinterleave_halves is its inverse.
constexpr std::uint64_t interleave_halves(std::uint64_t v) noexcept {
  return spread_bits(v) | (spread_bits(v >> 32) << 1);
}
constexpr std::uint64_t deinterleave_halves(std::uint64_t v) noexcept {
  return gather_bits(v) | (gather_bits(v >> 1) << 32);
}
static_assert(interleave_halves(5ull << 32) == 0b100010 && deinterleave_halves(0b100010) == (5ull << 32));
static_assert(interleave_halves(~0ull) == ~0ull && interleave_halves(0) == 0 && interleave_halves(1) == 1);
// The rules above were written for this table; if it changes, revisit them (and the
// version), which is what these checks force.
static_assert(static_cast<int>(EventId::task_begin) == 1 && static_cast<int>(EventId::task_end) == 2 &&
              static_cast<int>(EventId::push) == 3 && static_cast<int>(EventId::task_label) == 10 &&
              static_cast<int>(EventId::spawn) == 16 && static_cast<int>(EventId::wait_begin) == 17 &&
              static_cast<int>(EventId::wait_end) == 18);
static_assert(info(EventId::task_begin).a_unit == Unit::id && info(EventId::task_end).a_unit == Unit::id &&
              info(EventId::push).a_unit == Unit::id && info(EventId::task_label).a_unit == Unit::id &&
              info(EventId::task_label).b_unit == Unit::id);

// Depth of the per-worker stack of open tasks that predicts task_end's id; deeper nesting
// still encodes correctly, it only loses the prediction for the outermost tasks.
inline constexpr std::size_t kTaskStackDepth = 64;

}  // namespace lantern::trace
