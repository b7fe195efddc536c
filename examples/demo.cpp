// demo.cpp - Lantern's multi-workload demo.
//
// Runs three workloads on one scheduler and prints, per worker, what the scheduler did:
//   1. fork-join: fib(32) through join (deque pushes, steals between workers);
//   2. bursts: batches of tasks submitted from this (outside) thread with idle gaps, so
//      workers fall asleep between bursts and are woken for the next one;
//   3. a flooded worker: worker 0 floods itself with self-spawning work while tasks
//      wait in its lane; the other workers help that lane (fairness-aware helping).
// The figures come from an Observer attached to the scheduler's hook.
#include <lantern/lantern.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// CountingObserver: per-worker counters and time per state, from the scheduler's hooks.
class CountingObserver final : public lantern::Observer {
 public:
  struct alignas(64) PerWorker {
    std::atomic<long> tasks{0}, helps{0}, sleeps{0}, wakes_received{0}, failed_rounds{0};
    std::array<std::atomic<long>, lantern::kDistanceLevels> steals{};
    std::array<std::atomic<long>, lantern::kWorkerStateCount> state_ns{};
    std::atomic<long> state_since_ns{0};
    std::atomic<int> state{static_cast<int>(lantern::WorkerState::idle)};
  };
  explicit CountingObserver(unsigned workers) : per_(workers) {
    for (auto& w : per_) w.state_since_ns = now_ns();
  }

  void on_event(std::uint32_t worker, lantern::Hook hook, std::uint64_t a, std::uint64_t b) noexcept override {
    PerWorker& w = per_[worker];
    switch (hook) {
      case lantern::Hook::task_begin: w.tasks.fetch_add(1, std::memory_order_relaxed); break;
      case lantern::Hook::steal: w.steals[b & 0xFF].fetch_add(1, std::memory_order_relaxed); break;
      case lantern::Hook::help: w.helps.fetch_add(1, std::memory_order_relaxed); break;
      case lantern::Hook::steal_round_failed: w.failed_rounds.fetch_add(1, std::memory_order_relaxed); break;
      case lantern::Hook::state: {
        const int to = static_cast<int>(a & 0xFF);
        const int from = static_cast<int>((a >> 8) & 0xFF);
        if (to == static_cast<int>(lantern::WorkerState::sleeping)) w.sleeps.fetch_add(1, std::memory_order_relaxed);
        // A wake is seen by the woken worker: it leaves the sleeping state.
        if (from == static_cast<int>(lantern::WorkerState::sleeping)) {
          w.wakes_received.fetch_add(1, std::memory_order_relaxed);
        }
        close_state(w, to);
        break;
      }
      default: break;
    }
  }

  // finish closes every worker's current state interval (call after the pool stopped).
  void finish() {
    for (auto& w : per_) close_state(w, w.state.load());
  }

  void print(const lantern::Topology& topology) const {
    std::printf("\nper-worker figures (from the scheduler's observer hook)\n");
    std::printf("%-6s %8s %6s %6s %6s %6s %6s %6s %7s %6s %6s | %7s %7s %7s %8s\n", "worker", "tasks", "smt", "l2",
                "llc", "numa", "remote", "helps", "failed", "sleeps", "wakes", "active", "idle", "sleepy", "sleeping");
    std::printf("%-6s %8s %41s\n", "", "", "steals by distance, failed steal rounds");
    for (std::size_t i = 0; i < per_.size(); ++i) {
      const PerWorker& w = per_[i];
      long total = 0;
      for (auto& s : w.state_ns) total += s.load();
      auto pct = [&](int s) { return total ? 100.0 * w.state_ns[s].load() / total : 0.0; };
      std::printf("%-6zu %8ld %6ld %6ld %6ld %6ld %6ld %6ld %7ld %6ld %6ld | %6.1f%% %6.1f%% %6.1f%% %7.1f%%\n", i,
                  w.tasks.load(), w.steals[0].load(), w.steals[1].load(), w.steals[2].load(), w.steals[3].load(),
                  w.steals[4].load(), w.helps.load(), w.failed_rounds.load(), w.sleeps.load(), w.wakes_received.load(),
                  pct(0), pct(1), pct(2), pct(3));
    }
    std::printf("topology: %s\n", topology.describe().c_str());
  }

 private:
  static long now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static void close_state(PerWorker& w, int to) {
    const long now = now_ns();
    const long since = w.state_since_ns.exchange(now, std::memory_order_relaxed);
    w.state_ns[w.state.exchange(to, std::memory_order_relaxed)].fetch_add(now - since, std::memory_order_relaxed);
  }
  std::vector<PerWorker> per_;
};

long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  lantern::join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}

void spin_for(std::chrono::nanoseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

void usage(FILE* out) {
  std::fprintf(out,
               "usage: lantern_demo [--workers N] [--topology SPEC] [--quick]\n"
               "\n"
               "Runs three workloads (fork-join fib, bursts of submitted tasks with idle gaps,\n"
               "one flooded worker) and prints per-worker tasks, steals by topology distance,\n"
               "helps, failed steal rounds, sleeps, wakes and time share per worker state.\n"
               "\n"
               "  --workers N      worker threads (default: one per hardware thread)\n"
               "  --topology SPEC  steal order from a synthetic layout, e.g. \"2 sockets x 4 cores x 2 threads\"\n"
               "                   (default: this machine's, read from /sys)\n"
               "  --quick          smaller workloads (a few hundred milliseconds)\n"
               "  --help           this text\n");
}

}  // namespace

int main(int argc, char** argv) {
  lantern::SchedulerOptions options;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "lantern_demo: %s needs a value (see --help)\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else if (arg == "--workers") {
      const std::string v = value("--workers");
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (*end != '\0' || n < 1 || n > static_cast<long>(lantern::kMaxWorkers)) {
        std::fprintf(stderr, "lantern_demo: --workers takes a number from 1 to %u, not '%s'\n", lantern::kMaxWorkers,
                     v.c_str());
        return 2;
      }
      options.workers = static_cast<std::uint32_t>(n);
    } else if (arg == "--topology") {
      options.topology = value("--topology");
    } else if (arg == "--quick") {
      quick = true;
    } else {
      std::fprintf(stderr, "lantern_demo: unknown option '%s' (see --help)\n", arg.c_str());
      return 2;
    }
  }
  const unsigned workers = options.workers ? options.workers : std::max(1u, std::thread::hardware_concurrency());
  CountingObserver observer(workers);
  options.observer = &observer;

  try {
    lantern::Scheduler pool(options);
    std::printf("lantern demo: %u workers; topology: %s\n", pool.worker_count(), pool.topology().describe().c_str());
    for (const std::string& w : pool.topology_warnings()) std::printf("  note: %s\n", w.c_str());

    // 1. fork-join
    const int n = quick ? 27 : 32;
    auto t0 = std::chrono::steady_clock::now();
    const long r = pool.run([n] { return fib(n); });
    auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("1. fork-join   fib(%d) = %ld through join, %.1f ms\n", n, r, ms);

    // 2. bursts of submitted work with idle gaps
    const int bursts = quick ? 5 : 20;
    std::atomic<long> burst_tasks{0};
    t0 = std::chrono::steady_clock::now();
    for (int b = 0; b < bursts; ++b) {
      lantern::TaskGroup group(pool);
      for (int i = 0; i < 200; ++i) {
        group.spawn([&] {
          spin_for(std::chrono::microseconds(5));
          burst_tasks.fetch_add(1, std::memory_order_relaxed);
        });
      }
      group.wait();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // idle gap: workers fall asleep
    }
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("2. bursts      %d bursts of 200 submitted tasks with 20 ms idle gaps, %ld tasks, %.1f ms\n", bursts,
                burst_tasks.load(), ms);

    // 3. one flooded worker: worker 0 floods itself while tasks wait in its lane
    const long flood_total = quick ? 5000 : 40000;
    std::atomic<long> flooded{0};
    std::atomic<long> lane_done{0};
    struct Flood {
      lantern::Scheduler* pool;
      std::atomic<long>* done;
      long total;
      void operator()() const {
        spin_for(std::chrono::microseconds(2));
        if (done->fetch_add(1) + 1 < total) pool->spawn(*this);
      }
    };
    t0 = std::chrono::steady_clock::now();
    std::vector<lantern::Future<void>> lane_tasks;
    pool.submit_to_lane(0, [&] {
          for (int i = 0; i < 2; ++i) pool.spawn(Flood{&pool, &flooded, flood_total});
        })
        .get();
    for (int i = 0; i < 50; ++i) {
      lane_tasks.push_back(pool.submit_to_lane(0, [&] { lane_done.fetch_add(1); }));
    }
    for (auto& f : lane_tasks) f.get();
    const double lane_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    while (flooded.load() < flood_total) std::this_thread::yield();
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("3. flood       %ld self-spawning tasks; 50 lane tasks finished after %.1f ms of the flood's %.1f ms\n",
                flooded.load(), lane_ms, ms);

    pool.shutdown();
    observer.finish();
    observer.print(pool.topology());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lantern_demo: %s\n", e.what());
    return 1;
  }
  return 0;
}
