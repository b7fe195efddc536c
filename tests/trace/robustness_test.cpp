// SPDX-License-Identifier: Apache-2.0
// robustness_test.cpp - damaged input: truncation at every offset, bit flips anywhere,
// forged chunks, newer versions, foreign files and mismatched event tables. The reader
// must never crash, must read every intact chunk, and must say what is wrong and where.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>

#include "lantern/trace/crc32c.hpp"
#include "lantern/trace/trace_reader.hpp"
#include "lantern/trace/varint.hpp"
#include "support/synthetic_trace.hpp"

namespace lantern::trace {
namespace {

using testing::fork_join_events;
using testing::random_events;
using testing::test_header;
using testing::write_trace_bytes;

// Layout of a clean trace: the header's length and each chunk's extent and events.
struct Layout {
  std::vector<std::uint8_t> bytes;
  std::uint32_t header_length = 0;
  std::vector<ChunkInfo> chunks;
  std::vector<std::vector<Event>> chunk_events;
  std::vector<std::vector<std::pair<std::uint32_t, std::string>>> chunk_labels;
};

Layout make_layout(const std::vector<Event>& events, ChunkLimits limits, TraceHeader header = test_header(4),
                   const LabelNames* labels = nullptr) {
  Layout l;
  l.bytes = write_trace_bytes(header, events, limits, labels);
  l.header_length = load_le<std::uint32_t>(l.bytes.data() + 12);
  TraceReader reader = TraceReader::from_bytes(l.bytes);
  while (reader.next_chunk()) {
    l.chunks.push_back(reader.chunk().info);
    l.chunk_events.push_back(reader.chunk().events);
    l.chunk_labels.push_back(reader.chunk().labels);
  }
  EXPECT_TRUE(reader.problems().empty());
  return l;
}

// labels_of: the label table a reader should collect from the chunks `keep` selects.
template <class Keep>
LabelTable labels_of(const Layout& l, Keep keep) {
  LabelTable t;
  for (std::size_t i = 0; i < l.chunks.size(); ++i)
    if (keep(i))
      for (const auto& [id, name] : l.chunk_labels[i]) t.define(id, name);
  return t;
}

std::uint64_t chunk_end(const ChunkInfo& c) { return c.offset + kChunkHeaderBytes + c.payload_bytes; }

std::size_t count_errors(const TraceContents& c) {
  std::size_t n = 0;
  for (const TraceError& p : c.problems) n += !p.warning();
  return n;
}

// refresh_crcs recomputes a chunk's checksums after a test edited it on purpose.
void refresh_crcs(std::vector<std::uint8_t>& bytes, std::uint64_t offset) {
  std::uint8_t* h = bytes.data() + offset;
  const std::uint32_t len = load_le<std::uint32_t>(h + 4);
  store_le<std::uint32_t>(h + 12, crc32c({h + kChunkHeaderBytes, len}));
  store_le<std::uint32_t>(h + 32, crc32c({h, 32}));
}

void refresh_header_crc(std::vector<std::uint8_t>& bytes) {
  const std::uint32_t len = load_le<std::uint32_t>(bytes.data() + 12);
  store_le<std::uint32_t>(bytes.data() + len - 4, crc32c({bytes.data(), len - 4}));
}

TEST(Truncation, AtEveryByteOffsetEveryCompleteChunkIsRead) {
  // Tasks label themselves, so chunks carry label tables: a cut may fall inside one.
  const LabelTable names = testing::test_labels(6);
  const Layout l = make_layout(fork_join_events({.workers = 2, .events = 300, .labels = 6}), ChunkLimits{200, 25},
                               test_header(4), &names);
  ASSERT_GE(l.chunks.size(), 4u);
  ASSERT_GT(labels_of(l, [](std::size_t) { return true; }).size(), 3u);
  for (std::size_t cut = 0; cut <= l.bytes.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    const TraceContents c = read_trace_bytes(std::span(l.bytes).first(cut));
    if (cut < l.header_length) {
      EXPECT_TRUE(c.events.empty());
      ASSERT_EQ(c.problems.size(), 1u);
      EXPECT_EQ(c.problems[0].kind, cut == 0 ? TraceErrorKind::not_a_trace : TraceErrorKind::truncated);
      continue;
    }
    std::vector<Event> expected;
    std::uint64_t complete_end = l.header_length;
    for (std::size_t i = 0; i < l.chunks.size() && chunk_end(l.chunks[i]) <= cut; ++i) {
      expected.insert(expected.end(), l.chunk_events[i].begin(), l.chunk_events[i].end());
      complete_end = chunk_end(l.chunks[i]);
    }
    EXPECT_EQ(c.events, expected);
    EXPECT_EQ(c.labels, labels_of(l, [&](std::size_t i) { return chunk_end(l.chunks[i]) <= cut; }));
    EXPECT_TRUE(c.header_ok);
    if (cut == complete_end) {
      EXPECT_TRUE(c.problems.empty());  // a cut between chunks is indistinguishable from the end
    } else {
      ASSERT_EQ(c.problems.size(), 1u);
      EXPECT_EQ(c.problems[0].kind, TraceErrorKind::truncated);
      EXPECT_EQ(c.problems[0].offset, complete_end);
      const std::string want = "truncated at offset " + std::to_string(complete_end) + " (" +
                               std::to_string(cut - complete_end) + " bytes of an incomplete chunk)";
      EXPECT_NE(c.problems[0].message.find(want), std::string::npos) << c.problems[0].message;
    }
  }
}

TEST(BitFlips, OneFlipInAChunkLosesOnlyThatChunk) {
  const LabelTable names = testing::test_labels(40);
  const Layout l = make_layout(fork_join_events({.workers = 3, .events = 4000, .labels = 40}), ChunkLimits{1000, 1000},
                               test_header(4), &names);
  ASSERT_GE(l.chunks.size(), 10u);
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<std::uint8_t> bytes = l.bytes;
    const std::uint64_t pos = l.header_length + rng() % (bytes.size() - l.header_length);
    bytes[pos] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    const TraceContents c = read_trace_bytes(bytes);
    std::vector<Event> expected;
    std::uint64_t damaged = 0;
    for (std::size_t i = 0; i < l.chunks.size(); ++i) {
      if (pos >= l.chunks[i].offset && pos < chunk_end(l.chunks[i]))
        damaged = l.chunks[i].offset;
      else
        expected.insert(expected.end(), l.chunk_events[i].begin(), l.chunk_events[i].end());
    }
    ASSERT_EQ(c.events, expected) << "flip at " << pos;
    // The damaged chunk's label names go with it; every other chunk names its own.
    const LabelTable want = labels_of(l, [&](std::size_t i) { return l.chunks[i].offset != damaged; });
    ASSERT_EQ(c.labels, want) << "flip at " << pos;
    ASSERT_EQ(c.problems.size(), 1u) << "flip at " << pos;
    EXPECT_EQ(c.problems[0].kind, TraceErrorKind::corrupt_chunk);
    EXPECT_EQ(c.problems[0].offset, damaged);
    EXPECT_NE(c.problems[0].message.find("offset " + std::to_string(damaged)), std::string::npos);
  }
}

TEST(BitFlips, ManyFlipsAnywhereNeverLoseAnIntactChunk) {
  const Layout l = make_layout(random_events(3000, 5), ChunkLimits{600, 1000});
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 1000; ++trial) {
    std::vector<std::uint8_t> bytes = l.bytes;
    std::vector<std::uint64_t> flips;
    for (int k = 1 + static_cast<int>(rng() % 6); k > 0; --k) {
      flips.push_back(8 + rng() % (bytes.size() - 8));  // anywhere but the magic
      bytes[flips.back()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    }
    const TraceContents c = read_trace_bytes(bytes);
    EXPECT_GE(count_errors(c), 1u);
    std::vector<Event> expected;
    for (std::size_t i = 0; i < l.chunks.size(); ++i) {
      bool touched = false;
      for (std::uint64_t f : flips) touched |= f >= l.chunks[i].offset && f < chunk_end(l.chunks[i]);
      if (!touched) expected.insert(expected.end(), l.chunk_events[i].begin(), l.chunk_events[i].end());
    }
    // A double flip can cancel out in one chunk (then it reads): compare as a subsequence.
    std::size_t j = 0;
    for (const Event& e : c.events)
      if (j < expected.size() && e == expected[j]) ++j;
    EXPECT_EQ(j, expected.size()) << "trial " << trial;
  }
}

TEST(BitFlips, DamagedFileHeaderStillYieldsEveryChunk) {
  const Layout l = make_layout(random_events(500, 9), ChunkLimits{400, 100});
  std::vector<Event> all;
  for (const auto& e : l.chunk_events) all.insert(all.end(), e.begin(), e.end());
  for (std::uint64_t pos = kFileMagic.size(); pos < l.header_length; ++pos) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<std::uint8_t> bytes = l.bytes;
      bytes[pos] ^= static_cast<std::uint8_t>(1u << bit);
      const TraceContents c = read_trace_bytes(bytes);
      EXPECT_FALSE(c.header_ok);
      ASSERT_EQ(c.problems.size(), 1u) << "flip at " << pos << " bit " << bit;
      EXPECT_EQ(c.problems[0].kind, TraceErrorKind::corrupt_header) << c.problems[0].message;
      EXPECT_EQ(c.events, all) << "flip at " << pos << " bit " << bit;
    }
  }
}

TEST(ForgedChunks, ValidChecksumsButBadContentsAreReportedAndSkipped) {
  const Layout l = make_layout(random_events(400, 13), ChunkLimits{300, 100});
  ASSERT_GE(l.chunks.size(), 3u);
  const ChunkInfo& victim = l.chunks[1];
  auto rest_of_events = [&] {
    std::vector<Event> v = l.chunk_events[0];
    for (std::size_t i = 2; i < l.chunks.size(); ++i)
      v.insert(v.end(), l.chunk_events[i].begin(), l.chunk_events[i].end());
    return v;
  };
  // (An event type the table does not have cannot be forged in version 3: the tag's 4
  // type bits name ids 0-15, all of them in the table; see EventTable below.)
  {  // impossible lengths: more events than the payload can hold
    std::vector<std::uint8_t> bytes = l.bytes;
    store_le<std::uint32_t>(bytes.data() + victim.offset + 8, victim.payload_bytes);
    refresh_crcs(bytes, victim.offset);
    const TraceContents c = read_trace_bytes(bytes);
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_NE(c.problems[0].message.find("cannot fit"), std::string::npos) << c.problems[0].message;
    EXPECT_EQ(c.events, rest_of_events());
  }
  {  // an event count one short: the last event is read as the label table, which fails
    std::vector<std::uint8_t> bytes = l.bytes;
    store_le<std::uint32_t>(bytes.data() + victim.offset + 8, victim.event_count - 1);
    refresh_crcs(bytes, victim.offset);
    const TraceContents c = read_trace_bytes(bytes);
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_NE(c.problems[0].message.find("label"), std::string::npos) << c.problems[0].message;
    EXPECT_EQ(c.events, rest_of_events());
  }
  {  // bytes after the label table
    std::vector<std::uint8_t> bytes = l.bytes;
    const std::uint64_t end = victim.offset + kChunkHeaderBytes + victim.payload_bytes;
    bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(end), {0, 0, 0});
    store_le<std::uint32_t>(bytes.data() + victim.offset + 4, victim.payload_bytes + 3);
    refresh_crcs(bytes, victim.offset);
    const TraceContents c = read_trace_bytes(bytes);
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_NE(c.problems[0].message.find("3 bytes after its label table"), std::string::npos) << c.problems[0].message;
    EXPECT_EQ(c.events, rest_of_events());
  }
  {  // trailing garbage after the last chunk
    std::vector<std::uint8_t> bytes = l.bytes;
    bytes.insert(bytes.end(), 100, 0x5A);
    const TraceContents c = read_trace_bytes(bytes);
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_EQ(c.problems[0].kind, TraceErrorKind::corrupt_chunk);
    EXPECT_EQ(c.problems[0].offset, l.bytes.size());
    EXPECT_EQ(c.events.size(), 400u);
  }
}

TEST(ForgedChunks, BadLabelTablesAreDamage) {
  const std::vector<Event> events = {Event{100, 0, EventId::task_begin, {}, 0x1000, 1},
                                     Event{200, 0, EventId::task_label, {}, 0x1000, 7},
                                     Event{300, 0, EventId::task_end, {}, 0x1000, 0}};
  LabelTable names;
  names.define(7, "seven");
  const std::vector<std::uint8_t> clean = write_trace_bytes(test_header(1), events, {}, &names);
  const std::uint64_t chunk = load_le<std::uint32_t>(clean.data() + 12);
  {
    const TraceContents c = read_trace_bytes(clean);
    ASSERT_TRUE(c.problems.empty());
    EXPECT_EQ(c.labels, names);
    EXPECT_EQ(c.events, events);
  }
  // The payload ends with the table: count 1, id 7, length 5, "seven".
  const std::size_t table = clean.size() - 8;
  ASSERT_EQ(clean[table], 1);
  ASSERT_EQ(clean[table + 1], 7);
  ASSERT_EQ(clean[table + 2], 5);
  struct Forgery {
    std::size_t at;
    std::uint8_t value;
    const char* says;
  };
  for (const Forgery& f :
       {Forgery{table + 1, 0, "outside 1..2^32-1"}, Forgery{table + 2, 0, "name of 0 bytes"},
        Forgery{table + 2, 6, "name of 6 bytes"}, Forgery{table, 2, "cut off"}, Forgery{table, 3, "claims 3 labels"}}) {
    std::vector<std::uint8_t> bytes = clean;
    bytes[f.at] = f.value;
    refresh_crcs(bytes, chunk);
    const TraceContents c = read_trace_bytes(bytes);
    ASSERT_EQ(c.problems.size(), 1u) << f.says;
    EXPECT_EQ(c.problems[0].kind, TraceErrorKind::corrupt_chunk);
    EXPECT_NE(c.problems[0].message.find(f.says), std::string::npos) << c.problems[0].message;
    EXPECT_TRUE(c.events.empty());
    EXPECT_TRUE(c.labels.empty());
  }
  {  // two definitions, the second not above the first
    std::vector<std::uint8_t> bytes = clean;
    bytes[table] = 2;
    bytes.insert(bytes.end(), {7, 1, 'x'});
    store_le<std::uint32_t>(bytes.data() + chunk + 4, load_le<std::uint32_t>(bytes.data() + chunk + 4) + 3);
    refresh_crcs(bytes, chunk);
    const TraceContents c = read_trace_bytes(bytes);
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_NE(c.problems[0].message.find("not above the previous"), std::string::npos) << c.problems[0].message;
  }
}

TEST(Version, NewerVersionIsRefusedWithBothVersionsNamed) {
  std::vector<std::uint8_t> bytes = write_trace_bytes(test_header(1), random_events(50, 1));
  store_le<std::uint16_t>(bytes.data() + 8, 7);
  refresh_header_crc(bytes);
  const TraceContents c = read_trace_bytes(bytes);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].kind, TraceErrorKind::unsupported_version);
  EXPECT_NE(c.problems[0].message.find("needs format version 7"), std::string::npos) << c.problems[0].message;
  EXPECT_NE(c.problems[0].message.find("supports versions 3 to " + std::to_string(kFormatVersion)), std::string::npos)
      << c.problems[0].message;
  EXPECT_TRUE(c.events.empty());
}

// Versions 3 and 4 differ from 5 only in how an event id past 14 is written (5 escapes
// it; they have none but deadlock's 15, written plainly) and 3 from 4 only in what
// task_end's b may hold (0 or 1: threw; 4 adds the off-CPU time above bit 0). Events
// with ids up to 14 are written alike by all three, so such a file reads unchanged.
TEST(Version, VersionsThreeAndFourReadAsTheyWereWritten) {
  std::vector<trace::Event> events;
  for (const trace::Event& e : random_events(200, 1))
    if (static_cast<std::uint32_t>(e.type) < kTagTypeEscape) events.push_back(e);
  ASSERT_GE(events.size(), 50u);
  for (std::uint16_t version : {std::uint16_t{3}, std::uint16_t{4}}) {
    std::vector<std::uint8_t> bytes = write_trace_bytes(test_header(1), events);
    store_le<std::uint16_t>(bytes.data() + 8, version);
    refresh_header_crc(bytes);
    const TraceContents c = read_trace_bytes(bytes);
    EXPECT_TRUE(c.problems.empty()) << c.problems[0].message;
    EXPECT_EQ(c.header.version, version);
    EXPECT_EQ(c.events, events);
  }
}

TEST(Version, OlderVersionsAreRefusedSayingWhatToDo) {
  // Version 1 numbered events 10-13 differently (its drop markers would read as task
  // labels) and version 2 stored push's b plainly (every push's queue and depth would
  // be garbled), so both are refused, with what to do instead.
  for (std::uint16_t old_version : {std::uint16_t{1}, std::uint16_t{2}}) {
    std::vector<std::uint8_t> bytes = write_trace_bytes(test_header(1), random_events(50, 1));
    store_le<std::uint16_t>(bytes.data() + 8, old_version);
    refresh_header_crc(bytes);
    const TraceContents c = read_trace_bytes(bytes);
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_EQ(c.problems[0].kind, TraceErrorKind::unsupported_version);
    EXPECT_EQ(c.problems[0].offset, 8u);
    const std::string version = "format version " + std::to_string(old_version);
    const std::string supports = "supports versions 3 to " + std::to_string(kFormatVersion) + " only";
    for (const std::string& part : {version, supports, std::string("Record the trace again"),
                                    std::string("lantern-trace of the Lantern that wrote it")})
      EXPECT_NE(c.problems[0].message.find(part), std::string::npos) << part << " in: " << c.problems[0].message;
    EXPECT_TRUE(c.events.empty());
  }
  // A version field that reads 1 only because it was damaged (the header CRC says so) is
  // damage: the chunks are still read.
  std::vector<std::uint8_t> flipped = write_trace_bytes(test_header(1), random_events(50, 1));
  store_le<std::uint16_t>(flipped.data() + 8, 1);
  const TraceContents d = read_trace_bytes(flipped);
  ASSERT_GE(d.problems.size(), 1u);
  EXPECT_EQ(d.problems[0].kind, TraceErrorKind::corrupt_header) << d.problems[0].message;
  EXPECT_EQ(d.events, random_events(50, 1));
}

TEST(Version, LaterRevisionFieldsAppendedToTheHeaderAreSkipped) {
  const std::vector<Event> events = random_events(50, 2);
  std::vector<std::uint8_t> bytes = write_trace_bytes(test_header(1), events);
  const std::uint32_t len = load_le<std::uint32_t>(bytes.data() + 12);
  bytes.insert(bytes.begin() + len - 4, {1, 2, 3, 4, 5});  // unknown fields before the CRC
  store_le<std::uint32_t>(bytes.data() + 12, len + 5);
  refresh_header_crc(bytes);
  const TraceContents c = read_trace_bytes(bytes);
  EXPECT_TRUE(c.problems.empty());
  EXPECT_TRUE(c.header_ok);
  EXPECT_EQ(c.header.hostname, "testhost");
  EXPECT_EQ(c.header.level, Level::full) << "the recording level comes before the unknown fields";
  EXPECT_EQ(c.events, events);
}

// The recording level was appended within version 3 and the event cost within version
// 5: a header written before them (it ends after the event names, or after the level)
// reads as "not said", and so does a level byte outside the table or a cost that is not
// a plausible duration.
TEST(Version, HeaderWithoutTheLaterFieldsDoesNotSayThem) {
  const std::vector<Event> events = random_events(50, 3);
  TraceHeader h = test_header(1);
  h.event_cost_ns = 6.5;
  std::vector<std::uint8_t> bytes = write_trace_bytes(h, events);
  const std::uint32_t len = load_le<std::uint32_t>(bytes.data() + 12);
  const std::uint32_t level_at = len - 4 - 8 - 1;  // the level, then the f64 cost, then the CRC
  ASSERT_EQ(bytes[level_at], static_cast<std::uint8_t>(Level::full)) << "the level comes before the cost";
  EXPECT_EQ(read_trace_bytes(bytes).header.event_cost_ns, 6.5);
  for (std::uint32_t cut : {8u, 9u}) {  // without the cost; without the level and the cost
    std::vector<std::uint8_t> older = bytes;
    older.erase(older.begin() + level_at + 9 - cut, older.begin() + level_at + 9);
    store_le<std::uint32_t>(older.data() + 12, len - cut);
    refresh_header_crc(older);
    const TraceContents c = read_trace_bytes(older);
    EXPECT_TRUE(c.problems.empty());
    EXPECT_TRUE(c.header_ok);
    EXPECT_EQ(c.header.level, cut == 9 ? std::nullopt : std::optional<Level>(Level::full));
    EXPECT_EQ(c.header.event_cost_ns, std::nullopt);
    EXPECT_EQ(c.events, events);
  }
  bytes[level_at] = kUnknownLevel;
  refresh_header_crc(bytes);
  EXPECT_EQ(read_trace_bytes(bytes).header.level, std::nullopt);
  bytes[level_at] = 9;  // no such level
  refresh_header_crc(bytes);
  EXPECT_EQ(read_trace_bytes(bytes).header.level, std::nullopt);
  for (double bad : {-1.0, 1e300, std::numeric_limits<double>::infinity()}) {
    std::memcpy(bytes.data() + level_at + 1, &bad, 8);
    refresh_header_crc(bytes);
    EXPECT_EQ(read_trace_bytes(bytes).header.event_cost_ns, std::nullopt) << bad;
  }
}

TEST(NotATrace, GarbageEmptyAndOtherFormats) {
  const std::string texts[] = {std::string("\x7f"
                                           "ELF\x02\x01\x01",
                                           7) +
                                   std::string(100, '\0'),
                               "hello world\n", "", "\x89PNG\r\n\x1a\n....", std::string(1000, '\xff')};
  for (const std::string& t : texts) {
    const TraceContents c = read_trace_bytes({reinterpret_cast<const std::uint8_t*>(t.data()), t.size()});
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_EQ(c.problems[0].kind, TraceErrorKind::not_a_trace);
    EXPECT_NE(c.problems[0].message.find("not a Lantern trace"), std::string::npos);
    EXPECT_TRUE(c.events.empty());
  }
}

TEST(EventTable, MismatchIsAWarningAndEventsStillRead) {
  const std::vector<Event> events = random_events(200, 3);
  TraceHeader h = test_header(2);
  h.event_names = current_event_names();
  std::swap(h.event_names[3], h.event_names[4]);
  const TraceContents c = read_trace_bytes(write_trace_bytes(h, events));
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].kind, TraceErrorKind::table_mismatch);
  EXPECT_TRUE(c.problems[0].warning());
  EXPECT_NE(c.problems[0].message.find("id 3"), std::string::npos) << c.problems[0].message;
  EXPECT_EQ(c.events, events);
}

// Version 5's tag escapes ids past 14: every id of the table round-trips, the task
// graph's events (16-19) among them.
TEST(EventTable, EveryIdRoundTripsThroughTheEscape) {
  EXPECT_GT(kEventCount, kMaxTypesInTag);  // the reason for the escape
  std::vector<Event> events;
  for (int id = 0; id < kEventCount; ++id)
    events.push_back(Event{1000u + static_cast<std::uint64_t>(id), 0, static_cast<EventId>(id), {0, 0, 0}, 7, 9});
  TraceHeader h = test_header(1);
  h.event_names = current_event_names();
  const TraceContents c = read_trace_bytes(write_trace_bytes(h, events));
  EXPECT_TRUE(c.problems.empty()) << c.problems[0].message;
  EXPECT_EQ(c.events, events);
}

// A version-4 file writes deadlock (id 15) in the tag's type field itself, without the
// escape: such a file (made here by taking the escape's byte out of a version-5 chunk)
// still reads as deadlock.
TEST(EventTable, AVersionFourDeadlockReadsWithoutTheEscape) {
  const std::vector<Event> events = {make_event(1000, 0, DeadlockPayload{3, 9})};
  TraceHeader h = test_header(1);
  std::vector<std::uint8_t> bytes = write_trace_bytes(h, events);
  const std::uint32_t header_len = load_le<std::uint32_t>(bytes.data() + 12);
  std::uint8_t* chunk = bytes.data() + header_len;
  ASSERT_EQ(load_le<std::uint32_t>(chunk), kChunkMagic);
  std::uint8_t* payload = chunk + kChunkHeaderBytes;
  ASSERT_EQ(payload[0] & kTagTypeMask, kTagTypeEscape);
  ASSERT_EQ(payload[1], 0);  // deadlock is 15: the escape's varint is 15 - 15
  const std::uint32_t length = load_le<std::uint32_t>(chunk + 4) - 1;
  bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(header_len + kChunkHeaderBytes + 1));
  chunk = bytes.data() + header_len;
  store_le<std::uint32_t>(chunk + 4, length);
  store_le<std::uint32_t>(chunk + 12, crc32c({chunk + kChunkHeaderBytes, length}));
  store_le<std::uint32_t>(chunk + 32, crc32c({chunk, 32}));
  store_le<std::uint16_t>(bytes.data() + 8, 4);
  refresh_header_crc(bytes);
  const TraceContents c = read_trace_bytes(bytes);
  EXPECT_TRUE(c.problems.empty()) << c.problems[0].message;
  EXPECT_EQ(c.events, events);
  // Read as version 5, the same bytes are damage, not a different event.
  store_le<std::uint16_t>(bytes.data() + 8, 5);
  refresh_header_crc(bytes);
  EXPECT_NE(read_trace_bytes(bytes).events, events);
}

}  // namespace
}  // namespace lantern::trace
