// SPDX-License-Identifier: Apache-2.0
// graph.cpp - TaskGraph's cold parts: edges, validation (cycle detection), starting a
// run and waiting for it. The per-task hot path is inline in graph.hpp and
// detail/dep_node.hpp; the design is in README.md beside this file.
#include "lantern/graph.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace lantern {

std::string TaskGraph::task_name(std::size_t position) const {
  const std::string& name = nodes_.at(position)->name;
  // Built by appending: g++ 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
  std::string text(1, name.empty() ? '#' : '\'');
  text.append(name.empty() ? std::to_string(position) : name);
  if (!name.empty()) text.push_back('\'');
  return text;
}

void TaskGraph::check_not_running(const char* what) const {
  // relaxed: a best-effort guard against misuse, not synchronisation.
  if (running_.load(std::memory_order_relaxed)) {
    throw std::logic_error(std::string("lantern::TaskGraph: cannot ") + what + " a graph while it runs");
  }
}

void TaskGraph::add_edge(detail::GraphNode* from, detail::GraphNode* to) {
  if (!from || !to) throw std::invalid_argument("lantern::TaskGraph: an edge to or from an empty GraphTask");
  if (from->graph != this || to->graph != this) {
    throw std::invalid_argument("lantern::TaskGraph: an edge between tasks of different graphs ('" + from->name +
                                "' -> '" + to->name + "')");
  }
  check_not_running("add an edge to");
  from->successors.push_back(to);
  ++to->predecessors;
  prepared_ = false;
}

void TaskGraph::validate() {
  check_not_running("validate");
  if (!prepared_) prepare();
}

// prepare: Kahn's algorithm. Tasks are taken in topological order starting from the
// sources; if some are never taken, they are on a cycle or downstream of one. Also
// finds the sources and sinks, and arms every task's pending count.
void TaskGraph::prepare() {
  const std::size_t n = nodes_.size();
  std::vector<std::uint32_t> unfinished(n);  // predecessors not yet taken, per task
  std::vector<detail::GraphNode*> order;
  order.reserve(n);
  sources_.clear();
  sinks_ = 0;
  for (std::size_t i = 0; i < n; ++i) {
    detail::GraphNode* node = nodes_[i].get();
    unfinished[i] = node->predecessors;
    if (node->predecessors == 0) {
      sources_.push_back(node);
      order.push_back(node);
    }
    if (node->successors.empty()) ++sinks_;
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    for (detail::GraphNode* next : order[k]->successors) {
      if (--unfinished[next->index] == 0) order.push_back(next);
    }
  }
  if (order.size() != n) throw std::invalid_argument(describe_cycle(unfinished));
  for (auto& node : nodes_) {
    node->pending.store(node->predecessors, std::memory_order_relaxed);
    node->reset_pending = node->predecessors;
    node->cancelled.store(false, std::memory_order_relaxed);
  }
  prepared_ = true;
}

// describe_cycle names the tasks of one cycle. Every task Kahn's algorithm did not take
// has a predecessor it did not take either (else its count would have reached zero), so
// walking "some untaken predecessor" from any untaken task must come back on itself.
std::string TaskGraph::describe_cycle(const std::vector<std::uint32_t>& unfinished) const {
  const std::size_t n = nodes_.size();
  constexpr std::uint32_t kNone = ~0u;
  std::vector<std::uint32_t> some_predecessor(n, kNone);
  std::uint32_t start = kNone;
  for (std::size_t i = 0; i < n; ++i) {
    if (unfinished[i] == 0) continue;
    if (start == kNone) start = static_cast<std::uint32_t>(i);
    for (const detail::GraphNode* next : nodes_[i]->successors) {
      if (unfinished[next->index] != 0) some_predecessor[next->index] = static_cast<std::uint32_t>(i);
    }
  }
  // Walk back until a task repeats; the walk from its first visit is the cycle.
  std::vector<std::uint32_t> step_of(n, kNone);
  std::vector<std::uint32_t> walk;
  std::uint32_t at = start;
  while (step_of[at] == kNone) {
    step_of[at] = static_cast<std::uint32_t>(walk.size());
    walk.push_back(at);
    at = some_predecessor[at];
  }
  // walk[step_of[at]..] goes backwards along edges: print it forwards, closing the loop.
  std::vector<std::uint32_t> cycle(walk.rbegin(), walk.rend() - step_of[at]);
  constexpr std::size_t kMaxNamed = 8;
  std::string text = "lantern::TaskGraph: the graph has a cycle, so its tasks could never become ready: ";
  for (std::size_t i = 0; i < cycle.size() && i < kMaxNamed; ++i) text += task_name(cycle[i]) + " -> ";
  if (cycle.size() > kMaxNamed) text += "... (" + std::to_string(cycle.size()) + " tasks) -> ";
  text += task_name(cycle.front());
  return text;
}

bool TaskGraph::start_sources(detail::Job* job) noexcept {
  TaskGraph* graph = static_cast<Starter*>(job)->graph;
  detail::Worker* me = detail::tls_worker;
  detail::GraphNode* const* const first = graph->sources_.data();
  detail::GraphNode* const* it = first + graph->sources_.size();
  // Backwards, so that the first source is popped (LIFO) first. Only locals are read
  // after the last push: from then on the run can finish without us.
  while (it != first) me->push(*--it);
  return false;
}

void TaskGraph::run(Scheduler& pool) {
  if (running_.exchange(true, std::memory_order_acquire)) {
    throw std::logic_error("lantern::TaskGraph::run: the graph is already running (one run at a time)");
  }
  struct Unmark {
    std::atomic<bool>& running;
    ~Unmark() { running.store(false, std::memory_order_release); }
  } unmark{running_};
  if (nodes_.empty()) return;
  if (!prepared_) prepare();  // throws on a cycle

  detail::Registry& registry = pool.registry();
  detail::Worker* me = registry.current_worker();
  // WaitDepthError before anything runs, as every wait that may throw does: the run's
  // wait on a worker runs tasks on this stack (core/README.md, "Nested waits and the
  // stack").
  if (me) me->check_wait_depth();
  if (registry_ != &registry) {
    for (auto& node : nodes_) node->registry = &registry;
    registry_ = &registry;
  }
  // The run counts as one job until its last task finishes, so that shutdown waits for
  // it (and refuses a run from outside once it has started).
  registry.begin_job();
  detail::Latch done(&registry.sleep(), /*external_waiters=*/me == nullptr);
  done_ = &done;
  error_ = nullptr;
  failed_.store(false, std::memory_order_relaxed);
  remaining_sinks_.store(sinks_, std::memory_order_relaxed);
  // Every task but the sources waits for predecessors. The pushes below publish all of
  // the stores above to the workers (deque and lane pushes release).
  if (const std::size_t waiting = nodes_.size() - sources_.size()) registry.not_ready_added(me, waiting);
  if (me) {
    // The task graph's events: the running task makes every node of this run (spawn,
    // kind spawn_after, group: the graph, which its wait names), then waits for them.
    const std::uint64_t id = reinterpret_cast<std::uintptr_t>(this);
    if (me->wants(EventId::spawn)) {
      for (auto& node : nodes_) me->report_spawn(node.get(), SpawnKind::spawn_after, id);
    }
    for (auto it = sources_.rbegin(); it != sources_.rend(); ++it) me->push(*it);
    const bool reported = me->report_wait_begin(detail::WaitKind::graph, id);
    me->wait_until(done, detail::WaitKind::graph);
    me->report_wait_end(detail::WaitKind::graph, id, reported);
  } else {
    registry.inject(sources_.size() == 1 ? static_cast<detail::Job*>(sources_.front()) : &starter_);
    done.wait_blocking();
  }
  done_ = nullptr;
  // The latch's acquire made every task's writes, error_ included, visible here.
  if (failed_.load(std::memory_order_relaxed)) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace lantern
