// SPDX-License-Identifier: Apache-2.0
// wake_pages.cpp - lantern_wake_pages: the wake benchmark's samples, one side at a time,
// bracketed by stores to marker pages, for wake_pages.py to run under valgrind's lackey
// and count the pages and lines each wake's path touches. Where an idle spell empties
// the TLB (a host whose system calls do, without PCID), each page is a TLB miss and the
// count is the part of a wake's cost that the code's layout decides; where system calls
// keep the TLB, one page less measures no faster.
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "lantern/lantern.hpp"
#include "lantern/tools/program_cli.hpp"
#include "wake.hpp"

using namespace std::chrono_literals;

namespace {

constexpr const char* kUsage = R"(lantern_wake_pages [--side lantern|tbb] [--samples N] [--maps FILE]

Posts N tasks from outside into a 1-worker pool that sleeps (Lantern's Scheduler or a
oneTBB task_arena), one at a time, each after 50 ms of idleness. Before each post it
stores to the first of three marker pages, the task stores to the second as it starts,
and the submitter stores to the third once the task has run. Run under valgrind's
lackey (wake_pages.py does): the accesses between the first two markers are one
wake's path, both threads' user-space code and data.

  --side S     lantern (default) or tbb
  --samples N  wakes to post, 2 to 100 (default 6; the first warms up)
  --maps FILE  write /proc/self/maps there after the pools exist (to name the pages)

It prints the markers' addresses ("markers BEGIN TASK END", hex) on stdout.
)";

alignas(4096) volatile char g_markers[3][4096];

}  // namespace

int main(int argc, char** argv) {
  lantern::tools::Program program("lantern_wake_pages", kUsage);
  auto& app = program.app();
  std::string side = "lantern";
  int samples = 6;
  std::string maps;
  lantern::tools::choice_option(app, "--side", &side, {"lantern", "tbb"});
  lantern::tools::number_option(app, "--samples", &samples, 2, 100);
  app.add_option("--maps", maps);
  if (const auto exit = program.parse(argc, argv)) return *exit;

  lantern::Scheduler pool({.workers = 1});
  tbb::global_control tbb_threads(tbb::global_control::max_allowed_parallelism, 2);
  tbb::task_arena arena(1, /*reserved_for_masters=*/0);
  arena.initialize();
  if (!maps.empty()) {
    std::ifstream in("/proc/self/maps");
    std::ofstream out(maps);
    out << in.rdbuf();
    if (!out) {
      std::fprintf(stderr, "lantern_wake_pages: cannot write %s\n", maps.c_str());
      return 2;
    }
  }
  std::printf("markers %p %p %p\n", static_cast<void*>(const_cast<char*>(g_markers[0])),
              static_cast<void*>(const_cast<char*>(g_markers[1])), static_cast<void*>(const_cast<char*>(g_markers[2])));
  std::fflush(stdout);

  std::atomic<int> done{0};
  auto task = [&] {
    g_markers[1][0] = 1;
    done.store(1, std::memory_order_release);
    done.notify_one();
  };
  const bool lantern_side = side == "lantern";
  for (int i = 0; i < samples; ++i) {
    std::this_thread::sleep_for(50ms);
    // Lantern's worker must be past its last look for work (as in lantern_bench's wake row).
    for (int tries = 0; lantern_side && !bench::wake::asleep_now(pool); ++tries) {
      if (tries == 1000) {
        std::fprintf(stderr, "lantern_wake_pages: the worker did not fall asleep within 10 s\n");
        return 1;
      }
      std::this_thread::sleep_for(10ms);
    }
    done.store(0);
    g_markers[0][0] = 1;
    if (lantern_side) {
      pool.spawn(task);
    } else {
      arena.enqueue(task);
    }
    done.wait(0, std::memory_order_acquire);
    g_markers[2][0] = 1;
  }
  return 0;
}
