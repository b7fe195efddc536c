// SPDX-License-Identifier: Apache-2.0
// label_names.cpp - the reader's table of label names.
#include "lantern/trace/label_names.hpp"

namespace lantern::trace {

bool LabelTable::define(std::uint32_t id, std::string_view name) {
  auto [it, fresh] = names_.try_emplace(id, name);
  return fresh || it->second == name;
}

std::optional<std::string_view> LabelTable::name(std::uint32_t id) const {
  auto it = names_.find(id);
  if (it == names_.end()) return std::nullopt;
  return std::string_view(it->second);
}

std::string LabelTable::display_name(std::uint32_t id) const {
  auto it = names_.find(id);
  return it != names_.end() ? it->second : "label " + std::to_string(id);
}

std::string_view cut_label_name(std::string_view name) noexcept {
  if (name.size() <= kMaxLabelNameBytes) return name;
  std::size_t n = kMaxLabelNameBytes;
  // name[n] is the first byte left out: while it continues a character, that character
  // would be cut in two, so leave it out whole.
  while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;
  return name.substr(0, n);
}

}  // namespace lantern::trace
