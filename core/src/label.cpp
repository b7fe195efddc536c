// SPDX-License-Identifier: Apache-2.0
// label.cpp - the process's label names: interned under a lock, read without one.
//
// Interning (label) is rare and takes a mutex. Reading (label_name, label_count) must
// work from a collector thread while workers run and others intern, so the names live in
// a fixed array of atomic pointers to strings that are never freed or moved: slot `id` is
// written once, before count is raised past it (release), and a reader that loads count
// (acquire) may read every slot below it. The registry itself is never destroyed, so
// names stay valid through static destruction and for threads still running at exit.
#include "lantern/label.hpp"

#include <array>
#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>

namespace lantern {
namespace {

struct LabelRegistry {
  std::mutex mutex;
  std::unordered_map<std::string_view, std::uint32_t> ids;              // keys view the strings in `names`
  std::array<std::atomic<const std::string*>, kMaxLabels + 1> names{};  // [id]; [0] unused
  std::atomic<std::uint32_t> count{0};

  // add: the next id for `name`; requires mutex.
  std::uint32_t add(std::string_view name) {
    const std::uint32_t id = count.load(std::memory_order_relaxed) + 1;
    names[id].store(new std::string(name), std::memory_order_relaxed);
    count.store(id, std::memory_order_release);  // publishes names[id]
    return id;
  }
};

LabelRegistry& registry() {
  static LabelRegistry* const r = new LabelRegistry;  // never destroyed, see above
  return *r;
}

// cut: at most kMaxLabelNameBytes, never inside a UTF-8 character.
std::string_view cut(std::string_view name) noexcept {
  if (name.size() <= kMaxLabelNameBytes) return name;
  std::size_t n = kMaxLabelNameBytes;
  while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;
  return name.substr(0, n);
}

}  // namespace

Label label(std::string_view name) {
  name = cut(name);
  if (name.empty()) return Label{};
  LabelRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (auto it = r.ids.find(name); it != r.ids.end()) return Label{it->second};
  const std::uint32_t count = r.count.load(std::memory_order_relaxed);
  if (count + 1 >= kMaxLabels) {
    // Full: the last id is the shared overflow label (not in `ids`, so a program that
    // named something "<overflow>" itself keeps its own label).
    if (count + 1 == kMaxLabels) r.add(kOverflowLabelName);
    return Label{kMaxLabels};
  }
  const std::uint32_t id = r.add(name);
  r.ids.emplace(*r.names[id].load(std::memory_order_relaxed), id);
  return Label{id};
}

std::string_view label_name(std::uint32_t id) noexcept {
  const LabelRegistry& r = registry();
  if (id == 0 || id > r.count.load(std::memory_order_acquire)) return {};
  return *r.names[id].load(std::memory_order_relaxed);  // ordered by the acquire above
}

std::uint32_t label_count() noexcept { return registry().count.load(std::memory_order_acquire); }

}  // namespace lantern
