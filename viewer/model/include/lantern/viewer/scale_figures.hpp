// SPDX-License-Identifier: Apache-2.0
// scale_figures.hpp - the scalability figures of a session (lantern::analysis::scalability,
// the one analysis `lantern-trace scale` prints), computed off the render thread and kept.
//
// The viewer never walks the task graph itself: it draws what scalability() returned.
// What is computed, and when:
//   - A trace file: once, when it has loaded (the whole trace), and again only when the
//     user asks (Recompute, e.g. with another what-if speedup). A loaded session's model
//     holds still (its feed thread has ended), so the computation reads it on its own
//     thread without the session's mutex: a 10-million-event trace's simulation takes
//     seconds, and the window keeps drawing meanwhile. The one thing that writes to a
//     loaded model, the Health panel's Re-check, waits while it runs (busy()).
//   - A live session: the parallelism of a rolling window (the tasks that began in the
//     last `live_window_s` seconds, scalability()'s Tick window), at most every
//     `live_period_s`, and no more often than keeps the computation under a tenth of
//     the time (a window that takes 30 ms to analyse is recomputed every 0.5 s, one that
//     takes 200 ms every 2 s). A live model grows while it is read, so this computation
//     holds the session's mutex: the frame waits for it at most once per period. To
//     bound that wait, a window holds at most `live_max_tasks` tasks: where more began
//     in the last `live_window_s` seconds (the demo's flood records 1.3M tasks a second
//     at level tasks), it starts later, at the oldest of the last `live_max_tasks`; the
//     sample's [from, to] is the window analysed, and the plot names its width. That
//     bounds the graph built, the bulk of the time; the scans that find the window's
//     tasks, releases and IO operations still pass over the whole session (a few ns an
//     item), so a long session's wait grows slowly with it.
//     Rejected: a second Analysis fed by the feed thread for the window (a second fold
//     of every event, which the one-analysis rule forbids, and twice the feed's cost).
// Each sample of the live series keeps the figures the analysis returned (nullopt with
// its reason when it could not compute them), never a number made up for a gap.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lantern/analysis/scalability.hpp"
#include "lantern/viewer/session.hpp"

namespace lantern::viewer {

// ParallelismSample: one live computation: the window [from, to] (absolute ticks) and
// what scalability() said about it.
struct ParallelismSample {
  Tick from = 0, to = 0;
  std::optional<double> parallelism;  // nullopt: not computed (why: the reason)
  std::optional<double> work_ns, span_ns;
  std::uint64_t tasks = 0;
  std::string reason;     // the analysis' first not_computed sentence, when nullopt
  double compute_ms = 0;  // how long scalability() took for it
};

class ScaleFigures {
 public:
  struct Options {
    analysis::ScaleOptions scale;         // for the whole trace (replay, or Recompute)
    double live_window_s = 2.0;           // the rolling window's width
    double live_period_s = 0.5;           // at most this often
    std::size_t live_max_tasks = 50'000;  // a window starts later rather than hold more
    std::size_t live_samples = 4096;      // the live series keeps this many (oldest dropped)
  };
  ScaleFigures() = default;
  explicit ScaleFigures(Options options) : options_(std::move(options)) {}
  ~ScaleFigures();  // waits for a computation in flight
  ScaleFigures(const ScaleFigures&) = delete;
  ScaleFigures& operator=(const ScaleFigures&) = delete;

  // poll: once per frame, by the UI thread, holding `session`'s mutex; `now_s` a
  // monotonic clock in seconds (tests pass their own). Takes a finished computation's
  // result, and starts the next one when one is due: the whole trace once a file has
  // loaded (or after request_recompute), a live window every period.
  void poll(Session& session, double now_s);
  // request_recompute: compute the whole session again (with `options`), at the next poll.
  void request_recompute(const analysis::ScaleOptions& options);
  // reset: forget everything (a new session); waits for a computation in flight. Call
  // without holding any session's mutex.
  void reset();
  // wait: until no computation is in flight (tests, --screenshot). Call without holding
  // the session's mutex.
  void wait() const;

  bool busy() const noexcept { return busy_.load(std::memory_order_acquire); }
  // whole: the whole session's figures, once computed (nullptr before).
  const analysis::Scalability* whole() const noexcept { return whole_.get(); }
  // pending: a whole-session computation is wanted or running, and whole() is not (yet) it.
  bool pending() const noexcept { return want_whole_ || running_whole_; }
  double whole_compute_ms() const noexcept { return whole_ms_; }
  const std::vector<ParallelismSample>& live() const noexcept { return live_; }
  // next_live_s: the earliest time (poll's clock) the next live window is computed: the
  // period after the last one taken, or longer when it took long (the header's rule).
  double next_live_s() const noexcept { return next_live_s_; }
  const Options& options() const noexcept { return options_; }

 private:
  void start(Session& session, bool whole, Tick from, Tick to);
  void join();

  Options options_;
  std::unique_ptr<analysis::Scalability> whole_;
  double whole_ms_ = 0;
  std::vector<ParallelismSample> live_;
  bool want_whole_ = true;  // a whole-session computation is due once the session has loaded
  bool asked_ = false;      // request_recompute: also while a live session streams
  bool running_whole_ = false;
  double next_live_s_ = 0;  // the earliest time of the next live computation
  // The computation in flight: its thread, and its result (written by it, read after
  // busy_ turns false).
  std::thread thread_;
  std::atomic<bool> busy_{false};
  mutable std::mutex done_mutex_;
  std::unique_ptr<analysis::Scalability> result_;
  ParallelismSample result_sample_;
  bool result_whole_ = false;
  double result_ms_ = 0;
};

}  // namespace lantern::viewer
