// SPDX-License-Identifier: Apache-2.0
// label_names.hpp - the names of task labels, as a trace carries them.
//
// A task_label event (event_table.hpp) says "task a is a `b`": b is a small label id that
// the program interned once (core's lantern::label). The events carry only ids; each
// chunk carries, after its events, the names of the label ids its task_label events use
// (README "Chunk payload: labels"), so every chunk still decodes on its own: after
// damage, from a flight recorder that dropped older chunks, or on a live stream a viewer
// joined late.
//
// This library is a leaf, so it does not know where names come from: a writer is given a
// LabelNames (instrumentation fills one from lantern::label_name) and a reader collects
// what the chunks define into a LabelTable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace lantern::trace {

// kMaxLabelNameBytes: longest label name a chunk may carry; a writer cuts longer names
// (at a UTF-8 character boundary), a reader treats longer ones as damage.
inline constexpr std::size_t kMaxLabelNameBytes = 255;

// LabelNames is where a writer looks up the names of the label ids its events use.
class LabelNames {
 public:
  virtual ~LabelNames() = default;
  // name: label `id`'s name, or nullopt when it is not known (the chunk then carries no
  // name for it, and readers show the id). Called on the thread that completes chunks
  // (a collector's or a writer's), never on a worker's hot path. The view must stay
  // valid until the next call.
  virtual std::optional<std::string_view> name(std::uint32_t id) const = 0;
};

// LabelTable holds names by id: what a reader collected from a trace's chunks, or what a
// test gives a writer.
class LabelTable final : public LabelNames {
 public:
  // define records `name` for `id`. An id keeps the first name it was given (a writer
  // never gives one id two names); returns false when `name` differs from it.
  bool define(std::uint32_t id, std::string_view name);
  std::optional<std::string_view> name(std::uint32_t id) const override;
  // display_name: the name, or "label N" when the trace never named id N.
  std::string display_name(std::uint32_t id) const;
  std::size_t size() const noexcept { return names_.size(); }
  bool empty() const noexcept { return names_.empty(); }
  const std::map<std::uint32_t, std::string>& all() const noexcept { return names_; }
  void clear() noexcept { names_.clear(); }
  friend bool operator==(const LabelTable& a, const LabelTable& b) { return a.names_ == b.names_; }

 private:
  std::map<std::uint32_t, std::string> names_;
};

// cut_label_name: `name` cut to at most kMaxLabelNameBytes, never inside a UTF-8
// character (a cut backs up over continuation bytes).
std::string_view cut_label_name(std::string_view name) noexcept;

}  // namespace lantern::trace
