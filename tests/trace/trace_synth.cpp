// SPDX-License-Identifier: Apache-2.0
// trace_synth.cpp - writes synthetic traces and measures the format's speed and size.
//
//   trace_synth --events 10000000 --workers 8 --out big.trace [--random] [--bench]
//
// --bench times encoding (events -> chunks in memory), writing the file, and reading it
// back with TraceReader, and prints bytes/event and events/s for each.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lantern/trace/trace_reader.hpp"
#include "lantern/trace/trace_writer.hpp"
#include "support/synthetic_trace.hpp"

using namespace lantern::trace;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int usage(const char* why) {
  if (why) std::fprintf(stderr, "trace_synth: %s\n", why);
  std::fprintf(why ? stderr : stdout,
               "usage: trace_synth [--events N] [--workers N] [--seed N] [--random] [--bench] --out FILE\n"
               "  writes a synthetic fork-join trace (or, with --random, random events of every type)\n");
  return why ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t events = 1'000'000, seed = 1;
  std::uint32_t workers = 4;
  bool random = false, bench = false;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--events" || arg == "--workers" || arg == "--seed" || arg == "--out") {
      const char* v = value();
      if (!v) return usage((arg + " needs a value").c_str());
      if (arg == "--out")
        out = v;
      else if (arg == "--events")
        events = std::strtoull(v, nullptr, 10);
      else if (arg == "--workers")
        workers = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10));
      else
        seed = std::strtoull(v, nullptr, 10);
    } else if (arg == "--random") {
      random = true;
    } else if (arg == "--bench") {
      bench = true;
    } else if (arg == "--help" || arg == "-h") {
      return usage(nullptr);
    } else {
      return usage(("unknown option " + arg).c_str());
    }
  }
  if (out.empty()) return usage("--out FILE is required");

  auto start = std::chrono::steady_clock::now();
  const std::vector<Event> data = random
                                      ? testing::random_events(events, seed)
                                      : testing::fork_join_events({.workers = workers, .events = events, .seed = seed});
  std::printf("generated %zu events (%s, %u workers) in %.2f s\n", data.size(), random ? "random" : "fork-join",
              workers, seconds_since(start));

  if (bench) {
    start = std::chrono::steady_clock::now();
    const auto bytes = encode_chunks(data);
    const double s = seconds_since(start);
    std::printf("encode (memory): %.2f bytes/event, %.1f M events/s\n",
                static_cast<double>(bytes.size()) / static_cast<double>(data.size()),
                static_cast<double>(data.size()) / s / 1e6);
  }

  start = std::chrono::steady_clock::now();
  TraceWriter writer = TraceWriter::create(out, testing::test_header(workers));
  writer.write(data);
  if (!writer.close()) {
    std::fprintf(stderr, "trace_synth: %s\n", writer.error()->message.c_str());
    return 1;
  }
  std::printf(
      "wrote %s: %llu events, %llu chunks, %llu bytes (%.2f bytes/event) in %.2f s\n", out.c_str(),
      static_cast<unsigned long long>(writer.stats().events), static_cast<unsigned long long>(writer.stats().chunks),
      static_cast<unsigned long long>(writer.stats().bytes),
      static_cast<double>(writer.stats().bytes) / static_cast<double>(writer.stats().events), seconds_since(start));

  if (bench) {
    start = std::chrono::steady_clock::now();
    TraceReader reader = TraceReader::open(out);
    std::uint64_t count = 0, checksum = 0;
    while (reader.next_chunk()) {
      count += reader.chunk().events.size();
      for (const Event& e : reader.chunk().events) checksum += e.ticks ^ e.a;
    }
    const double s = seconds_since(start);
    std::printf("read (file): %llu events in %.3f s = %.1f M events/s, %.0f MB/s (checksum %llx)\n",
                static_cast<unsigned long long>(count), s, static_cast<double>(count) / s / 1e6,
                static_cast<double>(reader.bytes_read()) / s / 1e6, static_cast<unsigned long long>(checksum));
    if (!reader.problems().empty()) {
      std::fprintf(stderr, "trace_synth: the trace read back with problems\n");
      return 1;
    }
  }
  return 0;
}
