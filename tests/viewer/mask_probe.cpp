// mask_probe: a stand-in viewer for open_viewer's tests. It writes the "SigBlk:" line of
// its own /proc/self/status (the signals it starts with blocked) to $LANTERN_MASK_PROBE_OUT.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

int main() {
  const char* out = std::getenv("LANTERN_MASK_PROBE_OUT");
  if (!out) return 2;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line) && line.rfind("SigBlk:", 0) != 0) {
  }
  const std::string tmp = std::string(out) + ".tmp";
  std::ofstream(tmp) << line << "\n";
  return std::rename(tmp.c_str(), out) == 0 ? 0 : 1;
}
