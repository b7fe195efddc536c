// SPDX-License-Identifier: Apache-2.0
// vocabulary_test.cpp - the one event table (lantern/vocabulary.hpp) checks itself: ids
// dense from 0 and within the format's 4-bit tag, names unique and non-empty, and every
// payload codec round-trips every valid value (and keeps damage visible).
#include "lantern/vocabulary.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace lantern {
namespace {

template <std::size_t N>
void expect_unique_names(const std::string_view (&names)[N], const char* table) {
  std::set<std::string_view> seen;
  for (std::string_view n : names) {
    EXPECT_FALSE(n.empty()) << table;
    EXPECT_TRUE(seen.insert(n).second) << table << ": '" << n << "' twice";
  }
}

TEST(Vocabulary, EventIdsAreDenseAndNamesUnique) {
  std::set<std::string_view> names;
  for (int i = 0; i < kEventCount; ++i) {
    EXPECT_EQ(static_cast<int>(kEventInfo[i].type), i) << "event ids must be dense from 0, in table order";
    EXPECT_FALSE(kEventInfo[i].name.empty());
    EXPECT_TRUE(names.insert(kEventInfo[i].name).second) << kEventInfo[i].name;
    EXPECT_FALSE(kEventInfo[i].description.empty());
    EXPECT_LE(static_cast<int>(kEventInfo[i].level), static_cast<int>(RecordLevel::full));
  }
  EXPECT_LE(kEventCount, 30) << "an observer's interest word has a bit per event, and two of its own";
  EXPECT_FALSE(valid_event(kEventCount));
  // Ids other engineers build on.
  EXPECT_EQ(static_cast<int>(EventId::dropped), 14);
  EXPECT_EQ(static_cast<int>(EventId::deadlock), 15);
  EXPECT_EQ(static_cast<int>(EventId::spawn), 16);
  EXPECT_EQ(static_cast<int>(EventId::wait_end), 18);
  EXPECT_EQ(event_info(EventId::deadlock).level, RecordLevel::states);
  EXPECT_EQ(event_info(EventId::dropped).level, RecordLevel::off);
}

TEST(Vocabulary, EveryTableHasUniqueNames) {
  expect_unique_names(kWorkerStateNames, "states");
  expect_unique_names(kStateReasonNames, "reasons");
  expect_unique_names(kTaskSourceNames, "sources");
  expect_unique_names(kStealDistanceNames, "distances");
  expect_unique_names(kIoKindNames, "io kinds");
  expect_unique_names(kWakeCauseNames, "wake causes");
  expect_unique_names(kDropReasonNames, "drop reasons");
  expect_unique_names(kRecordLevelNames, "levels");
  expect_unique_names(kSpawnKindNames, "spawn kinds");
  expect_unique_names(kWaitKindNames, "wait kinds");
  EXPECT_EQ(kWorkerStateCount, 4);
  EXPECT_EQ(name_of(WorkerState::sleeping), "sleeping");
  EXPECT_EQ(name_of(DropReason::ring_full), "ring_full");
  EXPECT_EQ(static_cast<int>(DropReason::ring_full), 0) << "older traces' markers carry b = 0";
  EXPECT_FALSE(valid(static_cast<WorkerState>(4)));
  EXPECT_TRUE(valid(IoKind::timeout));
}

template <class P>
void expect_round_trip(const P& p) {
  const PayloadWords w = p.encode();
  EXPECT_EQ(P::decode(w.a, w.b), p) << name_of(P::kEvent);
  EXPECT_EQ(decode_payload<P>(w.a, w.b).encode(), w) << name_of(P::kEvent);
}

TEST(Vocabulary, CodecsRoundTrip) {
  for (int f = 0; f < kWorkerStateCount; ++f)
    for (int t = 0; t < kWorkerStateCount; ++t)
      for (int r = 0; r < kStateReasonCount; ++r)
        expect_round_trip(
            StatePayload{static_cast<WorkerState>(f), static_cast<WorkerState>(t), static_cast<StateReason>(r)});
  for (int s = 0; s < kTaskSourceCount; ++s)
    expect_round_trip(TaskBeginPayload{0xdead'beef'0000ull, static_cast<TaskSource>(s)});
  expect_round_trip(TaskEndPayload{42, true});
  expect_round_trip(TaskEndPayload{~0ull, false});
  expect_round_trip(TaskEndPayload{7, false, 123'456});  // a long task that waited for a CPU
  expect_round_trip(TaskEndPayload{7, true, (~0ull) >> 1});
  // A trace written before the off-CPU time: b = 1 is "threw", b = 0 nothing.
  EXPECT_EQ(TaskEndPayload::decode(5, 1), (TaskEndPayload{5, true, 0}));
  EXPECT_EQ(TaskEndPayload::decode(5, 0), (TaskEndPayload{5, false, 0}));
  expect_round_trip(PushPayload::own_deque(7, 12345));
  expect_round_trip(PushPayload::into_lane(7, 0));
  expect_round_trip(PushPayload::into_lane(7, 4094));
  for (int d = 0; d < kStealDistanceCount; ++d)
    for (TaskSource s : {TaskSource::stolen_deque, TaskSource::stolen_lane})
      expect_round_trip(StealPayload{4095, static_cast<StealDistance>(d), s});
  expect_round_trip(StealRoundFailedPayload{7, 3});
  expect_round_trip(HelpPayload{3, 1'000'000});
  for (int c = 0; c < kWakeCauseCount; ++c) {
    expect_round_trip(WakePayload{5, static_cast<WakeCause>(c), 12345});
    expect_round_trip(WakePayload{kOutsideWaker, static_cast<WakeCause>(c), 0});
  }
  expect_round_trip(LanePopPayload{2, 99});
  expect_round_trip(ReleasePayload{1, 2});
  expect_round_trip(TaskLabelPayload{9, 0xffff'fffe});
  for (int k = 0; k < kIoKindCount; ++k) {
    expect_round_trip(IoSubmitPayload{77, static_cast<IoKind>(k), 7});
    expect_round_trip(IoSubmitPayload{77, static_cast<IoKind>(k), -1});
  }
  expect_round_trip(IoCompletePayload{77, -104});
  expect_round_trip(IoCompletePayload{77, 1 << 20});
  expect_round_trip(NotReadyPayload{123});
  expect_round_trip(DroppedPayload{500, DropReason::ring_full});
  expect_round_trip(DeadlockPayload{4, 17});
  for (int k = 0; k < kSpawnKindCount; ++k) {
    expect_round_trip(SpawnPayload{0x7fff'1234'5678ull, static_cast<SpawnKind>(k), 0});
    expect_round_trip(SpawnPayload{1, static_cast<SpawnKind>(k), 0x00ff'ffff'ffff'ffffull});
  }
  for (int k = 0; k < kWaitKindCount; ++k) {
    expect_round_trip(WaitBeginPayload{0x7fff'0000'0010ull, static_cast<WaitKind>(k)});
    expect_round_trip(WaitEndPayload{~0ull, static_cast<WaitKind>(k)});
  }
  expect_round_trip(SignalSetPayload{42});
}

TEST(Vocabulary, PayloadWordsKeepTheirDocumentedLayout) {
  // The words are in files written before the codecs existed: the layout is frozen.
  EXPECT_EQ(StatePayload({WorkerState::idle, WorkerState::sleeping, StateReason::fell_asleep}).encode(),
            (PayloadWords{1u << 8 | 3u, 4}));
  EXPECT_EQ(StealPayload({3, StealDistance::llc, TaskSource::stolen_lane}).encode(), (PayloadWords{3, 2u | 3u << 8}));
  EXPECT_EQ(WakePayload({6, WakeCause::io, 0}).encode(), (PayloadWords{6 | 2ull << 32, 0}));
  EXPECT_EQ(PushPayload::own_deque(1, 5).encode(), (PayloadWords{1, 5ull << 32}));
  EXPECT_EQ(PushPayload::into_lane(1, 2).encode(), (PayloadWords{1, 3}));
  EXPECT_EQ(IoSubmitPayload({1, IoKind::accept, 7}).encode(), (PayloadWords{1, 2 | 7 << 8}));
}

TEST(Vocabulary, DamageStaysVisible) {
  // Values too wide for a field decode to something outside every table, never to a
  // valid value that wrapped around.
  EXPECT_FALSE(valid(StatePayload::decode(0x1'00'01, 0).from));
  EXPECT_FALSE(valid(StatePayload::decode(0x0007, 0).to));
  EXPECT_FALSE(valid(StatePayload::decode(0x0001, 300).reason));
  EXPECT_FALSE(valid(StealPayload::decode(1, 0x0700).source));
  EXPECT_EQ(StealPayload::decode(1ull << 40, 0).victim, 0xffff'ffffu);
  EXPECT_FALSE(valid(WakePayload::decode(1 | 0x1'0000ull << 32, 0).why));
  EXPECT_FALSE(valid(DroppedPayload::decode(1, 9).reason));
}

}  // namespace
}  // namespace lantern
