// SPDX-License-Identifier: Apache-2.0
// worker_model.hpp - the per-worker context that chunk encoding and decoding share.
//
// Compactness comes from predicting each event from the same worker's earlier events in
// the chunk: its tick (delta from its previous event), its task ids (delta from its
// previous task id), task_end's and task_label's id (the innermost task it began and has
// not ended: a task labels itself while it runs) and task_begin's id (the task it pushed
// last, which a fork-join worker usually pops right back). Encoder and decoder run this one model over the same event
// sequence, so their predictions agree by construction. The model restarts empty at every chunk, which is what lets any
// chunk be decoded alone (after resynchronising, or from a flight recorder).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "lantern/trace/format.hpp"

namespace lantern::trace::detail {

struct WorkerModel {
  bool has_tick = false;
  std::uint64_t last_tick = 0;
  std::uint64_t last_task = 0;  // the previous task id of task_begin / task_end / push / task_label
  bool has_push = false;
  std::uint64_t last_push = 0;
  std::vector<std::uint64_t> open_tasks;  // innermost last, at most kTaskStackDepth

  // predicted_a: the value of `a` this model expects for an event of `type_id`, if any.
  std::optional<std::uint64_t> predicted_a(std::uint32_t type_id) const noexcept {
    if ((type_id == static_cast<std::uint32_t>(EventId::task_end) ||
         type_id == static_cast<std::uint32_t>(EventId::task_label)) &&
        !open_tasks.empty())
      return open_tasks.back();
    if (type_id == static_cast<std::uint32_t>(EventId::task_begin) && has_push) return last_push;
    return std::nullopt;
  }

  // observe updates the model after an event (with its final, decoded values).
  void observe(std::uint32_t type_id, std::uint64_t ticks, std::uint64_t a) {
    has_tick = true;
    last_tick = ticks;
    if (!a_is_task_id(type_id)) return;
    last_task = a;
    if (type_id == static_cast<std::uint32_t>(EventId::task_begin)) {
      // When full, forget the outermost task: only its end loses the prediction.
      if (open_tasks.size() == kTaskStackDepth) open_tasks.erase(open_tasks.begin());
      open_tasks.push_back(a);
    } else if (type_id == static_cast<std::uint32_t>(EventId::task_end)) {
      // Pop even when a differs from the top (events were dropped): the rule only has to
      // be the same on both sides, and popping keeps the stack from growing on damage.
      if (!open_tasks.empty()) open_tasks.pop_back();
    } else if (type_id == static_cast<std::uint32_t>(EventId::push)) {
      has_push = true;
      last_push = a;
    }  // task_label: only last_task
  }
};

// ChunkModel maps worker ids to their models. A chunk's events usually come in runs of
// one worker (a collector drains one ring at a time), so the current worker is cached
// and the hash map is only consulted on a switch.
class ChunkModel {
 public:
  void reset() {
    workers_.clear();
    current_id_ = 0;
    current_ = &workers_[0];
    last_tick_ = 0;
  }
  ChunkModel() { reset(); }
  ChunkModel(const ChunkModel&) = delete;
  ChunkModel& operator=(const ChunkModel&) = delete;

  std::uint32_t current_id() const noexcept { return current_id_; }
  WorkerModel& current() noexcept { return *current_; }
  void switch_to(std::uint32_t worker) {
    current_id_ = worker;
    current_ = &workers_[worker];  // node-based map: the pointer stays valid
  }
  // tick_base: what the current worker's tick delta is taken from. A worker's first event
  // in the chunk is coded against the chunk's previous event (any worker), which is near
  // in time when a collector drains rings in turn; the first event of a chunk against 0.
  std::uint64_t tick_base() const noexcept { return current_->has_tick ? current_->last_tick : last_tick_; }
  void observe(std::uint32_t type_id, std::uint64_t ticks, std::uint64_t a) {
    current_->observe(type_id, ticks, a);
    last_tick_ = ticks;
  }

 private:
  std::unordered_map<std::uint32_t, WorkerModel> workers_;
  std::uint32_t current_id_ = 0;
  WorkerModel* current_ = nullptr;
  std::uint64_t last_tick_ = 0;
};

}  // namespace lantern::trace::detail
