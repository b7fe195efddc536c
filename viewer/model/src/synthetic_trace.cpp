// synthetic_trace.cpp - the simulation behind synthetic traces (see the header).
#include "lantern/viewer/synthetic_trace.hpp"

#include <algorithm>
#include <cmath>

#include "lantern/trace/trace_writer.hpp"

namespace lantern::viewer {
namespace {

using trace::Event;
using trace::EventType;

constexpr std::uint64_t kPeriodNs = 20'000'000;
constexpr std::uint64_t kBusyNs = 14'000'000;
constexpr std::uint64_t kBaseTicks = 1'000'000'000'000ull;  // a plausible TSC reading
enum State : std::uint64_t { active = 0, idle = 1, sleepy = 2, sleeping = 3 };
enum Source : std::uint64_t { own_deque = 0, own_lane = 1, stolen_deque = 2, stolen_lane = 3, help = 4 };

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
  std::uint64_t state = idle;
  std::uint64_t next_task = 0;
};

class Simulation {
 public:
  Simulation(const SyntheticOptions& o) : o_(o), rng_(o.seed) {
    for (std::uint32_t w = 0; w < o.workers; ++w) workers_.push_back(Worker{w, idle, (std::uint64_t{w} + 1) << 40});
  }

  // period p: every worker's events for [p * kPeriodNs, (p + 1) * kPeriodNs).
  void run_period(std::uint64_t p, std::vector<Event>& out) {
    for (Worker& w : workers_) run_worker(w, p, out);
  }

 private:
  // dt: a duration in ticks; ticks: a time stamp.
  std::uint64_t dt(std::uint64_t ns) const { return static_cast<std::uint64_t>(static_cast<double>(ns) / o_.ns_per_tick); }
  std::uint64_t ticks(std::uint64_t ns) const { return kBaseTicks + dt(ns); }
  void emit(std::vector<Event>& out, const Worker& w, std::uint64_t ns, EventType type, std::uint64_t a, std::uint64_t b) {
    out.push_back(Event{ticks(ns), w.index, type, {0, 0, 0}, a, b});
  }
  void set_state(std::vector<Event>& out, Worker& w, std::uint64_t ns, std::uint64_t to, std::uint64_t reason) {
    if (w.state == to) return;
    const PayloadWords p = StatePayload{static_cast<WorkerState>(w.state), static_cast<WorkerState>(to), static_cast<StateReason>(reason)}.encode();
    emit(out, w, ns, EventType::state, p.a, p.b);
    w.state = to;
  }
  std::uint64_t distance(std::uint32_t a, std::uint32_t b) const {
    const std::uint32_t per_socket = std::max<std::uint32_t>(1, o_.workers / std::max<std::uint32_t>(1, o_.sockets));
    return a / per_socket == b / per_socket ? 2 /* llc */ : 4 /* remote */;
  }

  // One task (and maybe a nested one) starting at ns; returns when it ends.
  std::uint64_t task(std::vector<Event>& out, Worker& w, std::uint64_t ns, std::uint64_t source, int depth,
                     std::uint64_t long_ns) {
    const std::uint64_t id = ++w.next_task;
    emit(out, w, ns, EventType::task_begin, id, source);
    ns += long_ns ? long_ns : rng_.exp_ns(3000);
    if (depth < 3 && rng_.chance(0.25)) {
      const std::uint64_t child = w.next_task + 1;
      emit(out, w, ns, EventType::push, child, 0);
      ns = task(out, w, ns + 100, own_deque, depth + 1, 0);
      ns += rng_.exp_ns(800);
    }
    emit(out, w, ns, EventType::task_end, id, 0);
    return ns;
  }

  void run_worker(Worker& w, std::uint64_t p, std::vector<Event>& out) {
    const std::uint64_t start = p * kPeriodNs + w.index * 3000;
    std::uint64_t ns = start;
    const std::uint32_t n = o_.workers;
    if (p == 0) {
      const PayloadWords started = StatePayload{WorkerState::idle, WorkerState::idle, StateReason::started}.encode();
      emit(out, w, ns, EventType::state, started.a, started.b);
    }
    if (w.state == sleeping) {
      const std::uint32_t waker = w.index == 0 ? 0xffffffffu : 0;
      const std::uint64_t latency = rng_.exp_ns(15000);
      ns += latency;
      emit(out, w, ns, EventType::wake, waker, dt(latency));
      set_state(out, w, ns, idle, 6);  // woken
    }
    const bool plant = o_.problems && n > 1;
    // Work that waited in lane 1 while everyone slept (period 2): popped on waking.
    if (plant && p == 2 && w.index == 1) {
      const std::uint64_t wait = 3'500'000;
      emit(out, w, ns, EventType::lane_pop, 1, dt(wait));
      set_state(out, w, ns, active, 1);
      ns = task(out, w, ns, own_lane, 0, 0);
    }
    const std::uint64_t busy_end = p * kPeriodNs + kBusyNs + rng_.exp_ns(400000);
    while (ns < busy_end) {
      const double r = rng_.unit();
      std::uint64_t source = own_deque;
      if (r < 0.08 && n > 1) {
        // Out of local work: search, steal from a victim, run it.
        set_state(out, w, ns, idle, 2);
        ns += rng_.exp_ns(600);
        if (rng_.chance(0.3)) emit(out, w, ns, EventType::steal_round_failed, n - 1, rng_.chance(0.2) ? 1 : 0), ns += 500;
        const std::uint32_t victim = static_cast<std::uint32_t>((w.index + 1 + rng_.next() % (n - 1)) % n);
        source = rng_.chance(0.8) ? stolen_deque : stolen_lane;
        if (source == stolen_lane) emit(out, w, ns, EventType::lane_pop, victim, dt(rng_.exp_ns(40000)));
        const PayloadWords p = StealPayload{victim, static_cast<StealDistance>(distance(w.index, victim)), static_cast<TaskSource>(source)}.encode();
        emit(out, w, ns, EventType::steal, p.a, p.b);
      } else if (r < 0.15) {
        source = own_lane;
        emit(out, w, ns, EventType::lane_pop, w.index, dt(rng_.exp_ns(30000)));
      } else if (r < 0.16 && n > 1) {
        source = help;
        const std::uint32_t lane = (w.index + 1) % n;
        const std::uint64_t age = rng_.exp_ns(200000);
        emit(out, w, ns, EventType::lane_pop, lane, dt(age));
        emit(out, w, ns, EventType::help, lane, dt(age));
      }
      set_state(out, w, ns, active, 1);
      const bool long_task = plant && p == 1 && w.index == 0 && ns > start + 2'000'000 && !planted_long_;
      planted_long_ |= long_task;
      ns = task(out, w, ns, source, 0, long_task ? 12'000'000 : 0);
      ns += rng_.exp_ns(300);
      if (plant && p == 1 && w.index == n - 1 && ns > start + 5'000'000 && !planted_drop_) {
        planted_drop_ = true;
        emit(out, w, ns, EventType::dropped, 750, 0);
      }
    }
    // Out of work: search (one worker searches far too long once), then sleep.
    set_state(out, w, ns, idle, 2);
    const std::uint64_t search = plant && p == 2 && w.index == 0 ? 6'000'000 : rng_.exp_ns(150000);
    const std::uint64_t search_end = ns + search;
    while (ns < search_end) {
      ns += std::max<std::uint64_t>(5000, search / 20);
      emit(out, w, std::min(ns, search_end), EventType::steal_round_failed, n - 1, 0);
    }
    set_state(out, w, search_end, sleepy, 3);
    set_state(out, w, search_end + rng_.exp_ns(20000), sleeping, 4);
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
    h.cpus.push_back(trace::CpuRow{-1, static_cast<std::int32_t>(i), static_cast<std::int32_t>(i), socket, socket, socket});
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
