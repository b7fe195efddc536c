// SPDX-License-Identifier: Apache-2.0
// crc32c.cpp - CRC-32C, table-driven (slicing-by-8) with an SSE4.2 fast path.
#include "lantern/trace/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#define LANTERN_TRACE_CRC_HW 1
#else
#define LANTERN_TRACE_CRC_HW 0
#endif

namespace lantern::trace {
namespace {

constexpr std::uint32_t kPolynomial = 0x82F63B78u;  // Castagnoli, bit-reversed

// Table t[k][b]: the CRC of byte b followed by k zero bytes, so eight input bytes can be
// folded with eight lookups instead of eight sequential byte steps.
using Tables = std::array<std::array<std::uint32_t, 256>, 8>;
constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1u) ? kPolynomial : 0u);
    t[0][b] = c;
  }
  for (std::uint32_t b = 0; b < 256; ++b)
    for (std::size_t k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  return t;
}
constexpr Tables kTables = make_tables();

#if LANTERN_TRACE_CRC_HW
__attribute__((target("sse4.2"))) std::uint32_t crc32c_hardware(const std::uint8_t* p, std::size_t n,
                                                                std::uint32_t crc) noexcept {
  std::uint64_t c = ~crc;
  while (n >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<std::uint32_t>(c);
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
}

bool hardware_available() noexcept {
  static const bool available = __builtin_cpu_supports("sse4.2");
  return available;
}
#endif

}  // namespace

std::uint32_t crc32c_software(std::span<const std::uint8_t> bytes, std::uint32_t crc) noexcept {
  const std::uint8_t* p = bytes.data();
  std::size_t n = bytes.size();
  std::uint32_t c = ~crc;
  while (n >= 8) {
    const std::uint32_t lo = c ^ (static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
                                  static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24);
    c = kTables[7][lo & 0xFF] ^ kTables[6][(lo >> 8) & 0xFF] ^ kTables[5][(lo >> 16) & 0xFF] ^ kTables[4][lo >> 24] ^
        kTables[3][p[4]] ^ kTables[2][p[5]] ^ kTables[1][p[6]] ^ kTables[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xFF];
  return ~c;
}

std::uint32_t crc32c(std::span<const std::uint8_t> bytes, std::uint32_t crc) noexcept {
#if LANTERN_TRACE_CRC_HW
  if (hardware_available()) return crc32c_hardware(bytes.data(), bytes.size(), crc);
#endif
  return crc32c_software(bytes, crc);
}

}  // namespace lantern::trace
