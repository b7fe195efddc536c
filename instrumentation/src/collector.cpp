// collector.cpp - drain rings in batches, fan out to sinks.
#include "lantern/instrumentation/collector.hpp"

#include <algorithm>

namespace lantern::instrumentation {

Collector::Collector(Recorder& recorder, CollectorOptions options) : recorder_(recorder), options_(options) {
  batch_.resize(static_cast<std::size_t>(recorder_.worker_count()) * options_.batch_per_worker);
}

Collector::~Collector() { stop(); }

void Collector::attach(std::shared_ptr<Sink> sink) {
  std::lock_guard<std::mutex> lock(sinks_mutex_);
  sinks_.push_back(std::move(sink));
}

void Collector::detach(const Sink* sink) {
  // Taking drain_mutex_ waits for a pass in progress, so the sink gets nothing after.
  std::lock_guard<std::mutex> pass_lock(drain_mutex_);
  std::lock_guard<std::mutex> lock(sinks_mutex_);
  sinks_.erase(std::remove_if(sinks_.begin(), sinks_.end(), [&](const auto& s) { return s.get() == sink; }),
               sinks_.end());
}

void Collector::start() {
  std::lock_guard<std::mutex> lock(wake_mutex_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void Collector::stop() {
  {
    std::lock_guard<std::mutex> lock(wake_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> pass_lock(drain_mutex_);
  while (pass() != 0) {
  }
  std::vector<std::shared_ptr<Sink>> sinks;
  {
    std::lock_guard<std::mutex> lock(sinks_mutex_);
    sinks = sinks_;
  }
  for (auto& s : sinks) s->on_flush();
}

std::uint64_t Collector::drain_now() {
  std::lock_guard<std::mutex> pass_lock(drain_mutex_);
  return pass();
}

void Collector::run() {
  std::unique_lock<std::mutex> lock(wake_mutex_);
  while (!stopping_) {
    lock.unlock();
    {
      std::lock_guard<std::mutex> pass_lock(drain_mutex_);
      // Keep draining while the rings hand over full batches: a busy pool is served
      // back to back, an idle one once a period.
      while (pass() >= options_.batch_per_worker) {
      }
    }
    lock.lock();
    wake_.wait_for(lock, options_.period, [this] { return stopping_; });
  }
}

std::uint64_t Collector::pass() {
  std::size_t n = 0;
  for (std::uint32_t w = 0; w < recorder_.worker_count(); ++w) {
    n += recorder_.drain(w, batch_.data() + n, options_.batch_per_worker);
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
  return n;
}

}  // namespace lantern::instrumentation
