// observer.cpp - the out-of-line half of every hook (LANTERN_HOOK in observer.hpp).
#include "lantern/observer.hpp"

namespace lantern::detail {

void emit_hook(Observer* observer, std::uint32_t worker, Hook hook, std::uint64_t a, std::uint64_t b) noexcept {
  if (observer->interest.load(std::memory_order_relaxed) & Observer::bit(hook)) observer->on_event(worker, hook, a, b);
}

}  // namespace lantern::detail
