// SPDX-License-Identifier: Apache-2.0
// scrape_at_rest.hpp - one GET of a metrics endpoint over a real socket, taken between two
// readings of the Recorder and the Scheduler that agree on every count, so that the
// scrape can be compared with them exactly (scrape_check.hpp).
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "exporters/support/exposition.hpp"
#include "exporters/support/recorder_reading.hpp"
#include "lantern/exporters/testing/loopback_http.hpp"

namespace lantern::exporters::testing {

struct Scrape {
  Reading before, after;
  Exposition exposition;
  std::string text;
};

// scrape_at_rest: GET `path` between two readings that agree on every count (retried,
// bounded, if a worker still moved).
inline Scrape scrape_at_rest(Scheduler& pool, const instrumentation::Recorder& recorder, std::uint16_t port,
                             const std::string& path = "/metrics") {
  Scrape s;
  std::string moved;
  for (int attempt = 0; attempt < 20; ++attempt) {
    s.before = read(pool, recorder);
    const auto response = http_get(port, path);
    s.after = read(pool, recorder);
    if (response.status != 200) throw std::runtime_error("GET " + path + ": HTTP " + std::to_string(response.status));
    s.text = response.body;
    moved = what_moved(s.before, s.after);
    if (moved.empty()) {
      s.exposition = parse_exposition(s.text);
      return s;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // pacing of the retries
  }
  throw std::runtime_error("the pool never held still for a scrape (20 tries); last moved:\n" + moved +
                           pool.describe_state());
}

}  // namespace lantern::exporters::testing
