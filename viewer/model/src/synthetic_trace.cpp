// SPDX-License-Identifier: Apache-2.0
// synthetic_trace.cpp - the simulation behind synthetic traces (see the header).
#include "lantern/viewer/synthetic_trace.hpp"

#include <algorithm>
#include <cmath>

#include "lantern/trace/trace_writer.hpp"

namespace lantern::viewer {
namespace {

using trace::Event;
using trace::make_event;

constexpr std::uint64_t kPeriodNs = 20'000'000;
constexpr std::uint64_t kBusyNs = 14'000'000;
constexpr std::uint64_t kBaseTicks = 1'000'000'000'000ull;  // a plausible TSC reading

class Rng {  // splitmix64: deterministic across platforms
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  std::uint64_t exp_ns(double mean) { return static_cast<std::uint64_t>(-std::log(1.0 - unit()) * mean) + 50; }
  bool chance(double p) { return unit() < p; }

 private:
  std::uint64_t s_;
};

struct Worker {
  std::uint32_t index;
  WorkerState state = WorkerState::idle;
  std::uint64_t next_task = 0;
};

class Simulation {
 public:
  Simulation(const SyntheticOptions& o) : o_(o), rng_(o.seed) {
    for (std::uint32_t w = 0; w < o.workers; ++w)
      workers_.push_back(Worker{w, WorkerState::idle, (std::uint64_t{w} + 1) << 40});
  }

  // period p: every worker's events for [p * kPeriodNs, (p + 1) * kPeriodNs).
  void run_period(std::uint64_t p, std::vector<Event>& out) {
    for (Worker& w : workers_) run_worker(w, p, out);
  }

 private:
  // dt: a duration in ticks; ticks: a time stamp.
  std::uint64_t dt(std::uint64_t ns) const {
    return static_cast<std::uint64_t>(static_cast<double>(ns) / o_.ns_per_tick);
  }
  std::uint64_t ticks(std::uint64_t ns) const { return kBaseTicks + dt(ns); }
  // emit: an event with a typed payload (the vocabulary's codec packs it).
  template <class P>
  void emit(std::vector<Event>& out, const Worker& w, std::uint64_t ns, const P& payload) {
    out.push_back(make_event(ticks(ns), w.index, payload));
  }
  void set_state(std::vector<Event>& out, Worker& w, std::uint64_t ns, WorkerState to, StateReason reason) {
    if (w.state == to) return;
    emit(out, w, ns, StatePayload{w.state, to, reason});
    w.state = to;
  }
  // distance: as the header's topology (synthetic_header) says: one LLC per socket.
  StealDistance distance(std::uint32_t a, std::uint32_t b) const {
    const std::uint32_t per_socket = std::max<std::uint32_t>(1, o_.workers / std::max<std::uint32_t>(1, o_.sockets));
    return a / per_socket == b / per_socket ? StealDistance::llc : StealDistance::remote;
  }

  // One task (and maybe a nested one) starting at ns; returns when it ends.
  std::uint64_t task(std::vector<Event>& out, Worker& w, std::uint64_t ns, TaskSource source, int depth,
                     std::uint64_t long_ns) {
    const std::uint64_t id = ++w.next_task;
    emit(out, w, ns, TaskBeginPayload{id, source});
    ns += long_ns ? long_ns : rng_.exp_ns(3000);
    if (depth < 3 && rng_.chance(0.25)) {
      const std::uint64_t child = w.next_task + 1;
      emit(out, w, ns, PushPayload::own_deque(child, 0));
      ns = task(out, w, ns + 100, TaskSource::own_deque, depth + 1, 0);
      ns += rng_.exp_ns(800);
    }
    emit(out, w, ns, TaskEndPayload{id, false});
    return ns;
  }

  void run_worker(Worker& w, std::uint64_t p, std::vector<Event>& out) {
    const std::uint64_t start = p * kPeriodNs + w.index * 3000;
    std::uint64_t ns = start;
    const std::uint32_t n = o_.workers;
    if (p == 0) {
      emit(out, w, ns, StatePayload{WorkerState::idle, WorkerState::idle, StateReason::started});
    }
    if (w.state == WorkerState::sleeping) {
      // Woken for work: worker 0 by a thread outside the pool, the others by worker 0.
      const std::uint32_t waker = w.index == 0 ? kOutsideWaker : 0;
      const std::uint64_t latency = rng_.exp_ns(15000);
      ns += latency;
      emit(out, w, ns, WakePayload{waker, WakeCause::work, dt(latency)});
      set_state(out, w, ns, WorkerState::idle, StateReason::woken);
    }
    const bool plant = o_.problems && n > 1;
    // Work that waited in lane 1 while everyone slept (period 2): popped on waking.
    if (plant && p == 2 && w.index == 1) {
      const std::uint64_t wait = 3'500'000;
      emit(out, w, ns, LanePopPayload{1, dt(wait)});
      set_state(out, w, ns, WorkerState::active, StateReason::found_work);
      ns = task(out, w, ns, TaskSource::own_lane, 0, 0);
    }
    const std::uint64_t busy_end = p * kPeriodNs + kBusyNs + rng_.exp_ns(400000);
    while (ns < busy_end) {
      const double r = rng_.unit();
      TaskSource source = TaskSource::own_deque;
      if (r < 0.08 && n > 1) {
        // Out of local work: search, steal from a victim, run it.
        set_state(out, w, ns, WorkerState::idle, StateReason::out_of_work);
        ns += rng_.exp_ns(600);
        if (rng_.chance(0.3)) {
          emit(out, w, ns, StealRoundFailedPayload{n - 1, rng_.chance(0.2) ? 1u : 0u});
          ns += 500;
        }
        const std::uint32_t victim = static_cast<std::uint32_t>((w.index + 1 + rng_.next() % (n - 1)) % n);
        source = rng_.chance(0.8) ? TaskSource::stolen_deque : TaskSource::stolen_lane;
        if (source == TaskSource::stolen_lane) emit(out, w, ns, LanePopPayload{victim, dt(rng_.exp_ns(40000))});
        emit(out, w, ns, StealPayload{victim, distance(w.index, victim), source});
      } else if (r < 0.15) {
        source = TaskSource::own_lane;
        emit(out, w, ns, LanePopPayload{w.index, dt(rng_.exp_ns(30000))});
      } else if (r < 0.16 && n > 1) {
        source = TaskSource::help;
        const std::uint32_t lane = (w.index + 1) % n;
        const std::uint64_t age = rng_.exp_ns(200000);
        emit(out, w, ns, LanePopPayload{lane, dt(age)});
        emit(out, w, ns, HelpPayload{lane, dt(age)});
      }
      set_state(out, w, ns, WorkerState::active, StateReason::found_work);
      const bool long_task = plant && p == 1 && w.index == 0 && ns > start + 2'000'000 && !planted_long_;
      planted_long_ |= long_task;
      ns = task(out, w, ns, source, 0, long_task ? 12'000'000 : 0);
      ns += rng_.exp_ns(300);
      if (plant && p == 1 && w.index == n - 1 && ns > start + 5'000'000 && !planted_drop_) {
        planted_drop_ = true;
        emit(out, w, ns, DroppedPayload{750, DropReason::ring_full});
      }
    }
    // Out of work: search (one worker searches far too long once), then sleep.
    set_state(out, w, ns, WorkerState::idle, StateReason::out_of_work);
    const std::uint64_t search = plant && p == 2 && w.index == 0 ? 6'000'000 : rng_.exp_ns(150000);
    const std::uint64_t search_end = ns + search;
    while (ns < search_end) {
      ns += std::max<std::uint64_t>(5000, search / 20);
      emit(out, w, std::min(ns, search_end), StealRoundFailedPayload{n - 1, 0});
    }
    set_state(out, w, search_end, WorkerState::sleepy, StateReason::searched_enough);
    set_state(out, w, search_end + rng_.exp_ns(20000), WorkerState::sleeping, StateReason::fell_asleep);
  }

  SyntheticOptions o_;
  Rng rng_;
  bool planted_long_ = false;
  bool planted_drop_ = false;
  std::vector<Worker> workers_;
};

}  // namespace

trace::TraceHeader synthetic_header(const SyntheticOptions& o) {
  trace::TraceHeader h;
  h.producer = "lantern viewer synthetic trace";
  h.hostname = "synthetic";
  h.cpu_model = "simulated";
  const std::uint32_t sockets = std::max<std::uint32_t>(1, std::min(o.sockets, o.workers));
  const std::uint32_t per_socket = std::max<std::uint32_t>(1, o.workers / sockets);
  h.topology = std::to_string(sockets) + " packages, " + std::to_string(o.workers) + " cores (synthetic)";
  for (std::uint32_t i = 0; i < o.workers; ++i) {
    const auto socket = static_cast<std::int32_t>(std::min(i / per_socket, sockets - 1));
    h.cpus.push_back(
        trace::CpuRow{-1, static_cast<std::int32_t>(i), static_cast<std::int32_t>(i), socket, socket, socket});
  }
  h.workers = o.workers;
  h.clock = trace::ClockCalibration{true, o.ns_per_tick, kBaseTicks, 0};
  h.wall_start_unix_ns = 1'700'000'000'000'000'000;
  return h;
}

void generate_synthetic(const SyntheticOptions& o, const std::function<void(std::span<const trace::Event>)>& sink) {
  Simulation sim(o);
  std::vector<Event> batch;
  std::uint64_t total = 0;
  for (std::uint64_t p = 0; total < o.target_events; ++p) {
    batch.clear();
    sim.run_period(p, batch);
    total += batch.size();
    sink(batch);
  }
}

std::vector<std::uint8_t> synthetic_trace_bytes(const SyntheticOptions& o) {
  std::vector<std::uint8_t> bytes;
  auto writer = trace::TraceWriter::to_sink(
      [&](std::span<const std::uint8_t> b, std::string&) {
        bytes.insert(bytes.end(), b.begin(), b.end());
        return true;
      },
      "<memory>", synthetic_header(o));
  generate_synthetic(o, [&](std::span<const Event> events) { writer.write(events); });
  writer.close();
  return bytes;
}

bool write_synthetic_trace(const std::string& path, const SyntheticOptions& o, std::string* error) {
  auto writer = trace::TraceWriter::create(path, synthetic_header(o));
  generate_synthetic(o, [&](std::span<const Event> events) { writer.write(events); });
  if (!writer.close() || !writer.ok()) {
    if (error) *error = writer.error() ? writer.error()->message : "cannot write " + path;
    return false;
  }
  return true;
}

}  // namespace lantern::viewer
