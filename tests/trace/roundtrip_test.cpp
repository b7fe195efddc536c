// SPDX-License-Identifier: Apache-2.0
// roundtrip_test.cpp - what is written reads back identical: events, header, stats, and
// every path in (file, sink, pre-encoded chunks, byte-at-a-time streaming).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <stdexcept>

#include "../support/file_size_limit.hpp"
#include "lantern/trace/chunk_decoder.hpp"
#include "lantern/trace/trace_decoder.hpp"
#include "lantern/trace/trace_reader.hpp"
#include "lantern/trace/trace_writer.hpp"
#include "support/synthetic_trace.hpp"

namespace lantern::trace {
namespace {

using testing::fork_join_events;
using testing::random_events;
using testing::test_header;
using testing::write_trace_bytes;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("lantern_trace_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

void expect_clean(const TraceContents& c) {
  for (const TraceError& p : c.problems) ADD_FAILURE() << describe(p);
  EXPECT_TRUE(c.header_ok);
}

TEST(RoundTrip, RandomEventsOfEveryTypeThroughAFile) {
  const std::vector<Event> events = random_events(200'000, 42);
  const std::string path = temp_path("random.trace");
  TraceWriter writer = TraceWriter::create(path, test_header(8));
  ASSERT_TRUE(writer.ok()) << writer.error()->message;
  // Odd batch sizes, so chunk boundaries fall anywhere relative to the batches.
  for (std::size_t i = 0; i < events.size(); i += 977)
    ASSERT_TRUE(writer.write(std::span(events).subspan(i, std::min<std::size_t>(977, events.size() - i))));
  ASSERT_TRUE(writer.close());
  EXPECT_EQ(writer.stats().events, events.size());
  EXPECT_EQ(writer.stats().bytes, std::filesystem::file_size(path));

  const TraceContents back = read_trace(path);
  expect_clean(back);
  EXPECT_EQ(back.header, [] {
    TraceHeader h = test_header(8);
    h.event_names = current_event_names();
    return h;
  }());
  ASSERT_EQ(back.events.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i) ASSERT_EQ(back.events[i], events[i]) << "event " << i;
  EXPECT_EQ(back.chunks.size(), writer.stats().chunks);
  std::filesystem::remove(path);
}

TEST(RoundTrip, LabelNamesReadBackIdenticalAndEveryChunkNamesItsOwn) {
  const LabelTable names = testing::test_labels(30);
  const std::vector<Event> events = fork_join_events({.workers = 4, .events = 20'000, .labels = 30});
  const std::vector<std::uint8_t> bytes = write_trace_bytes(test_header(4), events, ChunkLimits{2000, 400}, &names);

  const TraceContents back = read_trace_bytes(bytes);
  expect_clean(back);
  EXPECT_EQ(back.events, events);
  EXPECT_EQ(back.labels, names);  // 20,000 events use every one of the 30 labels
  for (const auto& [id, name] : names.all()) EXPECT_EQ(back.labels.name(id), name);

  // Chunk by chunk: each defines exactly the labels its own task_label events use, so a
  // chunk read alone (after damage, from a flight recorder, by a late viewer) names them.
  TraceReader reader = TraceReader::from_bytes(bytes);
  std::size_t chunks = 0;
  while (reader.next_chunk()) {
    ++chunks;
    std::set<std::uint32_t> used, defined;
    for (const Event& e : reader.chunk().events)
      if (e.type == EventId::task_label) used.insert(static_cast<std::uint32_t>(e.b));
    for (const auto& [id, name] : reader.chunk().labels) {
      defined.insert(id);
      EXPECT_EQ(names.name(id), name);
    }
    EXPECT_EQ(defined, used) << "chunk " << chunks;
  }
  EXPECT_GT(chunks, 20u);

  // Byte at a time through the incremental decoder: the same names.
  TraceDecoder decoder;
  for (std::uint8_t b : bytes) {
    decoder.feed({&b, 1});
    while (decoder.next() != TraceDecoder::Step::need_input) {
    }
  }
  EXPECT_EQ(decoder.labels(), names);
}

TEST(RoundTrip, LabelNamesAreCutAtACharacterAndUnknownOnesStayNumbers) {
  LabelTable names;
  std::string long_name;
  while (long_name.size() < 300) long_name += "\u00e9t\u00e9";  // 2-byte characters, so 255 falls inside one
  names.define(1, long_name);
  names.define(2, "short");
  const std::vector<Event> events = {
      Event{10, 0, EventId::task_begin, {}, 0x500, 0}, Event{11, 0, EventId::task_label, {}, 0x500, 1},
      Event{12, 0, EventId::task_label, {}, 0x500, 2}, Event{13, 0, EventId::task_label, {}, 0x500, 3},  // never named
      Event{14, 0, EventId::task_label, {}, 0x500, 0},                                                   // no label
      Event{15, 0, EventId::task_end, {}, 0x500, 0}};
  const TraceContents back = read_trace_bytes(write_trace_bytes(test_header(1), events, {}, &names));
  expect_clean(back);
  EXPECT_EQ(back.events, events);
  ASSERT_EQ(back.labels.size(), 2u);
  const std::string_view cut = *back.labels.name(1);
  EXPECT_LE(cut.size(), kMaxLabelNameBytes);
  EXPECT_GE(cut.size(), kMaxLabelNameBytes - 3);
  EXPECT_EQ(cut, std::string_view(long_name).substr(0, cut.size()));
  EXPECT_NE(static_cast<unsigned char>(long_name[cut.size()]) & 0xC0, 0x80) << "cut inside a character";
  EXPECT_EQ(back.labels.display_name(2), "short");
  EXPECT_EQ(back.labels.display_name(3), "label 3");
  // Without a LabelNames the events are the same and no names are written.
  const TraceContents bare = read_trace_bytes(write_trace_bytes(test_header(1), events));
  EXPECT_EQ(bare.events, events);
  EXPECT_TRUE(bare.labels.empty());
}

TEST(RoundTrip, TinyAndHugeChunkLimits) {
  const std::vector<Event> events = random_events(20'000, 7);
  for (ChunkLimits limits : {ChunkLimits{1, 1}, ChunkLimits{100, 3}, ChunkLimits{1u << 30, ~0u}}) {
    const auto bytes = write_trace_bytes(test_header(4), events, limits);
    const TraceContents back = read_trace_bytes(bytes);
    expect_clean(back);
    EXPECT_EQ(back.events, events) << limits.target_payload_bytes;
  }
}

TEST(RoundTrip, ExtremeTicksAndPayloads) {
  constexpr std::uint64_t kMax = ~0ull;
  const std::vector<Event> events = {
      {0, 0, EventId::state, {}, 0, 0},
      {kMax, 0, EventId::task_begin, {}, kMax, kMax},
      {kMax, 0xFFFFFFFFu, EventId::task_end, {}, kMax, 1},
      {1, 0xFFFFFFFFu, EventId::push, {}, 0, kMax},  // a backward step of 2^64-2
      {kMax / 2, 5, EventId::lane_pop, {}, kMax, kMax},
      {0, 5, EventId::dropped, {}, kMax, 0},
  };
  const TraceContents back = read_trace_bytes(write_trace_bytes(test_header(1), events));
  expect_clean(back);
  EXPECT_EQ(back.events, events);
}

TEST(RoundTrip, ForkJoinStreamAndEmptyTrace) {
  const std::vector<Event> events = fork_join_events({.workers = 6, .events = 100'000, .seed = 3});
  EXPECT_EQ(read_trace_bytes(write_trace_bytes(test_header(6), events)).events, events);
  const TraceContents empty = read_trace_bytes(write_trace_bytes(test_header(6), {}));
  expect_clean(empty);
  EXPECT_TRUE(empty.events.empty());
  EXPECT_TRUE(empty.chunks.empty());
}

TEST(RoundTrip, ByteAtATimeStreamingEqualsWholeBuffer) {
  const std::vector<Event> events = random_events(3'000, 11);
  const auto bytes = write_trace_bytes(test_header(2), events, ChunkLimits{512, 100});
  TraceDecoder decoder;
  std::vector<Event> got;
  bool saw_header = false;
  std::size_t fed = 0;
  for (;;) {
    const auto step = decoder.next();
    if (step == TraceDecoder::Step::need_input) {
      if (fed < bytes.size()) {
        decoder.feed({&bytes[fed], 1});
        ++fed;
      } else {
        decoder.end_of_input();
      }
    } else if (step == TraceDecoder::Step::header) {
      saw_header = true;
    } else if (step == TraceDecoder::Step::chunk) {
      got.insert(got.end(), decoder.chunk().events.begin(), decoder.chunk().events.end());
    } else if (step == TraceDecoder::Step::problem) {
      ADD_FAILURE() << describe(decoder.problem());
    } else {
      break;
    }
  }
  EXPECT_TRUE(saw_header);
  EXPECT_EQ(got, events);
}

TEST(RoundTrip, PreEncodedChunksFromAFlightRecorder) {
  const std::vector<Event> events = fork_join_events({.workers = 2, .events = 5'000});
  // A flight recorder keeps chunks in memory; each must decode alone ...
  ChunkEncoder encoder(ChunkLimits{1024, 1000});
  std::vector<std::vector<std::uint8_t>> kept;
  for (const Event& e : events) {
    ASSERT_EQ(encoder.add(e), ChunkEncoder::AddResult::added);
    if (encoder.full()) encoder.finish_chunk(kept.emplace_back());
  }
  encoder.finish_chunk(kept.emplace_back());
  std::vector<Event> decoded;
  for (const auto& chunk : kept) {
    DecodedChunk d;
    ASSERT_FALSE(decode_chunk(chunk, &d).has_value());
    decoded.insert(decoded.end(), d.events.begin(), d.events.end());
  }
  EXPECT_EQ(decoded, events);
  // ... and written later, behind a header, they make a normal trace.
  std::vector<std::uint8_t> file;
  TraceWriter writer = TraceWriter::to_sink(
      [&file](std::span<const std::uint8_t> b, std::string&) {
        file.insert(file.end(), b.begin(), b.end());
        return true;
      },
      "memory", test_header(2));
  for (const auto& chunk : kept) ASSERT_TRUE(writer.write_chunks(chunk));
  ASSERT_TRUE(writer.close());
  EXPECT_EQ(writer.stats().chunks, kept.size());
  EXPECT_EQ(read_trace_bytes(file).events, events);
  // Bytes that are not chunks are refused, and nothing is written.
  TraceWriter bad = TraceWriter::to_sink([](auto, std::string&) { return true; }, "memory", test_header(2));
  const std::uint64_t before = bad.stats().bytes;
  std::vector<std::uint8_t> junk(100, 0x42);
  EXPECT_FALSE(bad.write_chunks(junk));
  ASSERT_NE(bad.error(), nullptr);
  EXPECT_EQ(bad.error()->kind, TraceErrorKind::invalid_argument);
  EXPECT_EQ(bad.stats().bytes, before);
  // A chunk whose payload was damaged in memory is refused too.
  TraceWriter careful = TraceWriter::to_sink([](auto, std::string&) { return true; }, "memory", test_header(2));
  std::vector<std::uint8_t> damaged = kept.front();
  damaged.back() ^= 1;
  EXPECT_FALSE(careful.write_chunks(damaged));
}

TEST(Writer, ASinkThatThrowsBecomesAnError) {
  TraceWriter w = TraceWriter::to_sink(
      [](std::span<const std::uint8_t>, std::string&) -> bool { throw std::runtime_error("peer went away"); }, "socket",
      test_header(1));
  EXPECT_FALSE(w.ok());
  ASSERT_NE(w.error(), nullptr);
  EXPECT_NE(w.error()->message.find("peer went away"), std::string::npos) << w.error()->message;
}

TEST(Writer, InvalidTypesAreCountedNotWritten) {
  std::vector<Event> events = random_events(100, 1);
  events[10].type = static_cast<EventId>(kEventCount);
  events[20].type = static_cast<EventId>(200);
  std::vector<std::uint8_t> bytes;
  TraceWriter writer = TraceWriter::to_sink(
      [&bytes](std::span<const std::uint8_t> b, std::string&) {
        bytes.insert(bytes.end(), b.begin(), b.end());
        return true;
      },
      "memory", test_header(1));
  EXPECT_TRUE(writer.write(events));
  EXPECT_TRUE(writer.close());
  EXPECT_EQ(writer.stats().rejected_events, 2u);
  EXPECT_EQ(writer.stats().events, 98u);
  EXPECT_EQ(read_trace_bytes(bytes).events.size(), 98u);
}

TEST(Writer, ErrorsNameTheFileAndTheOsReason) {
  TraceWriter w = TraceWriter::create("/nonexistent-dir/x.trace", test_header(1));
  EXPECT_FALSE(w.ok());
  ASSERT_NE(w.error(), nullptr);
  EXPECT_EQ(w.error()->kind, TraceErrorKind::io);
  EXPECT_NE(w.error()->message.find("/nonexistent-dir/x.trace"), std::string::npos);
  EXPECT_NE(w.error()->message.find("No such file or directory"), std::string::npos);
  EXPECT_FALSE(w.write(random_events(10, 1)));
  EXPECT_FALSE(w.flush());
  EXPECT_FALSE(w.close());

  // A device is refused before anything is written: a trace goes to a regular file.
  if (std::filesystem::exists("/dev/full")) {
    TraceWriter full = TraceWriter::create("/dev/full", test_header(1));
    EXPECT_FALSE(full.ok());
    ASSERT_NE(full.error(), nullptr);
    EXPECT_NE(full.error()->message.find("'/dev/full': it is a character device"), std::string::npos)
        << full.error()->message;
  }
  // A write the kernel refuses (a file size limit of 0, SIGXFSZ ignored: EFBIG) names the
  // OS's reason, and the file, which never held a chunk, is removed.
  const std::string path = temp_path("efbig.trace");
  TraceWriter big = [&] {
    const lantern::testing::FileSizeLimit none(0);
    EXPECT_TRUE(none.ok());
    return TraceWriter::create(path, test_header(1));
  }();
  EXPECT_FALSE(big.ok());
  ASSERT_NE(big.error(), nullptr);
  EXPECT_NE(big.error()->message.find("'" + path + "': File too large"), std::string::npos) << big.error()->message;
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Writer, SinkFailureIsStickyAndFlushCompletesAChunk) {
  int calls = 0;
  TraceWriter w = TraceWriter::to_sink(
      [&calls](std::span<const std::uint8_t>, std::string& error) {
        if (++calls <= 2) return true;
        error = "socket 127.0.0.1:9000: connection reset";
        return false;
      },
      "socket", test_header(1));
  ASSERT_TRUE(w.write(random_events(10, 3)));
  EXPECT_EQ(w.stats().chunks, 0u);  // still in the open chunk
  ASSERT_TRUE(w.flush());
  EXPECT_EQ(w.stats().chunks, 1u);
  EXPECT_EQ(w.stats().events, 10u);
  ASSERT_TRUE(w.write(random_events(10, 4)));
  EXPECT_FALSE(w.flush());
  ASSERT_NE(w.error(), nullptr);
  EXPECT_NE(w.error()->message.find("connection reset"), std::string::npos);
  EXPECT_FALSE(w.write(random_events(1, 5)));
}

TEST(Reader, MissingFileAndDirectoryAreIoErrors) {
  TraceContents c = read_trace("/nonexistent/trace.trace");
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].kind, TraceErrorKind::io);
  EXPECT_NE(c.problems[0].message.find("/nonexistent/trace.trace"), std::string::npos);
  c = read_trace("/tmp");
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].message.find("directory"), std::string::npos);
}

}  // namespace
}  // namespace lantern::trace
