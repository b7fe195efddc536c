// SPDX-License-Identifier: Apache-2.0
// make_seeds.cpp - writes a few small, valid (and a few deliberately damaged) traces as
// the fuzzer's starting corpus: every event type, predicted payloads, several chunks,
// a table mismatch, a cut-off file, chunks with label tables. Small seeds keep the
// fuzzer's mutations meaningful.
//
//   make_seeds DIR
#include <cstdio>
#include <string>
#include <vector>

#include "lantern/trace/chunk_encoder.hpp"
#include "lantern/trace/trace_header.hpp"

using namespace lantern::trace;
using lantern::EventId;

namespace {

bool save(const std::string& dir, const std::string& name, const std::vector<std::uint8_t>& bytes) {
  const std::string path = dir + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    return false;
  }
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

// The story's label names (a task names itself with task_label; chunks carry the names).
LabelTable story_labels() {
  LabelTable t;
  t.define(1, "parse");
  t.define(2, "render");
  t.define(3, "\u30bf\u30b9\u30af");  // multi-byte UTF-8
  return t;
}

std::vector<std::uint8_t> trace(const TraceHeader& h, const std::vector<Event>& events, ChunkLimits limits,
                                const LabelNames* labels = nullptr) {
  std::vector<std::uint8_t> bytes = encode_header(h);
  const auto chunks = encode_chunks(events, limits, nullptr, labels);
  bytes.insert(bytes.end(), chunks.begin(), chunks.end());
  return bytes;
}

// A little fork-join story on two workers, touching every event type.
std::vector<Event> story() {
  std::vector<Event> e;
  std::uint64_t t = 5000;
  auto add = [&](std::uint32_t w, EventId type, std::uint64_t a, std::uint64_t b) {
    t += 137;
    e.push_back(Event{t, w, type, {0, 0, 0}, a, b});
  };
  const std::uint64_t base = 0x7f00'1234'0000ull;
  add(0, EventId::state, 1 << 8 | 0, 0);
  add(0, EventId::task_begin, base, 1);
  add(0, EventId::task_label, base, 1);  // innermost open: predicted
  add(0, EventId::push, base + 128, 0);
  add(0, EventId::task_begin, base + 256, 5);
  add(0, EventId::task_label, base + 256, 3);
  add(0, EventId::io_submit, 77, 1 | 9 << 8);
  add(0, EventId::task_end, base + 256, 0);
  add(0, EventId::task_begin, base + 128, 0);  // popped back: predicted
  add(0, EventId::task_end, base + 128, 0);    // innermost open: predicted
  add(0, EventId::push, base + 384, 2);        // to lane 1
  add(0, EventId::task_end, base, 0);
  add(1, EventId::state, 1 << 8 | 0, 6);
  add(1, EventId::steal, 0, 1 | 2 << 8);
  add(1, EventId::task_label, base + 128, 2);  // not innermost on this worker: delta-coded
  add(1, EventId::io_complete, 77, 4096);
  add(1, EventId::release, base + 512, base + 128);
  add(1, EventId::steal_round_failed, 3, 1);
  add(1, EventId::help, 1, 90'000);
  add(1, EventId::lane_pop, 1, 4'000);
  add(1, EventId::wake, 0, 0);
  add(1, EventId::dropped, 12, 0);
  add(1, EventId::state, 0 << 8 | 1, 2);
  add(0, EventId::state, 0 << 8 | 2, 3);
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  TraceHeader h;
  h.producer = "seed";
  h.hostname = "fuzz";
  h.cpu_model = "cpu";
  h.topology = "2 cpus";
  h.cpus = {CpuRow{0, 0, 0, 0, 0, 0}, CpuRow{-1, 1, 1, 0, 0, 0}};
  h.workers = 2;
  h.clock = ClockCalibration{true, 0.4, 1000, 2000};
  h.wall_start_unix_ns = 1'700'000'000'000'000'000;

  const std::vector<Event> events = story();
  std::vector<Event> extreme = {{~0ull, 0xFFFF'FFFFu, EventId::task_begin, {0, 0, 0}, ~0ull, ~0ull},
                                {0, 0xFFFF'FFFFu, EventId::task_end, {0, 0, 0}, 0, 1},
                                {1ull << 40, 7, EventId::push, {0, 0, 0}, 1, 0}};
  TraceHeader newer_table = h;
  newer_table.event_names = current_event_names();
  newer_table.event_names.push_back("future_event");

  bool ok = save(dir, "header_only.trace", encode_header(h));
  ok &= save(dir, "story_one_chunk.trace", trace(h, events, ChunkLimits{}));
  ok &= save(dir, "story_small_chunks.trace", trace(h, events, ChunkLimits{64, 4}));
  const LabelTable labels = story_labels();
  ok &= save(dir, "labels_one_chunk.trace", trace(h, events, ChunkLimits{}, &labels));
  ok &= save(dir, "labels_small_chunks.trace", trace(h, events, ChunkLimits{64, 3}, &labels));
  ok &= save(dir, "extremes.trace", trace(h, extreme, ChunkLimits{}));
  ok &= save(dir, "newer_table.trace", trace(newer_table, events, ChunkLimits{64, 6}));
  auto cut = trace(h, events, ChunkLimits{64, 5});
  cut.resize(cut.size() - 7);
  ok &= save(dir, "truncated.trace", cut);
  return ok ? 0 : 1;
}
