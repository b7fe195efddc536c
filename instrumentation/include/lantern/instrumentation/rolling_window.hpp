// rolling_window.hpp - the live model's feed: the most recent events, bounded by age
// and by count, for a viewer running in the same process.
//
// The collector appends batches; readers copy what they need under a short lock. Old
// events fall off the front once they are older than `window` (by the trace clock) or
// the window holds more than `max_events`. Events carry label ids; labels() names them
// (the process's label table by default).
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "lantern/instrumentation/process_labels.hpp"
#include "lantern/instrumentation/sink.hpp"

namespace lantern::instrumentation {

class RollingWindow final : public Sink {
 public:
  RollingWindow(std::uint64_t window_ticks, std::size_t max_events,
                const trace::LabelNames* labels = &process_labels())
      : window_(window_ticks), max_(max_events), labels_(labels ? labels : &process_labels()) {}

  void on_batch(std::span<const trace::Event> events) override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const trace::Event& e : events) {
      events_.push_back(e);
      if (e.ticks > newest_) newest_ = e.ticks;
    }
    while (!events_.empty() && (events_.size() > max_ || events_.front().ticks + window_ < newest_)) {
      events_.pop_front();
      ++evicted_;
    }
  }

  // copy_since: events with ticks >= since (in arrival order).
  std::vector<trace::Event> copy_since(std::uint64_t since) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<trace::Event> out;
    for (const trace::Event& e : events_) {
      if (e.ticks >= since) out.push_back(e);
    }
    return out;
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_.size();
  }
  std::uint64_t evicted() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return evicted_;
  }
  // labels: the names of the label ids in task_label events' b (any thread).
  const trace::LabelNames& labels() const noexcept { return *labels_; }

 private:
  mutable std::mutex mutex_;
  std::deque<trace::Event> events_;
  std::uint64_t newest_ = 0;
  std::uint64_t evicted_ = 0;
  const std::uint64_t window_;
  const std::size_t max_;
  const trace::LabelNames* const labels_;
};

}  // namespace lantern::instrumentation
