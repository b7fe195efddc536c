// observer.cpp - the out-of-line half of every hook (LANTERN_HOOK in observer.hpp).
#include "lantern/observer.hpp"

#include <algorithm>

namespace lantern {

void Observer::set_interest(std::uint32_t mask) noexcept {
  std::lock_guard<std::mutex> lock(copies_mutex_);
  interest_.store(mask, std::memory_order_relaxed);
  for (std::atomic<std::uint32_t>* copy : copies_) copy->store(mask | kAttached, std::memory_order_relaxed);
}

void Observer::attach_worker(std::atomic<std::uint32_t>* copy) {
  std::lock_guard<std::mutex> lock(copies_mutex_);
  copies_.push_back(copy);
  copy->store(interest_.load(std::memory_order_relaxed) | kAttached, std::memory_order_relaxed);
}

void Observer::detach_worker(std::atomic<std::uint32_t>* copy) noexcept {
  std::lock_guard<std::mutex> lock(copies_mutex_);
  copies_.erase(std::remove(copies_.begin(), copies_.end(), copy), copies_.end());
}

}  // namespace lantern

namespace lantern::detail {

void emit_hook(Observer* observer, std::uint32_t worker, Hook hook, std::uint64_t a, std::uint64_t b) noexcept {
  if (observer->interest() & Observer::bit(hook)) observer->on_event(worker, hook, a, b);
}

}  // namespace lantern::detail
