// SPDX-License-Identifier: Apache-2.0
// chunk_encoder.cpp - the event encoding of a chunk payload (README "Chunk payload").
#include "lantern/trace/chunk_encoder.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "lantern/trace/crc32c.hpp"
#include "lantern/trace/format.hpp"
#include "lantern/trace/varint.hpp"
#include "worker_model.hpp"

namespace lantern::trace {

// format.hpp's per-type rules name event ids by number (they are the format's own): tie
// those about payload fields to the vocabulary, so a reordered event table fails here.
static_assert(b_is_label_id(static_cast<std::uint32_t>(TaskLabelPayload::kEvent)));
static_assert(b_is_interleaved(static_cast<std::uint32_t>(PushPayload::kEvent)));

struct ChunkEncoder::State {
  ChunkLimits limits;
  const LabelNames* labels = nullptr;
  std::vector<std::uint32_t> label_ids;  // of the open chunk's task_label events: sorted, distinct
  std::vector<std::uint8_t> table;       // the label table's definitions, built by finish_chunk
  detail::ChunkModel model;
  std::vector<std::uint8_t> payload;  // payload.size() is capacity; `used` is the payload length
  std::size_t used = 0;
  std::uint32_t count = 0;
  std::uint64_t min_tick = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_tick = 0;

  void reset() {
    model.reset();
    label_ids.clear();
    used = 0;
    count = 0;
    min_tick = std::numeric_limits<std::uint64_t>::max();
    max_tick = 0;
  }
};

ChunkEncoder::ChunkEncoder(ChunkLimits limits, const LabelNames* labels) : state_(std::make_unique<State>()) {
  state_->labels = labels;
  // Keep limits inside what the format allows, so no setting can produce a chunk a
  // reader must reject.
  limits.target_payload_bytes =
      std::clamp<std::size_t>(limits.target_payload_bytes, 64, kMaxChunkPayload - kMaxEventBytes);
  limits.max_events = std::max<std::uint32_t>(limits.max_events, 1);
  state_->limits = limits;
}
ChunkEncoder::~ChunkEncoder() = default;
ChunkEncoder::ChunkEncoder(ChunkEncoder&&) noexcept = default;
ChunkEncoder& ChunkEncoder::operator=(ChunkEncoder&&) noexcept = default;

ChunkEncoder::AddResult ChunkEncoder::add(const Event& event) {
  State& s = *state_;
  const auto type = static_cast<std::uint32_t>(event.type);
  if (!valid_type(type)) return AddResult::rejected_type;
  // Room for this event and the label table, with one more label than so far.
  const std::size_t table_reserve = kMaxVarintBytes + (s.label_ids.size() + 1) * kMaxLabelDefinitionBytes;
  if (s.used + kMaxEventBytes + table_reserve > kMaxChunkPayload ||
      s.count == std::numeric_limits<std::uint32_t>::max())
    return AddResult::chunk_full;
  if (s.used + kMaxEventBytes > s.payload.size())
    s.payload.resize(std::max({s.payload.size() * 2, s.used + kMaxEventBytes, s.limits.target_payload_bytes + 256}));

  std::uint8_t* const start = s.payload.data() + s.used;
  std::uint8_t* p = start + 1;  // the tag byte is written last, once its flags are known
  std::uint8_t tag;
  if (type < kTagTypeEscape) {
    tag = static_cast<std::uint8_t>(type);
  } else {
    tag = kTagTypeEscape;
    p += put_varint(p, type - kTagTypeEscape);
  }
  if (event.worker != s.model.current_id()) {
    tag |= kTagNewWorker;
    p += put_varint(p, event.worker);
    s.model.switch_to(event.worker);
  }
  const std::uint64_t base = s.model.tick_base();
  if (event.ticks >= base) {
    p += put_varint(p, event.ticks - base);
  } else {
    tag |= kTagTicksBackward;
    p += put_varint(p, base - event.ticks);
  }
  detail::WorkerModel& w = s.model.current();
  const auto predicted = w.predicted_a(type);
  if (predicted && *predicted == event.a) {
    tag |= kTagPredictedA;
  } else if (a_is_task_id(type)) {
    // Wrapping subtraction, read as signed: ids near each other give a short varint
    // whichever comes first.
    p += put_varint(p, zigzag(static_cast<std::int64_t>(event.a - w.last_task)));
  } else {
    p += put_varint(p, event.a);
  }
  // interleave_halves maps 0 to 0 only, so the Z flag means the same either way.
  const std::uint64_t b = b_is_interleaved(type) ? interleave_halves(event.b) : event.b;
  if (b == 0) {
    tag |= kTagZeroB;
  } else {
    p += put_varint(p, b);
  }
  *start = tag;
  // The chunk defines the label a reader will decode (the codec's, a damaged b included).
  if (const std::uint32_t id = b_is_label_id(type) ? TaskLabelPayload::decode(event.a, event.b).label : 0; id != 0) {
    auto it = std::lower_bound(s.label_ids.begin(), s.label_ids.end(), id);
    if (it == s.label_ids.end() || *it != id) s.label_ids.insert(it, id);
  }
  s.model.observe(type, event.ticks, event.a);
  s.used = static_cast<std::size_t>(p - s.payload.data());
  ++s.count;
  s.min_tick = std::min(s.min_tick, event.ticks);
  s.max_tick = std::max(s.max_tick, event.ticks);
  return AddResult::added;
}

bool ChunkEncoder::full() const noexcept {
  return state_->used >= state_->limits.target_payload_bytes || state_->count >= state_->limits.max_events;
}
bool ChunkEncoder::empty() const noexcept { return state_->count == 0; }
std::uint32_t ChunkEncoder::event_count() const noexcept { return state_->count; }
std::size_t ChunkEncoder::payload_bytes() const noexcept { return state_->used; }

std::size_t ChunkEncoder::finish_chunk(std::vector<std::uint8_t>& out) {
  State& s = *state_;
  if (s.count == 0) return 0;
  // The label table: the names of the chunk's label ids that the LabelNames knows, in
  // increasing id order (add() reserved room for all of them).
  s.table.clear();
  std::size_t known = 0;
  for (std::uint32_t id : s.label_ids) {
    const auto name = s.labels ? s.labels->name(id) : std::nullopt;
    const std::string_view cut = name ? cut_label_name(*name) : std::string_view();
    if (cut.empty()) continue;  // unknown: readers show the id
    std::uint8_t tmp[kMaxVarintBytes];
    s.table.insert(s.table.end(), tmp, tmp + put_varint(tmp, id));
    s.table.insert(s.table.end(), tmp, tmp + put_varint(tmp, cut.size()));
    s.table.insert(s.table.end(), cut.begin(), cut.end());
    ++known;
  }
  if (s.used + kMaxVarintBytes + s.table.size() > s.payload.size())
    s.payload.resize(s.used + kMaxVarintBytes + s.table.size());
  std::uint8_t* p = s.payload.data() + s.used;
  p += put_varint(p, known);
  if (!s.table.empty()) std::memcpy(p, s.table.data(), s.table.size());
  p += s.table.size();
  s.used = static_cast<std::size_t>(p - s.payload.data());
  const std::span<const std::uint8_t> payload(s.payload.data(), s.used);
  std::uint8_t header[kChunkHeaderBytes];
  store_le<std::uint32_t>(header + 0, kChunkMagic);
  store_le<std::uint32_t>(header + 4, static_cast<std::uint32_t>(s.used));
  store_le<std::uint32_t>(header + 8, s.count);
  store_le<std::uint32_t>(header + 12, crc32c(payload));
  store_le<std::uint64_t>(header + 16, s.min_tick);
  store_le<std::uint64_t>(header + 24, s.max_tick);
  store_le<std::uint32_t>(header + 32, crc32c({header, 32}));
  out.insert(out.end(), header, header + kChunkHeaderBytes);
  out.insert(out.end(), payload.begin(), payload.end());
  const std::size_t written = kChunkHeaderBytes + s.used;
  s.reset();
  return written;
}

std::vector<std::uint8_t> encode_chunks(std::span<const Event> events, ChunkLimits limits, std::uint64_t* rejected,
                                        const LabelNames* labels) {
  std::vector<std::uint8_t> out;
  ChunkEncoder encoder(limits, labels);
  std::uint64_t skipped = 0;
  for (const Event& e : events) {
    auto r = encoder.add(e);
    if (r == ChunkEncoder::AddResult::chunk_full) {
      encoder.finish_chunk(out);
      r = encoder.add(e);
    }
    if (r == ChunkEncoder::AddResult::rejected_type) ++skipped;
    if (encoder.full()) encoder.finish_chunk(out);
  }
  encoder.finish_chunk(out);
  if (rejected) *rejected = skipped;
  return out;
}

}  // namespace lantern::trace
