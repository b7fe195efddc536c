// SPDX-License-Identifier: Apache-2.0
// trace_header.cpp - encoding and parsing the file header's fields.
#include "lantern/trace/trace_header.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "lantern/trace/crc32c.hpp"
#include "lantern/trace/varint.hpp"

namespace lantern::trace {
namespace {

// FieldWriter appends header fields; FieldReader consumes them, failing (not crashing)
// on any field that runs past the end.
struct FieldWriter {
  std::vector<std::uint8_t>& out;
  // Both grow the vector and write in place: no temporary array is copied in, which is
  // also what keeps GCC 12's -Warray-bounds quiet (it misjudges vector::insert of one).
  void varint(std::uint64_t v) {
    const std::size_t at = out.size();
    out.resize(at + kMaxVarintBytes);
    out.resize(at + put_varint(out.data() + at, v));
  }
  template <typename T>
  void fixed(T v) {
    const std::size_t at = out.size();
    out.resize(at + sizeof(T));
    store_le(out.data() + at, v);
  }
  void string(const std::string& s) {
    const std::size_t n = std::min(s.size(), kMaxHeaderString);
    varint(n);
    out.insert(out.end(), s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n));
  }
};

struct FieldReader {
  const std::uint8_t* p;
  const std::uint8_t* end;
  std::string* why;
  bool fail(const char* what) {
    if (why && why->empty()) *why = what;
    return false;
  }
  bool varint(std::uint64_t& v, const char* what) { return get_varint(p, end, v) || fail(what); }
  bool int32(std::int32_t& v, const char* what) {
    std::uint64_t raw;
    if (!varint(raw, what)) return false;
    const std::int64_t s = unzigzag(raw);
    if (s < std::numeric_limits<std::int32_t>::min() || s > std::numeric_limits<std::int32_t>::max()) return fail(what);
    v = static_cast<std::int32_t>(s);
    return true;
  }
  template <typename T>
  bool fixed(T& v, const char* what) {
    if (static_cast<std::size_t>(end - p) < sizeof(T)) return fail(what);
    v = load_le<T>(p);
    p += sizeof(T);
    return true;
  }
  bool string(std::string& s, const char* what) {
    std::uint64_t n;
    if (!varint(n, what)) return false;
    if (n > kMaxHeaderString || n > static_cast<std::uint64_t>(end - p)) return fail(what);
    s.assign(reinterpret_cast<const char*>(p), n);
    p += n;
    return true;
  }
};

}  // namespace

double TraceHeader::safe_ns_per_tick() const noexcept {
  const double v = clock.ns_per_tick;
  return (std::isfinite(v) && v > 0) ? v : 1.0;
}

std::vector<std::string> current_event_names() {
  std::vector<std::string> names;
  for (const EventInfo& e : kEventInfo) names.emplace_back(e.name);
  return names;
}

std::vector<std::uint8_t> encode_header(const TraceHeader& header) {
  std::vector<std::uint8_t> out(kFileMagic.begin(), kFileMagic.end());
  FieldWriter w{out};
  w.fixed<std::uint16_t>(kFormatVersion);
  w.fixed<std::uint16_t>(0);  // reserved
  w.fixed<std::uint32_t>(0);  // header length, patched below
  w.string(header.producer);
  w.string(header.hostname);
  w.string(header.cpu_model);
  w.string(header.topology);
  w.varint(header.cpus.size());
  for (const CpuRow& c : header.cpus) {
    for (std::int32_t v : {c.os_cpu, c.core, c.l2, c.llc, c.numa_node, c.package}) w.varint(zigzag(v));
  }
  w.varint(header.workers);
  w.fixed<std::uint8_t>(header.clock.tsc ? 1 : 0);
  std::uint64_t bits;
  static_assert(sizeof(double) == 8 && std::numeric_limits<double>::is_iec559);
  std::memcpy(&bits, &header.clock.ns_per_tick, 8);
  w.fixed<std::uint64_t>(bits);
  w.fixed<std::uint64_t>(header.clock.base_ticks);
  w.fixed<std::int64_t>(header.clock.base_ns);
  w.fixed<std::int64_t>(header.wall_start_unix_ns);
  const std::vector<std::string> names = header.event_names.empty() ? current_event_names() : header.event_names;
  w.varint(names.size());
  for (const std::string& n : names) w.string(n);
  // Appended after the event names (README, "File header": later fields).
  w.fixed<std::uint8_t>(header.level ? static_cast<std::uint8_t>(*header.level) : kUnknownLevel);
  // event_cost_ns as an f64; NaN: not measured.
  const double cost = header.event_cost_ns.value_or(std::numeric_limits<double>::quiet_NaN());
  std::memcpy(&bits, &cost, 8);
  w.fixed<std::uint64_t>(bits);
  store_le<std::uint32_t>(out.data() + 12, static_cast<std::uint32_t>(out.size() + 4));
  w.fixed<std::uint32_t>(crc32c(out));
  return out;
}

std::optional<TraceHeader> parse_header_fields(std::span<const std::uint8_t> fields, std::uint16_t version,
                                               std::string* why) {
  TraceHeader h;
  h.version = version;
  FieldReader r{fields.data(), fields.data() + fields.size(), why};
  std::uint64_t count = 0;
  if (!r.string(h.producer, "the producer string") || !r.string(h.hostname, "the hostname") ||
      !r.string(h.cpu_model, "the CPU model") || !r.string(h.topology, "the topology description") ||
      !r.varint(count, "the CPU count"))
    return std::nullopt;
  // Each row takes at least 6 bytes: a count beyond that is damage, not a reason to allocate.
  if (count > fields.size() / 6) {
    r.fail("the CPU count");
    return std::nullopt;
  }
  h.cpus.resize(count);
  for (CpuRow& c : h.cpus) {
    if (!r.int32(c.os_cpu, "a CPU row") || !r.int32(c.core, "a CPU row") || !r.int32(c.l2, "a CPU row") ||
        !r.int32(c.llc, "a CPU row") || !r.int32(c.numa_node, "a CPU row") || !r.int32(c.package, "a CPU row"))
      return std::nullopt;
  }
  std::uint64_t workers = 0, bits = 0;
  std::uint8_t flags = 0;
  if (!r.varint(workers, "the worker count") || !r.fixed(flags, "the clock flags") || !r.fixed(bits, "ns_per_tick") ||
      !r.fixed(h.clock.base_ticks, "base_ticks") || !r.fixed(h.clock.base_ns, "base_ns") ||
      !r.fixed(h.wall_start_unix_ns, "the wall-clock start") || !r.varint(count, "the event-table size"))
    return std::nullopt;
  if (workers > std::numeric_limits<std::uint32_t>::max()) {
    r.fail("the worker count");
    return std::nullopt;
  }
  h.workers = static_cast<std::uint32_t>(workers);
  h.clock.tsc = (flags & 1) != 0;
  std::memcpy(&h.clock.ns_per_tick, &bits, 8);
  if (count > fields.size()) {  // every name takes at least its length byte
    r.fail("the event-table size");
    return std::nullopt;
  }
  h.event_names.resize(count);
  for (std::string& n : h.event_names)
    if (!r.string(n, "an event name")) return std::nullopt;
  // Fields appended later: a header written before them simply ends here.
  if (r.p < r.end) {
    const std::uint8_t level = *r.p++;
    if (level < std::size(kLevelNames)) h.level = static_cast<Level>(level);  // else not said (kUnknownLevel)
  }
  if (r.end - r.p >= 8) {
    const std::uint64_t cost_bits = load_le<std::uint64_t>(r.p);
    r.p += 8;
    double cost;
    std::memcpy(&cost, &cost_bits, 8);
    // Not said (NaN), or damage that passed the CRC (negative, infinite, absurd): none.
    if (std::isfinite(cost) && cost >= 0 && cost < 1e6) h.event_cost_ns = cost;
  }
  return h;  // any remaining bytes are fields appended by a later revision: skipped
}

namespace {

// quoted: 'text'. Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive)
// on "'" + std::string(...) + "'" when inlined here.
std::string quoted(std::string_view text) {
  std::string s;
  s.reserve(text.size() + 2);
  s += '\'';
  s += text;
  s += '\'';
  return s;
}

}  // namespace

std::string table_mismatch(const std::vector<std::string>& names) {
  const std::size_t ours = static_cast<std::size_t>(kEventCount);
  const std::size_t n = std::max(names.size(), ours);
  for (std::size_t id = 0; id < n; ++id) {
    const std::string file_name = id < names.size() ? quoted(names[id]) : "nothing";
    const std::string our_name = id < ours ? quoted(kEventInfo[id].name) : "nothing";
    if (file_name != our_name) {
      return "the file's event table (" + std::to_string(names.size()) + " types) differs from this reader's (" +
             std::to_string(ours) + " types): id " + std::to_string(id) + " is " + file_name + " in the file and " +
             our_name + " here; events are decoded by id, so names of differing ids may be wrong";
    }
  }
  return {};
}

}  // namespace lantern::trace
