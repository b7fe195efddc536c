// SPDX-License-Identifier: Apache-2.0
// trace_builder.hpp - test helpers: hand-written events, and loading trace bytes through
// a Session exactly as the viewer does (in pieces of any size).
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include <lantern/trace/crc32c.hpp>
#include <lantern/trace/trace_writer.hpp>
#include <lantern/viewer/session.hpp>

namespace lantern::viewer::test {

// TraceBuilder collects events for `workers` workers with 1 tick = 1 ns.
class TraceBuilder {
 public:
  explicit TraceBuilder(std::uint32_t workers) : workers_(workers) {}
  void event(std::uint32_t w, std::uint64_t t, EventId type, std::uint64_t a, std::uint64_t b) {
    events_.push_back(trace::Event{t, w, type, {0, 0, 0}, a, b});
  }
  void state(std::uint32_t w, std::uint64_t t, int from, int to, std::uint64_t reason = 0) {
    event(w, t, EventId::state, static_cast<std::uint64_t>(from) << 8 | static_cast<std::uint64_t>(to), reason);
  }
  void task_begin(std::uint32_t w, std::uint64_t t, std::uint64_t id, std::uint64_t source) {
    event(w, t, EventId::task_begin, id, source);
  }
  void task_end(std::uint32_t w, std::uint64_t t, std::uint64_t id) { event(w, t, EventId::task_end, id, 0); }

  trace::TraceHeader header() const {
    trace::TraceHeader h;
    h.producer = "viewer tests";
    h.workers = workers_;
    h.clock = trace::ClockCalibration{false, 1.0, 0, 0};
    for (std::uint32_t i = 0; i < workers_; ++i) {
      const auto half = static_cast<std::int32_t>(i < (workers_ + 1) / 2 ? 0 : 1);
      h.cpus.push_back(trace::CpuRow{-1, static_cast<std::int32_t>(i), static_cast<std::int32_t>(i), half, half, half});
    }
    return h;
  }
  void apply_to(Model& m) const {
    m.apply_header(header(), true);
    m.apply(events_);
  }
  // bytes: a trace file holding these events (its chunks naming labels from `labels`).
  std::vector<std::uint8_t> bytes(const trace::LabelNames* labels = nullptr) const {
    std::vector<std::uint8_t> out;
    auto writer = trace::TraceWriter::to_sink(
        [&](std::span<const std::uint8_t> b, std::string&) {
          out.insert(out.end(), b.begin(), b.end());
          return true;
        },
        "<test>", header(), trace::WriterOptions{.labels = labels});
    writer.write(events_);
    writer.close();
    return out;
  }
  const std::vector<trace::Event>& events() const { return events_; }

 private:
  std::uint32_t workers_;
  std::vector<trace::Event> events_;
};

// MemorySource hands out `step` bytes per read, then ends.
class MemorySource final : public ByteSource {
 public:
  MemorySource(std::vector<std::uint8_t> bytes, std::size_t step) : bytes_(std::move(bytes)), step_(step) {}
  Status read(std::span<std::uint8_t> buffer, std::size_t* n, std::string*) override {
    if (at_ >= bytes_.size()) return Status::end;
    *n = std::min({step_, buffer.size(), bytes_.size() - at_});
    std::memcpy(buffer.data(), bytes_.data() + at_, *n);
    at_ += *n;
    return Status::data;
  }
  std::uint64_t total() const noexcept override { return bytes_.size(); }
  std::string describe() const override { return "<memory>"; }

 private:
  std::vector<std::uint8_t> bytes_;
  std::size_t step_;
  std::size_t at_ = 0;
};

// as_newer_version: the trace as a future writer would mark it: format version 99 with
// a header CRC that matches (the reader tells that from a damaged version field).
inline std::vector<std::uint8_t> as_newer_version(std::vector<std::uint8_t> bytes) {
  bytes[8] = 99;
  bytes[9] = 0;
  std::uint32_t length = 0;
  std::memcpy(&length, bytes.data() + 12, 4);
  const std::uint32_t crc = trace::crc32c({bytes.data(), length - 4});
  std::memcpy(bytes.data() + length - 4, &crc, 4);
  return bytes;
}

// load: a finished Session over `bytes`, fed `step` bytes at a time.
inline std::unique_ptr<Session> load(std::vector<std::uint8_t> bytes, std::size_t step) {
  auto s = Session::from_source(std::make_unique<MemorySource>(std::move(bytes), step), SourceStatus::Kind::file,
                                "<memory>");
  s->wait_until_finished();
  return s;
}

}  // namespace lantern::viewer::test
