// SPDX-License-Identifier: Apache-2.0
// trace_header.hpp - the file header: where and how a trace was recorded.
//
// The header carries what a reader needs to interpret the events without the machine
// that recorded them: the topology the steal distances refer to, the clock calibration
// that turns ticks into nanoseconds, and the event table's names so a reader built with a
// different table notices. Its byte layout is in ../../../README.md ("File header").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lantern/trace/event_table.hpp"
#include "lantern/trace/format.hpp"
#include "lantern/trace/trace_error.hpp"

namespace lantern::trace {

// CpuRow is one logical CPU of the recording machine (core's CpuInfo, without the
// dependency): small dense ids, equal ids mean shared hardware.
struct CpuRow {
  std::int32_t os_cpu = 0;  // the kernel's CPU number; -1 for a synthetic CPU
  std::int32_t core = 0;
  std::int32_t l2 = 0;
  std::int32_t llc = 0;
  std::int32_t numa_node = 0;
  std::int32_t package = 0;
  friend bool operator==(const CpuRow&, const CpuRow&) = default;
};

// ClockCalibration maps ticks to nanoseconds: ns = (ticks - base_ticks) * ns_per_tick + base_ns
// (the steady clock). Mirrors core's TickCalibration.
struct ClockCalibration {
  bool tsc = false;  // true: ticks are TSC cycles; false: ticks are nanoseconds
  double ns_per_tick = 1.0;
  std::uint64_t base_ticks = 0;
  std::int64_t base_ns = 0;
  friend bool operator==(const ClockCalibration&, const ClockCalibration&) = default;
};

struct TraceHeader {
  std::uint16_t version = kFormatVersion;  // as read from the file; the writer always writes kFormatVersion
  std::string producer;                    // e.g. "lantern 0.1.0 recorder"
  std::string hostname;
  std::string cpu_model;
  std::string topology;  // one-line description, e.g. "1 package, 1 node, 2 cores, 2 CPUs (hwloc)"
  std::vector<CpuRow> cpus;
  std::uint32_t workers = 0;
  ClockCalibration clock;
  std::int64_t wall_start_unix_ns = 0;  // wall clock when recording started
  // The event table's names by id. Left empty, the writer fills in this build's table;
  // a reader gets the file's.
  std::vector<std::string> event_names;
  // level: the recording level when the header was made (recording started); which
  // events a level records is the event table's level column. nullopt: not said (a file
  // written before the field existed, or a writer given no level). A level changed later
  // (Recorder::set_level) is not in the header. Readers use it to say why a figure has
  // no samples (lane_pop, for the ready wait, is recorded at level full only).
  std::optional<Level> level;
  // event_cost_ns: what recording one event cost the recording thread, in nanoseconds,
  // as the recorder measured it when recording started (nullopt: not measured, or a file
  // written before the field existed). The scalability analysis takes it off each
  // task's own time for every event recorded inside it.
  std::optional<double> event_cost_ns;

  friend bool operator==(const TraceHeader&, const TraceHeader&) = default;

  // ns_per_tick, or 1.0 when the stored value is unusable (0, negative, NaN, infinite),
  // so arithmetic on a damaged header stays finite.
  double safe_ns_per_tick() const noexcept;
  // ticks_to_ns converts a tick interval to nanoseconds.
  double ticks_to_ns(std::uint64_t ticks) const noexcept { return static_cast<double>(ticks) * safe_ns_per_tick(); }
};

// current_event_names: this build's event table names in id order.
std::vector<std::string> current_event_names();

// encode_header returns the header's bytes (prefix, fields, CRC). Empty event_names are
// replaced by current_event_names(); strings longer than kMaxHeaderString are cut.
std::vector<std::uint8_t> encode_header(const TraceHeader& header);

// parse_header_fields decodes the fields between the prefix and the CRC of a
// version-2 header (the caller checked magic, version, length and CRC). Bytes after the known
// fields are skipped: a later revision may append fields. Returns nullopt and sets
// *why on malformed fields.
std::optional<TraceHeader> parse_header_fields(std::span<const std::uint8_t> fields, std::uint16_t version,
                                               std::string* why);

// table_mismatch describes how `names` differs from this build's table, or returns an
// empty string when they are identical.
std::string table_mismatch(const std::vector<std::string>& names);

}  // namespace lantern::trace
