// SPDX-License-Identifier: Apache-2.0
// Task labels (lantern/label.hpp): interning from many threads at once, names read while
// others intern, the bound and its overflow label, cut names, and label_task reporting
// the task_label hook for the task that runs it. Concurrent tests run under a watchdog.
//
// Labels are process-wide, so these tests compare ids with each other and with
// label_count() before and after, never with absolute numbers (other tests in this
// binary may have interned labels first). The overflow test fills the table in a child
// process (EXPECT_EXIT) so the rest of the binary keeps its room.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lantern/lantern.hpp"
#include "support/watchdog.hpp"

using namespace std::chrono_literals;
using lantern::Label;
using lantern::testing::Watchdog;

namespace {

// LabelHooks records every task_label hook and every task_begin id, per worker.
struct LabelHooks final : lantern::Observer {
  std::mutex mutex;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> labels;  // (task, label)
  std::set<std::uint64_t> begun;
  std::vector<std::uint64_t> open[8];                 // per worker: the tasks running, innermost last
  std::vector<std::uint64_t> labelled_while_running;  // task_label's task == innermost open task
  void on_event(std::uint32_t w, lantern::EventId h, std::uint64_t a, std::uint64_t b) noexcept override {
    std::lock_guard<std::mutex> lock(mutex);
    if (h == lantern::EventId::task_begin) {
      begun.insert(a);
      if (w < 8) open[w].push_back(a);
    } else if (h == lantern::EventId::task_end) {
      if (w < 8 && !open[w].empty()) open[w].pop_back();
    } else if (h == lantern::EventId::task_label) {
      labels.emplace_back(a, b);
      if (w < 8 && !open[w].empty() && open[w].back() == a) labelled_while_running.push_back(a);
    }
  }
};

}  // namespace

TEST(Label, SameNameSameIdDenseFromOne) {
  const std::uint32_t before = lantern::label_count();
  const Label a = lantern::label("label_test.a");
  const Label b = lantern::label("label_test.b");
  EXPECT_TRUE(a);
  EXPECT_EQ(a.id(), before + 1);
  EXPECT_EQ(b.id(), before + 2);
  EXPECT_EQ(lantern::label("label_test.a"), a);
  EXPECT_EQ(lantern::label(std::string("label_test.") + "b"), b);  // by value, not by pointer
  EXPECT_EQ(lantern::label_count(), before + 2);
  EXPECT_EQ(lantern::label_name(a), "label_test.a");
  EXPECT_EQ(lantern::label_name(b.id()), "label_test.b");
  // Every id up to label_count() has a name; nothing else does.
  for (std::uint32_t id = 1; id <= lantern::label_count(); ++id) EXPECT_FALSE(lantern::label_name(id).empty()) << id;
  EXPECT_TRUE(lantern::label_name(0).empty());
  EXPECT_TRUE(lantern::label_name(lantern::label_count() + 1).empty());
  EXPECT_TRUE(lantern::label_name(0xFFFF'FFFFu).empty());
  // The empty name is no label, and interns nothing.
  EXPECT_FALSE(lantern::label(""));
  EXPECT_EQ(lantern::label_count(), before + 2);
}

TEST(Label, LongNamesAreCutAtACharacterBoundary) {
  std::string name = "label_test.long.";
  while (name.size() < 400) name += "\xc3\xa9";  // U+00E9, two bytes: 255 falls inside one
  const Label l = lantern::label(name);
  const std::string_view stored = lantern::label_name(l);
  EXPECT_LE(stored.size(), lantern::kMaxLabelNameBytes);
  EXPECT_GE(stored.size(), lantern::kMaxLabelNameBytes - 1);
  EXPECT_EQ(stored, std::string_view(name).substr(0, stored.size()));
  EXPECT_NE(static_cast<unsigned char>(name[stored.size()]) & 0xC0, 0x80) << "cut inside a character";
  EXPECT_EQ(lantern::label(name + "more"), l);  // the same cut name: the same label
}

TEST(Label, ConcurrentInterningAgreesOnEveryId) {
  // 8 threads intern the same 200 names in different orders, 20 times over, while a
  // reader thread keeps reading every published name (it must never see a torn one).
  constexpr int kThreads = 8, kNames = 200, kRounds = 20;
  Watchdog dog("concurrent label interning", 60s);
  const std::uint32_t before = lantern::label_count();
  std::vector<std::map<std::string, std::uint32_t>> seen(kThreads);
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> reads{0};
  std::thread reader([&] {
    while (!done.load(std::memory_order_relaxed)) {
      const std::uint32_t n = lantern::label_count();
      for (std::uint32_t id = before + 1; id <= n; ++id) {
        const std::string_view name = lantern::label_name(id);
        if (name.rfind("label_test.concurrent.", 0) != 0) ADD_FAILURE() << "id " << id << " reads '" << name << "'";
      }
      reads.fetch_add(1, std::memory_order_relaxed);
    }
  });
  // The writers start once the reader has made a pass, so that it reads while they
  // write however the threads are scheduled (on a loaded 2-CPU machine the writers
  // could otherwise all finish before the reader first runs).
  while (reads.load(std::memory_order_relaxed) == 0) std::this_thread::yield();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        for (int k = 0; k < kNames; ++k) {
          const int i = (k * (2 * t + 1) + round) % kNames;  // a different order per thread
          const std::string name = "label_test.concurrent." + std::to_string(i);
          const Label l = lantern::label(name);
          auto [it, fresh] = seen[t].try_emplace(name, l.id());
          if (!fresh && it->second != l.id()) ADD_FAILURE() << name << " changed id";
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  done = true;
  reader.join();
  EXPECT_GT(reads.load(), 0u);
  // Every thread saw the same id for every name; the ids are exactly the next 200.
  std::set<std::uint32_t> ids;
  for (const auto& [name, id] : seen[0]) {
    ids.insert(id);
    EXPECT_EQ(lantern::label_name(id), name);
    for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t].at(name), id) << name << " in thread " << t;
  }
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(kNames));
  EXPECT_EQ(*ids.begin(), before + 1);
  EXPECT_EQ(*ids.rbegin(), before + kNames);
  EXPECT_EQ(lantern::label_count(), before + kNames);
}

TEST(Label, PastTheBoundEveryNewNameSharesTheOverflowLabel) {
  // In a child process: filling the table here would leave the other tests no room.
  // "threadsafe": the child re-runs just this test, so threads other tests (or a
  // sanitizer) started are no danger to the fork.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const Label mine = lantern::label("label_test.before_overflow");
        int failures = 0;
        for (std::uint32_t i = 0; lantern::label_count() < lantern::kMaxLabels - 1; ++i)
          lantern::label("label_test.fill." + std::to_string(i));
        const Label last_own = lantern::label("label_test.fill.last");  // takes the overflow slot
        const Label again = lantern::label("label_test.another");
        failures += last_own.id() != lantern::kMaxLabels;
        failures += again != last_own;
        failures += lantern::label_name(last_own) != lantern::kOverflowLabelName;
        failures += lantern::label_count() != lantern::kMaxLabels;
        failures += lantern::label("label_test.before_overflow") != mine;  // old names keep their ids
        failures += lantern::label_name(mine) != "label_test.before_overflow";
        std::exit(failures == 0 ? 0 : 10 + failures);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Label, LabelTaskReportsTheRunningTask) {
  const Label parse = lantern::label("label_test.parse");
  const Label render = lantern::label("label_test.render");
  LabelHooks hooks;
  {
    lantern::Scheduler pool({.workers = 2, .observer = &hooks});
    Watchdog dog("label_task", 30s, [&] { return pool.describe_state(); });
    pool.run([&] {
      lantern::label_task(parse);
      // Nested tasks (join's halves run as their own tasks when stolen or popped): each
      // labels itself; the label goes to the innermost running task.
      lantern::parallel_for(0, 64, 1, [&](std::size_t) { lantern::label_task(render); });
    });
    lantern::TaskGroup group(pool);
    for (int i = 0; i < 100; ++i) group.spawn([&] { lantern::label_task(render); });
    group.wait();
    lantern::label_task(parse);                      // not on a worker: nothing
    pool.run([] { lantern::label_task(Label{}); });  // the empty label: nothing
  }
#if LANTERN_OBSERVER
  std::lock_guard<std::mutex> lock(hooks.mutex);
  std::size_t parses = 0, renders = 0;
  for (const auto& [task, label] : hooks.labels) {
    EXPECT_TRUE(hooks.begun.count(task)) << "task_label names a task that never began";
    parses += label == parse.id();
    renders += label == render.id();
  }
  EXPECT_EQ(parses, 1u);
  EXPECT_GE(renders, 100u);  // the spawned ones, plus parallel_for's bodies
  EXPECT_EQ(hooks.labels.size(), parses + renders);
  EXPECT_EQ(hooks.labelled_while_running.size(), hooks.labels.size());
#endif
}
