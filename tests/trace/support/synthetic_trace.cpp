// SPDX-License-Identifier: Apache-2.0
// synthetic_trace.cpp - the simulation behind fork_join_events, and random_events.
#include "support/synthetic_trace.hpp"

#include <algorithm>
#include <limits>
#include <random>

#include "lantern/trace/trace_writer.hpp"

namespace lantern::trace::testing {
namespace {

constexpr std::uint64_t kActive = 0, kIdle = 1, kSleepy = 2, kSleeping = 3;
std::uint64_t transition(std::uint64_t from, std::uint64_t to) { return from << 8 | to; }

// WorkerSim produces one worker's time-ordered event stream.
class WorkerSim {
 public:
  WorkerSim(std::uint32_t worker, std::uint32_t workers, std::uint64_t seed, std::uint32_t labels,
            std::vector<Event>& out)
      : worker_(worker), workers_(workers), labels_(labels), rng_(seed * 7919 + worker), out_(out) {
    tick_ = 1'000'000 + rng_() % 1000;
  }

  void run(std::uint64_t budget) {
    emit(EventId::state, transition(kIdle, kActive), 0);  // started
    while (out_.size() < budget) episode();
    emit(EventId::state, transition(state_, kIdle), 7);  // stopping
  }

 private:
  void emit(EventId type, std::uint64_t a, std::uint64_t b) {
    // Most gaps are a few hundred ticks (~100 ns at 3 GHz); some are long stalls.
    const std::uint64_t r = rng_() % 1000;
    tick_ += r < 990 ? 40 + rng_() % 700 : 10'000 + rng_() % 2'000'000;
    out_.push_back(Event{tick_, worker_, type, {0, 0, 0}, a, b});
    if (type == EventId::state) state_ = static_cast<std::uint64_t>(StatePayload::decode(a, b).to);
  }
  std::uint64_t alloc_task() {
    std::uint64_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      slot = next_slot_++ % 4096;
    }
    return 0x7f3a'0000'0000ull + (static_cast<std::uint64_t>(worker_) << 24) + slot * 128;
  }
  void free_task(std::uint64_t id) { free_.push_back(((id - 0x7f3a'0000'0000ull) & 0xFFFFFF) / 128); }
  std::uint32_t other_worker() {
    return workers_ < 2 ? worker_ : (worker_ + 1 + static_cast<std::uint32_t>(rng_() % (workers_ - 1))) % workers_;
  }

  void run_task(std::uint64_t id, std::uint64_t source, int depth) {
    emit(EventId::task_begin, id, source);
    if (labels_ > 0 && rng_() % 2 == 0) emit(EventId::task_label, id, 1 + rng_() % labels_);  // names itself
    if (depth > 0) {
      const std::uint64_t pushed = alloc_task();
      emit(EventId::push, pushed,
           static_cast<std::uint64_t>(depth) << 32);  // own deque, with its depth (as core reports it)
      if (rng_() % 64 == 0) emit(EventId::push, alloc_task(), 1 + rng_() % 2);  // work posted to a lane
      run_task(alloc_task(), 5, depth - 1);                                     // join: one half inline
      if (rng_() % 10 == 0) {
        // The pushed half was stolen: while waiting, this worker steals something back.
        free_task(pushed);
        emit(EventId::steal, other_worker(), (rng_() % 3) | (2u << 8));
        run_task(alloc_task(), 2, std::max(0, depth - 2));
      } else {
        run_task(pushed, 0, depth - 1);
      }
    }
    emit(EventId::task_end, id, 0);
    free_task(id);
  }

  void episode() {
    if (state_ != kActive) emit(EventId::state, transition(state_, kActive), 1);  // found_work
    const int trees = 1 + static_cast<int>(rng_() % 4);
    for (int i = 0; i < trees; ++i) {
      if (rng_() % 4 == 0) emit(EventId::lane_pop, rng_() % 2, 200 + rng_() % 50'000);
      run_task(alloc_task(), rng_() % 2 ? 1 : 3, 2 + static_cast<int>(rng_() % 5));
      if (rng_() % 16 == 0) emit(EventId::help, rng_() % 2, 100'000 + rng_() % 1'000'000);
      if (rng_() % 8 == 0) emit(EventId::wake, other_worker(), 0);
    }
    emit(EventId::state, transition(kActive, kIdle), 2);  // out_of_work
    const int rounds = static_cast<int>(rng_() % 3);
    for (int i = 0; i < rounds; ++i) emit(EventId::steal_round_failed, workers_ - 1, rng_() % 2);
    if (rng_() % 3 == 0) {
      emit(EventId::steal, other_worker(), (rng_() % 5) | (2u << 8));
      return;  // the next episode starts with found_work
    }
    emit(EventId::state, transition(kIdle, kSleepy), 3);      // searched_enough
    emit(EventId::state, transition(kSleepy, kSleeping), 4);  // fell_asleep
    emit(EventId::state, transition(kSleeping, kActive), 6);  // woken
    if (rng_() % 500 == 0) emit(EventId::dropped, 1 + rng_() % 100, 0);
  }

  std::uint32_t worker_, workers_, labels_;
  std::mt19937_64 rng_;
  std::vector<Event>& out_;
  std::uint64_t tick_ = 0;
  std::uint64_t state_ = kIdle;
  std::vector<std::uint64_t> free_;
  std::uint64_t next_slot_ = 0;
};

}  // namespace

std::vector<Event> fork_join_events(const ForkJoinOptions& options) {
  const std::uint32_t workers = std::max<std::uint32_t>(options.workers, 1);
  std::vector<std::vector<Event>> streams(workers);
  for (std::uint32_t w = 0; w < workers; ++w) {
    streams[w].reserve(options.events / workers + 64);
    WorkerSim(w, workers, options.seed, options.labels, streams[w]).run(options.events / workers);
  }
  // Drain in per-worker batches, round robin, like a collector emptying rings.
  std::vector<Event> out;
  out.reserve(options.events + 64 * workers);
  std::vector<std::size_t> pos(workers, 0);
  const std::size_t batch = std::max<std::uint32_t>(options.batch, 1);
  for (bool more = true; more;) {
    more = false;
    for (std::uint32_t w = 0; w < workers; ++w) {
      const std::size_t n = std::min(batch, streams[w].size() - pos[w]);
      out.insert(out.end(), streams[w].begin() + static_cast<std::ptrdiff_t>(pos[w]),
                 streams[w].begin() + static_cast<std::ptrdiff_t>(pos[w] + n));
      pos[w] += n;
      more |= pos[w] < streams[w].size();
    }
  }
  return out;
}

std::vector<Event> random_events(std::uint64_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  const std::uint32_t workers[] = {0, 1, 2, 3, 7, 63, 1000, 65'536, 0xFFFF'FFFFu};
  std::vector<std::uint64_t> ticks(std::size(workers), 0);
  std::vector<std::uint64_t> last_task(std::size(workers), 0);
  ticks[1] = kMax - 1'000'000;  // a worker near the top of the tick range
  auto value = [&](std::uint64_t related) -> std::uint64_t {
    switch (rng() % 7) {
      case 0: return 0;
      case 1: return kMax;
      case 2: return rng() % 128;
      case 3: return related + rng() % 4096 - 2048;  // near a previous id
      case 4: return related;
      case 5: return rng() >> (rng() % 64);
      default: return rng();
    }
  };
  std::vector<Event> out;
  std::size_t w = 0;
  while (out.size() < count) {
    if (rng() % 4 == 0) w = rng() % std::size(workers);  // runs of one worker, then a switch
    std::uint64_t& t = ticks[w];
    switch (rng() % 10) {
      case 0: t = t > 5000 ? t - rng() % 5000 : t; break;                // a backward step
      case 1: t = t + std::min(kMax - t, rng() >> (rng() % 64)); break;  // a huge gap
      case 2: t = kMax - rng() % 3; break;                               // the maximum
      default: t = t + std::min<std::uint64_t>(kMax - t, rng() % 3000); break;
    }
    const auto type = static_cast<EventId>(rng() % kEventCount);
    Event e{t, workers[w], type, {0, 0, 0}, value(last_task[w]), value(0)};
    if (type == EventId::task_begin || type == EventId::task_end || type == EventId::push) last_task[w] = e.a;
    out.push_back(e);
  }
  return out;
}

LabelTable test_labels(std::uint32_t count) {
  static const char* const kStems[] = {"parse", "render", "io.read", "matmul", "na\u00efve", "\u30bf\u30b9\u30af"};
  LabelTable t;
  for (std::uint32_t id = 1; id <= count; ++id)
    t.define(id, std::string(kStems[id % std::size(kStems)]) + "-" + std::to_string(id));
  return t;
}

TraceHeader test_header(std::uint32_t workers) {
  TraceHeader h;
  h.producer = "lantern trace tests";
  h.hostname = "testhost";
  h.cpu_model = "Synthetic CPU @ 3.00GHz";
  h.topology = "1 package, 1 node, 2 cores, 4 CPUs (spec)";
  for (int i = 0; i < 4; ++i) h.cpus.push_back(CpuRow{i == 3 ? -1 : i, i / 2, i / 2, 0, 0, 0});
  h.workers = workers;
  h.clock = ClockCalibration{true, 1.0 / 3.0, 123'456'789, 987'654'321};
  h.wall_start_unix_ns = 1'700'000'000'000'000'000;
  h.level = Level::full;  // fork_join_events records lane pops and pushes: level full's events
  return h;
}

std::vector<std::uint8_t> write_trace_bytes(const TraceHeader& header, const std::vector<Event>& events,
                                            ChunkLimits limits, const LabelNames* labels) {
  std::vector<std::uint8_t> bytes;
  auto sink = [&bytes](std::span<const std::uint8_t> b, std::string&) {
    bytes.insert(bytes.end(), b.begin(), b.end());
    return true;
  };
  TraceWriter writer = TraceWriter::to_sink(sink, "memory", header, WriterOptions{limits, labels});
  writer.write(events);
  writer.close();
  return bytes;
}

}  // namespace lantern::trace::testing
