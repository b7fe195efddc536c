// SPDX-License-Identifier: Apache-2.0
// run_command.hpp - runs the real lantern-trace binary from a test and captures its
// exit code, stdout and stderr, plus small helpers for the files the tests make.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace lantern::trace::testing {

struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal (a crash)
  std::string out;
  std::string err;
};

// scratch_dir: a per-process directory under the system temp dir, removed at exit
// (kept when LANTERN_KEEP_SCRATCH is set, to look at what a failing test produced).
inline std::filesystem::path scratch_dir() {
  struct Scratch {
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("lantern_trace_test_" + std::to_string(::getpid()));
    Scratch() { std::filesystem::create_directories(dir); }
    ~Scratch() {
      std::error_code ignored;
      if (!std::getenv("LANTERN_KEEP_SCRATCH")) std::filesystem::remove_all(dir, ignored);
    }
  };
  static const Scratch scratch;
  return scratch.dir;
}

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void spit(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string quote(const std::string& arg) {
  std::string q = "'";
  for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// run_tool runs LANTERN_TRACE_BIN with `args` (each shell-quoted); with `kill_after_s`,
// under timeout(1), which kills it then (exit code 137): a test of a time bound fails
// instead of hanging.
inline CommandResult run_tool(const std::vector<std::string>& args, int kill_after_s = 0) {
  static int counter = 0;
  const auto base = scratch_dir() / ("cmd" + std::to_string(++counter));
  std::string cmd = kill_after_s > 0 ? "timeout -s KILL " + std::to_string(kill_after_s) + " " : std::string();
  cmd += quote(LANTERN_TRACE_BIN);
  for (const std::string& a : args) {
    cmd += ' ';
    cmd += quote(a);
  }
  cmd += " > " + quote(base.string() + ".out") + " 2> " + quote(base.string() + ".err") + " < /dev/null";
  const int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base.string() + ".out");
  r.err = slurp(base.string() + ".err");
  return r;
}

}  // namespace lantern::trace::testing
