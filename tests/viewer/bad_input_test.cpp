// SPDX-License-Identifier: Apache-2.0
// bad_input_test.cpp - unreadable, corrupt, truncated, newer-version traces: the model
// says what is wrong, keeps whatever could be read, and nothing crashes.
#include <gtest/gtest.h>

#include <lantern/viewer/synthetic_trace.hpp>

#include <random>

#include "trace_builder.hpp"

namespace lantern::viewer {
namespace {

std::vector<std::uint8_t> good_trace() {
  SyntheticOptions o;
  o.workers = 3;
  o.target_events = 40000;
  return synthetic_trace_bytes(o);
}

bool has_kind(const Model& m, trace::TraceErrorKind kind) {
  for (const auto& p : m.trace_problems()) {
    if (p.kind == kind) return true;
  }
  return false;
}

TEST(BadInput, MissingFileNamesTheFileAndTheReason) {
  auto s = Session::open_file("/nonexistent/dir/run.trace");
  s->wait_until_finished();
  const Model& m = s->model();
  ASSERT_TRUE(m.has_trace_errors());
  EXPECT_NE(m.trace_problems().front().message.find("/nonexistent/dir/run.trace"), std::string::npos);
  EXPECT_NE(m.trace_problems().front().message.find("No such file"), std::string::npos);
  EXPECT_EQ(m.status().phase, SourceStatus::Phase::failed);
  EXPECT_TRUE(m.empty());
}

TEST(BadInput, NotATrace) {
  const std::string text = "hello, this is a text file and not a trace\n";
  auto s = test::load(std::vector<std::uint8_t>(text.begin(), text.end()), 5);
  EXPECT_TRUE(has_kind(s->model(), trace::TraceErrorKind::not_a_trace));
  EXPECT_TRUE(s->model().empty());
}

TEST(BadInput, TruncatedKeepsEveryWholeChunk) {
  const auto bytes = good_trace();
  const auto whole = test::load(bytes, bytes.size());
  auto cut = bytes;
  cut.resize(bytes.size() * 2 / 3);
  const auto s = test::load(cut, 4096);
  EXPECT_TRUE(has_kind(s->model(), trace::TraceErrorKind::truncated));
  EXPECT_GT(s->model().events(), whole->model().events() / 3);
  EXPECT_LT(s->model().events(), whole->model().events());
  EXPECT_EQ(s->model().status().phase, SourceStatus::Phase::failed);
}

TEST(BadInput, CorruptChunkIsSkippedAndReadingResumes) {
  auto bytes = good_trace();
  const auto whole = test::load(bytes, bytes.size());
  for (std::size_t i = bytes.size() / 2; i < bytes.size() / 2 + 40; ++i) bytes[i] ^= 0xA5;
  const auto s = test::load(bytes, 1 << 14);
  EXPECT_TRUE(has_kind(s->model(), trace::TraceErrorKind::corrupt_chunk));
  // Only the damaged chunk is lost: most events, including ones after it, are there.
  EXPECT_GT(s->model().events(), whole->model().events() / 2);
  const Model& a = s->model();
  const Model& b = whole->model();
  EXPECT_GT(a.rel(a.last_tick()), 0.9 * b.rel(b.last_tick()));
}

TEST(BadInput, NewerVersionIsRefusedWithAMessage) {
  const auto s = test::load(test::as_newer_version(good_trace()), 1000);
  ASSERT_TRUE(has_kind(s->model(), trace::TraceErrorKind::unsupported_version));
  EXPECT_NE(s->model().trace_problems().front().message.find("version 99"), std::string::npos);
  EXPECT_TRUE(s->model().empty());
}

TEST(BadInput, FlippedVersionFieldIsDamageNotANewerFile) {
  auto bytes = good_trace();
  bytes[8] = 99;  // the CRC no longer matches: a damaged header, and the chunks still read
  const auto s = test::load(bytes, bytes.size());
  EXPECT_TRUE(has_kind(s->model(), trace::TraceErrorKind::corrupt_header));
  EXPECT_GT(s->model().events(), 10000u);
}

TEST(BadInput, DamagedHeaderStillShowsTheEvents) {
  auto bytes = good_trace();
  bytes[20] ^= 0xFF;  // inside the header's fields: its CRC no longer matches
  const auto s = test::load(bytes, bytes.size());
  EXPECT_TRUE(has_kind(s->model(), trace::TraceErrorKind::corrupt_header));
  EXPECT_GT(s->model().events(), 10000u);
  EXPECT_FALSE(s->model().header_ok());
}

TEST(BadInput, RandomGarbageNeverCrashes) {
  std::mt19937 rng(7);
  const auto good = good_trace();
  for (int round = 0; round < 20; ++round) {
    auto bytes = good;
    bytes.resize(rng() % bytes.size());
    for (int k = 0; k < 30; ++k)
      bytes[rng() % std::max<std::size_t>(bytes.size(), 1)] = static_cast<std::uint8_t>(rng());
    const auto s = test::load(bytes, 1 + rng() % 9000);
    EXPECT_TRUE(s->finished());
  }
}

TEST(BadInput, ImpossibleEventsAreCountedNotApplied) {
  test::TraceBuilder b(2);
  b.state(0, 10, 1, 0);
  b.state(0, 20, 0, 9);                          // no state 9
  b.event(5000, 30, EventId::task_begin, 1, 0);  // worker id out of range
  Model m;
  b.apply_to(m);
  EXPECT_EQ(m.rejected_events(), 2u);
  EXPECT_EQ(m.track(0).interval_count(), 1u);
}

}  // namespace
}  // namespace lantern::viewer
