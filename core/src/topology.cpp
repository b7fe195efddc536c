// SPDX-License-Identifier: Apache-2.0
// topology.cpp - the CPU layout from hwloc (this machine, an hwloc synthetic description
// or XML export, or a spec translated to hwloc's synthetic form), and the steal order.
//
// One code path builds every Topology but flat(): an hwloc topology is loaded and
// from_loaded() reads each PU's core, L2, last-level cache, NUMA node, package and CPU
// kind out of it. hwloc (Debian: libhwloc-dev, the library oneTBB and libfork use) knows
// caches, NUMA nodes, cgroup cpusets, offline CPUs and hybrid cores.
//
// Everything here is best effort and never throws on bad input: a scheduler that cannot
// read the machine's topology should still start, just with a coarser picture.
#include "lantern/topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <set>
#include <thread>

namespace lantern {
namespace {

// Largest CPU number parse_cpu_list accepts. Real kernels stop at a few thousand
// (x86 NR_CPUS is at most 8192); the cap keeps "0-2000000000" from eating memory.
constexpr int kMaxCpuNumber = 65535;
// Largest synthetic topology parse_spec builds.
constexpr long long kMaxSpecCpus = 4096;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// parse_digits accepts only a plain run of decimal digits (no sign, no spaces), because
// that is all the kernel writes; from_chars alone would also take a leading '-'.
std::optional<long long> parse_digits(std::string_view s) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  long long value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

// DenseIds hands out 0, 1, 2... to distinct keys in first-seen order. Keys are strings
// so that domains found different ways ("L3:0-7" vs a package fallback) never collide.
class DenseIds {
 public:
  int operator()(const std::string& key) { return ids_.emplace(key, static_cast<int>(ids_.size())).first->second; }

 private:
  std::map<std::string, int> ids_;
};

// format_cpu_list writes sorted CPU numbers in the kernel's list format ("0-3,8").
std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

// Hwloc owns one hwloc topology (init in the constructor, destroy in the destructor).
struct Hwloc {
  hwloc_topology_t t = nullptr;
  bool ok = false;
  Hwloc() { ok = hwloc_topology_init(&t) == 0; }
  ~Hwloc() {
    if (ok) hwloc_topology_destroy(t);
  }
  Hwloc(const Hwloc&) = delete;
  Hwloc& operator=(const Hwloc&) = delete;
};

// ancestor: the nearest ancestor of `obj` (itself included) whose type satisfies `want`.
template <typename Want>
hwloc_obj_t ancestor(hwloc_obj_t obj, Want want) {
  for (; obj != nullptr; obj = obj->parent)
    if (want(obj->type)) return obj;
  return nullptr;
}

// outermost_data_cache: the last-level cache above `pu` (data or unified; an
// instruction cache holds no task data, so sharing one says nothing about stealing).
hwloc_obj_t outermost_data_cache(hwloc_obj_t pu) {
  hwloc_obj_t found = nullptr;
  for (hwloc_obj_t obj = pu; obj != nullptr; obj = obj->parent)
    if (hwloc_obj_type_is_dcache(obj->type)) found = obj;
  return found;
}

std::string key(const char* kind, hwloc_obj_t obj) {
  return std::string(kind) + ":" + std::to_string(obj->logical_index);
}

}  // namespace

const char* distance_name(Distance d) noexcept {
  // The vocabulary's names are string literals, so data() is null-terminated.
  return valid(d) ? name_of(d).data() : "unknown";
}

std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  // A bitmap rather than a vector of every element: "0-65535,0-65535,..." stays small,
  // and the result comes out sorted and free of duplicates.
  std::vector<bool> present(kMaxCpuNumber + 1, false);
  while (true) {
    std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    std::size_t dash = item.find('-');
    auto first = parse_digits(item.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : parse_digits(item.substr(dash + 1));
    if (!first || !last || *first > *last || *last > kMaxCpuNumber) return std::nullopt;
    for (auto cpu = *first; cpu <= *last; ++cpu) present[static_cast<std::size_t>(cpu)] = true;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);  // "1," leaves "" behind, which fails above
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu <= kMaxCpuNumber; ++cpu)
    if (present[static_cast<std::size_t>(cpu)]) cpus.push_back(cpu);
  return cpus;
}

// from_loaded reads a loaded hwloc topology. PUs are listed by OS index (the kernel's CPU
// numbering; for synthetic topologies the synthetic indexes), as sysfs lists them: on
// most x86 machines CPUs 0..N-1 are each core's first thread, so worker i % cpu_count()
// fills every core before it doubles up on SMT siblings. `this_system` says whether the
// OS indexes are this machine's CPUs (pinnable); otherwise os_cpu is -1.
Topology Topology::from_loaded(void* handle, std::string source, bool this_system, std::vector<std::string>* warnings) {
  auto* t = static_cast<hwloc_topology_t>(handle);
  std::vector<hwloc_obj_t> pus;
  for (hwloc_obj_t pu = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, nullptr); pu != nullptr;
       pu = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, pu))
    pus.push_back(pu);
  if (pus.empty()) {
    if (warnings != nullptr) warnings->push_back("topology: hwloc found no CPUs; assuming a single CPU");
    return flat(1);
  }
  std::stable_sort(pus.begin(), pus.end(), [](hwloc_obj_t a, hwloc_obj_t b) { return a->os_index < b->os_index; });

  const int kinds = hwloc_cpukinds_get_nr(t, 0);
  DenseIds core_ids, l2_ids, llc_ids, node_ids, package_ids;
  std::vector<int> no_cache, no_node;
  Topology topo;
  topo.source_ = std::move(source);
  for (hwloc_obj_t pu : pus) {
    const hwloc_obj_t package = ancestor(pu, [](hwloc_obj_type_t type) { return type == HWLOC_OBJ_PACKAGE; });
    const std::string package_key = package ? key("package", package) : "package:0";
    const hwloc_obj_t core = ancestor(pu, [](hwloc_obj_type_t type) { return type == HWLOC_OBJ_CORE; });
    const std::string core_key = core ? key("core", core) : key("pu", pu);  // no core known: each PU its own
    const hwloc_obj_t l2 = ancestor(pu, [](hwloc_obj_type_t type) { return type == HWLOC_OBJ_L2CACHE; });
    const hwloc_obj_t llc = outermost_data_cache(pu);
    if (llc == nullptr) no_cache.push_back(static_cast<int>(pu->os_index));
    const hwloc_obj_t node = hwloc_get_next_obj_covering_cpuset_by_type(t, pu->cpuset, HWLOC_OBJ_NUMANODE, nullptr);
    if (node == nullptr) no_node.push_back(static_cast<int>(pu->os_index));

    CpuInfo info;
    info.os_cpu = this_system ? static_cast<int>(pu->os_index) : -1;
    info.core = core_ids(core_key);
    info.l2 = l2_ids(l2 ? key("cache", l2) : core_key);         // no shared L2 known: the core's own
    info.llc = llc_ids(llc ? key("cache", llc) : package_key);  // no cache known: the package
    info.numa_node = node_ids(node ? key("node", node) : package_key);
    info.package = package_ids(package_key);
    // hwloc orders kinds by efficiency, least first: 0 is the efficiency cores' kind.
    const int kind = kinds > 1 ? hwloc_cpukinds_get_by_cpuset(t, pu->cpuset, 0) : 0;
    info.kind = kind > 0 ? kind : 0;
    topo.cpus_.push_back(info);
  }
  if (warnings != nullptr) {
    if (!no_cache.empty())
      warnings->push_back("topology: cpu " + format_cpu_list(no_cache) +
                          ": no cache info from hwloc; each core is its own L2 and the package is the LLC");
    if (!no_node.empty())
      warnings->push_back("topology: cpu " + format_cpu_list(no_node) +
                          ": in no NUMA node; using the package as the node");
  }
  return topo;
}

namespace {

// MachineTopology: this machine as hwloc reads it, loaded once per process. Reading /sys
// takes hwloc milliseconds (4-27 ms), and a process may start many
// schedulers (the test suites start thousands); each from_machine() copies it
// (hwloc_topology_dup only reads the original, which hwloc allows from any thread) and
// restricts the copy to the calling thread's affinity. CPUs brought online or offline
// after the first call are not seen.
struct MachineTopology {
  hwloc_topology_t t = nullptr;
  bool ok = false;
  MachineTopology() {
    if (hwloc_topology_init(&t) != 0) return;
    ok = hwloc_topology_load(t) == 0;
    if (!ok) hwloc_topology_destroy(t);
  }
  ~MachineTopology() {
    if (ok) hwloc_topology_destroy(t);
  }
  MachineTopology(const MachineTopology&) = delete;
  MachineTopology& operator=(const MachineTopology&) = delete;
};

const MachineTopology& machine_topology() {
  static const MachineTopology machine;
  return machine;
}

}  // namespace

Topology Topology::from_machine(std::vector<std::string>* warnings) {
  auto fallback = [&](const std::string& why) {
    const int n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (warnings != nullptr)
      warnings->push_back("topology: " + why + "; assuming " + std::to_string(n) + " CPUs sharing one cache");
    return flat(n);
  };
  const MachineTopology& machine = machine_topology();
  hwloc_topology_t copy = nullptr;
  if (!machine.ok || hwloc_topology_dup(&copy, machine.t) != 0) return fallback("hwloc cannot read this machine");
  // hwloc already leaves out offline CPUs and those outside the cgroup cpuset; the
  // affinity mask (taskset, sched_setaffinity) of this thread, which the workers inherit,
  // is applied here.
  hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
  if (allowed != nullptr && hwloc_get_cpubind(copy, allowed, HWLOC_CPUBIND_THREAD) == 0 &&
      !hwloc_bitmap_iszero(allowed) && !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(copy), allowed)) {
    if (hwloc_topology_restrict(copy, allowed, 0) != 0 && warnings != nullptr)
      warnings->push_back("topology: cannot restrict hwloc's topology to this thread's CPU affinity; using all CPUs");
  }
  if (allowed != nullptr) hwloc_bitmap_free(allowed);
  Topology topo = from_loaded(copy, "hwloc", true, warnings);
  hwloc_topology_destroy(copy);
  return topo;
}

std::optional<Topology> Topology::from_hwloc_synthetic(std::string_view description, std::string* error) {
  Hwloc h;
  const std::string text(description);
  if (!h.ok || hwloc_topology_set_synthetic(h.t, text.c_str()) != 0 || hwloc_topology_load(h.t) != 0) {
    if (error != nullptr) *error = "hwloc cannot read the synthetic topology \"" + text + "\"";
    return std::nullopt;
  }
  return from_loaded(h.t, "hwloc synthetic", false, nullptr);
}

std::optional<Topology> Topology::from_hwloc_xml(std::string_view xml, std::string* error) {
  Hwloc h;
  if (!h.ok || hwloc_topology_set_xmlbuffer(h.t, xml.data(), static_cast<int>(xml.size())) != 0 ||
      hwloc_topology_load(h.t) != 0) {
    if (error != nullptr) *error = "hwloc cannot read the XML topology";
    return std::nullopt;
  }
  return from_loaded(h.t, "hwloc xml", false, nullptr);
}

std::optional<Topology> Topology::parse_spec(std::string_view spec, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<Topology> {
    // Just the reason: callers (e.g. the scheduler's options check) quote the spec themselves.
    if (error != nullptr) *error = why;
    return std::nullopt;
  };

  // Tokenize into numbers, level words and separators. A run of letters is one token,
  // so the 'x' in "2x8x2" is a separator but "xeon" is an (unknown) word.
  struct Token {
    enum Kind { number, word, separator } kind;
    std::string text;
  };
  std::vector<Token> tokens;
  for (std::size_t i = 0; i < spec.size();) {
    const unsigned char c = static_cast<unsigned char>(spec[i]);
    std::size_t end = i + 1;
    if (std::isspace(c)) {
      i = end;
      continue;
    }
    if (c == '*') {
      tokens.push_back({Token::separator, "*"});
    } else if (std::isdigit(c) ||
               (c == '-' && end < spec.size() && std::isdigit(static_cast<unsigned char>(spec[end])))) {
      // A leading '-' is kept so that "-2 cores" is reported as the number "-2".
      while (end < spec.size() && std::isdigit(static_cast<unsigned char>(spec[end]))) ++end;
      tokens.push_back({Token::number, std::string(spec.substr(i, end - i))});
    } else if (std::isalpha(c)) {
      while (end < spec.size() && std::isalpha(static_cast<unsigned char>(spec[end]))) ++end;
      std::string word(spec.substr(i, end - i));
      std::transform(word.begin(), word.end(), word.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      tokens.push_back({word == "x" ? Token::separator : Token::word, word});
    } else {
      return fail("unexpected character '" + std::string(1, spec[i]) + "'");
    }
    i = end;
  }
  if (tokens.empty()) return fail("empty spec (expected e.g. \"2 sockets x 8 cores x 2 threads\")");

  // Group into "number [word]" items separated by 'x' / '*'.
  enum Level { nodes = 0, sockets = 1, cores = 2, threads = 3, none = 4 };
  struct Item {
    long long count;
    Level level;
    std::string text;  // as written, for error messages
  };
  std::vector<Item> items;
  for (std::size_t t = 0; t < tokens.size();) {
    const Token& tok = tokens[t];
    if (tok.kind != Token::number) {
      return fail(tok.kind == Token::word ? "expected a number before '" + tok.text + "'"
                                          : "unexpected '" + tok.text + "'");
    }
    std::string_view digits = tok.text;
    if (digits.front() == '-') return fail("'" + tok.text + "' must be at least 1");
    auto count = parse_digits(digits);
    if (!count || *count > kMaxSpecCpus) return fail("'" + tok.text + "' is too large (at most 4096 CPUs)");
    if (*count < 1) return fail("'" + tok.text + "' must be at least 1");
    Item item{*count, none, tok.text};
    ++t;
    if (t < tokens.size() && tokens[t].kind == Token::word) {
      std::string word = tokens[t].text;
      item.text += " " + word;
      if (word.size() > 1 && word.back() == 's') word.pop_back();  // plural 's' optional
      if (word == "node")
        item.level = nodes;
      else if (word == "socket")
        item.level = sockets;
      else if (word == "core")
        item.level = cores;
      else if (word == "thread")
        item.level = threads;
      else
        return fail("unknown level '" + tokens[t].text + "' (expected nodes, sockets, cores or threads)");
      ++t;
    }
    items.push_back(item);
    if (t == tokens.size()) break;
    if (tokens[t].kind != Token::separator) return fail("expected 'x' before '" + tokens[t].text + "'");
    if (++t == tokens.size()) return fail("nothing after the last '" + tokens[t - 1].text + "'");
  }

  std::array<long long, 4> counts = {0, 1, 0, 1};  // nodes 0 = "one per socket"
  std::array<const Item*, 4> given = {nullptr, nullptr, nullptr, nullptr};
  const bool short_form = std::all_of(items.begin(), items.end(), [](const Item& i) { return i.level == none; });
  if (short_form) {
    // Bare numbers: "C" or "S x C x T". Two numbers could mean either sockets x cores or
    // cores x threads, so that is refused rather than guessed.
    if (items.size() == 1) {
      items[0].level = cores;
    } else if (items.size() == 3) {
      items[0].level = sockets, items[1].level = cores, items[2].level = threads;
    } else {
      return fail("bare numbers must be \"C\" or \"S x C x T\", not \"" + std::string(trim(spec)) + "\"");
    }
  }
  for (const Item& item : items) {
    if (item.level == none) return fail("'" + item.text + "' has no level (nodes, sockets, cores or threads)");
    if (given[item.level] != nullptr) return fail("'" + item.text + "' repeats '" + given[item.level]->text + "'");
    for (int later = item.level + 1; later < 4; ++later)
      if (given[later] != nullptr) return fail("'" + item.text + "' must come before '" + given[later]->text + "'");
    given[item.level] = &item;
    counts[item.level] = item.count;
  }
  if (given[cores] == nullptr) return fail("missing cores (e.g. \"4 cores\")");

  const long long n_sockets = counts[sockets], n_cores = counts[cores], n_threads = counts[threads];
  const long long n_nodes = given[nodes] != nullptr ? counts[nodes] : n_sockets;
  const long long total = n_sockets * n_cores * n_threads;  // each <= 4096: no overflow
  if (total > kMaxSpecCpus)
    return fail("'" + std::string(trim(spec)) + "' is " + std::to_string(total) + " CPUs, more than 4096");

  // Nodes split sockets evenly: several whole sockets per node, or each socket cut into
  // equal runs of cores (like sub-NUMA clustering). Anything uneven is refused.
  const std::string nodes_text = given[nodes] != nullptr ? given[nodes]->text : "";
  long long sockets_per_node = 1, nodes_per_socket = 1;
  if (n_nodes <= n_sockets) {
    if (n_sockets % n_nodes != 0)
      return fail("'" + nodes_text + "' do not split " + std::to_string(n_sockets) + " sockets evenly");
    sockets_per_node = n_sockets / n_nodes;
  } else {
    if (n_nodes % n_sockets != 0 || n_cores % (n_nodes / n_sockets) != 0)
      return fail("'" + nodes_text + "' do not split " + std::to_string(n_sockets) + " sockets of " +
                  std::to_string(n_cores) + " cores evenly");
    nodes_per_socket = n_nodes / n_sockets;
  }
  const long long cores_per_node = n_cores / nodes_per_socket;

  // One code path: the spec becomes hwloc's synthetic description, read like any other
  // hwloc topology. Each socket is one L3 (the LLC); each core its own L2. NUMA nodes
  // (hwloc's "numa" level attaches a node to each object of the level above it) group
  // whole sockets, or split each socket's L3 into equal runs of cores.
  //
  // hwloc inserts objects one by one, comparing each with its siblings' cpusets, so a
  // level of thousands of objects takes seconds ("4096 cores": 26 s). level() therefore
  // puts groups of at most 16 above a wide level when its count allows (4096 = 16 x 16 x
  // 16); groups are neither cores, caches, nodes nor packages, so nothing else changes.
  // A wide level whose count has a prime factor above 16 (e.g. 4093 cores) stays one
  // level, and loads slowly.
  auto level = [](const char* type, long long count) {
    std::string out;
    while (count > 16) {
      long long d = 16;
      while (d > 1 && count % d != 0) --d;
      if (d == 1) break;
      out += "group:" + std::to_string(d) + " ";
      count /= d;
    }
    return out + type + ":" + std::to_string(count);
  };
  std::string synthetic;
  if (sockets_per_node > 1) {
    synthetic = level("group", n_nodes) + " numa:1 " + level("package", sockets_per_node) + " l3cache:1 " +
                level("l2cache", n_cores) + " core:1 " + level("pu", n_threads);
  } else if (nodes_per_socket > 1) {
    synthetic = level("package", n_sockets) + " l3cache:1 group:" + std::to_string(nodes_per_socket) + " numa:1 " +
                level("l2cache", cores_per_node) + " core:1 " + level("pu", n_threads);
  } else {
    synthetic = level("package", n_sockets) + " numa:1 l3cache:1 " + level("l2cache", n_cores) + " core:1 " +
                level("pu", n_threads);
  }
  std::string hwloc_error;
  auto topo = from_hwloc_synthetic(synthetic, &hwloc_error);
  if (!topo) return fail(hwloc_error);
  topo->source_ = "spec";
  return topo;
}

Topology Topology::flat(int n) {
  Topology topo;
  topo.source_ = "flat";
  // Never empty: callers index cpus by worker % cpu_count().
  for (int i = 0; i < std::max(n, 1); ++i) {
    CpuInfo info;
    info.os_cpu = -1;  // synthetic: nothing here is known to match a kernel CPU
    info.core = i;
    info.l2 = i;
    topo.cpus_.push_back(info);
  }
  return topo;
}

Distance Topology::distance(int a, int b) const noexcept {
  if (a == b) return Distance::smt;
  if (a < 0 || b < 0 || a >= cpu_count() || b >= cpu_count()) return Distance::remote;  // unknown: far
  return distance_between(cpus_[static_cast<std::size_t>(a)], cpus_[static_cast<std::size_t>(b)]);
}

std::string Topology::describe() const {
  std::set<int> packages, nodes, cores, kinds;
  for (const CpuInfo& cpu : cpus_) {
    packages.insert(cpu.package);
    nodes.insert(cpu.numa_node);
    cores.insert(cpu.core);
    kinds.insert(cpu.kind);
  }
  auto count = [](std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  return count(packages.size(), "package", "packages") + ", " + count(nodes.size(), "node", "nodes") + ", " +
         count(cores.size(), "core", "cores") + ", " + count(cpus_.size(), "CPU", "CPUs") +
         (kinds.size() > 1 ? ", " + std::to_string(kinds.size()) + " kinds" : std::string()) + " (" + source_ + ")";
}

std::vector<Victim> steal_order(const Topology& topology, std::uint32_t self, std::uint32_t workers) {
  std::vector<Victim> order;
  if (self >= workers) return order;
  order.reserve(workers - 1);
  const auto n = static_cast<std::uint32_t>(topology.cpu_count());
  // A default-constructed (empty) Topology has no CPUs; put every worker on one unknown
  // CPU (-1) rather than divide by zero. distance(-1, -1) is smt, like flat(1).
  auto cpu_of = [&](std::uint32_t w) { return n == 0 ? -1 : static_cast<int>(w % n); };
  // Walking self+1, self+2, ... and then stable-sorting by distance gives the rotation:
  // within a level each thief starts just after itself, not all at worker 0.
  for (std::uint32_t k = 1; k < workers; ++k) {
    const std::uint32_t w = static_cast<std::uint32_t>((std::uint64_t{self} + k) % workers);
    order.push_back({w, topology.distance(cpu_of(self), cpu_of(w))});
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Victim& a, const Victim& b) { return a.distance < b.distance; });
  return order;
}

}  // namespace lantern
