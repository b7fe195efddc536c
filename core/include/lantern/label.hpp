// SPDX-License-Identifier: Apache-2.0
// label.hpp - optional names for tasks: "this task is a `parse`".
//
//   static const lantern::Label kParse = lantern::label("parse");   // intern once (locks)
//   pool.spawn([] { lantern::label_task(kParse); parse(); });        // label cheaply (no lock)
//
// A label is a small id for an interned name. label_task reports the task_label hook for
// the task the calling worker is running (observer.hpp), so a trace, the viewer and the
// Chrome export can name its slices and group task statistics by label. Names are
// interned once per process and never freed: ids are dense from 1, and an id's name
// never changes, so a collector can look names up at any time (label_name) while the
// workers keep only ids.
//
// Thread safety: label, label_name and label_count may be called from any thread at any
// time, including before main and from inside tasks; label_task from inside a task.
#pragma once

#include <cstdint>
#include <string_view>

#include "lantern/detail/worker.hpp"
#include "lantern/observer.hpp"

namespace lantern {

// Label is an interned task name: a value type wrapping its id (0: no label).
class Label {
 public:
  constexpr Label() noexcept = default;
  constexpr explicit Label(std::uint32_t id) noexcept : id_(id) {}
  constexpr std::uint32_t id() const noexcept { return id_; }
  constexpr explicit operator bool() const noexcept { return id_ != 0; }
  friend constexpr bool operator==(Label, Label) noexcept = default;

 private:
  std::uint32_t id_ = 0;
};

// kMaxLabels bounds the labels of a process: ids 1..kMaxLabels - 1 for names, and the
// last id, kMaxLabels, for kOverflowLabelName. Labels name kinds of tasks (a few dozen,
// typically), not individual tasks: a program that interns names without bound (a
// request id in the name) fills the table, and from then on every new name gets the
// overflow label, while names interned before keep theirs. Nothing fails.
inline constexpr std::uint32_t kMaxLabels = 4096;
inline constexpr std::string_view kOverflowLabelName = "<overflow>";
// kMaxLabelNameBytes: longer names are cut to this many bytes (at a UTF-8 character
// boundary) before they are interned; the trace format carries names up to this length.
inline constexpr std::size_t kMaxLabelNameBytes = 255;

// label interns `name` and returns its label: the same name gives the same label, in
// any thread. Takes a lock and may allocate: call it once per kind of task (a static, a
// member), not per task. An empty name gives the empty Label (no label).
Label label(std::string_view name);

// label_name: the name of label `id`, valid for the rest of the process; empty for 0 and
// for ids not (yet) handed out. Lock-free: a collector may call it while others intern.
std::string_view label_name(std::uint32_t id) noexcept;
inline std::string_view label_name(Label l) noexcept { return label_name(l.id()); }

// label_count: how many labels exist; ids 1..label_count() all have names. A consumer
// that has seen n of them fetches label_name(n + 1 .. label_count()).
std::uint32_t label_count() noexcept;

// label_task names the task the calling worker is running: it reports the task_label
// hook (task id, label id) to the scheduler's observer, which a Recorder turns into a
// trace event at level "tasks". No lock, no allocation: a relaxed load and a branch when
// nobody observes. A no-op outside a pool's worker, for the empty label, and compiled
// out with -DLANTERN_OBSERVER=OFF. A task may label itself more than once; readers show
// the last label.
inline void label_task(Label l) noexcept {
  if (!l) return;
#if LANTERN_OBSERVER
  if (detail::Worker* w = detail::tls_worker) {
    if (detail::Job* task = w->current_task()) LANTERN_HOOK(*w, TaskLabelPayload{detail::task_id(task), l.id()});
  }
#endif
}

}  // namespace lantern
