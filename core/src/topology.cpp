// topology.cpp - reading the CPU layout from sysfs or a spec, and the steal order.
//
// Everything here is best effort and never throws on bad input: a scheduler that
// cannot read the machine's topology should still start, just with a coarser picture.
#include "lantern/topology.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <system_error>

namespace lantern {
namespace {

namespace fs = std::filesystem;

// Largest CPU number parse_cpu_list accepts. Real kernels stop at a few thousand
// (x86 NR_CPUS is at most 8192); the cap keeps "0-2000000000" from eating memory.
constexpr int kMaxCpuNumber = 65535;
// Largest synthetic topology parse_spec builds.
constexpr long long kMaxSpecCpus = 4096;
// sysfs files are tiny; anything bigger than this is not a file we understand.
constexpr std::size_t kMaxFileBytes = 64 * 1024;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// parse_digits accepts only a plain run of decimal digits (no sign, no spaces), because
// that is all the kernel writes; from_chars alone would also take a leading '-'.
std::optional<long long> parse_digits(std::string_view s) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  long long value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

// read_text returns the whole file, or nullopt if it is missing, unreadable or too big.
std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(kMaxFileBytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return std::nullopt;
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() == kMaxFileBytes) return std::nullopt;  // truncated: don't half-parse it
  return text;
}

// read_int reads a file holding one (possibly negative) decimal integer.
std::optional<int> read_int(const fs::path& path) {
  auto text = read_text(path);
  if (!text) return std::nullopt;
  std::string_view s = trim(*text);
  bool negative = !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  auto value = parse_digits(s);
  if (!value || *value > 0x7fffffff) return std::nullopt;
  return static_cast<int>(negative ? -*value : *value);
}

std::optional<std::vector<int>> read_cpu_list(const fs::path& path) {
  auto text = read_text(path);
  if (!text) return std::nullopt;
  return parse_cpu_list(*text);
}

bool contains(const std::vector<int>& sorted, int value) {
  return std::binary_search(sorted.begin(), sorted.end(), value);
}

// format_cpu_list is the inverse of parse_cpu_list ("0-3,8"); used for domain keys and
// for naming CPUs in warnings. Expects a sorted, duplicate-free list.
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

// numbered_entries lists the entries of `dir` named prefix<N> (cpu3, node1, index2),
// sorted by N. A missing directory is simply empty.
std::vector<std::pair<int, fs::path>> numbered_entries(const fs::path& dir, std::string_view prefix) {
  std::vector<std::pair<int, fs::path>> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    auto n = parse_digits(std::string_view(name).substr(prefix.size()));
    if (n && *n <= kMaxCpuNumber) out.emplace_back(static_cast<int>(*n), it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// DenseIds hands out 0, 1, 2... to distinct keys in first-seen order. Keys are strings
// so that domains found different ways ("L3:0-7" vs a package fallback) never collide.
class DenseIds {
 public:
  int operator()(const std::string& key) {
    return ids_.emplace(key, static_cast<int>(ids_.size())).first->second;
  }

 private:
  std::map<std::string, int> ids_;
};

// CacheKeys are the L2 and last-level cache domains of one CPU; empty when unknown.
struct CacheKeys {
  std::string l2, llc;
};

CacheKeys read_caches(const fs::path& cache_dir, int cpu) {
  CacheKeys keys;
  int llc_level = 0;
  for (const auto& [index, dir] : numbered_entries(cache_dir, "index")) {
    auto level = read_int(dir / "level");
    if (!level || *level < 1) continue;
    // Instruction caches hold no task data, so sharing one says nothing about stealing.
    // A missing type file is read as unified rather than discarding the level.
    std::string type(trim(read_text(dir / "type").value_or("Unified")));
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (type == "instruction") continue;
    auto shared = read_cpu_list(dir / "shared_cpu_list");
    if (!shared || !contains(*shared, cpu)) continue;  // a list without us is nonsense
    std::string key = "L" + std::to_string(*level) + ":" + format_cpu_list(*shared);
    if (*level == 2 && keys.l2.empty()) keys.l2 = key;
    if (*level > llc_level) {
      llc_level = *level;
      keys.llc = key;
    }
  }
  return keys;
}

// kernel_nodes maps each OS CPU to its NUMA node number from node/nodeN/cpulist.
std::map<int, int> kernel_nodes(const fs::path& node_dir) {
  std::map<int, int> node_of;
  for (const auto& [node, dir] : numbered_entries(node_dir, "node")) {
    auto text = read_text(dir / "cpulist");
    if (!text || trim(*text).empty()) continue;  // empty: a memory-only node, not an error
    auto cpus = parse_cpu_list(*text);
    if (!cpus) continue;  // malformed: its CPUs fall back to the package below
    for (int cpu : *cpus) node_of.emplace(cpu, node);  // first (lowest) node wins
  }
  return node_of;
}

}  // namespace

const char* distance_name(Distance d) noexcept {
  switch (d) {
    case Distance::smt: return "smt";
    case Distance::l2: return "l2";
    case Distance::llc: return "llc";
    case Distance::numa: return "numa";
    case Distance::remote: return "remote";
  }
  return "unknown";
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

Topology Topology::from_sysfs(const std::string& root, std::vector<std::string>* warnings) {
  auto warn = [&](const std::string& line) {
    if (warnings != nullptr) warnings->push_back("topology: " + line);
  };
  const fs::path cpu_dir = fs::path(root) / "cpu";

  std::vector<int> online;
  if (auto list = read_cpu_list(cpu_dir / "online")) {
    online = std::move(*list);
  } else {
    warn("cannot read " + (cpu_dir / "online").string() + "; using the cpuN directories");
    for (const auto& entry : numbered_entries(cpu_dir, "cpu")) online.push_back(entry.first);
  }
  if (online.empty()) {
    warn("no CPUs found under " + root + "; assuming a single CPU");
    return flat(1);
  }

  const std::map<int, int> node_of = kernel_nodes(fs::path(root) / "node");
  // Each fallback kind collects the CPUs it hit, so it is reported once, naming them.
  std::vector<int> no_package, no_core, no_cache, no_node;
  DenseIds core_ids, l2_ids, llc_ids, node_ids, package_ids;

  Topology topo;
  topo.source_ = "sysfs";
  for (int cpu : online) {  // online is sorted, so cpus_ ends up sorted by os_cpu
    const fs::path dir = cpu_dir / ("cpu" + std::to_string(cpu));
    const fs::path topo_dir = dir / "topology";

    auto package_id = read_int(topo_dir / "physical_package_id");
    if (!package_id || *package_id < 0) {  // -1 is the kernel's "unknown"
      no_package.push_back(cpu);
      package_id = 0;
    }
    const std::string package = "package" + std::to_string(*package_id);

    // The sibling list is preferred over core_id: core_id is only unique within a die,
    // so two dies of one package can both have a core 0. core_cpus_list is the current
    // name, thread_siblings_list the older one.
    std::string core;
    auto siblings = read_cpu_list(topo_dir / "core_cpus_list");
    if (!siblings || !contains(*siblings, cpu)) siblings = read_cpu_list(topo_dir / "thread_siblings_list");
    if (siblings && contains(*siblings, cpu)) {
      core = "siblings:" + format_cpu_list(*siblings);
    } else if (auto core_id = read_int(topo_dir / "core_id"); core_id && *core_id >= 0) {
      core = package + "/core" + std::to_string(*core_id);
    } else {
      no_core.push_back(cpu);
      core = "cpu" + std::to_string(cpu);  // coarsest safe answer: no SMT sharing assumed
    }

    CacheKeys caches = read_caches(dir / "cache", cpu);
    if (caches.llc.empty()) {
      no_cache.push_back(cpu);
      caches.llc = package;
    }
    if (caches.l2.empty()) caches.l2 = core;  // no shared L2 known: the core's own

    std::string node;
    if (auto it = node_of.find(cpu); it != node_of.end()) {
      node = "node" + std::to_string(it->second);
    } else {
      no_node.push_back(cpu);
      node = package;
    }

    CpuInfo info;
    info.os_cpu = cpu;
    info.core = core_ids(core);
    info.l2 = l2_ids(caches.l2);
    info.llc = llc_ids(caches.llc);
    info.numa_node = node_ids(node);
    info.package = package_ids(package);
    topo.cpus_.push_back(info);
  }

  auto report = [&](const std::vector<int>& cpus, const std::string& what) {
    if (!cpus.empty()) warn("cpu " + format_cpu_list(cpus) + ": " + what);
  };
  report(no_package, "no readable physical_package_id; assuming package 0");
  report(no_core, "no readable core_cpus_list, thread_siblings_list or core_id; each is its own core");
  report(no_cache, "no readable cache info; each core is its own L2 and the package is the LLC");
  report(no_node, "in no NUMA node's cpulist; using the package as the node");
  return topo;
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
      if (word == "node") item.level = nodes;
      else if (word == "socket") item.level = sockets;
      else if (word == "core") item.level = cores;
      else if (word == "thread") item.level = threads;
      else return fail("unknown level '" + tokens[t].text + "' (expected nodes, sockets, cores or threads)");
      ++t;
    }
    items.push_back(item);
    if (t == tokens.size()) break;
    if (tokens[t].kind != Token::separator) return fail("expected 'x' before '" + tokens[t].text + "'");
    if (++t == tokens.size()) return fail("nothing after the last '" + tokens[t - 1].text + "'");
  }

  std::array<long long, 4> counts = {0, 1, 0, 1};  // nodes 0 = "one per socket"
  std::array<const Item*, 4> given = {nullptr, nullptr, nullptr, nullptr};
  const bool short_form =
      std::all_of(items.begin(), items.end(), [](const Item& i) { return i.level == none; });
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
    if (item.level == none)
      return fail("'" + item.text + "' has no level (nodes, sockets, cores or threads)");
    if (given[item.level] != nullptr)
      return fail("'" + item.text + "' repeats '" + given[item.level]->text + "'");
    for (int later = item.level + 1; later < 4; ++later)
      if (given[later] != nullptr)
        return fail("'" + item.text + "' must come before '" + given[later]->text + "'");
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

  Topology topo;
  topo.source_ = "spec";
  // Socket-major, then core, then thread: CPUs 2k and 2k+1 are SMT siblings when T = 2.
  for (long long s = 0; s < n_sockets; ++s)
    for (long long c = 0; c < n_cores; ++c)
      for (long long t = 0; t < n_threads; ++t) {
        CpuInfo info;
        info.os_cpu = -1;
        info.core = static_cast<int>(s * n_cores + c);
        info.l2 = info.core;  // each core its own L2
        info.llc = static_cast<int>(s);  // each socket one LLC
        info.numa_node = static_cast<int>(s / sockets_per_node * nodes_per_socket + c / cores_per_node);
        info.package = static_cast<int>(s);
        topo.cpus_.push_back(info);
      }
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
  const CpuInfo& x = cpus_[static_cast<std::size_t>(a)];
  const CpuInfo& y = cpus_[static_cast<std::size_t>(b)];
  if (x.core == y.core) return Distance::smt;
  if (x.l2 == y.l2) return Distance::l2;
  if (x.llc == y.llc) return Distance::llc;
  if (x.numa_node == y.numa_node) return Distance::numa;
  return Distance::remote;
}

std::string Topology::describe() const {
  std::set<int> packages, nodes, cores;
  for (const CpuInfo& cpu : cpus_) {
    packages.insert(cpu.package);
    nodes.insert(cpu.numa_node);
    cores.insert(cpu.core);
  }
  auto count = [](std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  return count(packages.size(), "package", "packages") + ", " + count(nodes.size(), "node", "nodes") +
         ", " + count(cores.size(), "core", "cores") + ", " + count(cpus_.size(), "CPU", "CPUs") + " (" +
         source_ + ")";
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
