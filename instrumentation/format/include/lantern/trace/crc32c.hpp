// SPDX-License-Identifier: Apache-2.0
// crc32c.hpp - CRC-32C (Castagnoli), the checksum of trace headers and chunks.
//
// Why CRC-32C rather than the zlib CRC-32: it detects every burst error up to 32 bits
// and all 1-3 bit errors in blocks far larger than a chunk, like the zlib one, and x86-64
// computes it in hardware (SSE4.2), so checking a file costs far less than decoding it.
// The software fallback (slicing-by-8) gives the same values everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace lantern::trace {

// crc32c of bytes, continuing from a previous result `crc` (0 to start).
// crc32c("123456789") == 0xE3069283.
std::uint32_t crc32c(std::span<const std::uint8_t> bytes, std::uint32_t crc = 0) noexcept;

// crc32c_software is the portable implementation; exposed so a test can compare the
// hardware path against it.
std::uint32_t crc32c_software(std::span<const std::uint8_t> bytes, std::uint32_t crc = 0) noexcept;

}  // namespace lantern::trace
