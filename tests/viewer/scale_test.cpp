// SPDX-License-Identifier: Apache-2.0
// scale_test.cpp - ScaleFigures: the viewer's scalability figures are the analysis' own
// (lantern::analysis::scalability on the same model), computed once per loaded trace and
// again only when asked; live, a rolling window's parallelism at most every period.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <thread>

#include "graph_trace.hpp"
#include "lantern/viewer/scale_figures.hpp"
#include "trace_builder.hpp"

namespace lantern::viewer {
namespace {

using test::GraphTrace;

// poll_until_settled: polls (under the session's mutex, as the UI does) until no
// computation is in flight and none is due; fails loudly after 200 rounds.
void poll_until_settled(ScaleFigures& f, Session& s, double now_s) {
  for (int round = 0; round < 200; ++round) {
    {
      std::lock_guard<std::mutex> lock(s.mutex());
      f.poll(s, now_s);
    }
    f.wait();
    if (!f.busy() && !f.pending()) {
      std::lock_guard<std::mutex> lock(s.mutex());
      f.poll(s, now_s);  // takes the result of the last computation
      if (!f.busy() && !f.pending()) return;
    }
  }
  FAIL() << "ScaleFigures never settled";
}

TEST(ScaleFigures, AreTheAnalysisFiguresComputedOncePerLoadedTrace) {
  const GraphTrace g = test::graph_trace(false);
  auto s = test::load(test::graph_trace_bytes(g), 4096);
  ScaleFigures f;
  EXPECT_EQ(f.whole(), nullptr);
  poll_until_settled(f, *s, 0);
  ASSERT_NE(f.whole(), nullptr);
  const analysis::Scalability& shown = *f.whole();
  const analysis::Scalability direct = analysis::scalability(s->model().analysis(), f.options().scale);
  // What the view draws is what the analysis returns, figure for figure.
  EXPECT_EQ(shown.work_ns, direct.work_ns);
  EXPECT_EQ(shown.span_ns, direct.span_ns);
  EXPECT_EQ(shown.parallelism, direct.parallelism);
  EXPECT_EQ(shown.burdened_span_ns, direct.burdened_span_ns);
  EXPECT_EQ(shown.measured_ns, direct.measured_ns);
  EXPECT_EQ(shown.critical_path.size(), direct.critical_path.size());
  EXPECT_EQ(shown.curve.size(), direct.curve.size());
  EXPECT_EQ(shown.not_computed, direct.not_computed);
  // And the graph's known figures (graph_trace.hpp).
  ASSERT_TRUE(shown.work_ns && shown.span_ns && shown.parallelism)
      << "not computed: " << (shown.not_computed.empty() ? "" : shown.not_computed[0]);
  EXPECT_NEAR(*shown.work_ns, GraphTrace::kWorkNs, 0.01 * GraphTrace::kWorkNs);
  EXPECT_NEAR(*shown.span_ns, GraphTrace::kSpanNs, 0.01 * GraphTrace::kSpanNs);
  EXPECT_NEAR(*shown.parallelism, GraphTrace::kWorkNs / GraphTrace::kSpanNs, 0.02);
  ASSERT_TRUE(shown.measured_ns);
  EXPECT_NEAR(*shown.measured_ns, g.measured_ns, 1000);
  EXPECT_EQ(shown.measured_workers, 2u);
  // The critical path: R's first stretch, the chain A..D down and back up, R's last stretch.
  std::vector<std::uint64_t> tasks;
  for (const auto& p : shown.critical_path)
    if (p.own_ns > 0) tasks.push_back(p.task);
  const std::vector<std::uint64_t> expected = {GraphTrace::kRoot,    GraphTrace::chain(0), GraphTrace::chain(1),
                                               GraphTrace::chain(2), GraphTrace::chain(3), GraphTrace::chain(2),
                                               GraphTrace::chain(1), GraphTrace::chain(0), GraphTrace::kRoot};
  EXPECT_EQ(tasks, expected);
  ASSERT_FALSE(shown.labels.empty());
  EXPECT_EQ(shown.labels.front().name, "chain");

  // Polling again computes nothing: the figures are kept, not recomputed per frame.
  const analysis::Scalability* kept = f.whole();
  for (int i = 0; i < 50; ++i) {
    std::lock_guard<std::mutex> lock(s->mutex());
    f.poll(*s, i);
    EXPECT_FALSE(f.busy());
  }
  EXPECT_EQ(f.whole(), kept);
  // Recompute, when asked, with the options asked for.
  analysis::ScaleOptions again;
  again.top_label_percent = 25;
  f.request_recompute(again);
  EXPECT_TRUE(f.pending());
  poll_until_settled(f, *s, 100);
  ASSERT_NE(f.whole(), nullptr);
  ASSERT_FALSE(f.whole()->labels.empty());
  ASSERT_TRUE(f.whole()->labels.front().what_if);
  EXPECT_EQ(f.whole()->labels.front().what_if->percent, 25);
}

// HeldSource: all its bytes, then nothing (a live app that went quiet) until released.
class HeldSource final : public ByteSource {
 public:
  explicit HeldSource(std::vector<std::uint8_t> bytes) : bytes_(std::move(bytes)) {}
  Status read(std::span<std::uint8_t> buffer, std::size_t* n, std::string*) override {
    if (at_ < bytes_.size()) {
      *n = std::min(buffer.size(), bytes_.size() - at_);
      std::memcpy(buffer.data(), bytes_.data() + at_, *n);
      at_ += *n;
      return Status::data;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    // A poll period, like a socket's: the session checks its stop flag between reads.
    cv_.wait_for(lock, std::chrono::milliseconds(20), [&] { return released_; });
    return released_ ? Status::end : Status::waiting;
  }
  std::string describe() const override { return "<held>"; }
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::vector<std::uint8_t> bytes_;
  std::size_t at_ = 0;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool released_ = false;
};

// live_session: a live Session fed `g`'s trace through a HeldSource (*held: to release
// it), returned once it has applied every event (watchdog: 30 s, then a loud failure).
std::unique_ptr<Session> live_session(const GraphTrace& g, HeldSource** held) {
  auto source = std::make_unique<HeldSource>(test::graph_trace_bytes(g));
  *held = source.get();
  auto s = Session::from_source(std::move(source), SourceStatus::Kind::live, "<live>");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(s->mutex());
      if (s->model().events() == g.events.size()) return s;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ADD_FAILURE() << "the live session never applied every event";
      return s;
    }
    std::this_thread::yield();
  }
}

TEST(ScaleFigures, LiveParallelismOfTheRollingWindowAtMostEveryPeriod) {
  const GraphTrace g = test::graph_trace(false);
  HeldSource* held = nullptr;
  auto s = live_session(g, &held);
  ASSERT_FALSE(::testing::Test::HasFailure());
  ScaleFigures::Options options;
  options.live_window_s = 2.0;
  options.live_period_s = 0.5;
  ScaleFigures f(options);
  auto poll = [&](double now) {
    std::lock_guard<std::mutex> lock(s->mutex());
    f.poll(*s, now);
  };
  poll(10.0);  // starts the first window's computation (it waits for the mutex)
  EXPECT_TRUE(f.busy());
  EXPECT_EQ(f.whole(), nullptr) << "a streaming session's whole figures are computed only when asked";
  f.wait();
  poll(10.1);  // takes it; the next is not due before 10.5
  ASSERT_EQ(f.live().size(), 1u);
  EXPECT_FALSE(f.busy());
  poll(10.3);
  EXPECT_FALSE(f.busy()) << "recomputed within the period";
  const ParallelismSample sample = f.live().front();
  {
    // The sample is scalability() of the same window, as the analysis computes it.
    std::lock_guard<std::mutex> lock(s->mutex());
    const Model& m = s->model();
    EXPECT_EQ(sample.to, m.last_tick());
    EXPECT_EQ(sample.from, 0u);  // the whole 4 ms trace is inside the 2 s window
    analysis::ScaleOptions live;
    live.workers = {2};
    live.what_if_workers = {2};
    live.top_labels = 0;
    const analysis::Scalability direct = analysis::scalability(m.analysis(), live, sample.from, sample.to);
    EXPECT_EQ(sample.parallelism, direct.parallelism);
    EXPECT_EQ(sample.span_ns, direct.span_ns);
  }
  ASSERT_TRUE(sample.parallelism) << sample.reason;
  EXPECT_NEAR(*sample.parallelism, GraphTrace::kWorkNs / GraphTrace::kSpanNs, 0.02);
  // Due again a period after 10.1 at the earliest; later when the window took long to
  // analyse (a loaded machine): the rule's own time, not a guess of it.
  EXPECT_GE(f.next_live_s(), 10.1 + options.live_period_s);
  poll(f.next_live_s() - 0.01);
  EXPECT_FALSE(f.busy()) << "recomputed before it was due";
  poll(f.next_live_s());
  EXPECT_TRUE(f.busy());
  f.wait();
  poll(f.next_live_s() + 0.01);  // takes it (next_live_s is not yet moved on)
  EXPECT_EQ(f.live().size(), 2u);
  // The app goes away: the session ends, and its whole figures are computed once.
  held->release();
  s->wait_until_finished();
  poll_until_settled(f, *s, 20);
  ASSERT_NE(f.whole(), nullptr);
  EXPECT_EQ(f.whole()->work_ns, analysis::scalability(s->model().analysis()).work_ns);
}

// A busy run's live window holds at most live_max_tasks tasks: it starts at the oldest of
// the last ones instead (the frame waits for the computation under the session's mutex).
TEST(ScaleFigures, ALiveWindowHoldsAtMostTheLastMaxTasks) {
  const GraphTrace g = test::graph_trace(false);
  HeldSource* held = nullptr;
  auto s = live_session(g, &held);
  ASSERT_FALSE(::testing::Test::HasFailure());
  std::uint64_t all = 0;
  {
    std::lock_guard<std::mutex> lock(s->mutex());
    analysis::ScaleOptions one;
    one.workers = {1};
    one.top_labels = 0;
    all = analysis::scalability(s->model().analysis(), one).tasks;
  }
  ASSERT_GE(all, 4u);
  ScaleFigures::Options options;
  options.live_window_s = 2.0;  // the whole trace, but for the cap
  options.live_max_tasks = all / 2;
  ScaleFigures f(options);
  {
    std::lock_guard<std::mutex> lock(s->mutex());
    f.poll(*s, 10.0);
  }
  f.wait();
  {
    std::lock_guard<std::mutex> lock(s->mutex());
    f.poll(*s, 10.1);
  }
  ASSERT_EQ(f.live().size(), 1u);
  const ParallelismSample sample = f.live().front();
  EXPECT_GT(sample.from, 0u) << "the window should start later than the trace's start";
  EXPECT_LE(sample.tasks, options.live_max_tasks);
  EXPECT_GT(sample.tasks, 0u);
  {
    // One tick earlier would hold more than the cap: the window is the widest allowed.
    std::lock_guard<std::mutex> lock(s->mutex());
    const analysis::Analysis& a = s->model().analysis();
    std::size_t earlier = 0;
    for (std::uint32_t w = 0; w < a.worker_count(); ++w)
      for (int d = 0; d < a.track(w).depth_count(); ++d)
        earlier += a.track(w).slices(d).size() - a.track(w).first_slice_starting_at_or_after(d, sample.from - 1);
    EXPECT_GT(earlier, options.live_max_tasks);
  }
  held->release();
  s->wait_until_finished();
}

}  // namespace
}  // namespace lantern::viewer
