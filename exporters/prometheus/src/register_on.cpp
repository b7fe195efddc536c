// SPDX-License-Identifier: Apache-2.0
// register_on.cpp - Lantern's collectable on the app's own prometheus-cpp Exposer.
#include <prometheus/exposer.h>

#include "lantern/exporters/scheduler_collectable.hpp"

namespace lantern::exporters {

std::shared_ptr<SchedulerCollectable> register_on(prometheus::Exposer& exposer, const Scheduler& scheduler,
                                                  instrumentation::Recorder& recorder, const std::string& path) {
  auto collectable = std::make_shared<SchedulerCollectable>(scheduler, recorder);
  exposer.RegisterCollectable(collectable, path);
  return collectable;
}

}  // namespace lantern::exporters
