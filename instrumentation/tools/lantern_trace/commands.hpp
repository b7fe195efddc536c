// SPDX-License-Identifier: Apache-2.0
// commands.hpp - the lantern-trace subcommands. Each takes the arguments after its
// name and returns the process exit code (cli.hpp: 0 ok, 1 trace problems, 2 usage/IO).
#pragma once

#include <span>

namespace lantern::trace::cli {

int run_info(std::span<char* const> args);
int run_stats(std::span<char* const> args);
int run_export(std::span<char* const> args);
int run_validate(std::span<char* const> args);
int run_diff(std::span<char* const> args);
int run_scale(std::span<char* const> args);

}  // namespace lantern::trace::cli
