// SPDX-License-Identifier: Apache-2.0
// scale_figures.cpp - scalability() off the render thread (see the header).
#include "lantern/viewer/scale_figures.hpp"

#include <pthread.h>

#include <algorithm>
#include <chrono>

namespace lantern::viewer {
namespace {

// window_start: `from`, or the latest tick after it from which at most `max_tasks` tasks
// began (every worker's slices at every depth, begun at or after it).
Tick window_start(const analysis::Analysis& a, Tick from, Tick to, std::size_t max_tasks) {
  auto begun_since = [&](Tick t) {
    std::size_t n = 0;
    for (std::uint32_t w = 0; w < a.worker_count(); ++w) {
      const analysis::WorkerTrack& track = a.track(w);
      for (int d = 0; d < track.depth_count(); ++d)
        n += track.slices(d).size() - track.first_slice_starting_at_or_after(d, t);
    }
    return n;
  };
  if (to <= from || begun_since(from) <= max_tasks) return from;
  Tick lo = from, hi = to;  // begun_since(lo) > max_tasks; find the first t with <= max_tasks
  while (hi - lo > 1) {
    const Tick mid = lo + (hi - lo) / 2;
    (begun_since(mid) > max_tasks ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace

ScaleFigures::~ScaleFigures() { join(); }

void ScaleFigures::join() {
  if (thread_.joinable()) thread_.join();
}

void ScaleFigures::wait() const { busy_.wait(true, std::memory_order_acquire); }

void ScaleFigures::reset() {
  join();
  busy_.store(false, std::memory_order_release);
  whole_.reset();
  result_.reset();
  live_.clear();
  want_whole_ = true;
  asked_ = running_whole_ = false;
  next_live_s_ = 0;
}

void ScaleFigures::request_recompute(const analysis::ScaleOptions& options) {
  options_.scale = options;
  want_whole_ = asked_ = true;
}

void ScaleFigures::start(Session& session, bool whole, Tick from, Tick to) {
  join();
  busy_.store(true, std::memory_order_release);
  result_whole_ = whole;
  running_whole_ = whole;
  if (whole) want_whole_ = false;
  // A loaded session holds still: read without its mutex. A streaming one grows: lock.
  const bool lock = !session.finished();
  analysis::ScaleOptions options = options_.scale;
  if (!whole) {
    // The live window wants its parallelism (work and span): one simulated point, no
    // what-ifs, so that a window costs little more than its graph.
    options.workers = {std::max<std::uint32_t>(session.model().worker_count(), 1)};
    options.what_if_workers = options.workers;
    options.what_if.clear();
    options.top_labels = 0;
  }
  thread_ = std::thread([this, &session, lock, whole, from, to, options] {
    std::unique_lock<std::mutex> guard(session.mutex(), std::defer_lock);
    if (lock) guard.lock();
    const auto t0 = std::chrono::steady_clock::now();
    auto figures =
        std::make_unique<analysis::Scalability>(analysis::scalability(session.model().analysis(), options, from, to));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (guard.owns_lock()) guard.unlock();
    ParallelismSample sample;
    if (!whole) {
      sample.from = from, sample.to = to;
      sample.parallelism = figures->parallelism;
      sample.work_ns = figures->work_ns, sample.span_ns = figures->span_ns;
      sample.tasks = figures->tasks;
      if (!figures->parallelism) sample.reason = figures->why_not({"parallelism"});
      sample.compute_ms = ms;
    }
    {
      std::lock_guard<std::mutex> done(done_mutex_);
      result_ = std::move(figures);
      result_sample_ = std::move(sample);
      result_ms_ = ms;
    }
    busy_.store(false, std::memory_order_release);
    busy_.notify_all();
  });
  // The computing thread, by name in top -H, gdb and perf.
  pthread_setname_np(thread_.native_handle(), "lantern-scale");
}

void ScaleFigures::poll(Session& session, double now_s) {
  if (!busy() && thread_.joinable()) {
    join();
    std::lock_guard<std::mutex> done(done_mutex_);
    if (result_whole_) {
      whole_ = std::move(result_);
      whole_ms_ = result_ms_;
      running_whole_ = false;
    } else {
      live_.push_back(std::move(result_sample_));
      if (live_.size() > options_.live_samples) live_.erase(live_.begin());
      // At most every period, and under a tenth of the time however long a window takes.
      next_live_s_ = now_s + std::max(options_.live_period_s, 9 * result_ms_ / 1000);
    }
    result_.reset();
  }
  if (busy()) return;
  const Model& model = session.model();
  if (model.empty()) return;
  // The whole session: a file once it has loaded, a live one once it has ended, and either
  // whenever the user asks (a streaming session's then holds the mutex while it runs).
  if (want_whole_ && (session.finished() || asked_)) {
    asked_ = false;
    start(session, true, 0, kOpenEnd);
    return;
  }
  if (session.live() && !session.finished() && now_s >= next_live_s_) {
    const Tick last = model.last_tick();
    const auto width = static_cast<Tick>(model.ns_to_ticks(options_.live_window_s * 1e9));
    start(session, false,
          window_start(model.analysis(), last > width ? last - width : 0, last, options_.live_max_tasks), last);
  }
}

}  // namespace lantern::viewer
