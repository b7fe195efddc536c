// SPDX-License-Identifier: Apache-2.0
// registry.hpp - the shared state behind a Scheduler: workers, lanes, the lane mirrors,
// the sleep protocol, and the count of jobs not yet finished.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lantern/detail/lane.hpp"
#include "lantern/detail/shared_io.hpp"
#include "lantern/detail/sleep.hpp"
#include "lantern/detail/worker.hpp"
#include "lantern/options.hpp"
#include "lantern/topology.hpp"

namespace lantern::detail {

// The Registry lives at the start of one page-aligned block that also holds the sleep
// slots, the lane mirrors, the Workers and their not-ready counts (Layout). A wake after
// an idle spell touches the registry, a slot, a mirror and a Worker, and where an idle
// spell costs the TLB every page it touches is a miss (hot.hpp): adjacent, they sit on
// as few pages as they fit in (each worker adds about 1 KiB; a 1-worker pool's
// block is one page in the release build). Made only by create().
class Registry {
 public:
  // create validates the options and starts the workers.
  static std::unique_ptr<Registry> create(SchedulerOptions options);
  ~Registry();                                        // shutdown(), then joins
  static void operator delete(void* block) noexcept;  // frees the block (after ~Registry)
  Registry(const Registry&) = delete;
  void setup_io_strategy();
  Registry& operator=(const Registry&) = delete;

  std::uint32_t worker_count() const noexcept { return worker_count_; }
  Worker& worker(std::uint32_t i) noexcept { return workers_[i]; }
  const Topology& topology() const noexcept { return topology_; }
  // topology_warnings: what hwloc could not tell about this machine and was assumed instead.
  const std::vector<std::string>& topology_warnings() const noexcept { return topology_warnings_; }
  Sleep& sleep() noexcept { return sleep_; }
  // strategy: the sleep strategy in use (io_uring may have fallen back to condvar).
  SleepStrategy strategy() const noexcept {
    return sleep_.uses_rings() ? SleepStrategy::io_uring : SleepStrategy::condvar;
  }
  // strategy_note: why io_uring was not used although asked for ("" otherwise).
  const std::string& strategy_note() const noexcept { return strategy_note_; }
  SharedIo& shared_io() noexcept { return shared_io_; }
  const SchedulerOptions& options() const noexcept { return options_; }
  LaneMirror& mirror(std::uint32_t lane) noexcept { return mirrors_[lane]; }
  std::uint64_t help_min_wait_ticks() const noexcept { return help_min_wait_ticks_; }

  // current_worker: the calling thread's worker if it belongs to this registry.
  Worker* current_worker() const noexcept {
    Worker* w = tls_worker;
    return (w && &w->registry() == this) ? w : nullptr;
  }

  // inject puts a job into a lane (lane < 0: round robin) from any thread and wakes a
  // worker if needed.
  void inject(Job* job, int lane = -1);
  // push_or_inject: onto the calling worker's own deque if it is ours, else inject.
  void push_or_inject(Job* job) {
    if (Worker* w = current_worker()) {
      w->push(job);
    } else {
      inject(job);
    }
  }

  // Frames for heap jobs made on threads that are not workers (Scheduler::spawn and
  // submit, a TaskGroup's spawns from outside). kOutsideShards FramePools, each owned
  // for the length of one allocate by whoever takes its flag with one exchange. A thread
  // starts at its own shard (threads are dealt round robin) and moves on when one is
  // taken; when all are, memory is null and the caller uses operator new: an outside
  // spawn never waits for a preempted thread. The worker that runs the job gives the
  // frame back with FramePool::free_remote, as for a stolen task. Why (core/README.md,
  // "Task frames come from a per-worker pool"): waking an idle pool, a malloc here costs
  // 3.6 us, a shard 0.6 us.
  struct OutsideFrame {
    void* memory;     // null: every shard was taken; use operator new
    FramePool* pool;  // where the frame goes back to
  };
  static constexpr std::uint32_t kOutsideShards = 4;
  // outside_frame: a frame of size class `cls`. Throws std::bad_alloc.
  OutsideFrame outside_frame(std::uint32_t cls);
  // outside_chunk_count: chunks the outside shards have taken from the system (tests;
  // only while no outside thread spawns).
  std::size_t outside_chunk_count() const noexcept;

  // Outstanding-job accounting, for draining at shutdown. Each worker counts the heap
  // jobs it created and finished in its own single-writer counters (no shared cache
  // line on the spawn path); outside threads count into one shared atomic.
  // begin_job throws ShutdownError on an outside thread once shutdown has started.
  void begin_job();
  // cancel_job undoes begin_job on the same thread (the job could not be created).
  void cancel_job() noexcept;
  // end_job: a heap job finished. Always called on one of this registry's workers.
  void end_job() noexcept {
    Worker* w = tls_worker;
    // release: a reader that sees this count also sees the creation it pairs with
    // (the job reached us through a queue, after its creator counted it).
    w->jobs_finished.store(w->jobs_finished.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  // live_jobs: jobs created and not yet finished. Reads every finished count before
  // any created count, so a result of 0 means no job was live at the time of the
  // second read (a non-zero result may be stale; callers poll).
  std::uint64_t live_jobs() const noexcept;
  // deadlock_episode: the suspected-deadlock episode word (Worker::check_deadlock,
  // core/deadlock/README.md, "One report per episode"). episode * 4 + state:
  // kEpisodeNone (no report), kEpisodeClaimed (a worker saw every worker blocked and is
  // re-checking), kEpisodeReported (re-checked, hook emitted). Every transition is a
  // seq-cst CAS; a worker leaving a blocked section ends the episode it sees (claimed or
  // reported -> next episode, none), a claimer withdraws only its own claim.
  static constexpr std::uint64_t kEpisodeNone = 0, kEpisodeClaimed = 1, kEpisodeReported = 2;
  std::atomic<std::uint64_t> deadlock_episode{0};
  // deadlock_suspected: the current episode was reported (describe_state).
  bool deadlock_suspected() const noexcept {
    return (deadlock_episode.load(std::memory_order_seq_cst) & 3) == kEpisodeReported;
  }
  bool stopping() const noexcept { return stopping_.load(std::memory_order_relaxed); }
  std::uint64_t external_jobs_created() const noexcept {
    return external_jobs_created_.load(std::memory_order_relaxed);
  }

  void report_unhandled(std::exception_ptr error) noexcept;
  std::uint64_t unhandled_exceptions() const noexcept { return unhandled_.load(std::memory_order_relaxed); }

  // Not-ready tasks (core/dependencies/README.md): tasks whose dependencies have not all
  // completed, which sit in no queue. Counted like the jobs above: each worker in its
  // own single-writer counters, outside threads in one shared pair. `me` is the calling
  // thread's worker of this registry, or nullptr.
  // not_ready_added: n tasks entered the not-ready set. Must happen-before the
  // dependency registrations that can release them (so a reader that sees a release
  // also sees the addition it pairs with).
  void not_ready_added(Worker* me, std::uint64_t n) noexcept {
    if (me) {
      std::atomic<std::uint64_t>& c = not_ready_[me->index].added;
      c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    } else {
      external_not_ready_.added.fetch_add(n, std::memory_order_relaxed);
    }
  }
  // not_ready_released: one task left the not-ready set (its last dependency completed).
  // release: pairs with not_ready_tasks()'s acquire loads (see there).
  void not_ready_released(Worker* me) noexcept {
    if (me) {
      std::atomic<std::uint64_t>& c = not_ready_[me->index].released;
      c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    } else {
      external_not_ready_.released.fetch_add(1, std::memory_order_release);
    }
  }
  // not_ready_tasks: tasks added and not yet released. Reads every released count
  // before any added count, so the result never counts a release whose addition it
  // missed (never "negative"); a non-zero result may be stale.
  std::uint64_t not_ready_tasks() const noexcept;
  // last_not_ready_sample: the value of the last not_ready hook any worker reported
  // (Worker::sample_not_ready, on every idle transition while an observer wants
  // not_ready: read there, written only when the value changed). ~0: none yet. A line of
  // its own, so those reads and rare writes share it with nothing.
  alignas(64) std::atomic<std::uint64_t> last_not_ready_sample{~std::uint64_t{0}};
  char last_not_ready_sample_line_[64 - sizeof(std::atomic<std::uint64_t>)] = {};  // the rest of its line

  // has_injected_work: some lane holds a job (the sleeper's final check).
  bool has_injected_work() const noexcept;

  // shutdown: refuse new outside work, wait until every job has finished (running
  // tasks may still spawn), then stop and join the workers. Idempotent, and safe to call
  // from several threads at once: every call returns only after the workers are joined.
  void shutdown();
  // shutdown_call: Scheduler::shutdown(), from a thread that may race the Scheduler's
  // destructor: counted while inside, so that the destructor (wait_for_shutdown_calls)
  // frees nothing under it.
  void shutdown_call() {
    shutdown_calls_.fetch_add(1, std::memory_order_seq_cst);
    struct Leave {
      std::atomic<std::uint32_t>& calls;
      ~Leave() { calls.fetch_sub(1, std::memory_order_release); }  // the call's last touch
    } leave{shutdown_calls_};
    shutdown();
  }
  // wait_for_shutdown_calls: after the destructor's own shutdown(), until every
  // shutdown_call that began before it has returned.
  void wait_for_shutdown_calls() const noexcept;

 private:
  // The block: this object at its start, then each array at its offset.
  struct Layout {
    std::size_t slots, mirrors, workers, not_ready, bytes;
  };
  static Layout layout(std::uint32_t workers) noexcept;
  Registry(SchedulerOptions options, Topology topology, std::vector<std::string> topology_warnings,
           std::uint32_t workers, std::byte* block, const Layout& layout);

  SchedulerOptions options_;
  std::vector<std::string> topology_warnings_;
  Topology topology_;
  std::uint32_t worker_count_;
  std::uint64_t help_min_wait_ticks_;
  Sleep sleep_;
  std::string strategy_note_;
  SharedIo shared_io_{*this, options_.io_queue_depth};
  LaneMirror* const mirrors_;  // dense: several lanes per cache line, read racily by all
  // The Workers, in the block: built one by one in the constructor, destroyed in reverse
  // (after shutdown() has joined their threads, or when the constructor throws).
  struct WorkerArray {
    Worker* first = nullptr;
    std::uint32_t built = 0;
    WorkerArray() = default;
    WorkerArray(const WorkerArray&) = delete;
    WorkerArray& operator=(const WorkerArray&) = delete;
    ~WorkerArray() {
      while (built > 0) first[--built].~Worker();
    }
    Worker& operator[](std::uint32_t i) const noexcept { return first[i]; }
    Worker* begin() const noexcept { return first; }
    Worker* end() const noexcept { return first + built; }
  };
  WorkerArray workers_;
  alignas(64) std::atomic<std::uint64_t> external_jobs_created_{0};
  std::atomic<bool> stopping_{false};
  alignas(64) std::atomic<std::uint32_t> next_lane_{0};
  std::atomic<std::uint64_t> unhandled_{0};
  // stop_workers: ends every started worker thread and joins it, then the shared IO's.
  void stop_workers();
  std::mutex stop_mutex_;  // held by the shutdown() that stops and joins the workers
  bool joined_ = false;    // under stop_mutex_
  std::atomic<std::uint32_t> shutdown_calls_{0};
  // Not-ready counts: one cache line per worker (single writer each), one shared pair
  // for outside threads. Initialised here, before the constructor starts any worker.
  struct alignas(64) NotReadyCount {
    std::atomic<std::uint64_t> added{0};
    std::atomic<std::uint64_t> released{0};
  };
  NotReadyCount* const not_ready_;  // in the block
  NotReadyCount external_not_ready_;
  // The outside shards (outside_frame). Their chunks go back to the system with the
  // registry, after shutdown() has drained every job and joined the workers.
  struct alignas(64) OutsideShard {
    std::atomic<bool> taken{false};
    FramePool pool;
  };
  OutsideShard outside_shards_[kOutsideShards];
};

}  // namespace lantern::detail
