// SPDX-License-Identifier: Apache-2.0
// collector.cpp - drain rings in batches, fan out to sinks.
#include "lantern/instrumentation/collector.hpp"

#include "lantern/thread_signals.hpp"

#include <algorithm>

namespace lantern::instrumentation {

Collector::Collector(Recorder& recorder, CollectorOptions options)
    : recorder_(recorder), options_(options), ring_capacity_(recorder.ring_capacity()) {
  batch_.resize(static_cast<std::size_t>(recorder_.worker_count()) * options_.batch_per_worker);
}

Collector::~Collector() { stop(); }

void Collector::attach(std::shared_ptr<Sink> sink) {
  std::lock_guard<std::mutex> lock(sinks_mutex_);
  sinks_.push_back(std::move(sink));
}

std::vector<std::string> Collector::failures() const {
  std::lock_guard<std::mutex> lock(sinks_mutex_);
  std::vector<std::string> out;
  for (const auto& s : sinks_) {
    if (std::string f = s->failure(); !f.empty()) out.push_back(std::move(f));
  }
  return out;
}

void Collector::detach(const Sink* sink) {
  // Taking drain_mutex_ waits for a pass in progress, so the sink gets nothing after.
  std::lock_guard<std::mutex> pass_lock(drain_mutex_);
  std::lock_guard<std::mutex> lock(sinks_mutex_);
  sinks_.erase(std::remove_if(sinks_.begin(), sinks_.end(), [&](const auto& s) { return s.get() == sink; }),
               sinks_.end());
}

void Collector::start() {
  std::lock_guard<std::mutex> lock(recorder_.drain_request().mutex());
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = start_thread("lantern-collect", [this] { run(); });
}

void Collector::stop() {
  {
    std::lock_guard<std::mutex> lock(recorder_.drain_request().mutex());
    stopping_ = true;
  }
  recorder_.drain_request().wake();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> pass_lock(drain_mutex_);
  while (pass(/*everything=*/true) != 0) {
  }  // returns 0 only when every ring was empty
  std::vector<std::shared_ptr<Sink>> sinks;
  {
    std::lock_guard<std::mutex> lock(sinks_mutex_);
    sinks = sinks_;
  }
  for (auto& s : sinks) s->on_flush();
}

std::uint64_t Collector::drain_now() {
  std::lock_guard<std::mutex> pass_lock(drain_mutex_);
  return pass(/*everything=*/true);
}

void Collector::run() {
  DrainRequest& request = recorder_.drain_request();
  std::unique_lock<std::mutex> lock(request.mutex());
  std::chrono::microseconds wait = options_.min_period;
  auto last_pass = std::chrono::steady_clock::now();
  while (!stopping_) {
    lock.unlock();
    const auto now = std::chrono::steady_clock::now();
    const auto since_last = std::chrono::duration_cast<std::chrono::microseconds>(now - last_pass);
    last_pass = now;
    // A ring past half full asked for this pass (or will ask again once it is taken).
    const bool requested = request.take();
    std::uint64_t largest = 0;
    {
      std::lock_guard<std::mutex> pass_lock(drain_mutex_);
      // Keep draining while some ring hands over a full batch: a busy pool is served
      // back to back.
      for (;;) {
        const std::uint64_t most = pass();
        largest = std::max(largest, most);
        if (most < options_.batch_per_worker) break;
      }
    }
    if (requested || largest * 4 >= ring_capacity_) {
      wait = options_.min_period;
    } else if (largest == 0) {
      wait = std::min(wait * 2, options_.max_period);  // quiet: back off
    } else {
      // Events arrive: come back when the busiest ring would be about a quarter full at
      // the rate of the interval just ended, and never later than twice the last wait.
      const auto fill = since_last * static_cast<std::int64_t>(ring_capacity_ / 4) / static_cast<std::int64_t>(largest);
      wait = std::clamp(std::min(fill, wait * 2), options_.min_period, options_.max_period);
    }
    lock.lock();
    request.wait_for(lock, wait, [this] { return stopping_; });
  }
}

std::uint64_t Collector::pass(bool everything) {
  std::size_t n = 0;
  std::size_t most = 0;  // the largest share of one ring: what the period adapts to
  for (std::uint32_t w = 0; w < recorder_.worker_count(); ++w) {
    const std::size_t got = recorder_.drain(w, batch_.data() + n, options_.batch_per_worker, everything);
    most = std::max(most, got);
    n += got;
  }
  passes_.fetch_add(1, std::memory_order_relaxed);
  if (n == 0) return 0;
  collected_.fetch_add(n, std::memory_order_relaxed);
  std::vector<std::shared_ptr<Sink>> sinks;
  {
    std::lock_guard<std::mutex> lock(sinks_mutex_);
    sinks = sinks_;
  }
  const std::span<const trace::Event> events(batch_.data(), n);
  for (auto& s : sinks) s->on_batch(events);
  return most;
}

}  // namespace lantern::instrumentation
