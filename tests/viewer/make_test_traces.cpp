// SPDX-License-Identifier: Apache-2.0
// make_test_traces.cpp - writes the traces the screenshot tests look at, into DIR:
//   states.trace      3 workers with scripted states (each worker a different mix)
//   steals.trace      the synthetic simulation, 4 workers on 2 sockets: steals everywhere
//   one_worker.trace  the simulation with a single worker: nobody to steal from
//   real.trace        a real Scheduler + Recorder run (fork-join, bursts) at level full
//   real_default.trace the same (one round) at the Recorder's default level (default_level)
//   real_states.trace  the same (one round) at level states: no task, steal or help events
//   labels.trace      3 workers running labelled tasks (3 labels, some tasks unlabelled),
//                      with releases from task to task and IO submissions and completions
//   truncated.trace   steals.trace cut in the middle of a chunk
//   corrupt.trace     steals.trace with damaged bytes in a middle chunk
//   newer.trace       steals.trace as written by a future format version (valid CRC)
//   not_a_trace.trace a text file
//   labels_b.trace    labels.trace changed: "render" 2.5x the others (which are shorter), worker 2
//                      idle between tasks (the compare and diff tests' B)
//   flood.trace       short tasks in clusters around one 4.07 ms task per worker (wide_slices)
//   bursts.trace      2 s; worker 0 asleep but active 0.7% of the time in short bursts (state_mix)
//   health.trace      long tasks: three on worker 0, one (the longest) on worker 1 (health_lists)
//   lost_end.trace    a task whose end is in a damaged chunk, later tasks after it (damaged)
//   graph.trace       a known task graph on 2 workers (graph_trace.hpp; scalability)
//   graph_serial.trace the same graph run on 1 worker (the scalability test's --compare B)
//   graph.scale       lantern::analysis::scalability's figures of graph.trace, as the
//                      viewer's layout records them ("scale_figure A work_ns 7150000")
#include <lantern/analysis/scalability.hpp>
#include <lantern/instrumentation/collector.hpp>
#include <lantern/instrumentation/recorder.hpp>
#include <lantern/instrumentation/trace_sinks.hpp>
#include <lantern/lantern.hpp>
#include <lantern/trace/crc32c.hpp>
#include <lantern/trace/trace_writer.hpp>
#include <lantern/viewer/session.hpp>
#include <lantern/viewer/synthetic_trace.hpp>

#include "graph_trace.hpp"
#include "support/fib.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace lantern;

bool write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

// states: 10 ms of scripted states, 1 tick = 1 ns. Worker 0 active, then stopped at 7 ms
// (nothing is drawn after its stop), worker 1 alternating idle and active, worker 2 mostly
// sleeping with a sleepy phase.
std::vector<std::uint8_t> states_trace() {
  trace::TraceHeader h;
  h.producer = "viewer screenshot test";
  h.workers = 3;
  h.clock = trace::ClockCalibration{false, 1.0, 0, 0};
  for (int i = 0; i < 3; ++i) h.cpus.push_back(trace::CpuRow{-1, i, i, 0, 0, 0});
  std::vector<trace::Event> ev;
  auto state = [&](std::uint32_t w, std::uint64_t t, int from, int to, StateReason why = StateReason::started) {
    ev.push_back(trace::Event{1'000'000 + t,
                              w,
                              EventId::state,
                              {0, 0, 0},
                              static_cast<std::uint64_t>(from << 8 | to),
                              static_cast<std::uint64_t>(why)});
  };
  // worker 0: active 0-7 ms, then its thread stops (active -> idle, stopping)
  state(0, 0, 1, 0);
  state(0, 7'000'000, 0, 1, StateReason::stopping);
  // worker 1: idle/active alternating every 1 ms (wide bands at any zoom)
  for (int k = 0; k < 10; ++k) state(1, static_cast<std::uint64_t>(k) * 1'000'000, k % 2 ? 0 : 1, k % 2 ? 1 : 0);
  // worker 2: idle 0-1 ms, sleepy 1-3 ms, sleeping 3-10 ms
  state(2, 0, 0, 1);
  state(2, 1'000'000, 1, 2);
  state(2, 3'000'000, 2, 3);
  for (std::uint32_t w = 1; w < 3; ++w) {
    ev.push_back(trace::Event{1'000'000 + 10'000'000, w, EventId::steal_round_failed, {0, 0, 0}, 0, 0});
  }
  std::vector<std::uint8_t> out;
  auto writer = trace::TraceWriter::to_sink(
      [&](std::span<const std::uint8_t> b, std::string&) {
        out.insert(out.end(), b.begin(), b.end());
        return true;
      },
      "states", h);
  writer.write(ev);
  writer.close();
  return out;
}

// labels_trace: 12 ms, 1 tick = 1 ns. Each worker runs back-to-back 300 us tasks; task k
// labels itself with label 1 + k % 3 ("parse", "render", "compress") unless k % 4 == 3.
// Every task of worker 0 releases the next task of worker 1 (a dependency), and every
// second task of worker 2 submits an IO read that worker 2 completes 200 us later.
std::vector<std::uint8_t> labels_trace(bool slower = false) {
  trace::TraceHeader h;
  h.producer = "viewer screenshot test (labels)";
  h.workers = 3;
  h.clock = trace::ClockCalibration{false, 1.0, 0, 0};
  for (int i = 0; i < 3; ++i) h.cpus.push_back(trace::CpuRow{-1, i, i, 0, 0, 0});
  trace::LabelTable names;
  names.define(1, "parse");
  names.define(2, "render");
  names.define(3, "compress");
  std::vector<trace::Event> ev;
  auto add = [&](std::uint32_t w, std::uint64_t t, EventId type, std::uint64_t a, std::uint64_t b) {
    ev.push_back(trace::Event{1'000'000 + t, w, type, {0, 0, 0}, a, b});
  };
  auto task_id = [](std::uint32_t w, std::uint64_t k) {
    return 0x7f00'0000'0000ull + (std::uint64_t{w} << 20) + k * 64;
  };
  constexpr std::uint64_t kTask = 300'000, kTasks = 40;
  for (std::uint32_t w = 0; w < 3; ++w) {
    add(w, 0, EventId::state, 1 << 8 | 0, 1);  // idle -> active
    for (std::uint64_t k = 0; k < kTasks; ++k) {
      const std::uint64_t t0 = k * kTask + 1000 * w, id = task_id(w, k);
      add(w, t0, EventId::task_begin, id, 0);
      if (k % 4 != 3) add(w, t0 + 5'000, EventId::task_label, id, 1 + k % 3);
      if (w == 0 && k + 1 < kTasks) add(w, t0 + 250'000, EventId::release, task_id(1, k + 1), id);
      if (w == 2 && k % 2 == 0) add(w, t0 + 50'000, EventId::io_submit, 1000 + k, 0 | 9 << 8);
      if (w == 2 && k % 2 == 0) add(w, t0 + 250'000, EventId::io_complete, 1000 + k, 4096);
      // slower (the compare test's B): "render" tasks take 2.5x as long and worker 2
      // idles between its tasks.
      const std::uint64_t length =
          slower && k % 3 == 1 && k % 4 != 3 ? kTask - 20'000 : (slower ? 112'000 : kTask - 20'000);
      add(w, t0 + (slower && k % 3 != 1 ? 112'000 : length), EventId::task_end, id, 0);
      if (slower && w == 2 && k % 3 != 1) {
        add(w, t0 + 120'000, EventId::state, 0 << 8 | 1, 2);
        add(w, t0 + kTask - 10'000, EventId::state, 1 << 8 | 0, 1);
      }
    }
    add(w, kTasks * kTask + 1000 * w, EventId::state, 0 << 8 | 1, 2);  // active -> idle
  }
  std::vector<std::uint8_t> out;
  auto writer = trace::TraceWriter::to_sink(
      [&](std::span<const std::uint8_t> b, std::string&) {
        out.insert(out.end(), b.begin(), b.end());
        return true;
      },
      "labels", h,
      trace::WriterOptions{.chunk_limits = {.target_payload_bytes = 512, .max_events = 64}, .labels = &names});
  writer.write(ev);
  writer.close();
  return out;
}

// to_bytes: a trace of hand-written events, 1 tick = 1 ns; chunks of at most
// `max_events` events; `labels` names task labels.
std::vector<std::uint8_t> to_bytes(std::uint32_t workers, std::vector<trace::Event> ev, const char* what,
                                   const trace::LabelTable* labels = nullptr, std::uint32_t max_events = 0) {
  trace::TraceHeader h;
  h.producer = std::string("viewer screenshot test (") + what + ")";
  h.workers = workers;
  h.clock = trace::ClockCalibration{false, 1.0, 0, 0};
  for (std::uint32_t i = 0; i < workers; ++i)
    h.cpus.push_back(trace::CpuRow{-1, static_cast<std::int32_t>(i), static_cast<std::int32_t>(i), 0, 0, 0});
  std::stable_sort(ev.begin(), ev.end(),
                   [](const trace::Event& x, const trace::Event& y) { return x.ticks < y.ticks; });
  std::vector<std::uint8_t> out;
  trace::WriterOptions options{.labels = labels};
  if (max_events) options.chunk_limits = {.target_payload_bytes = 1 << 16, .max_events = max_events};
  auto writer = trace::TraceWriter::to_sink(
      [&](std::span<const std::uint8_t> b, std::string&) {
        out.insert(out.end(), b.begin(), b.end());
        return true;
      },
      what, h, options);
  writer.write(ev);
  writer.close();
  return out;
}

// flood_trace (scenario wide_slices): 2 workers run 1 us tasks every 2 us, then one 4.07 ms
// task (worker 0: labelled "flood"; worker 1: unlabelled) that starts 0.5 us after the
// last short one, then short tasks again. Zoomed out, the short ones are clusters; the
// long one must still be drawn by itself.
std::vector<std::uint8_t> flood_trace() {
  trace::LabelTable names;
  names.define(1, "flood");
  std::vector<trace::Event> ev;
  auto add = [&](std::uint32_t w, std::uint64_t t, EventId type, std::uint64_t a, std::uint64_t b) {
    ev.push_back(trace::Event{1'000'000 + t, w, type, {0, 0, 0}, a, b});
  };
  for (std::uint32_t w = 0; w < 2; ++w) {
    std::uint64_t id = 0x7f00'0000'0000ull + (std::uint64_t{w} << 24);
    add(w, 0, EventId::state, 1 << 8 | 0, 1);
    std::uint64_t t = 0;
    auto shorts = [&](int n) {
      for (int k = 0; k < n; ++k, t += 2'000) {
        add(w, t, EventId::task_begin, id, 0);
        add(w, t + 1'000, EventId::task_end, id, 0);
        id += 64;
      }
    };
    shorts(1000);
    t -= 500;  // the long task begins 0.5 us after the last short one ended... nearly
    add(w, t, EventId::task_begin, id, 0);
    if (w == 0) add(w, t + 1'000, EventId::task_label, id, 1);
    add(w, t + 4'070'000, EventId::task_end, id, 0);
    id += 64;
    t += 4'070'500;
    shorts(1000);
    add(w, t, EventId::state, 0 << 8 | 1, 2);
  }
  return to_bytes(2, std::move(ev), "flood", &names);
}

// bursts_trace (scenario state_mix): 2 s. Worker 0 sleeps with a 7 us active burst every 1 ms (active
// 0.7% of the time); worker 1 is idle with a 30 us burst every 5 ms.
std::vector<std::uint8_t> bursts_trace() {
  std::vector<trace::Event> ev;
  auto state = [&](std::uint32_t w, std::uint64_t t, int from, int to) {
    ev.push_back(
        trace::Event{1'000'000 + t, w, EventId::state, {0, 0, 0}, static_cast<std::uint64_t>(from << 8 | to), 0});
  };
  state(0, 0, 0, 3);
  state(1, 0, 0, 1);
  for (std::uint64_t t = 500'000; t < 2'000'000'000; t += 1'000'000) {
    state(0, t, 3, 0);
    state(0, t + 7'000, 0, 3);
  }
  for (std::uint64_t t = 2'000'000; t < 2'000'000'000; t += 5'000'000) {
    state(1, t, 1, 0);
    state(1, t + 30'000, 0, 1);
  }
  state(0, 2'000'000'000, 3, 3);
  state(1, 2'000'000'000, 1, 1);
  return to_bytes(2, std::move(ev), "bursts");
}

// lost_end_trace (scenario damaged): worker 0 runs task A from 1 ms; its end (at 2 ms) is in a chunk
// that is damaged afterwards (chunks of 4 events, the fourth chunk's bytes flipped), then
// tasks from 3 ms to 10 ms. Worker 1 runs tasks all along.
std::vector<std::uint8_t> lost_end_trace() {
  std::vector<trace::Event> ev;
  auto add = [&](std::uint32_t w, std::uint64_t t, EventId type, std::uint64_t a, std::uint64_t b) {
    ev.push_back(trace::Event{1'000'000 + t, w, type, {0, 0, 0}, a, b});
  };
  add(0, 0, EventId::state, 1 << 8 | 0, 1);
  add(1, 0, EventId::state, 1 << 8 | 0, 1);
  std::uint64_t id = 0x7f00'0000'0000ull;
  for (std::uint64_t t = 100'000; t < 10'000'000; t += 500'000, id += 64) {
    add(1, t, EventId::task_begin, id, 0);
    add(1, t + 400'000, EventId::task_end, id, 0);
  }
  add(0, 1'000'000, EventId::task_begin, 0xA000, 0);
  add(0, 2'000'000, EventId::task_end, 0xA000, 0);
  for (std::uint64_t t = 3'000'000; t < 10'000'000; t += 1'000'000, id += 64) {
    add(0, t, EventId::task_begin, id, 0);
    add(0, t + 600'000, EventId::task_end, id, 0);
  }
  add(0, 10'000'000, EventId::state, 0 << 8 | 1, 2);
  add(1, 10'000'000, EventId::state, 0 << 8 | 1, 2);
  // Three writes with a flush between: the middle chunk holds only A's end (and what
  // shares its time), and it is the one damaged.
  std::stable_sort(ev.begin(), ev.end(),
                   [](const trace::Event& x, const trace::Event& y) { return x.ticks < y.ticks; });
  const auto cut = [&](std::uint64_t t) {
    return static_cast<std::size_t>(
        std::lower_bound(ev.begin(), ev.end(), 1'000'000 + t,
                         [](const trace::Event& e, std::uint64_t v) { return e.ticks < v; }) -
        ev.begin());
  };
  const std::size_t lo = cut(1'900'000), hi = cut(2'050'000);
  trace::TraceHeader h;
  h.producer = "viewer screenshot test (lost end)";
  h.workers = 2;
  h.clock = trace::ClockCalibration{false, 1.0, 0, 0};
  for (int i = 0; i < 2; ++i) h.cpus.push_back(trace::CpuRow{-1, i, i, 0, 0, 0});
  std::vector<std::uint8_t> out;
  auto writer = trace::TraceWriter::to_sink(
      [&](std::span<const std::uint8_t> b, std::string&) {
        out.insert(out.end(), b.begin(), b.end());
        return true;
      },
      "lost end", h);
  const std::span<const trace::Event> all(ev);
  writer.write(all.subspan(0, lo));
  writer.flush();
  const std::size_t damage_from = out.size();
  writer.write(all.subspan(lo, hi - lo));
  writer.flush();
  const std::size_t damage_to = out.size();
  writer.write(all.subspan(hi));
  writer.close();
  // Flip payload bytes (past the chunk's own header) so its checksum fails.
  for (std::size_t i = damage_from + (damage_to - damage_from) / 2; i < damage_to - 2; ++i) out[i] ^= 0x5A;
  return out;
}

// health_trace (scenario health_lists): long tasks (over the 10 ms threshold): worker 0 at 0, 20 and
// 60 ms lasting 12, 25 and 15 ms; worker 1 at 10 ms lasting 30 ms, 25 ms of which its thread
// waited for a CPU (preempted). Labelled "solve".
std::vector<std::uint8_t> health_trace() {
  trace::LabelTable names;
  names.define(1, "solve");
  std::vector<trace::Event> ev;
  auto add = [&](std::uint32_t w, std::uint64_t t, EventId type, std::uint64_t a, std::uint64_t b) {
    ev.push_back(trace::Event{1'000'000 + t, w, type, {0, 0, 0}, a, b});
  };
  add(0, 0, EventId::state, 1 << 8 | 0, 1);
  add(1, 0, EventId::state, 1 << 8 | 0, 1);
  const struct {
    std::uint32_t w;
    std::uint64_t at_ms, ms;
  } tasks[] = {{0, 0, 12}, {0, 20, 25}, {0, 60, 15}, {1, 10, 30}};
  std::uint64_t id = 0x7f00'0000'1000ull;
  for (const auto& t : tasks) {
    add(t.w, t.at_ms * 1'000'000 + 1'000, EventId::task_begin, id, 0);
    add(t.w, t.at_ms * 1'000'000 + 2'000, EventId::task_label, id, 1);
    const std::uint64_t off_cpu = t.w == 1 ? 25'000'000 : 0;
    add(t.w, (t.at_ms + t.ms) * 1'000'000, EventId::task_end, id, TaskEndPayload{id, false, off_cpu}.encode().b);
    id += 64;
  }
  add(0, 80'000'000, EventId::state, 0 << 8 | 3, 2);
  add(1, 80'000'000, EventId::state, 0 << 8 | 3, 2);
  return to_bytes(2, std::move(ev), "health", &names);
}

// as_newer_version: the same trace claiming format version 99, with a valid header CRC -
// a genuine file from a future writer, not a damaged one (the reader tells them apart).
std::vector<std::uint8_t> as_newer_version(std::vector<std::uint8_t> bytes) {
  bytes[8] = 99;  // u16 version at offset 8, frozen across versions
  bytes[9] = 0;
  std::uint32_t length = 0;
  std::memcpy(&length, bytes.data() + 12, 4);  // u32 header length at offset 12 (little-endian)
  const std::uint32_t crc = trace::crc32c({bytes.data(), length - 4});
  std::memcpy(bytes.data() + length - 4, &crc, 4);
  return bytes;
}

bool real_trace(const std::string& path, trace::Level level = trace::Level::full, int rounds = 3) {
  const std::uint32_t workers = 2;
  instrumentation::Recorder recorder(workers, {.level = level, .ring_capacity = 1 << 18});
  instrumentation::Collector collector(recorder);
  SchedulerOptions options;
  options.workers = workers;
  options.observer = &recorder;
  Scheduler pool(options);
  auto sink = std::make_shared<instrumentation::TraceFileSink>(
      path, instrumentation::make_trace_header(pool, recorder, "viewer tests"));
  collector.attach(sink);
  collector.start();
  for (int round = 0; round < rounds; ++round) {
    pool.run([] { return testing::fib(22); });
    TaskGroup group(pool);
    for (int i = 0; i < 100; ++i) group.spawn([] { std::this_thread::sleep_for(std::chrono::microseconds(20)); });
    group.wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // workers fall asleep
  }
  pool.shutdown();
  collector.stop();
  return sink->ok();
}

}  // namespace

// scale_figures: what the Scalability view must show for `trace`: the analysis' figures,
// computed here by scalability() itself on the trace as the viewer loads it.
bool scale_figures(const std::string& trace, const std::string& out_path) {
  auto session = viewer::Session::open_file(trace);
  session->wait_until_finished();
  const analysis::Scalability s = analysis::scalability(session->model().analysis());
  std::ofstream out(out_path);
  auto line = [&](const char* name, const std::optional<double>& v) {
    char buf[160];
    if (v)
      std::snprintf(buf, sizeof buf, "scale_figure A %s %.17g", name, *v);
    else
      std::snprintf(buf, sizeof buf, "scale_not_computed A %s", name);
    out << buf << '\n';
  };
  line("work_ns", s.work_ns);
  line("span_ns", s.span_ns);
  line("parallelism", s.parallelism);
  line("burdened_span_ns", s.burdened_span_ns);
  line("burdened_parallelism", s.burdened_parallelism);
  line("measured_ns", s.measured_ns);
  out << "scale_counts " << s.tasks << ' ' << s.stretches << ' ' << s.edges << ' ' << s.measured_workers << ' '
      << s.critical_path.size() << '\n';
  for (std::size_t i = 0; i < s.labels.size(); ++i) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "scale_label %zu %.17g %s", i, s.labels[i].span_share, s.labels[i].name.c_str());
    out << buf << '\n';
  }
  return static_cast<bool>(out);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_test_traces DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  viewer::SyntheticOptions steals;
  steals.workers = 4;
  steals.target_events = 60000;
  viewer::SyntheticOptions one = steals;
  one.workers = 1;
  one.sockets = 1;
  const auto good = viewer::synthetic_trace_bytes(steals);
  auto truncated = good;
  truncated.resize(good.size() / 2 + 17);
  auto corrupt = good;
  for (std::size_t i = good.size() / 2; i < good.size() / 2 + 64; ++i) corrupt[i] ^= 0x5A;
  const auto newer = as_newer_version(good);
  const std::string text = "this is not a trace\n";
  const bool ok =
      write_bytes(dir + "/states.trace", states_trace()) && write_bytes(dir + "/steals.trace", good) &&
      write_bytes(dir + "/one_worker.trace", viewer::synthetic_trace_bytes(one)) &&
      write_bytes(dir + "/truncated.trace", truncated) && write_bytes(dir + "/corrupt.trace", corrupt) &&
      write_bytes(dir + "/newer.trace", newer) && write_bytes(dir + "/labels.trace", labels_trace()) &&
      write_bytes(dir + "/labels_b.trace", labels_trace(true)) && write_bytes(dir + "/flood.trace", flood_trace()) &&
      write_bytes(dir + "/bursts.trace", bursts_trace()) && write_bytes(dir + "/lost_end.trace", lost_end_trace()) &&
      write_bytes(dir + "/health.trace", health_trace()) &&
      write_bytes(dir + "/graph.trace", viewer::test::graph_trace_bytes(viewer::test::graph_trace(false))) &&
      write_bytes(dir + "/graph_serial.trace", viewer::test::graph_trace_bytes(viewer::test::graph_trace(true))) &&
      write_bytes(dir + "/not_a_trace.trace", std::vector<std::uint8_t>(text.begin(), text.end())) &&
      real_trace(dir + "/real.trace") &&
      real_trace(dir + "/real_default.trace", instrumentation::RecorderOptions{}.level, 1) &&
      real_trace(dir + "/real_states.trace", trace::Level::states, 1) &&
      scale_figures(dir + "/graph.trace", dir + "/graph.scale");
  if (!ok) {
    std::fprintf(stderr, "make_test_traces: cannot write the traces into %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
