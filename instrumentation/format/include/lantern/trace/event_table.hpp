// SPDX-License-Identifier: Apache-2.0
// event_table.hpp - the trace format's view of Lantern's events: the in-memory Event and
// the format's names for the vocabulary (lantern/vocabulary.hpp), which is THE table of
// events, states, reasons, sources, distances, IO kinds, wake causes and drop reasons,
// with the payload codecs. Core's hooks report the same enum (lantern::EventId), so
// the two can not drift apart; nothing here lists an event a second time.
//
// The format library depends on the vocabulary header (a header-only target with no
// dependencies) and on nothing else in Lantern.
#pragma once

#include <cstdint>
#include <string_view>

#include "lantern/vocabulary.hpp"

namespace lantern::trace {

// Recording levels, cumulative: each level records its own events and those below.
using Level = ::lantern::RecordLevel;
inline constexpr auto& kLevelNames = ::lantern::kRecordLevelNames;
using Unit = ::lantern::PayloadUnit;

// The event enum is lantern::EventId (lantern/vocabulary.hpp), named as such here too;
// trace::EventType is its earlier spelling, kept so that older readers still compile.
using EventType [[deprecated("lantern::trace::EventType is lantern::EventId")]] = ::lantern::EventId;
using EventInfo = ::lantern::EventInfo;
inline constexpr auto& kEventInfo = ::lantern::kEventInfo;

// info: the table row of a type (types are dense from 0).
constexpr const EventInfo& info(EventId t) noexcept { return ::lantern::event_info(t); }
constexpr bool valid_type(std::uint32_t raw) noexcept { return ::lantern::valid_event(raw); }

// The vocabulary's tables under the names the format's users know.
inline constexpr auto& kStateNames = ::lantern::kWorkerStateNames;
inline constexpr int kStateCount = ::lantern::kWorkerStateCount;
inline constexpr auto& kReasonNames = ::lantern::kStateReasonNames;
inline constexpr auto& kSourceNames = ::lantern::kTaskSourceNames;
inline constexpr auto& kDistanceNames = ::lantern::kStealDistanceNames;
inline constexpr int kDistanceCount = ::lantern::kStealDistanceCount;
inline constexpr auto& kIoKindNames = ::lantern::kIoKindNames;
inline constexpr auto& kWakeCauseNames = ::lantern::kWakeCauseNames;
inline constexpr auto& kDropReasonNames = ::lantern::kDropReasonNames;

// Event is one recorded event in memory: 32 bytes, what a worker's ring holds.
struct Event {
  std::uint64_t ticks;  // clock ticks (see the trace header's calibration)
  std::uint32_t worker;
  EventId type;
  std::uint8_t reserved[3] = {0, 0, 0};
  std::uint64_t a;
  std::uint64_t b;
  friend bool operator==(const Event&, const Event&) = default;
};
static_assert(sizeof(Event) == 32);

// payload<P>(e): e's payload, read through the vocabulary's codec (the only way a
// consumer reads a and b). make_event: an Event carrying a typed payload.
template <class P>
constexpr P payload(const Event& e) noexcept {
  return P::decode(e.a, e.b);
}
template <class P>
constexpr Event make_event(std::uint64_t ticks, std::uint32_t worker, const P& p) noexcept {
  const PayloadWords w = p.encode();
  return Event{ticks, worker, P::kEvent, {0, 0, 0}, w.a, w.b};
}

}  // namespace lantern::trace
