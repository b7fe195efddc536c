// SPDX-License-Identifier: Apache-2.0
// encoding_size_test.cpp - the compactness target: <= 8 bytes per event on fork-join
// traces, where most payloads are task ids that look like heap addresses.
#include <gtest/gtest.h>

#include "lantern/trace/chunk_encoder.hpp"
#include "support/synthetic_trace.hpp"

namespace lantern::trace {
namespace {

double bytes_per_event(const std::vector<Event>& events, const LabelNames* labels = nullptr) {
  const auto bytes = encode_chunks(events, {}, nullptr, labels);
  return static_cast<double>(bytes.size()) / static_cast<double>(events.size());
}

TEST(EncodingSize, ForkJoinTraceFitsInEightBytesPerEvent) {
  for (std::uint32_t workers : {1u, 4u, 16u}) {
    const auto events = testing::fork_join_events({.workers = workers, .events = 400'000, .seed = workers});
    const double per_event = bytes_per_event(events);
    RecordProperty("bytes_per_event_" + std::to_string(workers) + "_workers", std::to_string(per_event));
    std::printf("fork-join, %2u workers: %.2f bytes/event (in memory: %zu)\n", workers, per_event, sizeof(Event));
    EXPECT_LE(per_event, 8.0) << workers << " workers";
  }
}

TEST(EncodingSize, SmallBatchesCostLittleMore) {
  // A collector that drains 16 events at a time switches workers often.
  const auto events = testing::fork_join_events({.workers = 8, .events = 200'000, .seed = 2, .batch = 16});
  const double per_event = bytes_per_event(events);
  std::printf("fork-join, batches of 16: %.2f bytes/event\n", per_event);
  EXPECT_LE(per_event, 8.0);
}

TEST(EncodingSize, LabelledTasksCostAFewBytesEach) {
  // Half the tasks name themselves (one task_label event each, its task id predicted);
  // every 64 KiB chunk carries the names of the 24 labels it uses.
  const LabelTable names = testing::test_labels(24);
  const auto labelled = testing::fork_join_events({.workers = 4, .events = 200'000, .seed = 3, .labels = 24});
  std::vector<Event> plain;  // the same trace without its task_label events
  for (const Event& e : labelled)
    if (e.type != EventId::task_label) plain.push_back(e);
  const std::uint64_t label_events = labelled.size() - plain.size();
  ASSERT_GT(label_events, 10'000u);
  const double with = bytes_per_event(labelled, &names) * static_cast<double>(labelled.size());
  const double without = bytes_per_event(plain) * static_cast<double>(plain.size());
  const double per_label = (with - without) / static_cast<double>(label_events);
  std::printf("fork-join with labels: %.2f bytes/event; each task_label %.2f bytes\n",
              with / static_cast<double>(labelled.size()), per_label);
  EXPECT_LE(with / static_cast<double>(labelled.size()), 8.0);
  EXPECT_LE(per_label, 6.0);
}

}  // namespace
}  // namespace lantern::trace
