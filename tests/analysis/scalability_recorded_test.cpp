// SPDX-License-Identifier: Apache-2.0
// scalability_recorded_test.cpp - the scalability analysis against the truth on REAL
// recorded runs: every task busy-waits a duration the test measures itself (steady
// clock), so the test knows each task's own time and computes work and span from the
// program's structure; the analysis, fed the Recorder's events, must find both within
// 5 % and the critical path as exactly the expected tasks (named by label). Shapes: a
// chain beside a fan-out, fib by join at level graph, fib by TaskGroup at level tasks, a
// TaskGraph, a spawn_after chain, a Signal set by another branch. Two workers; durations
// of 100 us to 1.5 ms keep scheduling noise small. The machine may be shared: a shape
// is recorded up to three times and passes when one recording is within the bounds
// (each attempt's errors are printed).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "lantern/analysis/analysis.hpp"
#include "lantern/analysis/scalability.hpp"
#include "lantern/graph.hpp"
#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/sink.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/lantern.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace lantern;
const Label kChain = label("chain");
using Clock = std::chrono::steady_clock;
using instrumentation::Collector;
using instrumentation::Recorder;

// kDurationScale, kBound: a sanitizer build runs the scheduler's and the recorder's own
// code (spawns, waits, events, first touches of fresh memory: time the truth does not
// count) many times slower, so its tasks busy-wait ten times longer, and its bound on
// work and span is 50 %: there the test checks the graph (the critical path exactly),
// and the Release build checks the 5 % accuracy.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr double kDurationScale = 10;
constexpr double kBound = 0.50;
#else
constexpr double kDurationScale = 1;
constexpr double kBound = 0.05;
#endif

// busy: spins for `us` microseconds (times kDurationScale); returns what it measured, in ns.
double busy(double us) {
  const auto t0 = Clock::now();
  const auto until = t0 + std::chrono::nanoseconds(static_cast<std::int64_t>(us * kDurationScale * 1000));
  auto now = t0;
  while (now < until) now = Clock::now();
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - t0).count());
}

// MemorySink: the recorded events, in the order batches came.
struct MemorySink final : instrumentation::Sink {
  std::mutex mutex;
  std::vector<trace::Event> events;
  void on_batch(std::span<const trace::Event> batch) override {
    std::lock_guard<std::mutex> lock(mutex);
    events.insert(events.end(), batch.begin(), batch.end());
  }
};

// Truth: what the test measured (ns).
struct Truth {
  std::mutex mutex;
  double work = 0;
  void add(double ns) {
    std::lock_guard<std::mutex> lock(mutex);
    work += ns;
  }
};

struct Recorded {
  std::unique_ptr<analysis::Analysis> analysis;
  analysis::Scalability s;
};

// record: runs `body` on a 2-worker pool recorded at `level`, and analyses the events.
template <class Body>
Recorded record(trace::Level level, Body&& body) {
  Recorder recorder(2, {.level = level, .ring_capacity = 1u << 16});
  auto sink = std::make_shared<MemorySink>();
  Recorded r;
  r.analysis = std::make_unique<analysis::Analysis>();
  {
    Scheduler pool({.workers = 2, .observer = &recorder});
    lantern::testing::Watchdog dog("recorded scalability run", std::chrono::seconds(60));
    Collector collector(recorder);
    collector.attach(sink);
    collector.start();
    r.analysis->set_header(instrumentation::make_trace_header(pool, recorder, "scalability_recorded_test"), true);
    body(pool);
    pool.shutdown();
    collector.stop();
  }
  std::set<std::uint32_t> labels;
  for (const trace::Event& e : sink->events) {
    r.analysis->add(e);
    if (e.type == EventId::task_label) labels.insert(trace::payload<TaskLabelPayload>(e).label);
  }
  for (std::uint32_t l : labels) r.analysis->define_label(l, std::string(label_name(l)));
  r.analysis->finish();
  analysis::ScaleOptions o;
  o.workers = {1, 2};
  o.top_labels = 0;
  r.s = analysis::scalability(*r.analysis, o);
  return r;
}

// path_labels: the critical path's tasks in order (consecutive stretches of one slice
// are one task), by label name. Unlabelled tasks are the test's scaffolding (a graph's
// starter, the pool's root): left out when they hold under 2 % of the span, "-" else.
std::vector<std::string> path_labels(const Recorded& r) {
  struct Entry {
    analysis::SliceRef slice;
    std::uint32_t label;
    double own;
  };
  std::vector<Entry> tasks;
  for (const auto& p : r.s.critical_path) {
    if (!tasks.empty() && p.slice.worker == tasks.back().slice.worker && p.slice.depth == tasks.back().slice.depth &&
        p.slice.index == tasks.back().slice.index) {
      tasks.back().own += p.own_ns;
      continue;
    }
    tasks.push_back(Entry{p.slice, p.label, p.own_ns});
  }
  std::vector<std::string> names;
  for (const Entry& e : tasks) {
    if (e.label == 0 && e.own < 0.02 * r.s.span_ns.value_or(0)) continue;
    names.push_back(e.label == 0 ? std::string("-") : r.analysis->labels().display_name(e.label));
  }
  return names;
}

std::string join_names(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

// check: up to three recordings; passes when one has work and span within kBound (5 %
// in a Release build) and the expected path.
template <class Shape>
void check(const char* name, trace::Level level, Shape&& shape) {
  std::string failures;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    double work = 0, span = 0;
    std::vector<std::string> expected;
    Recorded r = record(level, [&](Scheduler& pool) { shape(pool, &work, &span, &expected); });
    const auto& s = r.s;
    if (!s.work_ns || !s.span_ns) {
      failures += std::string("attempt ") + std::to_string(attempt) +
                  ": not computed: " + (s.not_computed.empty() ? std::string("?") : s.not_computed[0]) + "\n";
      continue;
    }
    const double work_err = (*s.work_ns - work) / work, span_err = (*s.span_ns - span) / span;
    const auto got = path_labels(r);
    std::printf("%s attempt %d: work %.3f ms (truth %.3f, %+.2f %%), span %.3f ms (truth %.3f, %+.2f %%), path %s\n",
                name, attempt, *s.work_ns / 1e6, work / 1e6, 100 * work_err, *s.span_ns / 1e6, span / 1e6,
                100 * span_err, join_names(got).c_str());
    for (const auto& c : s.curve)  // for information: the simulator beside the run itself
      if (c.simulated_ns && c.measured_ns)
        std::printf("  T_%u simulated %.3f ms, measured %.3f ms\n", c.workers, *c.simulated_ns / 1e6,
                    *c.measured_ns / 1e6);
    if (std::abs(work_err) <= kBound && std::abs(span_err) <= kBound && got == expected) return;
    failures += "attempt " + std::to_string(attempt) + ": work error " + std::to_string(100 * work_err) +
                " %, span error " + std::to_string(100 * span_err) + " %, path [" + join_names(got) + "], expected [" +
                join_names(expected) + "]\n";
  }
  ADD_FAILURE() << name << ":\n" << failures;
}

// A chain of 5 tasks (1 ms each, each spawning the next) beside a fan-out of 6 (300 us);
// the root waits for the fan-out (TaskGroup) and for the chain's end (a Signal).
TEST(ScalabilityRecorded, ChainBesideFanOut) {
  check("chain+fan-out", trace::Level::graph,
        [](Scheduler& pool, double* work, double* span, std::vector<std::string>* path) {
          static const Label kRoot = label("root"), kFan = label("fan");
          Truth t;
          double pre = 0, post = 0;
          // The chain's state outlives the run: its last task still returns after set().
          struct Chain {
            Signal done;
            std::atomic<int> left{5};
            double sum = 0;  // the chain's measured time (its tasks run one after another)
            Truth* t = nullptr;
            static void link(const std::shared_ptr<Chain>& c) {
              label_task(kChain);
              const double d = busy(1000);
              c->t->add(d);
              c->sum += d;
              if (c->left.fetch_sub(1) > 1)
                lantern::spawn([c] { link(c); });
              else
                c->done.set();
            }
          };
          auto chain_state = std::make_shared<Chain>();
          chain_state->t = &t;
          pool.run([&] {
            label_task(kRoot);
            pre = busy(200);
            lantern::spawn([c = chain_state] { Chain::link(c); });
            TaskGroup fan;
            for (int i = 0; i < 6; ++i)
              fan.spawn([&] {
                label_task(kFan);
                t.add(busy(300));
              });
            fan.wait();
            chain_state->done.wait();
            post = busy(200);
          });
          const double chain = chain_state->sum;
          *work = t.work + pre + post;
          *span = pre + chain + post;
          *path = {"root", "chain", "chain", "chain", "chain", "chain", "root"};
        });
}

// fib(n) by join at level graph: an inner node works 100 us before its join, a leaf
// fib(1) 400 us, fib(0) 200 us. The first half runs inline in its caller's task; the
// second half ("half") is a task, spawned at the fork. The truth (span, and the path as
// the tasks it passes through) is computed from the measured durations.
struct JoinSpan {
  double span = 0;
  std::vector<int> tasks;  // the path's tasks in order (the test's own numbering)
};
struct FibJoin {
  Truth& t;
  std::atomic<int> next{1};
  JoinSpan node(int n, int me) {  // runs in task `me`
    if (n < 2) {
      const double d = busy(n == 1 ? 400 : 200);
      t.add(d);
      return {d, {me}};
    }
    const double c = busy(100);
    t.add(c);
    static const Label kHalf = label("half");
    JoinSpan left, right;
    join([&] { left = node(n - 1, me); },
         [&] {
           label_task(kHalf);
           right = node(n - 2, next.fetch_add(1));
         });
    if (left.span >= right.span) return {c + left.span, left.tasks};
    JoinSpan r{c + right.span, {me}};
    r.tasks.insert(r.tasks.end(), right.tasks.begin(), right.tasks.end());
    r.tasks.push_back(me);  // the caller goes on after the join
    return r;
  }
};

TEST(ScalabilityRecorded, FibByJoinAtLevelGraph) {
  check("fib by join", trace::Level::graph,
        [](Scheduler& pool, double* work, double* span, std::vector<std::string>* path) {
          static const Label kFib = label("fib");
          Truth t;
          JoinSpan s;
          pool.run([&] {
            label_task(kFib);
            FibJoin fib{t};
            s = fib.node(8, 0);
          });
          *work = t.work;
          *span = s.span;
          path->clear();
          for (std::size_t i = 0; i < s.tasks.size(); ++i)
            if (i == 0 || s.tasks[i] != s.tasks[i - 1]) path->push_back(s.tasks[i] == 0 ? "fib" : "half");
          path->push_back("fib");  // the root's end, after its last join
          if (path->size() >= 2 && (*path)[path->size() - 2] == "fib") path->pop_back();
        });
}

// fib(n) by TaskGroup at level tasks: each call a task labelled fibN, 250 us before its
// spawns and 100 us after its wait; fib(1) 1 ms, fib(0) 500 us. The truth (span and
// path) is computed from the measured durations.
struct GroupSpan {
  double span = 0;
  std::vector<std::string> path;
};
GroupSpan fib_group(int n, Truth& t) {
  static std::vector<Label> labels = [] {
    std::vector<Label> v;
    for (int i = 0; i < 16; ++i) v.push_back(label("fib" + std::to_string(i)));
    return v;
  }();
  label_task(labels[static_cast<std::size_t>(n)]);
  const std::string me = "fib" + std::to_string(n);
  if (n < 2) {
    const double d = busy(n == 1 ? 1000 : 500);
    t.add(d);
    return {d, {me}};
  }
  const double pre = busy(250);
  GroupSpan a, b;
  TaskGroup g;
  g.spawn([&] { a = fib_group(n - 1, t); });
  g.spawn([&] { b = fib_group(n - 2, t); });
  g.wait();
  const double post = busy(100);
  t.add(pre + post);
  const GroupSpan& longer = a.span >= b.span ? a : b;
  GroupSpan r{pre + longer.span + post, {me}};
  r.path.insert(r.path.end(), longer.path.begin(), longer.path.end());
  r.path.push_back(me);
  return r;
}

TEST(ScalabilityRecorded, FibByTaskGroupAtLevelTasks) {
  check("fib by TaskGroup", trace::Level::tasks,
        [](Scheduler& pool, double* work, double* span, std::vector<std::string>* path) {
          Truth t;
          GroupSpan s;
          pool.run([&] { s = fib_group(7, t); });
          *work = t.work;
          *span = s.span;
          *path = s.path;
        });
}

// A TaskGraph: A (300 us) precedes B (1.5 ms) and C (600 us); B precedes D (300 us).
// Every node has one predecessor: a release names only the dependency that completed
// last (instrumentation/README.md, "Scalability analysis"), so a node with several is
// not a known answer for the span of one run.
TEST(ScalabilityRecorded, TaskGraph) {
  check("TaskGraph", trace::Level::graph,
        [](Scheduler& pool, double* work, double* span, std::vector<std::string>* path) {
          static const Label kA = label("A"), kB = label("B"), kC = label("C"), kD = label("D");
          Truth t;
          double a = 0, b = 0, d = 0;
          TaskGraph g;
          auto ta = g.add("A", [&] {
            label_task(kA);
            a = busy(300);
            t.add(a);
          });
          auto tb = g.add("B", [&] {
            label_task(kB);
            b = busy(1500);
            t.add(b);
          });
          auto tc = g.add("C", [&] {
            label_task(kC);
            t.add(busy(600));
          });
          auto td = g.add("D", [&] {
            label_task(kD);
            d = busy(300);
            t.add(d);
          });
          ta.precede(tb, tc);
          td.succeed(tb);
          g.run(pool);
          *work = t.work;
          *span = a + b + d;
          *path = {"A", "B", "D"};
        });
}

// spawn_after: five tasks of 500 us, each after the one before.
TEST(ScalabilityRecorded, SpawnAfterChain) {
  check("spawn_after chain", trace::Level::graph,
        [](Scheduler& pool, double* work, double* span, std::vector<std::string>* path) {
          static const Label kStep = label("step");
          Truth t;
          std::vector<TaskHandle> steps;
          for (int i = 0; i < 5; ++i) {
            auto body = [&] {
              label_task(kStep);
              t.add(busy(500));
            };
            if (steps.empty())
              steps.push_back(pool.spawn_after(std::span<const Dependency>{}, body));
            else
              steps.push_back(pool.spawn_after({steps.back()}, body));
          }
          steps.back().wait();
          *work = t.work;
          *span = t.work;
          *path = {"step", "step", "step", "step", "step"};
        });
}

// A task waits on a Signal that another branch sets after 1.5 ms.
TEST(ScalabilityRecorded, SignalSetByAnotherBranch) {
  check("Signal", trace::Level::graph, [](Scheduler& pool, double* work, double* span, std::vector<std::string>* path) {
    static const Label kRoot = label("root"), kWaiter = label("waiter"), kSetter = label("setter");
    Truth t;
    double pre = 0, post = 0, set_before = 0, after_wait = 0;
    pool.run([&] {
      label_task(kRoot);
      Signal s;
      pre = busy(100);
      TaskGroup g;
      g.spawn([&] {
        label_task(kWaiter);
        t.add(busy(200));
        s.wait();
        after_wait = busy(500);
      });
      g.spawn([&] {
        label_task(kSetter);
        set_before = busy(1500);
        s.set();
        t.add(busy(200));
      });
      g.wait();
      post = busy(100);
    });
    *work = t.work + pre + post + set_before + after_wait;
    *span = pre + set_before + after_wait + post;
    *path = {"root", "setter", "waiter", "root"};
  });
}

}  // namespace
