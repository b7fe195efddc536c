// SPDX-License-Identifier: Apache-2.0
// topology_test.cpp - Topology from hwloc (this machine, restricted by taskset and by a
// thread's affinity; synthetic descriptions; an XML hybrid machine), from specs (which
// go through hwloc's synthetic descriptions), and the steal order derived from it.
#include "lantern/topology.hpp"

#include "lantern/lantern.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace lantern {
namespace {

namespace fs = std::filesystem;

// Machines as hwloc synthetic descriptions (its "indexes" attribute numbers the PUs as
// the kernel would). kTwoSocket: 2 packages x 2 cores x 2 threads numbered the way Intel machines are: cpu0-3 are the
// first thread of every core, cpu4-7 their siblings.
//   package 0: core {0,4}, core {1,5}   package 1: core {2,6}, core {3,7}
// L2 per core, L3 per package, NUMA node = package.
constexpr const char* kTwoSocket = "package:2 numa:1 l3cache:1 l2cache:2 core:1 pu:2(indexes=0,4,1,5,2,6,3,7)";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// allowed_cpus: the CPUs this thread may run on, from its affinity mask.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

// ---- parse_cpu_list, distance_name --------------------------------------------------

TEST(ParseCpuList, Good) {
  EXPECT_EQ(parse_cpu_list("0-3,8"), (std::vector<int>{0, 1, 2, 3, 8}));
  EXPECT_EQ(parse_cpu_list("5"), (std::vector<int>{5}));
  EXPECT_EQ(parse_cpu_list("0-1,4-5\n"), (std::vector<int>{0, 1, 4, 5}));  // sysfs newline
  EXPECT_EQ(parse_cpu_list("2-2"), (std::vector<int>{2}));
  EXPECT_EQ(parse_cpu_list("8,0-1,1"), (std::vector<int>{0, 1, 8}));  // sorted, no duplicates
}

TEST(ParseCpuList, Bad) {
  for (const char* bad : {"", "  \n", "3-1", "a", "1,", ",1", "1,,2", "-1", "1-", "1-2-3", "0x3", "1 - 2",
                          "99999999999999999999", "0-70000"}) {
    EXPECT_EQ(parse_cpu_list(bad), std::nullopt) << '"' << bad << '"';
  }
}

TEST(DistanceName, AllLevels) {
  EXPECT_STREQ(distance_name(Distance::smt), "smt");
  EXPECT_STREQ(distance_name(Distance::l2), "l2");
  EXPECT_STREQ(distance_name(Distance::llc), "llc");
  EXPECT_STREQ(distance_name(Distance::numa), "numa");
  EXPECT_STREQ(distance_name(Distance::remote), "remote");
}

// ---- from_machine (hwloc) -----------------------------------------------------------

TEST(FromMachine, ThisMachine) {
  std::vector<std::string> warnings;
  Topology t = Topology::from_machine(&warnings);
  ASSERT_GE(t.cpu_count(), 1);
  EXPECT_EQ(t.source(), "hwloc") << joined(warnings);
  // Exactly the CPUs this thread may run on (hwloc also leaves out offline ones and
  // those outside the cgroup cpuset; the affinity mask already excludes both).
  const std::vector<int> allowed = allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  ASSERT_EQ(t.cpu_count(), static_cast<int>(allowed.size())) << t.describe();
  for (int i = 0; i < t.cpu_count(); ++i) {
    EXPECT_EQ(t.cpus()[i].os_cpu, allowed[i]);  // sorted by the kernel's numbering
    EXPECT_EQ(t.distance(i, i), Distance::smt);
    for (int j = 0; j < t.cpu_count(); ++j) EXPECT_EQ(t.distance(i, j), t.distance(j, i));
  }
  EXPECT_FALSE(t.describe().empty());
  Topology::from_machine();  // no warnings sink
}

// A process started under `taskset -c 0` (tests/core/topology_probe.cpp): its topology
// holds CPU 0 only, and a scheduler started there runs every worker on CPU 0.
TEST(FromMachine, ProcessRestrictedByTaskset) {
  ASSERT_EQ(std::system("command -v taskset > /dev/null"), 0) << "taskset (util-linux) is needed for this test";
  const fs::path out = fs::temp_directory_path() / ("lantern_taskset_" + std::to_string(::getpid()) + ".txt");
  const std::string cmd = "taskset -c 0 '" + std::string(LANTERN_TOPOLOGY_PROBE) + "' > '" + out.string() + "' 2>&1";
  const int status = std::system(cmd.c_str());
  const std::string output = read_file(out);
  fs::remove(out);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("topology: 1 package, 1 node, 1 core, 1 CPU (hwloc)\nos_cpus: 0\n"), std::string::npos)
      << output;
  EXPECT_NE(output.find("scheduler: 1 package, 1 node, 1 core, 1 CPU (hwloc)\n"), std::string::npos) << output;
  EXPECT_NE(output.find("worker cpus: 0 0 0 0 0 0\n"), std::string::npos) << output;
  EXPECT_NE(output.find("worker_cpu: 0 0 0\n"), std::string::npos) << output;
}

// A thread whose own affinity is narrower than the process's (workers inherit the
// creating thread's mask, so that is the one that counts).
TEST(FromMachine, ThreadAffinityIsRespected) {
  const std::vector<int> allowed = allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  const int last = allowed.back();
  Topology t;
  std::thread th([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
    t = Topology::from_machine();
  });
  th.join();
  ASSERT_EQ(t.cpu_count(), 1) << t.describe();
  EXPECT_EQ(t.cpus()[0].os_cpu, last);
}

// pin_workers pins each worker to its topology CPU on this machine's (hwloc) topology:
// whichever worker runs a task, its affinity is one CPU of the topology.
TEST(FromMachine, PinWorkersPinsToTheTopologysCpus) {
  const std::vector<int> allowed = allowed_cpus();
  SchedulerOptions options;
  options.workers = static_cast<std::uint32_t>(allowed.size());
  options.pin_workers = true;
  Scheduler pool(options);
  ASSERT_EQ(pool.topology().source(), "hwloc");
  std::vector<Future<std::vector<int>>> seen;
  for (int i = 0; i < 64; ++i) seen.push_back(pool.submit([] { return allowed_cpus(); }));
  for (auto& f : seen) {
    const std::vector<int> where = f.get();
    ASSERT_EQ(where.size(), 1u) << "a worker runs unpinned";
    EXPECT_TRUE(std::count(allowed.begin(), allowed.end(), where[0]) == 1) << where[0];
  }
  // worker_cpu names worker i's CPU, topology CPU i % count (options.hpp), known as the
  // constructor returns; describe_state shows it.
  for (std::uint32_t i = 0; i < pool.worker_count(); ++i) {
    EXPECT_EQ(pool.worker_cpu(i), pool.topology().cpus()[i % pool.topology().cpu_count()].os_cpu) << "worker " << i;
  }
  const std::string state = pool.describe_state();
  EXPECT_NE(state.find("worker 0: "), std::string::npos) << state;
  EXPECT_NE(state.find(", on cpu " + std::to_string(pool.worker_cpu(0))), std::string::npos) << state;
}

// worker_cpu is -1 for every worker when pinning is off, and for a spec topology's
// synthetic CPUs even with pin_workers.
TEST(FromMachine, WorkerCpuIsMinusOneUnpinned) {
  Scheduler unpinned(SchedulerOptions{.workers = 2});
  Scheduler synthetic(SchedulerOptions{.workers = 2, .topology = "1 socket x 2 cores", .pin_workers = true});
  for (std::uint32_t i = 0; i < 2; ++i) {
    EXPECT_EQ(unpinned.worker_cpu(i), -1);
    EXPECT_EQ(synthetic.worker_cpu(i), -1);
  }
  EXPECT_EQ(unpinned.describe_state().find(", on cpu "), std::string::npos);
}

// ---- the same trees through hwloc's synthetic descriptions --------------------------

TEST(FromHwloc, TwoSocketsTwoCoresTwoThreads) {
  std::string error;
  const auto read = Topology::from_hwloc_synthetic(kTwoSocket, &error);
  ASSERT_TRUE(read) << error;
  const Topology& t = *read;
  ASSERT_EQ(t.cpu_count(), 8);
  EXPECT_EQ(t.source(), "hwloc synthetic");
  EXPECT_EQ(t.describe(), "2 packages, 2 nodes, 4 cores, 8 CPUs (hwloc synthetic)");
  for (int i = 0; i < 8; ++i) EXPECT_EQ(t.cpus()[i].os_cpu, -1);  // another machine: never pinned

  // cpus() is in OS-index order: entry a is the kernel's cpu a.
  auto package_of = [](int cpu) { return (cpu % 4) / 2; };
  std::set<int> cores, l2s, llcs;
  for (int a = 0; a < 8; ++a) {
    const CpuInfo& x = t.cpus()[a];
    cores.insert(x.core);
    l2s.insert(x.l2);
    llcs.insert(x.llc);
    EXPECT_EQ(x.package, t.cpus()[package_of(a) * 2].package);
    EXPECT_EQ(x.numa_node, t.cpus()[package_of(a) * 2].numa_node);
    for (int b = 0; b < 8; ++b) {
      Distance want = a % 4 == b % 4                   ? Distance::smt      // same core
                      : package_of(a) == package_of(b) ? Distance::llc      // L3, not L2
                                                       : Distance::remote;  // other node
      EXPECT_EQ(t.distance(a, b), want) << "cpu" << a << " cpu" << b;
    }
  }
  EXPECT_EQ(cores.size(), 4u);
  EXPECT_EQ(l2s.size(), 4u);
  EXPECT_EQ(llcs.size(), 2u);
  EXPECT_NE(t.cpus()[0].package, t.cpus()[2].package);
  EXPECT_NE(t.cpus()[0].numa_node, t.cpus()[2].numa_node);
}

// Clustered L2s, two L3s on one node, no SMT: the l2 and numa levels.
TEST(FromHwloc, SharedL2AndSplitL3) {
  std::string error;
  const auto t = Topology::from_hwloc_synthetic("package:1 numa:1 l3cache:2 l2cache:2 core:2 pu:1", &error);
  ASSERT_TRUE(t) << error;
  ASSERT_EQ(t->cpu_count(), 8);
  EXPECT_EQ(t->distance(0, 0), Distance::smt);
  EXPECT_EQ(t->distance(0, 1), Distance::l2);
  EXPECT_EQ(t->distance(0, 2), Distance::llc);
  EXPECT_EQ(t->distance(0, 4), Distance::numa);
  EXPECT_EQ(t->distance(7, 6), Distance::l2);
  EXPECT_EQ(t->distance(7, 3), Distance::numa);
  EXPECT_EQ(t->describe(), "1 package, 1 node, 8 cores, 8 CPUs (hwloc synthetic)");
}

// No caches known: each core is its own L2 and the package is the LLC.
TEST(FromHwloc, NoCachesFallBack) {
  std::string error;
  const auto t = Topology::from_hwloc_synthetic("package:2 numa:1 core:2 pu:2(indexes=0,4,1,5,2,6,3,7)", &error);
  ASSERT_TRUE(t) << error;
  ASSERT_EQ(t->cpu_count(), 8);
  EXPECT_EQ(t->distance(0, 4), Distance::smt);
  EXPECT_EQ(t->distance(0, 1), Distance::llc);
  EXPECT_EQ(t->distance(0, 5), Distance::llc);
  EXPECT_EQ(t->distance(0, 2), Distance::remote);
  EXPECT_NE(t->cpus()[0].l2, t->cpus()[1].l2);
  EXPECT_EQ(t->cpus()[0].l2, t->cpus()[4].l2);
}

// No NUMA nodes given: hwloc puts the whole machine in one node (what Linux reports on a
// machine without NUMA), so two packages are at numa distance, not remote.
TEST(FromHwloc, NoNumaNodesMeansOneNode) {
  std::string error;
  const auto t =
      Topology::from_hwloc_synthetic("package:2 l3cache:1 l2cache:2 core:1 pu:2(indexes=0,4,1,5,2,6,3,7)", &error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->distance(0, 4), Distance::smt);
  EXPECT_EQ(t->distance(0, 2), Distance::numa);
  EXPECT_EQ(t->describe(), "2 packages, 1 node, 4 cores, 8 CPUs (hwloc synthetic)");
}

TEST(FromHwloc, BadInputIsRefused) {
  std::string error;
  EXPECT_FALSE(Topology::from_hwloc_synthetic("banana:2 pu:x", &error));
  EXPECT_NE(error.find("banana:2 pu:x"), std::string::npos) << error;
  error.clear();
  EXPECT_FALSE(Topology::from_hwloc_xml("<topology version=\"2.0\"><object type=", &error));
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(Topology::from_hwloc_xml("", nullptr));
}

// A hybrid machine (tests/core/data/README.md: why XML and not a synthetic description).
TEST(FromHwloc, HybridPerformanceAndEfficiencyCores) {
  const std::string xml = read_file(fs::path(LANTERN_TEST_DATA_DIR) / "hybrid_8cpu.xml");
  ASSERT_FALSE(xml.empty()) << LANTERN_TEST_DATA_DIR;
  std::string error;
  const auto t = Topology::from_hwloc_xml(xml, &error);
  ASSERT_TRUE(t) << error;
  ASSERT_EQ(t->cpu_count(), 8);
  EXPECT_EQ(t->describe(), "1 package, 1 node, 6 cores, 8 CPUs, 2 kinds (hwloc xml)");
  for (int cpu = 0; cpu < 8; ++cpu) {
    EXPECT_EQ(t->cpus()[cpu].kind, cpu < 4 ? 1 : 0) << "cpu" << cpu << ": 0-3 performance, 4-7 efficiency";
    EXPECT_EQ(t->cpus()[cpu].os_cpu, -1);
  }
  EXPECT_EQ(t->distance(0, 1), Distance::smt);  // a performance core's two threads
  EXPECT_EQ(t->distance(0, 2), Distance::llc);  // two performance cores: own L2s
  EXPECT_EQ(t->distance(4, 7), Distance::l2);   // the efficiency cores' shared L2
  EXPECT_EQ(t->distance(0, 4), Distance::llc);
  // Worker 4 (an efficiency core) steals from its L2 cluster first.
  const auto order = steal_order(*t, 4, 8);
  ASSERT_EQ(order.size(), 7u);
  EXPECT_EQ(order[0].worker, 5u);
  EXPECT_EQ(order[0].distance, Distance::l2);
  EXPECT_EQ(order[2].worker, 7u);
  EXPECT_EQ(order[3].distance, Distance::llc);
}

// ---- parse_spec and flat -----------------------------------------------------------------

TEST(ParseSpec, Valid) {
  struct Case {
    const char* spec;
    int cpus;
    const char* describe;
  };
  for (const Case& c : {
           Case{"4 cores", 4, "1 package, 1 node, 4 cores, 4 CPUs (spec)"},
           Case{"1 core", 1, "1 package, 1 node, 1 core, 1 CPU (spec)"},
           Case{"4", 4, "1 package, 1 node, 4 cores, 4 CPUs (spec)"},
           Case{"2 sockets x 8 cores x 2 threads", 32, "2 packages, 2 nodes, 16 cores, 32 CPUs (spec)"},
           Case{"2x8x2", 32, "2 packages, 2 nodes, 16 cores, 32 CPUs (spec)"},
           Case{"  2 SOCKETS * 8 Cores*2 Thread\t", 32, "2 packages, 2 nodes, 16 cores, 32 CPUs (spec)"},
           Case{"2socket x 8core x 2thread", 32, "2 packages, 2 nodes, 16 cores, 32 CPUs (spec)"},
           Case{"1 socket x 2 cores x 2 threads", 4, "1 package, 1 node, 2 cores, 4 CPUs (spec)"},
           Case{"2 cores x 2 threads", 4, "1 package, 1 node, 2 cores, 4 CPUs (spec)"},
           Case{"2 nodes x 2 sockets x 4 cores", 8, "2 packages, 2 nodes, 8 cores, 8 CPUs (spec)"},
           Case{"4 nodes x 2 sockets x 4 cores", 8, "2 packages, 4 nodes, 8 cores, 8 CPUs (spec)"},
           Case{"1 node x 4 sockets x 1 core", 4, "4 packages, 1 node, 4 cores, 4 CPUs (spec)"},
           Case{"4096 cores", 4096, "1 package, 1 node, 4096 cores, 4096 CPUs (spec)"},
       }) {
    std::string error;
    auto t = Topology::parse_spec(c.spec, &error);
    ASSERT_TRUE(t.has_value()) << c.spec << ": " << error;
    EXPECT_EQ(t->cpu_count(), c.cpus) << c.spec;
    EXPECT_EQ(t->describe(), c.describe) << c.spec;
    EXPECT_EQ(t->source(), "spec");
    for (const CpuInfo& cpu : t->cpus()) EXPECT_EQ(cpu.os_cpu, -1);
  }
}

TEST(ParseSpec, Distances) {
  auto small = Topology::parse_spec("1 socket x 2 cores x 2 threads", nullptr);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->distance(0, 1), Distance::smt);  // SMT siblings are adjacent
  EXPECT_EQ(small->distance(2, 3), Distance::smt);
  EXPECT_EQ(small->distance(1, 2), Distance::llc);  // each core its own L2

  auto big = Topology::parse_spec("2x8x2", nullptr);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->distance(0, 1), Distance::smt);
  EXPECT_EQ(big->distance(0, 15), Distance::llc);
  EXPECT_EQ(big->distance(0, 16), Distance::remote);
  EXPECT_EQ(big->distance(31, 30), Distance::smt);

  auto one_node = Topology::parse_spec("1 node x 2 sockets x 2 cores", nullptr);
  ASSERT_TRUE(one_node);
  EXPECT_EQ(one_node->distance(0, 2), Distance::numa);  // same node, other socket's LLC

  // Four nodes over two sockets: each socket's 4 cores split 2 + 2. The socket is
  // still one LLC, so the split shows in the node ids but not the distance.
  auto snc = Topology::parse_spec("4 nodes x 2 sockets x 4 cores", nullptr);
  ASSERT_TRUE(snc);
  std::vector<int> nodes;
  for (const CpuInfo& cpu : snc->cpus()) nodes.push_back(cpu.numa_node);
  EXPECT_EQ(nodes, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(snc->distance(0, 2), Distance::llc);
  EXPECT_EQ(snc->distance(0, 4), Distance::remote);
}

TEST(ParseSpec, Invalid) {
  struct Case {
    const char* spec;
    const char* names;  // the error must mention this
  };
  for (const Case& c : {
           Case{"", "empty"},
           Case{"   ", "empty"},
           Case{"0 cores", "'0'"},
           Case{"2 sockets x 0 cores", "'0'"},
           Case{"-2 cores", "'-2'"},
           Case{"cores", "'cores'"},
           Case{"2 sockets x cores", "'cores'"},
           Case{"2 cores x 2", "'2'"},
           Case{"2 sockets", "cores"},
           Case{"2 banana", "'banana'"},
           Case{"2 cores x 2 widgets", "'widgets'"},
           Case{"2 cores x 3 cores", "'3 cores'"},
           Case{"2 socket x 2 sockets x 2 cores", "'2 sockets'"},
           Case{"8 cores x 2 sockets", "'2 sockets'"},
           Case{"2 threads x 2 cores", "'2 cores'"},
           Case{"x 2 cores", "'x'"},
           Case{"2 cores x", "'x'"},
           Case{"2 cores ** 2 threads", "'*'"},
           Case{"2 cores 2 threads", "'2'"},
           Case{"2 cores, 2 threads", "','"},
           Case{"2x8", "2x8"},
           Case{"2x2x2x2", "2x2x2x2"},
           Case{"4097 cores", "4097"},
           Case{"2 sockets x 4096 cores", "8192"},
           Case{"2 sockets x 64 cores x 64 threads", "8192"},
           Case{"99999999999999999999999 cores", "'99999999999999999999999'"},
           Case{"3 nodes x 2 sockets x 4 cores", "'3 nodes'"},
           Case{"2 nodes x 3 sockets x 4 cores", "'2 nodes'"},
           Case{"4 nodes x 2 sockets x 3 cores", "'4 nodes'"},
       }) {
    std::string error;
    auto t = Topology::parse_spec(c.spec, &error);
    EXPECT_FALSE(t.has_value()) << '"' << c.spec << '"';
    EXPECT_FALSE(error.empty()) << '"' << c.spec << '"';
    EXPECT_NE(error.find(c.names), std::string::npos) << '"' << c.spec << "\" gave: " << error;
    EXPECT_FALSE(Topology::parse_spec(c.spec, nullptr).has_value());  // null error is fine
  }
}

TEST(Flat, Basics) {
  Topology t = Topology::flat(4);
  ASSERT_EQ(t.cpu_count(), 4);
  EXPECT_EQ(t.source(), "flat");
  EXPECT_EQ(t.describe(), "1 package, 1 node, 4 cores, 4 CPUs (flat)");
  EXPECT_EQ(t.distance(0, 0), Distance::smt);
  EXPECT_EQ(t.distance(0, 3), Distance::llc);
  EXPECT_EQ(Topology::flat(0).cpu_count(), 1);  // never empty
  EXPECT_EQ(Topology::flat(-5).cpu_count(), 1);
}

// ---- steal_order ---------------------------------------------------------------------

// Checks what holds for every order: each other worker exactly once, nearest first,
// and every entry's distance is the topology's.
void check_order(const Topology& t, std::uint32_t self, std::uint32_t workers) {
  auto order = steal_order(t, self, workers);
  ASSERT_EQ(order.size(), workers - 1) << "self " << self;
  std::set<std::uint32_t> seen;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Victim& v = order[i];
    EXPECT_NE(v.worker, self);
    EXPECT_LT(v.worker, workers);
    EXPECT_TRUE(seen.insert(v.worker).second) << "worker " << v.worker << " twice";
    const int n = t.cpu_count();
    EXPECT_EQ(v.distance, t.distance(static_cast<int>(self % n), static_cast<int>(v.worker % n)));
    if (i > 0) {
      EXPECT_LE(order[i - 1].distance, v.distance);
    }
  }
}

TEST(StealOrder, TwoSocketsEightCoresTwoThreads) {
  auto t = Topology::parse_spec("2 sockets x 8 cores x 2 threads", nullptr);
  ASSERT_TRUE(t);
  for (std::uint32_t self = 0; self < 32; ++self) check_order(*t, self, 32);

  auto order = steal_order(*t, 0, 32);
  ASSERT_EQ(order.size(), 31u);
  EXPECT_EQ(order[0].worker, 1u);  // the SMT sibling first
  EXPECT_EQ(order[0].distance, Distance::smt);
  for (std::uint32_t i = 1; i <= 14; ++i) {  // then the other 7 cores of socket 0
    EXPECT_EQ(order[i].worker, i + 1);
    EXPECT_EQ(order[i].distance, Distance::llc);
  }
  for (std::uint32_t i = 15; i < 31; ++i) {  // the other socket last
    EXPECT_EQ(order[i].worker, i + 1);
    EXPECT_EQ(order[i].distance, Distance::remote);
  }

  // Rotation: worker 5 (core 2 of socket 0) tries 6..15 and then wraps to 0..3.
  order = steal_order(*t, 5, 32);
  EXPECT_EQ(order[0].worker, 4u);
  EXPECT_EQ(order[1].worker, 6u);
  EXPECT_EQ(order[10].worker, 15u);
  EXPECT_EQ(order[11].worker, 0u);
  EXPECT_EQ(order[14].worker, 3u);
  EXPECT_EQ(order[15].worker, 16u);
  // Worker 20 (socket 1) rotates within the remote level too: 21..31, then 0..15.
  order = steal_order(*t, 20, 32);
  EXPECT_EQ(order[15].worker, 0u);
  EXPECT_EQ(order[15].distance, Distance::remote);
}

TEST(StealOrder, MoreWorkersThanCpus) {
  auto t = Topology::parse_spec("1 socket x 2 cores x 2 threads", nullptr);
  ASSERT_TRUE(t);
  for (std::uint32_t self = 0; self < 10; ++self) check_order(*t, self, 10);
  // Worker 0 is on cpu 0; workers 4 and 8 share that CPU, 1, 5 and 9 are on its sibling.
  auto order = steal_order(*t, 0, 10);
  std::vector<std::uint32_t> workers;
  for (const Victim& v : order) workers.push_back(v.worker);
  EXPECT_EQ(workers, (std::vector<std::uint32_t>{1, 4, 5, 8, 9, 2, 3, 6, 7}));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(order[i].distance, Distance::smt);
  for (int i = 5; i < 9; ++i) EXPECT_EQ(order[i].distance, Distance::llc);

  // Everything on one CPU: all smt, plain rotation.
  order = steal_order(Topology::flat(1), 2, 4);
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0].worker, 3u);
  EXPECT_EQ(order[1].worker, 0u);
  EXPECT_EQ(order[2].worker, 1u);
  for (const Victim& v : order) EXPECT_EQ(v.distance, Distance::smt);
}

TEST(StealOrder, EdgeCases) {
  Topology t = Topology::flat(4);
  EXPECT_TRUE(steal_order(t, 0, 0).empty());
  EXPECT_TRUE(steal_order(t, 0, 1).empty());
  EXPECT_TRUE(steal_order(t, 5, 4).empty());   // self out of range
  check_order(t, 1, 2);                        // fewer workers than CPUs
  auto order = steal_order(Topology{}, 0, 3);  // empty topology: no crash
  EXPECT_EQ(order.size(), 2u);
}

}  // namespace
}  // namespace lantern
