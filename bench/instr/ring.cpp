// SPDX-License-Identifier: Apache-2.0
// ring.cpp - lantern_instr_bench's section A2, ring: a worker's event ring alone. A
// producer pushes 32-byte events back to back into Lantern's EventRing and into
// Boost.Lockfree's spsc_queue of the same capacity (32768) while a consumer thread
// drains each; the figure is the producer's time per delivered event.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <boost/lockfree/spsc_queue.hpp>

#include "instr_bench.hpp"
#include "lantern/instrumentation/event_ring.hpp"

namespace bench::instr {
namespace {

using lantern::EventId;
using lantern::trace::Event;

// time_ring_pushes: the producer's time for n pushes while a consumer drains the ring;
// *failed counts the pushes that found it full.
template <class Ring>
double time_ring_pushes(Ring& ring, long n, long* failed) {
  std::atomic<bool> done{false};
  std::thread consumer([&] {
    std::vector<Event> out(4096);
    while (!done.load(std::memory_order_acquire)) {
      ring.pop(out.data(), out.size());
    }
  });
  long misses = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    const auto tick = static_cast<std::uint64_t>(i);
    if (!ring.push(Event{tick, 0, EventId::task_begin, {0, 0, 0}, static_cast<std::uint64_t>(i), 0})) ++misses;
  }
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  done.store(true, std::memory_order_release);
  consumer.join();
  *failed += misses;
  return t;
}

}  // namespace

void bench_ring(Context& ctx) {
  const long n = ctx.config.quick ? 200000 : 4000000;
  std::vector<double> ours, boost_ring, ours_attempt, boost_attempt;  // seconds per delivered event, per attempt
  long failed_ours = 0, failed_boost = 0;
  for (int rep = 0; rep <= ctx.config.reps; ++rep) {
    lantern::instrumentation::EventRing a(32768);
    boost::lockfree::spsc_queue<Event> b(32768);
    long fa = 0, fb = 0;
    // Alternate the order each repetition so neither ring always runs first.
    double ta, tb;
    if (rep % 2 == 0) {
      ta = time_ring_pushes(a, n, &fa);
      tb = time_ring_pushes(b, n, &fb);
    } else {
      tb = time_ring_pushes(b, n, &fb);
      ta = time_ring_pushes(a, n, &fa);
    }
    if (rep > 0) {  // rep 0 warms up
      // Per delivered event: the producer's time over the pushes that went in. Per
      // attempt would reward a ring whose consumer falls behind (a failed push is cheap):
      // EventRing's consumer evicts the lines it read, which makes it slower than
      // Boost's here, where the producer pushes back to back with no clock read.
      ours.push_back(ta / static_cast<double>(std::max(1L, n - fa)));
      boost_ring.push_back(tb / static_cast<double>(std::max(1L, n - fb)));
      ours_attempt.push_back(ta / static_cast<double>(n));
      boost_attempt.push_back(tb / static_cast<double>(n));
      failed_ours += fa;
      failed_boost += fb;
    }
    ctx.watchdog.beat("ring");
  }
  const long long attempts = static_cast<long long>(n) * ctx.config.reps;
  ctx.rows.push_back(
      {"ring push: EventRing / Boost spsc_queue",
       1,
       "ns/delivered",
       bench::median(ours) * 1e9,
       bench::median(boost_ring) * 1e9,
       Target::ratio(1.0),
       "failed pushes (ring full) over all measured reps: EventRing " + std::to_string(failed_ours) + ", Boost " +
           std::to_string(failed_boost) + " of " + std::to_string(attempts) +
           " each; per attempt (failures included): " + bench::format_number(bench::median(ours_attempt) * 1e9) +
           " vs " + bench::format_number(bench::median(boost_attempt) * 1e9) + " ns",
       {{"eventring_failed_pushes", static_cast<double>(failed_ours)},
        {"boost_failed_pushes", static_cast<double>(failed_boost)},
        {"attempts", static_cast<double>(attempts)}}});
}

}  // namespace bench::instr
