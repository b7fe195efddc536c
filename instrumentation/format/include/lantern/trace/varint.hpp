// SPDX-License-Identifier: Apache-2.0
// varint.hpp - LEB128 varints, zigzag, and little-endian fixed-width helpers.
//
// The chunk payload is a stream of varints; these are the only routines that touch its
// bytes, so they are written to be both fast (the reader's inner loop) and strict: a
// varint longer than 10 bytes or with bits above 64 is damage, never silently wrapped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lantern::trace {

inline constexpr std::size_t kMaxVarintBytes = 10;

// put_varint writes v as unsigned LEB128 (7 bits per byte, low first, high bit = more)
// at out, which must have room for kMaxVarintBytes; returns the bytes written.
inline std::size_t put_varint(std::uint8_t* out, std::uint64_t v) noexcept {
  std::size_t n = 0;
  while (v >= 0x80) {
    out[n++] = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  out[n++] = static_cast<std::uint8_t>(v);
  return n;
}

// varint_size is the number of bytes put_varint would write.
constexpr std::size_t varint_size(std::uint64_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// get_varint reads one varint from [p, end) into v and advances p. Returns false (p
// unspecified) when the input ends first or the encoding is overlong (> 10 bytes, or a
// 10th byte carrying more than the top bit of a u64).
inline bool get_varint(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t& v) noexcept {
  if (p < end && *p < 0x80) {  // the common case: one byte
    v = *p++;
    return true;
  }
  std::uint64_t result = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (p >= end) return false;
    const std::uint8_t byte = *p++;
    if (shift == 63 && byte > 1) return false;
    result |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
    if (byte < 0x80) {
      v = result;
      return true;
    }
  }
  return false;
}

// zigzag maps signed to unsigned so small magnitudes of either sign stay short:
// 0 -> 0, -1 -> 1, 1 -> 2, -2 -> 3, ...
constexpr std::uint64_t zigzag(std::int64_t v) noexcept {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
constexpr std::int64_t unzigzag(std::uint64_t v) noexcept {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// Little-endian fixed-width stores and loads (memcpy keeps them alignment-safe; the
// byte swap compiles away on little-endian hosts).
template <typename T>
inline void store_le(std::uint8_t* out, T v) noexcept {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * i));
}
template <typename T>
inline T load_le(const std::uint8_t* in) noexcept {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<std::uint64_t>(in[i]) << (8 * i);
  return static_cast<T>(v);
}

}  // namespace lantern::trace
