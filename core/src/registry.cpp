// SPDX-License-Identifier: Apache-2.0
// registry.cpp - building, feeding and draining the pool.
#include "lantern/detail/registry.hpp"
#include "lantern/detail/hot.hpp"
#include "lantern/thread_signals.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>

namespace lantern::detail {

namespace {

std::uint32_t resolve_worker_count(std::uint32_t requested) {
  if (requested == 0) {
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : hw;
  }
  if (requested > kMaxWorkers) {
    throw std::invalid_argument("lantern: SchedulerOptions::workers = " + std::to_string(requested) +
                                " is more than the maximum of " + std::to_string(kMaxWorkers) +
                                " (0 means one worker per hardware thread)");
  }
  return requested;
}

Topology resolve_topology(const std::string& spec, std::vector<std::string>* warnings) {
  if (spec.empty()) {
    Topology t = Topology::from_machine(warnings);
    return t.cpu_count() > 0 ? t : Topology::flat(1);
  }
  std::string error;
  auto parsed = Topology::parse_spec(spec, &error);
  if (!parsed) throw std::invalid_argument("lantern: bad SchedulerOptions::topology \"" + spec + "\": " + error);
  return *parsed;
}

}  // namespace

namespace {
constexpr std::size_t round_up(std::size_t n, std::size_t to) noexcept { return (n + to - 1) / to * to; }
constexpr std::size_t kPage = 4096;
}  // namespace

// The block, in the order a wake touches it: the registry (the outside shards, the job
// count, the lane cursor, the sleep counters), the slots, the mirrors, the Workers; the
// not-ready counts last (no wake reads them).
Registry::Layout Registry::layout(std::uint32_t workers) noexcept {
  static_assert(alignof(Registry) <= kPage && alignof(Worker) <= kPage);
  Layout l{};
  std::size_t at = sizeof(Registry);
  l.slots = at = round_up(at, Sleep::kSlotAlign);
  at += Sleep::slot_bytes(workers);
  l.mirrors = at = round_up(at, alignof(LaneMirror));
  at += sizeof(LaneMirror) * workers;
  l.workers = at = round_up(at, alignof(Worker));
  at += sizeof(Worker) * workers;
  l.not_ready = at = round_up(at, alignof(NotReadyCount));
  at += sizeof(NotReadyCount) * workers;
  l.bytes = round_up(at, kPage);
  return l;
}

void Registry::operator delete(void* block) noexcept { std::free(block); }

std::unique_ptr<Registry> Registry::create(SchedulerOptions options) {
  // The options are checked in this order: the topology, the worker count, the rest
  // (the constructor).
  std::vector<std::string> warnings;
  Topology topology = resolve_topology(options.topology, &warnings);
  const std::uint32_t workers = resolve_worker_count(options.workers);
  const Layout l = layout(workers);
  void* block = std::aligned_alloc(kPage, l.bytes);
  if (!block) throw std::bad_alloc();
  try {
    return std::unique_ptr<Registry>(::new (block) Registry(
        std::move(options), std::move(topology), std::move(warnings), workers, static_cast<std::byte*>(block), l));
  } catch (...) {
    std::free(block);  // the constructor has undone what it built
    throw;
  }
}

Registry::Registry(SchedulerOptions options, Topology topology, std::vector<std::string> topology_warnings,
                   std::uint32_t workers, std::byte* block, const Layout& l)
    : options_(std::move(options)),
      topology_warnings_(std::move(topology_warnings)),
      topology_(std::move(topology)),
      worker_count_(workers),
      help_min_wait_ticks_(ns_to_ticks(options_.help_min_wait_us * 1000.0)),
      sleep_(worker_count_, block + l.slots),
      mirrors_(reinterpret_cast<LaneMirror*>(block + l.mirrors)),
      not_ready_(reinterpret_cast<NotReadyCount*>(block + l.not_ready)) {
  if (options_.max_wait_depth == 0) {
    throw std::invalid_argument("lantern: SchedulerOptions::max_wait_depth must be at least 1");
  }
  static_assert(std::is_trivially_destructible_v<LaneMirror> && std::is_trivially_destructible_v<NotReadyCount>);
  std::uninitialized_default_construct_n(mirrors_, worker_count_);
  std::uninitialized_default_construct_n(not_ready_, worker_count_);
  workers_.first = reinterpret_cast<Worker*>(block + l.workers);
  for (std::uint32_t i = 0; i < worker_count_; ++i) {
    Worker* w = new (&workers_.first[i]) Worker(*this, i, &mirrors_[i], options_.observer);
    ++workers_.built;
    w->set_steal_order(steal_order(topology_, i, worker_count_));
  }
  if (options_.sleep_strategy == SleepStrategy::io_uring) setup_io_strategy();
  // Pinned (pin_workers): worker i on topology CPU i % count, if this thread may run
  // there (taskset, cgroup cpusets: a new thread inherits its creator's mask). Only this
  // machine's CPUs carry an OS number (os_cpu >= 0); synthetic ones (a spec, another
  // machine's hwloc description) are -1 and never pinned.
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const bool pin = options_.pin_workers && sched_getaffinity(0, sizeof allowed, &allowed) == 0;
  try {
    // Every worker starts with the application's signals blocked (thread_signals.hpp):
    // one guard for them all, the caller's mask back when it ends (also on a throw).
    const ApplicationSignalsBlocked blocked;
    for (std::uint32_t i = 0; i < worker_count_; ++i) {
      Worker* w = &workers_[i];
      w->thread = std::thread([w] { w->main(); });
      const std::string name = "lantern-w" + std::to_string(i);  // top -H, gdb, perf
      name_thread(w->thread, name.c_str());
      const int os_cpu = topology_.cpus()[i % topology_.cpu_count()].os_cpu;
      if (pin && os_cpu >= 0 && os_cpu < CPU_SETSIZE && CPU_ISSET(os_cpu, &allowed)) {
        // From here, not from the worker: the constructor returns knowing where each
        // worker is (Scheduler::worker_cpu). Best effort: a refusal leaves it unpinned.
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(os_cpu, &one);
        if (pthread_setaffinity_np(w->thread.native_handle(), sizeof one, &one) == 0) w->pinned_cpu = os_cpu;
      }
    }
  } catch (...) {
    // A thread the system would not give (std::system_error, e.g. EAGAIN at a thread
    // limit): stop the workers already started, so that the constructor throws instead
    // of destroying joinable threads (std::terminate). No job can exist yet.
    stop_workers();
    throw;
  }
}

void Registry::stop_workers() {
  for (Worker& w : workers_) w.terminate.set();
  for (Worker& w : workers_) {
    if (w.thread.joinable()) w.thread.join();
  }
  shared_io_.stop();
}

Registry::~Registry() { shutdown(); }

void Registry::wait_for_shutdown_calls() const noexcept {
  // A racing call is at most a drain (which the destructor's own shutdown has finished)
  // and a wait for the join (done): it leaves within a few scheduling rounds.
  while (shutdown_calls_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

// setup_io_strategy: one io_uring per worker, or, if any of them cannot be had, the
// condvar strategy and one line saying why.
void Registry::setup_io_strategy() {
  std::string why;
  std::vector<std::unique_ptr<IoContext>> rings;
  for (std::uint32_t i = 0; i < worker_count_; ++i) {
    auto ring = IoContext::create(options_.io_queue_depth, &why);
    if (!ring) break;
    rings.push_back(std::move(ring));
  }
  if (rings.size() != worker_count_) {
    strategy_note_ =
        "lantern: the io_uring sleep strategy is unavailable (" + why + "); falling back to the condvar strategy";
    if (options_.log) {
      try {
        options_.log(strategy_note_);
      } catch (...) {
      }
    } else {
      std::fprintf(stderr, "%s\n", strategy_note_.c_str());
    }
    return;
  }
  for (std::uint32_t i = 0; i < worker_count_; ++i) {
    sleep_.register_io(i, rings[i].get());
    workers_[i].set_io(std::move(rings[i]));
  }
  sleep_.use_rings();
}

LANTERN_HOT void Registry::inject(Job* job, int lane) {
  const std::uint32_t target = lane >= 0 ? static_cast<std::uint32_t>(lane) % worker_count_
                                         : next_lane_.fetch_add(1, std::memory_order_relaxed) % worker_count_;
  Worker* me = current_worker();
  // An outside thread: once the job is in the lane a worker may run it, the pool drain
  // and the destructor run - while we still wake somebody. Counted in until then (the
  // destructor waits for the count; core/sleep/README.md, "Outside threads and the
  // destructor").
  if (!me) sleep_.enter_outside();
  const std::uint32_t before = workers_[target].lane.push(job, ticks_now());
  if (me) LANTERN_HOOK(*me, PushPayload::into_lane(task_id(job), target));
  sleep_.new_injected_jobs(1, before == 0, me, target);
  if (!me) sleep_.leave_outside();
}

LANTERN_HOT Registry::OutsideFrame Registry::outside_frame(std::uint32_t cls) {
  // Each thread's first shard, dealt round robin when it first spawns from outside.
  static std::atomic<std::uint32_t> threads_seen{0};
  thread_local const std::uint32_t first = threads_seen.fetch_add(1, std::memory_order_relaxed);
  for (std::uint32_t k = 0; k < kOutsideShards; ++k) {
    OutsideShard& shard = outside_shards_[(first + k) % kOutsideShards];
    if (shard.taken.load(std::memory_order_relaxed) || shard.taken.exchange(true, std::memory_order_acquire)) continue;
    // Released on the way out, also when allocate throws (a chunk it could not get).
    struct Release {
      std::atomic<bool>& taken;
      ~Release() { taken.store(false, std::memory_order_release); }
    } release{shard.taken};
    return {shard.pool.allocate(cls), &shard.pool};
  }
  return {nullptr, nullptr};
}

std::size_t Registry::outside_chunk_count() const noexcept {
  std::size_t chunks = 0;
  for (const OutsideShard& shard : outside_shards_) chunks += shard.pool.chunk_count();
  return chunks;
}

LANTERN_HOT void Registry::begin_job() {
  if (Worker* w = current_worker()) {
    // Workers may keep spawning while the pool drains.
    w->jobs_created.store(w->jobs_created.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return;
  }
  // The seq_cst pair (count, then read stopping) against shutdown's (set stopping, then
  // read the counts) means shutdown either sees this job or we see the flag.
  external_jobs_created_.fetch_add(1, std::memory_order_seq_cst);
  if (stopping_.load(std::memory_order_seq_cst)) {
    external_jobs_created_.fetch_sub(1, std::memory_order_seq_cst);
    throw ShutdownError("lantern: the scheduler is shutting down; no new work is accepted");
  }
}

void Registry::cancel_job() noexcept {
  if (Worker* w = current_worker()) {
    w->jobs_created.store(w->jobs_created.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  } else {
    external_jobs_created_.fetch_sub(1, std::memory_order_seq_cst);
  }
}

std::uint64_t Registry::live_jobs() const noexcept {
  std::uint64_t finished = 0;
  for (const Worker& w : workers_) finished += w.jobs_finished.load(std::memory_order_acquire);
  std::uint64_t created = external_jobs_created_.load(std::memory_order_seq_cst);
  for (const Worker& w : workers_) created += w.jobs_created.load(std::memory_order_acquire);
  return created >= finished ? created - finished : 0;
}

std::uint64_t Registry::not_ready_tasks() const noexcept {
  // The same reading order as live_jobs: every release is counted after the addition
  // it pairs with has happened (the releasing thread acquired the task's dependency
  // count, which its creator released after counting), so reading releases first can
  // only under-count releases, never additions.
  std::uint64_t released = external_not_ready_.released.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < worker_count_; ++i) released += not_ready_[i].released.load(std::memory_order_acquire);
  std::uint64_t added = external_not_ready_.added.load(std::memory_order_relaxed);
  for (std::uint32_t i = 0; i < worker_count_; ++i) added += not_ready_[i].added.load(std::memory_order_relaxed);
  return added >= released ? added - released : 0;
}

void Registry::report_unhandled(std::exception_ptr error) noexcept {
  unhandled_.fetch_add(1, std::memory_order_relaxed);
  if (options_.on_unhandled_exception) {
    try {
      options_.on_unhandled_exception(error);
    } catch (...) {
      std::fputs("lantern: on_unhandled_exception itself threw; ignored\n", stderr);
    }
    return;
  }
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lantern: a spawned task threw: %s\n", e.what());
  } catch (...) {
    std::fputs("lantern: a spawned task threw a non-std::exception\n", stderr);
  }
}

bool Registry::has_injected_work() const noexcept {
  for (const Worker& w : workers_) {
    if (w.lane.size() != 0) return true;
  }
  return false;
}

void Registry::shutdown() {
  if (Worker* w = tls_worker; w && &w->registry() == this) {
    std::fputs("lantern: a Scheduler was shut down from one of its own tasks; that would wait forever\n", stderr);
    std::abort();
  }
  stopping_.store(true, std::memory_order_seq_cst);
  // Operations in flight may never finish by themselves (an accept, a read of an idle
  // socket): cancel them, so their callbacks run with -ECANCELED and the pool drains.
  if (sleep_.uses_rings()) {
    for (Worker& w : workers_) w.request_io_cancel();
  } else {
    shared_io_.cancel_all();
  }
  // Wait for the pool to drain. Polling with a growing pause (up to 1 ms) rather than a
  // notification keeps the per-job counters free of any shared write; shutdown is rare
  // and an idle pool drains at the first check.
  std::chrono::microseconds pause{20};
  for (int round = 0; live_jobs() != 0; ++round) {
    if (round < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds{1000});
    }
  }
  {
    // Every caller waits here until the workers are joined, not only the first: a
    // second shutdown() that returned while the first was still joining would let its
    // caller destroy the pool under it.
    std::lock_guard<std::mutex> lock(stop_mutex_);
    if (!joined_) {
      stop_workers();
      joined_ = true;
    }
  }
  // A thread outside the pool that published the last job (a Signal::set, a submit, an
  // IO completion) may still be waking somebody: the job's completion, which the drain
  // above saw, happened after that thread entered, so the count shows it until it leaves.
  sleep_.wait_outside_done();
}

}  // namespace lantern::detail
