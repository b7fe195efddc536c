// SPDX-License-Identifier: Apache-2.0
// observer.cpp - the out-of-line half of every hook (LANTERN_HOOK in observer.hpp).
#include "lantern/observer.hpp"

#include <algorithm>

namespace lantern {

// update: word = f(word, arg) and every attached copy = copy_of(word), under the mutex
// (so two updates never leave the copies disagreeing with the word); returns the old word.
std::uint32_t Observer::Interest::update(std::uint32_t (*f)(std::uint32_t, std::uint32_t), std::uint32_t arg,
                                         std::memory_order order) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint32_t old = word_.load(std::memory_order_relaxed);
  const std::uint32_t mask = f(old, arg);
  word_.store(mask, order == std::memory_order_acq_rel || order == std::memory_order_acquire ||
                            order == std::memory_order_consume
                        ? std::memory_order_release
                        : order);
  for (std::atomic<std::uint32_t>* copy : copies_) copy->store(Observer::copy_of(mask), std::memory_order_relaxed);
  return old;
}

void Observer::Interest::store(std::uint32_t mask, std::memory_order order) noexcept {
  update([](std::uint32_t, std::uint32_t m) { return m; }, mask, order);
}

std::uint32_t Observer::Interest::exchange(std::uint32_t mask, std::memory_order order) noexcept {
  return update([](std::uint32_t, std::uint32_t m) { return m; }, mask, order);
}

std::uint32_t Observer::Interest::fetch_or(std::uint32_t bits, std::memory_order order) noexcept {
  return update([](std::uint32_t w, std::uint32_t b) { return w | b; }, bits, order);
}

std::uint32_t Observer::Interest::fetch_and(std::uint32_t bits, std::memory_order order) noexcept {
  return update([](std::uint32_t w, std::uint32_t b) { return w & b; }, bits, order);
}

void Observer::Interest::attach(std::atomic<std::uint32_t>* copy) {
  std::lock_guard<std::mutex> lock(mutex_);
  copies_.push_back(copy);
  copy->store(Observer::copy_of(word_.load(std::memory_order_relaxed)), std::memory_order_relaxed);
}

void Observer::Interest::detach(std::atomic<std::uint32_t>* copy) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  copies_.erase(std::remove(copies_.begin(), copies_.end(), copy), copies_.end());
}

}  // namespace lantern

namespace lantern::detail {

void emit_hook(Observer* observer, std::uint32_t worker, EventId hook, std::uint64_t a, std::uint64_t b) noexcept {
  if (observer->interest.load(std::memory_order_relaxed) & Observer::bit(hook)) observer->on_event(worker, hook, a, b);
}

}  // namespace lantern::detail
