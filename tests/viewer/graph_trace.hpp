// SPDX-License-Identifier: Apache-2.0
// graph_trace.hpp - a trace whose task graph, work and span are known, written with the
// vocabulary's payloads (spawn, wait_begin, wait_end) as a recording at level graph
// would write them. 1 tick = 1 ns.
//
//   root R (label "root"): 100 us, then spawns into its TaskGroup G a chain head A and six
//   fan-out tasks F1..F6, waits for G, and runs 50 us more.
//   A -> B -> C -> D (label "chain"): each runs 1 ms, then (but D) spawns the next into a
//   TaskGroup of its own, waits for it, and runs 1 us more (a recursion four deep).
//   F1..F6 (label "fanout"): 500 us each.
// Work T1 = 150 us + 4.003 ms + 3 ms = 7.153 ms. Span = 100 us + 4 ms + 3 us + 50 us =
// 4.153 ms: R's first stretch, A..D's first stretches, C's, B's and A's last, R's last.
// On two workers (parallel): worker 0 runs R and, while R waits, F1..F6 nested in it;
// worker 1 steals A and runs the chain nested in itself; R resumes 1 us after A ends:
// 4.155 ms measured. On one worker (serial): worker 0 runs everything, nested in R's wait.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <lantern/trace/label_names.hpp>
#include <lantern/trace/trace_writer.hpp>

namespace lantern::viewer::test {

struct GraphTrace {
  static constexpr double kWorkNs = 7'153'000, kSpanNs = 4'153'000;
  static constexpr std::uint64_t kRoot = 0x10'0000, kGroup = 0x90'0000;
  static constexpr std::uint64_t chain(int k) { return 0x20'0000 + static_cast<std::uint64_t>(k) * 0x100; }
  static constexpr std::uint64_t chain_group(int k) { return 0xA0'0000 + static_cast<std::uint64_t>(k) * 0x100; }
  static constexpr std::uint64_t fanout(int k) { return 0x30'0000 + static_cast<std::uint64_t>(k) * 0x100; }
  std::uint32_t workers = 2;
  trace::LabelTable labels;
  std::vector<trace::Event> events;
  double measured_ns = 0;
};

inline GraphTrace graph_trace(bool serial) {
  GraphTrace g;
  g.workers = serial ? 1 : 2;
  g.labels.define(1, "chain");
  g.labels.define(2, "fanout");
  g.labels.define(3, "root");
  constexpr std::uint64_t kBase = 1'000'000, us = 1000;
  auto add = [&](std::uint32_t w, std::uint64_t t, EventId type, PayloadWords p) {
    g.events.push_back(trace::Event{kBase + t, w, type, {0, 0, 0}, p.a, p.b});
  };
  auto begin = [&](std::uint32_t w, std::uint64_t t, std::uint64_t id, TaskSource source, std::uint32_t label) {
    add(w, t, EventId::task_begin, TaskBeginPayload{id, source}.encode());
    add(w, t, EventId::task_label, TaskLabelPayload{id, label}.encode());
  };
  auto end = [&](std::uint32_t w, std::uint64_t t, std::uint64_t id) {
    add(w, t, EventId::task_end, TaskEndPayload{id}.encode());
  };
  auto spawn = [&](std::uint32_t w, std::uint64_t t, std::uint64_t id, std::uint64_t group) {
    add(w, t, EventId::spawn, SpawnPayload{id, SpawnKind::task_group, group}.encode());
  };
  auto wait = [&](std::uint32_t w, std::uint64_t t, std::uint64_t group, bool begins) {
    if (begins)
      add(w, t, EventId::wait_begin, WaitBeginPayload{group, WaitKind::task_group}.encode());
    else
      add(w, t, EventId::wait_end, WaitEndPayload{group, WaitKind::task_group}.encode());
  };
  auto state = [&](std::uint32_t w, std::uint64_t t, WorkerState from, WorkerState to, StateReason why) {
    add(w, t, EventId::state, StatePayload{from, to, why}.encode());
  };
  const std::uint32_t chain_worker = serial ? 0 : 1;
  for (std::uint32_t w = 0; w < g.workers; ++w)
    state(w, 0, WorkerState::idle, WorkerState::active, StateReason::started);
  begin(0, 0, GraphTrace::kRoot, TaskSource::own_lane, 3);
  spawn(0, 100 * us, GraphTrace::chain(0), GraphTrace::kGroup);
  for (int k = 0; k < 6; ++k) spawn(0, 100 * us, GraphTrace::fanout(k), GraphTrace::kGroup);
  wait(0, 100 * us, GraphTrace::kGroup, true);
  // Worker 0 runs the fan-out while R waits (nested in R's slice).
  for (int k = 0; k < 6; ++k) {
    const std::uint64_t t = 100 * us + static_cast<std::uint64_t>(k) * 500 * us;
    begin(0, t, GraphTrace::fanout(k), TaskSource::own_deque, 2);
    end(0, t + 500 * us, GraphTrace::fanout(k));
  }
  // The chain: stolen by worker 1 at 101 us (parallel), or run by worker 0 after the fan-out.
  std::uint64_t t = serial ? 3100 * us : 101 * us;
  if (!serial) {
    state(1, 0, WorkerState::active, WorkerState::idle, StateReason::out_of_work);
    state(1, t, WorkerState::idle, WorkerState::active, StateReason::found_work);
    add(1, t, EventId::steal, StealPayload{0, StealDistance::l2, TaskSource::stolen_deque}.encode());
  }
  // A..D: each nested in the one before (it waits for its group while the next runs).
  for (int k = 0; k < 4; ++k) {
    begin(chain_worker, t, GraphTrace::chain(k), k == 0 && !serial ? TaskSource::stolen_deque : TaskSource::own_deque,
          1);
    t += 1000 * us;
    if (k < 3) {
      spawn(chain_worker, t, GraphTrace::chain(k + 1), GraphTrace::chain_group(k));
      wait(chain_worker, t, GraphTrace::chain_group(k), true);
    }
  }
  end(chain_worker, t, GraphTrace::chain(3));
  for (int k = 2; k >= 0; --k) {  // C, B, A resume, run 1 us more, and end
    wait(chain_worker, t, GraphTrace::chain_group(k), false);
    t += us;
    end(chain_worker, t, GraphTrace::chain(k));
  }
  if (!serial) state(1, t, WorkerState::active, WorkerState::idle, StateReason::out_of_work);
  // R resumes 1 us after the last task of its group ended, and runs 50 us more.
  wait(0, t + us, GraphTrace::kGroup, false);
  end(0, t + 51 * us, GraphTrace::kRoot);
  state(0, t + 52 * us, WorkerState::active, WorkerState::idle, StateReason::out_of_work);
  g.measured_ns = static_cast<double>(t + 51 * us);
  std::stable_sort(g.events.begin(), g.events.end(),
                   [](const trace::Event& x, const trace::Event& y) { return x.ticks < y.ticks; });
  return g;
}

// graph_trace_bytes: the trace file (format version 5, header level graph).
inline std::vector<std::uint8_t> graph_trace_bytes(const GraphTrace& g) {
  trace::TraceHeader h;
  h.producer = "viewer test (known task graph)";
  h.workers = g.workers;
  h.level = trace::Level::graph;
  h.clock = trace::ClockCalibration{false, 1.0, 0, 0};
  for (std::uint32_t i = 0; i < g.workers; ++i)
    h.cpus.push_back(trace::CpuRow{-1, 0, static_cast<std::int32_t>(i), 0, 0, 0});
  std::vector<std::uint8_t> out;
  auto writer = trace::TraceWriter::to_sink(
      [&](std::span<const std::uint8_t> b, std::string&) {
        out.insert(out.end(), b.begin(), b.end());
        return true;
      },
      "graph", h, trace::WriterOptions{.labels = &g.labels});
  writer.write(g.events);
  writer.close();
  return out;
}

}  // namespace lantern::viewer::test
