// SPDX-License-Identifier: Apache-2.0
// instr_bench.cpp - what lantern_instr_bench's sections share (instr_bench.hpp).
#include "instr_bench.hpp"

#include <algorithm>
#include <cstdio>

namespace bench::instr {

std::string percent(double fraction, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f %%", decimals, fraction * 100.0);
  return buf;
}

void CountingSink::on_batch(std::span<const lantern::trace::Event> events) {
  std::uint64_t markers = 0, marked = 0;
  for (const auto& e : events) {
    if (e.type == lantern::EventId::dropped) {
      ++markers;
      marked += lantern::trace::payload<lantern::DroppedPayload>(e).count;
    }
  }
  events_.fetch_add(events.size() - markers, std::memory_order_relaxed);
  markers_.fetch_add(markers, std::memory_order_relaxed);
  marked_dropped_.fetch_add(marked, std::memory_order_relaxed);
}

Totals totals(const Recorder& recorder) {
  Totals t;
  for (std::uint32_t w = 0; w < recorder.worker_count(); ++w) {
    const auto s = recorder.snapshot(w);
    t.produced += s.events_produced;
    t.recorded += s.events_recorded;
    t.dropped += s.events_dropped;
    t.markers += s.drop_markers;
  }
  return t;
}

void check_accounting(const std::string& what, const Recorder& recorder,
                      const std::vector<const CountingSink*>& sinks) {
  const Totals t = totals(recorder);
  std::uint64_t received = 0, markers = 0, marked = 0;
  for (const CountingSink* s : sinks) {
    received += s->events();
    markers += s->markers();
    marked += s->marked_dropped();
  }
  bench::check_equal(what + ": events produced + drop markers = recorded + dropped",
                     static_cast<long long>(t.produced + t.markers), static_cast<long long>(t.recorded + t.dropped));
  bench::check_equal(what + ": events and markers the sinks received = events recorded",
                     static_cast<long long>(received + markers), static_cast<long long>(t.recorded));
  bench::check_equal(what + ": drop markers the sinks received = the Recorder's", static_cast<long long>(markers),
                     static_cast<long long>(t.markers));
  if (marked > t.dropped) {
    bench::wrong_answer(what + ": drop markers account for " + std::to_string(marked) + " events, more than the " +
                        std::to_string(t.dropped) + " dropped");
  }
}

OffProcess::OffProcess(const std::string& path, unsigned workers)
    : child_("lantern_instr_bench (compiled-out subprocess)", path, {"--serve", "--workers", std::to_string(workers)}) {
  const std::string ready = child_.read_line();
  int observer = -1;
  unsigned got_workers = 0;
  const std::string format = std::string(kReadyWord) + " observer=%d workers=%u";
  if (std::sscanf(ready.c_str(), format.c_str(), &observer, &got_workers) != 2)
    child_.fail("unexpected greeting '" + ready + "'");
  if (observer != 0) child_.fail("'" + path + "' has the observer hook compiled in");
  if (got_workers != workers) child_.fail("'" + path + "' started " + std::to_string(got_workers) + " workers");
}

OffProcess::~OffProcess() { child_.ask_no_reply("quit"); }

double OffProcess::run(const Workload& w, const std::string& side) {
  const std::string reply = child_.ask(w.name);
  const std::string format = std::string(w.name) + " seconds=%lf result=%lld";
  double seconds = 0;
  long long result = 0;
  if (std::sscanf(reply.c_str(), format.c_str(), &seconds, &result) != 2)
    child_.fail("unexpected reply '" + reply + "'");
  bench::check_equal(std::string(w.label) + ", " + side, result, w.expected);
  return seconds;
}

ObserverPools::ObserverPools(const Config& config, unsigned workers)
    : recorder(workers, {.level = Level::off}),
      sink(std::make_shared<CountingSink>()),
      collector(recorder),
      fast_sink(std::make_shared<CountingSink>()),
      fast_collector(recorder, {.min_period = kFastPeriod, .max_period = kFastPeriod}),
      bare(std::make_unique<lantern::Scheduler>(lantern::SchedulerOptions{.workers = workers})),
      observed(
          std::make_unique<lantern::Scheduler>(lantern::SchedulerOptions{.workers = workers, .observer = &recorder})) {
  collector.attach(sink);
  fast_collector.attach(fast_sink);
  if (std::find(config.only.begin(), config.only.end(), "overhead") != config.only.end()) {
    off = std::make_unique<OffProcess>(config.off_path, workers);
  }
}

void ObserverPools::finish() {
  off.reset();
  bare.reset();
  observed.reset();  // its workers record until they exit
  collector.stop();  // the final drain
  fast_collector.stop();
  check_accounting("overhead and collector", recorder, {sink.get(), fast_sink.get()});
}

}  // namespace bench::instr
