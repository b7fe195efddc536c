// SPDX-License-Identifier: Apache-2.0
// format_primitives_test.cpp - varints, zigzag, CRC-32C and the event table's own consistency.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "lantern/trace/crc32c.hpp"
#include "lantern/trace/format.hpp"
#include "lantern/trace/varint.hpp"

namespace lantern::trace {
namespace {

TEST(Varint, RoundTripsEdgeValues) {
  const std::uint64_t values[] = {0, 1, 127, 128, 16383, 16384, (1ull << 32) - 1, 1ull << 63, ~0ull};
  for (std::uint64_t v : values) {
    std::uint8_t buf[kMaxVarintBytes];
    const std::size_t n = put_varint(buf, v);
    EXPECT_EQ(n, varint_size(v));
    const std::uint8_t* p = buf;
    std::uint64_t back = 0;
    ASSERT_TRUE(get_varint(p, buf + n, back)) << v;
    EXPECT_EQ(back, v);
    EXPECT_EQ(p, buf + n);
    // Every shorter prefix is incomplete, not a different value.
    for (std::size_t cut = 0; cut < n; ++cut) {
      const std::uint8_t* q = buf;
      EXPECT_FALSE(get_varint(q, buf + cut, back)) << v << " cut at " << cut;
    }
  }
  EXPECT_EQ(varint_size(~0ull), 10u);
}

TEST(Varint, RejectsOverlongEncodings) {
  // Eleven continuation bytes, and a 10th byte with more than the top bit of a u64.
  std::vector<std::uint8_t> eleven(11, 0x80);
  eleven.back() = 0x00;
  const std::uint8_t* p = eleven.data();
  std::uint64_t v;
  EXPECT_FALSE(get_varint(p, eleven.data() + eleven.size(), v));
  std::uint8_t too_big[10] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02};
  p = too_big;
  EXPECT_FALSE(get_varint(p, too_big + 10, v));
}

TEST(Zigzag, SmallMagnitudesStaySmall) {
  EXPECT_EQ(zigzag(0), 0u);
  EXPECT_EQ(zigzag(-1), 1u);
  EXPECT_EQ(zigzag(1), 2u);
  EXPECT_EQ(zigzag(-2), 3u);
  for (std::int64_t v : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{12345}, INT64_MIN, INT64_MAX})
    EXPECT_EQ(unzigzag(zigzag(v)), v);
}

// Version 3 stores push's b with its halves interleaved: a bijection, so any b survives,
// and small for the b pushes carry (depth << 32 on the own deque, lane + 1 for a lane).
TEST(InterleaveHalves, IsABijectionThatKeepsPushPayloadsSmall) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100'000; ++i) {
    const std::uint64_t v = rng();
    EXPECT_EQ(deinterleave_halves(interleave_halves(v)), v) << v;
    EXPECT_EQ(interleave_halves(deinterleave_halves(v)), v) << v;
  }
  for (std::uint64_t v : {0ull, 1ull, 0xFFFF'FFFFull, 0xFFFF'FFFF'0000'0000ull, ~0ull, 1ull << 63})
    EXPECT_EQ(deinterleave_halves(interleave_halves(v)), v) << v;
  for (std::uint64_t depth = 1; depth < 8; ++depth) {
    EXPECT_EQ(varint_size(interleave_halves(depth << 32)), 1u) << "own deque, depth " << depth;
    EXPECT_EQ(varint_size(depth << 32), 5u);  // what version 2 stored
  }
  EXPECT_LE(varint_size(interleave_halves(1000ull << 32)), 3u);
  EXPECT_LE(varint_size(interleave_halves(64)), 2u);  // lane 63
}

TEST(Crc32c, KnownVectorAndBothPathsAgree) {
  const std::string check = "123456789";
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(check.data()), check.size());
  EXPECT_EQ(crc32c(bytes), 0xE3069283u);
  EXPECT_EQ(crc32c_software(bytes), 0xE3069283u);
  std::mt19937_64 rng(5);
  std::vector<std::uint8_t> data(1000);
  for (auto& b : data) b = static_cast<std::uint8_t>(rng());
  for (std::size_t len : {0u, 1u, 7u, 8u, 9u, 63u, 1000u}) {
    const std::span<const std::uint8_t> s(data.data(), len);
    EXPECT_EQ(crc32c(s), crc32c_software(s)) << len;
    // Continuing a CRC over two pieces equals one pass.
    EXPECT_EQ(crc32c(s.subspan(len / 2), crc32c(s.first(len / 2))), crc32c(s)) << len;
  }
}

TEST(EventTable, IdsAreDenseAndNamesUnique) {
  std::set<std::string_view> names;
  for (int i = 0; i < kEventCount; ++i) {
    EXPECT_EQ(static_cast<int>(kEventInfo[i].type), i);
    EXPECT_TRUE(names.insert(kEventInfo[i].name).second) << kEventInfo[i].name;
    EXPECT_FALSE(kEventInfo[i].description.empty());
  }
  EXPECT_LE(kEventCount, kMaxEventTypes);
  EXPECT_TRUE(valid_type(kEventCount - 1));
  EXPECT_FALSE(valid_type(kEventCount));
}

TEST(FormatConstants, MagicsAreConsistent) {
  EXPECT_EQ(load_le<std::uint32_t>(kChunkMagicBytes.data()), kChunkMagic);
  EXPECT_NE(kFileMagic[0], kChunkMagicBytes[0]);  // a file header never looks like a chunk
}

}  // namespace
}  // namespace lantern::trace
