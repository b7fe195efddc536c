// topology_test.cpp - Topology from sysfs (real and fake trees), from specs, and the
// steal order derived from it.
#include "lantern/topology.hpp"

#include <gtest/gtest.h>

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

// FakeSysfs is a unique temporary directory laid out like /sys/devices/system, removed
// when the test ends.
class FakeSysfs {
 public:
  FakeSysfs() {
    std::string pattern = (fs::temp_directory_path() / "lantern_topology_XXXXXX").string();
    char* made = ::mkdtemp(pattern.data());
    if (made == nullptr) ADD_FAILURE() << "mkdtemp failed for " << pattern;
    root_ = pattern;
  }
  ~FakeSysfs() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  // write creates root/relative (and its parent directories) holding `text` plus the
  // newline sysfs puts after every value.
  void write(const std::string& relative, const std::string& text) const {
    fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text << "\n";
  }
  void remove(const std::string& relative) const { fs::remove_all(root_ / relative); }
  std::string root() const { return root_.string(); }

  // cpu writes cpu<n>/topology for one CPU.
  void cpu(int n, int package, int core_id, const std::string& siblings) const {
    const std::string dir = "cpu/cpu" + std::to_string(n) + "/topology/";
    write(dir + "physical_package_id", std::to_string(package));
    write(dir + "core_id", std::to_string(core_id));
    write(dir + "thread_siblings_list", siblings);
  }
  // cache writes cpu<n>/cache/index<i>.
  void cache(int n, int index, int level, const std::string& type, const std::string& shared) const {
    const std::string dir = "cpu/cpu" + std::to_string(n) + "/cache/index" + std::to_string(index) + "/";
    write(dir + "level", std::to_string(level));
    write(dir + "type", type);
    write(dir + "shared_cpu_list", shared);
  }

 private:
  fs::path root_;
};

// two_socket_machine writes 2 packages x 2 cores x 2 threads, numbered the way Intel
// machines are: cpu0-3 are the first thread of every core, cpu4-7 their siblings.
//   package 0: core 0 = {0,4}, core 1 = {1,5}   package 1: core 0 = {2,6}, core 1 = {3,7}
// Note core_id repeats across packages. L1d/L1i/L2 per core, L3 per package, node = package.
void two_socket_machine(const FakeSysfs& sys) {
  sys.write("cpu/online", "0-7");
  for (int cpu = 0; cpu < 8; ++cpu) {
    const int first = cpu % 4;               // first thread of this core
    const int package = first / 2;           // cpu0,1 -> package 0; cpu2,3 -> package 1
    const int core_id = first % 2;           // 0 or 1 within the package
    const std::string siblings = std::to_string(first) + "," + std::to_string(first + 4);
    const std::string l3 = package == 0 ? "0-1,4-5" : "2-3,6-7";
    sys.cpu(cpu, package, core_id, siblings);
    sys.cache(cpu, 0, 1, "Data", siblings);
    sys.cache(cpu, 1, 1, "Instruction", siblings);
    sys.cache(cpu, 2, 2, "Unified", siblings);
    sys.cache(cpu, 3, 3, "Unified", l3);
  }
  sys.write("node/node0/cpulist", "0-1,4-5");
  sys.write("node/node1/cpulist", "2-3,6-7");
  sys.write("node/online", "0-1");  // not a nodeN dir: must be ignored
}

bool mentions(const std::vector<std::string>& warnings, const std::string& word) {
  for (const auto& w : warnings)
    if (w.find(word) != std::string::npos) return true;
  return false;
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

// ---- from_sysfs ----------------------------------------------------------------------

TEST(FromSysfs, ThisMachine) {
  std::vector<std::string> warnings;
  Topology t = Topology::from_sysfs("/sys/devices/system", &warnings);
  ASSERT_GE(t.cpu_count(), 1);
  EXPECT_EQ(t.source(), "sysfs") << joined(warnings);
  if (auto online = parse_cpu_list([] {
        std::ifstream in("/sys/devices/system/cpu/online");
        return std::string(std::istreambuf_iterator<char>(in), {});
      }())) {
    EXPECT_EQ(t.cpu_count(), static_cast<int>(online->size()));
  } else if (std::thread::hardware_concurrency() != 0) {
    EXPECT_EQ(t.cpu_count(), static_cast<int>(std::thread::hardware_concurrency()));
  }
  for (int i = 0; i < t.cpu_count(); ++i) {
    EXPECT_GE(t.cpus()[i].os_cpu, 0);
    if (i > 0) {
      EXPECT_LT(t.cpus()[i - 1].os_cpu, t.cpus()[i].os_cpu);
    }
    EXPECT_EQ(t.distance(i, i), Distance::smt);
    for (int j = 0; j < t.cpu_count(); ++j) EXPECT_EQ(t.distance(i, j), t.distance(j, i));
  }
  EXPECT_FALSE(t.describe().empty());
  Topology::from_sysfs();  // default arguments, no warnings sink
}

TEST(FromSysfs, TwoSocketsTwoCoresTwoThreads) {
  FakeSysfs sys;
  two_socket_machine(sys);
  std::vector<std::string> warnings;
  Topology t = Topology::from_sysfs(sys.root(), &warnings);
  EXPECT_TRUE(warnings.empty()) << joined(warnings);
  ASSERT_EQ(t.cpu_count(), 8);
  EXPECT_EQ(t.source(), "sysfs");
  EXPECT_EQ(t.describe(), "2 packages, 2 nodes, 4 cores, 8 CPUs (sysfs)");
  for (int i = 0; i < 8; ++i) EXPECT_EQ(t.cpus()[i].os_cpu, i);

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
      Distance want = a % 4 == b % 4                  ? Distance::smt     // same core
                      : package_of(a) == package_of(b) ? Distance::llc     // L3, not L2
                                                        : Distance::remote; // other node
      EXPECT_EQ(t.distance(a, b), want) << "cpu" << a << " cpu" << b;
    }
  }
  EXPECT_EQ(cores.size(), 4u);  // core_id 0 on both packages must not merge
  EXPECT_EQ(l2s.size(), 4u);
  EXPECT_EQ(llcs.size(), 2u);
  EXPECT_NE(t.cpus()[0].package, t.cpus()[2].package);
  EXPECT_NE(t.cpus()[0].numa_node, t.cpus()[2].numa_node);
}

// Clustered L2s, two L3s on one node, no SMT: exercises the l2 and numa levels, and
// core_cpus_list (the newer file name) instead of thread_siblings_list.
TEST(FromSysfs, SharedL2AndSplitL3) {
  FakeSysfs sys;
  sys.write("cpu/online", "0-7");
  for (int cpu = 0; cpu < 8; ++cpu) {
    const std::string dir = "cpu/cpu" + std::to_string(cpu) + "/topology/";
    sys.write(dir + "physical_package_id", "0");
    sys.write(dir + "core_id", std::to_string(cpu));
    sys.write(dir + "core_cpus_list", std::to_string(cpu));
    const int pair = cpu / 2 * 2, quad = cpu / 4 * 4;
    sys.cache(cpu, 0, 1, "Data", std::to_string(cpu));
    sys.cache(cpu, 1, 2, "Instruction", "0-7");  // listed before the real L2: must be skipped
    sys.cache(cpu, 2, 2, "Unified", std::to_string(pair) + "-" + std::to_string(pair + 1));
    sys.cache(cpu, 3, 3, "Unified", std::to_string(quad) + "-" + std::to_string(quad + 3));
    sys.cache(cpu, 4, 4, "Unified", "100");  // a list without this CPU: ignored
  }
  sys.write("node/node0/cpulist", "0-7");
  sys.write("node/node1/cpulist", "");  // memory-only node: not a fallback
  std::vector<std::string> warnings;
  Topology t = Topology::from_sysfs(sys.root(), &warnings);
  EXPECT_TRUE(warnings.empty()) << joined(warnings);
  ASSERT_EQ(t.cpu_count(), 8);
  EXPECT_EQ(t.distance(0, 0), Distance::smt);
  EXPECT_EQ(t.distance(0, 1), Distance::l2);
  EXPECT_EQ(t.distance(0, 2), Distance::llc);
  EXPECT_EQ(t.distance(0, 4), Distance::numa);
  EXPECT_EQ(t.distance(7, 6), Distance::l2);
  EXPECT_EQ(t.distance(7, 3), Distance::numa);
  EXPECT_EQ(t.describe(), "1 package, 1 node, 8 cores, 8 CPUs (sysfs)");
}

TEST(FromSysfs, MissingCachesFallBack) {
  FakeSysfs sys;
  two_socket_machine(sys);
  for (int cpu = 0; cpu < 8; ++cpu) sys.remove("cpu/cpu" + std::to_string(cpu) + "/cache");
  std::vector<std::string> warnings;
  Topology t = Topology::from_sysfs(sys.root(), &warnings);
  ASSERT_EQ(warnings.size(), 1u) << joined(warnings);  // one line for the whole kind
  EXPECT_NE(warnings[0].find("cache"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("0-7"), std::string::npos) << warnings[0];
  ASSERT_EQ(t.cpu_count(), 8);
  // Each core its own L2, the package the LLC: same answers as the full tree here.
  EXPECT_EQ(t.distance(0, 4), Distance::smt);
  EXPECT_EQ(t.distance(0, 1), Distance::llc);
  EXPECT_EQ(t.distance(0, 5), Distance::llc);
  EXPECT_EQ(t.distance(0, 2), Distance::remote);
  EXPECT_NE(t.cpus()[0].l2, t.cpus()[1].l2);
  EXPECT_EQ(t.cpus()[0].l2, t.cpus()[4].l2);
}

TEST(FromSysfs, MissingNodesAndOnlineFallBack) {
  FakeSysfs sys;
  two_socket_machine(sys);
  sys.remove("node");
  sys.remove("cpu/online");
  sys.write("cpu/cpufreq/policy0", "x");  // cpu-prefixed, but not cpu<N>
  std::vector<std::string> warnings;
  Topology t = Topology::from_sysfs(sys.root(), &warnings);
  EXPECT_EQ(warnings.size(), 2u) << joined(warnings);
  EXPECT_TRUE(mentions(warnings, "online")) << joined(warnings);
  EXPECT_TRUE(mentions(warnings, "NUMA")) << joined(warnings);
  ASSERT_EQ(t.cpu_count(), 8);
  EXPECT_EQ(t.distance(0, 2), Distance::remote);  // node = package
  EXPECT_EQ(t.describe(), "2 packages, 2 nodes, 4 cores, 8 CPUs (sysfs)");
}

TEST(FromSysfs, GarbageContent) {
  FakeSysfs sys;
  sys.write("cpu/online", "zero to three");
  for (int cpu = 0; cpu < 3; ++cpu) {
    const std::string dir = "cpu/cpu" + std::to_string(cpu) + "/";
    sys.write(dir + "topology/physical_package_id", cpu == 2 ? "-1" : "banana");  // -1: unknown
    sys.write(dir + "topology/core_id", "-");
    sys.write(dir + "topology/thread_siblings_list", "2-0");
    sys.write(dir + "topology/core_cpus_list", "9");  // valid list, but not containing us
    sys.write(dir + "cache/index0/level", "two");
    sys.write(dir + "cache/index0/shared_cpu_list", "0-2");
    sys.write(dir + "cache/index1/level", "3");
    sys.write(dir + "cache/index1/shared_cpu_list", "\x01\xff");
    sys.write(dir + "cache/indexQ/level", "3");
  }
  sys.write("node/node0/cpulist", "??");
  sys.write("node/nodeX/cpulist", "0-2");
  std::vector<std::string> warnings;
  Topology t = Topology::from_sysfs(sys.root(), &warnings);
  ASSERT_EQ(t.cpu_count(), 3);
  EXPECT_EQ(warnings.size(), 5u) << joined(warnings);  // online, package, core, cache, node
  for (const char* word : {"online", "package", "core", "cache", "NUMA"})
    EXPECT_TRUE(mentions(warnings, word)) << word << "\n" << joined(warnings);
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(t.cpus()[a].os_cpu, a);
    for (int b = 0; b < 3; ++b)  // each its own core, one package = one LLC
      EXPECT_EQ(t.distance(a, b), a == b ? Distance::smt : Distance::llc);
  }
  Topology::from_sysfs(sys.root(), nullptr);  // no sink: still fine
}

// Without sibling lists, (package, core_id) identifies the core; core_id alone would
// merge cores of different packages.
TEST(FromSysfs, CoreIdWithoutSiblingLists) {
  FakeSysfs sys;
  two_socket_machine(sys);
  for (int cpu = 0; cpu < 8; ++cpu)
    sys.remove("cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list");
  std::vector<std::string> warnings;
  Topology t = Topology::from_sysfs(sys.root(), &warnings);
  EXPECT_TRUE(warnings.empty()) << joined(warnings);
  EXPECT_EQ(t.distance(0, 4), Distance::smt);
  EXPECT_EQ(t.distance(0, 2), Distance::remote);
  EXPECT_EQ(t.describe(), "2 packages, 2 nodes, 4 cores, 8 CPUs (sysfs)");
}

TEST(FromSysfs, OnlineSubsetIsRespected) {
  FakeSysfs sys;
  two_socket_machine(sys);
  sys.write("cpu/online", "0,2-3");
  Topology t = Topology::from_sysfs(sys.root());
  ASSERT_EQ(t.cpu_count(), 3);
  EXPECT_EQ(t.cpus()[0].os_cpu, 0);
  EXPECT_EQ(t.cpus()[1].os_cpu, 2);
  EXPECT_EQ(t.cpus()[2].os_cpu, 3);
  EXPECT_EQ(t.distance(1, 2), Distance::llc);
  EXPECT_EQ(t.distance(0, 1), Distance::remote);
  // Dense ids: 3 CPUs on 3 cores, 2 packages.
  EXPECT_EQ(t.describe(), "2 packages, 2 nodes, 3 cores, 3 CPUs (sysfs)");
}

TEST(FromSysfs, EmptyAndMissingRoot) {
  FakeSysfs sys;
  for (const std::string& root : {sys.root(), sys.root() + "/does/not/exist"}) {
    std::vector<std::string> warnings;
    Topology t = Topology::from_sysfs(root, &warnings);
    EXPECT_EQ(t.cpu_count(), 1);
    EXPECT_EQ(t.source(), "flat");
    EXPECT_FALSE(warnings.empty());
    EXPECT_TRUE(mentions(warnings, "no CPUs")) << joined(warnings);
  }
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
  EXPECT_TRUE(steal_order(t, 5, 4).empty());  // self out of range
  check_order(t, 1, 2);                        // fewer workers than CPUs
  auto order = steal_order(Topology{}, 0, 3);  // empty topology: no crash
  EXPECT_EQ(order.size(), 2u);
}

}  // namespace
}  // namespace lantern
