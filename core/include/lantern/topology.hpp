// SPDX-License-Identifier: Apache-2.0
// topology.hpp - the machine's CPU layout, and the steal order derived from it.
//
// Topology is data: it is read from this machine by hwloc (Topology::from_machine), or
// built from a spec such as "2 sockets x 8 cores x 2 threads" (Topology::parse_spec,
// translated to hwloc's synthetic topology), from an hwloc synthetic description or an
// hwloc XML export, so a 2-CPU test machine can exercise the steal order of a 2-socket,
// 32-CPU layout, or of a hybrid (performance + efficiency cores) one. All of these go
// through one reader of hwloc's tree. lantern::core links hwloc (pkg-config hwloc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lantern/vocabulary.hpp"

namespace lantern {

// Distance is how far apart two logical CPUs are, nearest first: the vocabulary's
// StealDistance (smt: the same core or CPU; l2; llc; numa: the same node, another LLC;
// remote: another node, or socket when nodes are unknown). A steal records the distance
// between thief and victim, and victims are tried in this order.
using Distance = StealDistance;
inline constexpr int kDistanceLevels = kStealDistanceCount;

// distance_name returns the vocabulary's name: "smt", "l2", "llc", "numa" or "remote"
// ("unknown" outside the table).
const char* distance_name(Distance d) noexcept;

// CpuInfo describes one logical CPU. Ids are small dense integers assigned by the
// topology (not necessarily the kernel's numbering); equal ids mean shared hardware.
struct CpuInfo {
  int os_cpu = 0;     // the kernel's CPU number (for pinning); -1 for a synthetic CPU
  int core = 0;       // physical core id (unique across packages)
  int l2 = 0;         // L2 cache domain id
  int llc = 0;        // last-level cache domain id
  int numa_node = 0;  // NUMA node id
  int package = 0;    // socket id
  int kind = 0;       // CPU kind on hybrid machines, hwloc's order: 0 the least performant
                      // (efficiency cores), higher the faster kinds; 0 on homogeneous ones
};

class Topology {
 public:
  // from_machine reads this machine with hwloc: the CPUs this thread may run on (its
  // affinity mask, e.g. from taskset, which the workers inherit; hwloc also leaves out
  // offline CPUs and CPUs outside the cgroup cpuset), their cores, caches, NUMA nodes,
  // packages and CPU kinds. It never fails: if hwloc cannot read the machine, or knows no
  // caches or NUMA nodes, the coarsest safe answer is used and a line describing it is
  // appended to *warnings when it is non-null. hwloc reads the machine once per process
  // (milliseconds); each call copies that and applies the calling thread's affinity.
  static Topology from_machine(std::vector<std::string>* warnings = nullptr);

  // from_hwloc_synthetic reads hwloc's synthetic description, e.g.
  // "package:2 l3cache:1 l2cache:4 core:1 pu:2" (hwloc's "Synthetic topologies" docs);
  // from_hwloc_xml an hwloc XML export (lstopo machine.xml, hwloc-gather-topology), which
  // can describe what synthetic descriptions cannot: asymmetric trees and CPU kinds
  // (hybrid machines). Both describe other machines: os_cpu is -1 (never pinned).
  // Return nullopt and set *error when hwloc refuses the input.
  static std::optional<Topology> from_hwloc_synthetic(std::string_view description, std::string* error);
  static std::optional<Topology> from_hwloc_xml(std::string_view xml, std::string* error);

  // parse_spec builds a synthetic topology. Grammar (case-insensitive, 'x' or '*'
  // separates levels, plural 's' optional, numbers >= 1):
  //   "[N nodes x] [S sockets x] C cores [x T threads]"
  //   e.g. "2 sockets x 8 cores x 2 threads", "4 cores", "2 nodes x 2 sockets x 4 cores".
  // Each socket is one LLC domain; each core is its own L2 domain; nodes split sockets.
  // The spec is translated to hwloc's synthetic description and read like any other.
  // Returns nullopt and sets *error (naming the bad token) on bad input.
  static std::optional<Topology> parse_spec(std::string_view spec, std::string* error);

  // flat is n CPUs, each its own core, all sharing one LLC and node.
  static Topology flat(int n);

  int cpu_count() const noexcept { return static_cast<int>(cpus_.size()); }
  const std::vector<CpuInfo>& cpus() const noexcept { return cpus_; }
  // distance between two entries of cpus() (indices, not OS numbers).
  Distance distance(int a, int b) const noexcept;
  // describe is a one-line summary, e.g. "2 packages, 2 nodes, 16 cores, 32 CPUs (spec)";
  // a hybrid machine adds its kinds: "1 package, 1 node, 6 cores, 8 CPUs, 2 kinds (hwloc)".
  std::string describe() const;
  // source is "hwloc" (this machine), "spec", "hwloc synthetic", "hwloc xml" or "flat".
  const std::string& source() const noexcept { return source_; }

 private:
  // from_loaded reads a loaded hwloc_topology_t (void* keeps hwloc.h out of this header).
  static Topology from_loaded(void* hwloc_topology, std::string source, bool this_system,
                              std::vector<std::string>* warnings);
  std::vector<CpuInfo> cpus_;
  std::string source_;
};

// Victim is one entry of a worker's steal order.
struct Victim {
  std::uint32_t worker;
  Distance distance;
};

// steal_order: for worker `self` of `workers` (worker i runs on topology CPU
// i % topology.cpu_count()), every other worker sorted nearest first. Within one
// distance level the order is rotated so that thieves start at different victims
// ((self + k) order), which spreads contention.
std::vector<Victim> steal_order(const Topology& topology, std::uint32_t self, std::uint32_t workers);

// parse_cpu_list parses the kernel's list format "0-3,8,10-11" into CPU numbers;
// returns nullopt on malformed input.
// (The result is sorted and duplicate-free. Surrounding whitespace such as the trailing
// newline of a sysfs file is ignored; empty input, a reversed range like "3-1" and CPU
// numbers above 65535 count as malformed.)
std::optional<std::vector<int>> parse_cpu_list(std::string_view text);

}  // namespace lantern
