// SPDX-License-Identifier: Apache-2.0
// graph.hpp - TaskGraph: tasks with dependencies, built up front and run many times.
//
//   lantern::TaskGraph g;
//   auto load  = g.add("load",  [&] { read(); });
//   auto parse = g.add("parse", [&] { parse(); });
//   auto index = g.add("index", [&] { index(); });
//   load.precede(parse, index);   // parse and index run after load
//   g.run(pool);                  // every task once; returns when all have finished
//   g.run(pool);                  // and again: the graph is reusable
//
// run() on one of the pool's workers keeps that worker running other tasks until the
// graph is done; on any other thread it blocks. A task becomes ready only when its last
// predecessor finishes (until then it is in no queue, and no worker is woken for it);
// the worker that finished that predecessor runs it next, unless another worker steals
// it (core/dependencies/README.md).
//
// Errors:
//  * A cycle is refused when the graph is validated - by run() or validate() - with
//    std::invalid_argument whose message lists the tasks on one cycle by name.
//  * A task's exception is rethrown by run() (the first one, if several threw). The
//    failed task's successors, and theirs, do not run; every other task still runs,
//    and run() returns (throws) only when the whole graph has finished.
//  * One run at a time: run() while the graph runs, or adding tasks or edges while it
//    runs, throws std::logic_error. Building a graph is not thread-safe.
//  * run() on a worker waits there, running other tasks on the same stack, so it counts
//    towards SchedulerOptions::max_wait_depth: a run that would nest deeper throws
//    WaitDepthError before it starts any task (as Future, TaskHandle, Signal and
//    TaskGroup waits do; core/README.md, "Nested waits and the stack").
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lantern/detail/dep_node.hpp"
#include "lantern/scheduler.hpp"

namespace lantern {

class TaskGraph;

namespace detail {

// GraphNode: one task of a graph. Its `pending` holds the predecessors still to finish
// in the current run; make_ready resets it to `reset_pending` (= predecessors) for the
// next run, so starting a run touches no node but the sources.
struct GraphNode : DepNode {
  using Destroy = void (*)(GraphNode*) noexcept;
  GraphNode(Execute fn, Destroy destroy_fn, TaskGraph* owner, std::string task_name, std::uint32_t position)
      : DepNode(fn), graph(owner), name(std::move(task_name)), index(position), destroy(destroy_fn) {}

  TaskGraph* graph;
  std::vector<GraphNode*> successors;
  std::uint32_t predecessors = 0;
  std::string name;
  std::uint32_t index;  // position in the graph (validation, unnamed tasks' names)
  Destroy destroy;
};

struct GraphNodeDeleter {
  void operator()(GraphNode* node) const noexcept { node->destroy(node); }
};

void graph_node_done(GraphNode* node, bool failed) noexcept;  // below, after TaskGraph

template <class F>
struct GraphNodeImpl final : GraphNode {
  template <class G>
  GraphNodeImpl(TaskGraph* owner, std::string task_name, std::uint32_t position, G&& g)
      : GraphNode(&GraphNodeImpl::run, &GraphNodeImpl::destroy_self, owner, std::move(task_name), position),
        fn(std::forward<G>(g)) {}

  static bool run(Job* job) noexcept;
  static void destroy_self(GraphNode* node) noexcept { delete static_cast<GraphNodeImpl*>(node); }
  F fn;
};

}  // namespace detail

// GraphTask: a reference to one task of a TaskGraph, for declaring edges. Cheap to copy;
// valid as long as its graph.
class GraphTask {
 public:
  GraphTask() = default;
  // precede: this task runs before each of `next`. succeed: after each of `prev`.
  // Both throw std::invalid_argument for a task of another graph (or an empty one).
  template <class... More>
  GraphTask& precede(GraphTask next, More... more);
  template <class... More>
  GraphTask& succeed(GraphTask prev, More... more);
  const std::string& name() const noexcept { return node_->name; }
  bool valid() const noexcept { return node_ != nullptr; }

 private:
  friend class TaskGraph;
  explicit GraphTask(detail::GraphNode* node) noexcept : node_(node) {}
  detail::GraphNode* node_ = nullptr;
};

class TaskGraph {
 public:
  TaskGraph() = default;
  TaskGraph(const TaskGraph&) = delete;
  TaskGraph& operator=(const TaskGraph&) = delete;
  ~TaskGraph() = default;

  // add: a task running fn() once per run. The name appears in cycle errors; an empty
  // name is shown as "#<position>".
  template <class F>
  GraphTask add(std::string name, F&& fn) {
    check_not_running("add a task to");
    const auto position = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back(
        new detail::GraphNodeImpl<std::decay_t<F>>(this, std::move(name), position, std::forward<F>(fn)));
    prepared_ = false;
    return GraphTask(nodes_.back().get());
  }
  template <class F>
  GraphTask add(F&& fn) {
    return add(std::string(), std::forward<F>(fn));
  }

  // validate checks the graph now: throws std::invalid_argument naming the tasks of a
  // cycle. run() validates by itself (once per change to the graph).
  void validate();
  // run executes every task once, each after all of its predecessors, and returns when
  // all have finished; rethrows the first exception a task threw. Throws ShutdownError
  // from a non-worker thread once `pool` is shutting down.
  void run(Scheduler& pool);

  std::size_t size() const noexcept { return nodes_.size(); }
  // task_name: the name a cycle error shows for task `position`.
  std::string task_name(std::size_t position) const;

 private:
  friend class GraphTask;
  friend void detail::graph_node_done(detail::GraphNode*, bool) noexcept;
  template <class F>
  friend struct detail::GraphNodeImpl;

  // Starter: from outside the pool, a run with several sources injects this one job,
  // which pushes them all onto its worker's deque (one lane operation, not one per source).
  struct Starter : detail::Job {
    explicit Starter(TaskGraph* owner) noexcept : Job(&TaskGraph::start_sources), graph(owner) {}
    TaskGraph* graph;
  };
  static bool start_sources(detail::Job* job) noexcept;

  void add_edge(detail::GraphNode* from, detail::GraphNode* to);
  void check_not_running(const char* what) const;
  void prepare();
  std::string describe_cycle(const std::vector<std::uint32_t>& unfinished_predecessors) const;

  void record_error(std::exception_ptr error) noexcept {
    if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = std::move(error);  // first one wins
  }
  // sink_done: a task without successors finished. When the last one has, every task
  // has (each task is an ancestor of some sink), and the run is over.
  void sink_done() noexcept {
    // acq_rel: the last sink acquires every other sink's release, so the waiter (through
    // the latch) sees everything every task did, the recorded exception included.
    if (remaining_sinks_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    detail::Latch* done = done_;  // read before set(): the graph may be gone after it
    registry_->end_job();
    done->set();
  }

  std::vector<std::unique_ptr<detail::GraphNode, detail::GraphNodeDeleter>> nodes_;
  std::vector<detail::GraphNode*> sources_;  // tasks without predecessors
  std::size_t sinks_ = 0;                    // tasks without successors
  bool prepared_ = false;                    // validated, and every pending count set
  detail::Registry* registry_ = nullptr;     // the pool of the current (or last) run
  std::atomic<bool> running_{false};
  detail::Latch* done_ = nullptr;
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  Starter starter_{this};
  alignas(64) std::atomic<std::size_t> remaining_sinks_{0};
};

namespace detail {

// graph_node_done: release the node's successors (or count it as a finished sink).
// Last successor first: the deque is LIFO, so the first successor declared runs next
// on this worker (in a wavefront, the right neighbour, whose data is adjacent).
// Everything the loop needs is read into locals first: once the last successor is
// released the run can finish and the graph be destroyed under us.
inline void graph_node_done(GraphNode* node, bool failed) noexcept {
  GraphNode* const* const first = node->successors.data();
  GraphNode* const* it = first + node->successors.size();
  if (it == first) {
    node->graph->sink_done();
    return;
  }
  const std::uint64_t releaser = task_id(node);
  while (it != first) {
    --it;
    satisfy(*it, releaser, failed, std::exception_ptr{}, /*at_task_end=*/it == first);  // the graph keeps the error
  }
}

template <class F>
bool GraphNodeImpl<F>::run(Job* job) noexcept {
  auto* self = static_cast<GraphNodeImpl*>(job);
  // relaxed: `pending` reaching zero (acquire) ordered every predecessor's write.
  bool failed = self->cancelled.load(std::memory_order_relaxed);
  bool threw = false;
  if (!failed) {
    try {
      self->fn();
    } catch (...) {
      threw = failed = true;
      task_threw();
      self->graph->record_error(std::current_exception());
    }
  } else {
    self->cancelled.store(false, std::memory_order_relaxed);  // for the next run
  }
  graph_node_done(self, failed);
  return threw;
}

}  // namespace detail

template <class... More>
GraphTask& GraphTask::precede(GraphTask next, More... more) {
  if (!node_) throw std::invalid_argument("lantern::GraphTask::precede on an empty GraphTask");
  node_->graph->add_edge(node_, next.node_);
  if constexpr (sizeof...(More) > 0) precede(more...);
  return *this;
}

template <class... More>
GraphTask& GraphTask::succeed(GraphTask prev, More... more) {
  if (!node_) throw std::invalid_argument("lantern::GraphTask::succeed on an empty GraphTask");
  node_->graph->add_edge(prev.node_, node_);
  if constexpr (sizeof...(More) > 0) succeed(more...);
  return *this;
}

}  // namespace lantern
