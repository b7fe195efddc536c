// SPDX-License-Identifier: Apache-2.0
// topology_check.hpp - the --topology option's check, for the programs that run a
// Scheduler (they link lantern::core; program_cli.hpp itself does not need it).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "lantern/topology.hpp"

namespace lantern::tools {

// topology_check: a CLI11 check that the value is a topology spec lantern::Topology reads
// ("2 sockets x 4 cores x 2 threads"), so that a bad spec is bad usage (exit 2, nothing
// started), refused with "takes a spec such as ..., not 'TEXT': what is wrong".
inline CLI::Validator topology_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::string error;
        if (Topology::parse_spec(text, &error)) return std::string();
        return "takes a spec such as \"2 sockets x 4 cores x 2 threads\", not '" + text + "': " + error;
      },
      "", "");
}

}  // namespace lantern::tools
