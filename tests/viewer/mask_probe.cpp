// SPDX-License-Identifier: Apache-2.0
// mask_probe: a stand-in viewer for open_viewer's tests. It writes the "SigBlk:" and
// "SigIgn:" lines of its own /proc/self/status (the signals it starts with blocked and
// ignored) to $LANTERN_MASK_PROBE_OUT, one line each.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

int main() {
  const char* out = std::getenv("LANTERN_MASK_PROBE_OUT");
  if (!out) return 2;
  std::ifstream status("/proc/self/status");
  std::string line, blocked, ignored;
  while (std::getline(status, line)) {
    if (line.rfind("SigBlk:", 0) == 0) blocked = line;
    if (line.rfind("SigIgn:", 0) == 0) ignored = line;
  }
  const std::string tmp = std::string(out) + ".tmp";
  std::ofstream(tmp) << blocked << "\n" << ignored << "\n";
  return std::rename(tmp.c_str(), out) == 0 ? 0 : 1;
}
