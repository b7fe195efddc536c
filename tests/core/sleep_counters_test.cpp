// SPDX-License-Identifier: Apache-2.0
// The sleep protocol's counter word (core/sleep/README.md, "The counter word"): three
// fields in one word, and the JEC parity protocol.
#include <gtest/gtest.h>

#include "lantern/detail/sleep_counters.hpp"

using lantern::detail::CounterValue;
using lantern::detail::SleepCounters;

TEST(Counters, FieldsAreIndependent) {
  SleepCounters c;
  c.add_inactive();
  c.add_inactive();
  c.add_inactive();
  ASSERT_TRUE(c.try_add_sleeping(c.load()));
  auto v = c.load();
  EXPECT_EQ(v.inactive(), 3u);
  EXPECT_EQ(v.sleeping(), 1u);
  EXPECT_EQ(v.idle_awake(), 2u);
  EXPECT_EQ(v.jec(), 0u);
  c.sub_sleeping();
  const auto before = c.sub_inactive();
  EXPECT_EQ(before.inactive(), 3u);
  v = c.load();
  EXPECT_EQ(v.inactive(), 2u);
  EXPECT_EQ(v.sleeping(), 0u);
}

TEST(Counters, JecParityProtocol) {
  SleepCounters c;
  // Posting work when the JEC is even (a worker may be sleepy) makes it odd...
  auto v = c.bump_jec_if(CounterValue::jec_is_sleepy);
  EXPECT_EQ(v.jec(), 1u);
  // ...and posting again while odd changes nothing (the cheap common case).
  v = c.bump_jec_if(CounterValue::jec_is_sleepy);
  EXPECT_EQ(v.jec(), 1u);
  // Getting sleepy flips odd back to even and remembers the value.
  v = c.bump_jec_if([](std::uint32_t j) { return !CounterValue::jec_is_sleepy(j); });
  EXPECT_EQ(v.jec(), 2u);
  const auto seen = c.load();
  // No news: registering as a sleeper succeeds.
  EXPECT_TRUE(c.try_add_sleeping(seen));
  c.sub_sleeping();
  // News after getting sleepy: the CAS on the old word fails.
  const auto stale = c.load();
  c.bump_jec_if(CounterValue::jec_is_sleepy);
  EXPECT_FALSE(c.try_add_sleeping(stale));
}

TEST(Counters, JecWrapsWithoutTouchingThreadCounts) {
  SleepCounters c;
  c.add_inactive();
  // Drive the JEC to its maximum, then one more post wraps it to zero.
  for (std::uint64_t i = 0; i < 3; ++i) c.bump_jec_if([](std::uint32_t) { return true; });
  CounterValue v = c.load();
  EXPECT_EQ(v.jec(), 3u);
  SleepCounters big;
  big.add_inactive();
  // Fast-forward: 2^32 - 1 increments are too many to loop; use the representation.
  CounterValue near_max{(std::uint64_t{0xFFFFFFFF} << 32) | CounterValue::kOneInactive};
  EXPECT_EQ(near_max.jec(), 0xFFFFFFFFu);
  CounterValue wrapped{near_max.word + CounterValue::kOneJec};
  EXPECT_EQ(wrapped.jec(), 0u);
  EXPECT_EQ(wrapped.inactive(), 1u);
  EXPECT_EQ(wrapped.sleeping(), 0u);
}
