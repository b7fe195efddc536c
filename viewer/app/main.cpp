// SPDX-License-Identifier: Apache-2.0
// main.cpp - lantern-view: open a trace file or attach to a live app; or render one
// picture of it (--screenshot) and exit.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "lantern/tools/program_cli.hpp"
#include "viewer_app.hpp"
#include "window.hpp"

namespace {

using namespace lantern::viewer;

// Exit codes (documented in --help; tests rely on them).
constexpr int kExitUsage = 2;
constexpr int kExitTraceProblems = 3;  // --screenshot of an unreadable, corrupt, truncated or newer trace
constexpr int kExitNoDisplay = 4;
constexpr int kExitCannotWrite = 5;
constexpr int kExitNoStream = 6;  // --attach: nothing answered, or the app sent no trace

constexpr const char* kUsage =
    "usage: lantern-view [options] TRACE_FILE\n"
    "       lantern-view [options] --attach HOST:PORT\n"
    "\n"
    "Shows what a Lantern scheduler did: one lane per worker (states and tasks), steal\n"
    "matrix, plots over time, latency histograms and health warnings. A trace file (or\n"
    "flight-recorder dump) is replayed; --attach connects to an app streaming live\n"
    "(started with LANTERN_STREAM=HOST:PORT or instrumentation::start_stream).\n"
    "\n"
    "  --attach HOST:PORT   live: connect to an app streaming there; ':7777' means 127.0.0.1\n"
    "  --wait               with --attach: wait for the app to answer (retrying every 10-100 ms);\n"
    "                       without it, nothing answering is an error (exit 6)\n"
    "  --compare B.TRACE    two runs side by side (TRACE_FILE is A), differences highlighted;\n"
    "                       lantern-trace diff A B prints the same comparison\n"
    "  --screenshot OUT.png render one picture and exit (needs X: run under 'xvfb-run -a')\n"
    "  --loading-screenshot OUT.png  with --screenshot of a file: also a picture of the first frame\n"
    "                       drawn while the file is still loading (with some data in it)\n"
    "  --view NAME          all (default), timeline, steals, plots, latency, health or scalability\n"
    "  --at TIME            playhead at TIME from the trace start, e.g. 12ms, 250us, 1.5s\n"
    "                       (refused when beyond the end of the trace)\n"
    "  --window DURATION    timeline width > 0, e.g. 500us (default: up to --at, or everything)\n"
    "  --size WxH           window size in pixels (default 1600x900)\n"
    "  --rows N             task rows per worker lane (default 6)\n"
    "  --path-stretch N     with --view scalability: the walk stands on the critical path's Nth\n"
    "                       stretch (from 1), the timeline centred on it\n"
    "  --health-sort KEY    Health lists sorted by time (default) or duration (longest first)\n"
    "  --task-colours HOW   slices coloured by label, by source, or auto (label when the trace has labels)\n"
    "  --after DURATION     live with --screenshot: how long to collect first (default 2s); the\n"
    "                       picture and the summary line are both of that moment\n"
    "  --layout FILE        with --screenshot: write where lanes and steal-matrix cells are\n"
    "  --exit-when-done     live: exit when the app disconnects; print what was received (with\n"
    "                       --screenshot: the picture is taken then, of everything received)\n"
    "  --max-events N       keep at most N events (default 100000000, about 2.5 GB)\n"
    "  --version            the version and the trace format version\n"
    "  -h, --help           this text\n"
    "\n"
    "Keys: wheel/W/S zoom, drag/A/D/arrows pan, Home whole trace, Space play/pause, F follow.\n"
    "Exit status: 0 ok; 2 bad arguments (also --at beyond the trace's end); 3 the trace file\n"
    "cannot be opened (nothing is shown), or with --screenshot the trace could not be read\n"
    "completely (the picture shows what could); 4 no display or OpenGL; 5 cannot write\n"
    "(the picture, the layout, or the summary on stdout); 6 --attach: nothing answered (without\n"
    "--wait), or the app closed the connection before sending its trace (its stream full).\n"
    "Options follow README.md, \"Command-line conventions\"; errors go to stderr.\n";

struct Args {
  std::string file;
  std::string attach;
  std::string screenshot;
  std::string loading_screenshot;
  std::string compare;
  std::string layout;
  int width = 1600, height = 900;
  double after_ns = 2e9;
  bool exit_when_done = false;
  bool wait = false;
  std::uint64_t max_events = 100'000'000;
  AppOptions app;
};

// parse reads the command line into Args, or exits: 0 after --help or --version, 2 with
// a message on stderr for bad usage.
Args parse(int argc, char** argv) {
  Args a;
  lantern::tools::Program program("lantern-view", kUsage, kExitCannotWrite);
  CLI::App& app = program.app();
  auto duration = [](double* out) { return [out](const std::string& v) { *out = parse_duration_ns(v); }; };
  const CLI::Validator duration_check(
      [](std::string& v) -> std::string {
        const double ns = parse_duration_ns(v);
        return std::isfinite(ns) && ns >= 0 ? std::string()
                                            : "takes a duration such as 12ms, 250us or 1.5s, not '" + v + "'";
      },
      "", "");
  app.add_option("--attach", a.attach)->check(lantern::tools::address_check());
  app.add_option("--screenshot", a.screenshot);
  app.add_option("--layout", a.layout);
  app.add_option("--compare", a.compare);
  app.add_option("--loading-screenshot", a.loading_screenshot);
  app.add_option("--task-colours", a.app.task_colours)->check(CLI::IsMember({"auto", "label", "source"}));
  std::string health_sort = "time";
  app.add_option("--health-sort", health_sort)->check(CLI::IsMember({"time", "duration"}));
  app.add_option("--view", a.app.view)
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            return is_view_name(v)
                       ? std::string()
                       : "takes all, timeline, steals, plots, latency, health or scalability, not '" + v + "'";
          },
          "", ""));
  app.add_option_function<std::string>("--at", duration(&a.app.at_ns))->check(duration_check);
  app.add_option_function<std::string>("--window", duration(&a.app.window_ns))->check(duration_check);
  app.add_option_function<std::string>("--after", duration(&a.after_ns))->check(duration_check);
  app.add_option_function<std::string>(
         "--size", [&a](const std::string& v) { std::sscanf(v.c_str(), "%dx%d", &a.width, &a.height); })
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            int w = 0, h = 0;
            char tail = 0;
            return std::sscanf(v.c_str(), "%dx%d%c", &w, &h, &tail) == 2 && w >= 200 && h >= 150 && w <= 8192 &&
                           h <= 8192
                       ? std::string()
                       : "takes WIDTHxHEIGHT, e.g. 1600x900, from 200x150 to 8192x8192, not '" + v + "'";
          },
          "", ""));
  lantern::tools::number_option(app, "--rows", &a.app.max_rows, 0, 64);
  int path_stretch = 0;
  lantern::tools::number_option(app, "--path-stretch", &path_stretch, 1, 1 << 30);
  lantern::tools::number_option<std::uint64_t>(app, "--max-events", &a.max_events, 1, ~0ull, "a positive number");
  app.add_flag("--exit-when-done", a.exit_when_done);
  app.add_flag("--wait", a.wait);
  std::vector<std::string> files;
  app.add_option("TRACE_FILE", files);
  if (const auto exit_status = program.parse(argc, argv)) std::exit(*exit_status);
  if (files.size() > 1)
    std::exit(program.usage_error("one trace file at a time ('" + files[0] + "' and '" + files[1] + "')"));
  if (!files.empty()) a.file = files[0];
  if (a.file.empty() == a.attach.empty()) std::exit(program.usage_error("give a trace file or --attach HOST:PORT"));
  if (a.wait && a.attach.empty()) std::exit(program.usage_error("--wait goes with --attach HOST:PORT"));
  a.app.health_by_duration = health_sort == "duration";
  a.app.path_stretch = path_stretch - 1;
  if (std::isfinite(a.app.window_ns) && !(a.app.window_ns > 0))
    std::exit(program.usage_error("--window must be longer than zero"));
  if (!a.compare.empty() && a.file.empty()) {
    std::exit(program.usage_error("--compare B.trace goes with a trace file A (lantern-view A --compare B)"));
  }
  if (!a.loading_screenshot.empty() && (a.screenshot.empty() || a.file.empty())) {
    std::exit(program.usage_error("--loading-screenshot goes with --screenshot of a trace file"));
  }
  return a;
}

std::unique_ptr<Session> make_session(const Args& a) {
  if (a.attach.empty()) return Session::open_file(a.file, a.max_events);
  return Session::attach(*lantern::parse_host_port(a.attach), a.max_events, a.wait);  // checked by parse()
}

// attach_failed: a live session that ended without a trace (nothing answered, or the app
// closed the connection before its header): says why on stderr; true then.
bool attach_failed(Session& s, const std::string& where) {
  if (!s.live() || !s.finished()) return false;
  std::lock_guard<std::mutex> lock(s.mutex());
  if (s.attach_failure().empty()) return false;
  std::fprintf(stderr, "lantern-view: --attach %s: %s\n", where.c_str(), s.attach_failure().c_str());
  return true;
}

// wait_for_first_bytes: without --wait, an attach that gets nowhere is an error before
// any window opens: wait until the app has sent something or the session has ended
// (a refused connection ends at once), at most `limit`.
void wait_for_first_bytes(Session& s, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (s.bytes_received() == 0 && !s.finished() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

// print_summary: what was received, on stdout; the trace's problems on stderr, each line
// "lantern-view: SOURCE: error: ..." (README: every line on stderr starts with the name).
void print_summary(Session& s, const std::string& source) {
  std::lock_guard<std::mutex> lock(s.mutex());
  const Model& m = s.model();
  std::printf("lantern-view: %s: %llu events, %llu chunks, %llu bytes, %llu events dropped, %zu warnings; %s\n",
              m.status().name.c_str(), static_cast<unsigned long long>(m.events() + m.discarded_events()),
              static_cast<unsigned long long>(m.chunks()), static_cast<unsigned long long>(s.bytes_received()),
              static_cast<unsigned long long>(m.dropped_events()), static_cast<std::size_t>(m.warning_count()),
              m.status().message.c_str());
  lantern::tools::flush_stdout();
  for (const auto& p : m.trace_problems())
    std::fprintf(stderr, "lantern-view: %s: %s\n", source.c_str(), lantern::trace::describe(p).c_str());
}

// check_readable: a trace file that cannot be opened is an error on stderr and exit 3,
// before any window: there is nothing to show.
void check_readable(const std::string& path) {
  // stat and access, not open: opening a pipe would consume its writer's rendezvous.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || ::access(path.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "lantern-view: cannot open the trace '%s': %s\n", path.c_str(), std::strerror(errno));
    std::exit(kExitTraceProblems);
  }
  if (S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "lantern-view: '%s' is a directory, not a trace file\n", path.c_str());
    std::exit(kExitTraceProblems);
  }
}

// refuse_start: --at beyond the end of the trace, once its end is known.
int refuse_start(const std::string& error) {
  std::fprintf(stderr, "lantern-view: %s (see lantern-view --help)\n", error.c_str());
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  if (args.attach.empty()) check_readable(args.file);
  if (!args.compare.empty()) check_readable(args.compare);
  ViewerApp app(make_session(args), args.app, [&args] { return make_session(args); });
  if (!args.attach.empty() && !args.wait) {
    wait_for_first_bytes(app.session(), std::chrono::seconds(5));
    if (attach_failed(app.session(), args.attach)) return kExitNoStream;
  }
  if (!args.compare.empty())
    app.set_compare(Session::open_file(args.compare, args.max_events), args.file, args.compare);

  Window window;
  std::string error;
  if (!window.open(args.width, args.height, app.title(), &error)) {
    std::fprintf(stderr, "lantern-view: %s\n", error.c_str());
    return kExitNoDisplay;
  }

  if (!args.screenshot.empty()) {
    // Wait for the data the picture is of: the whole file, or --after of the live stream.
    LayoutRecord layout;
    if (args.attach.empty()) {
      // Frames from the moment the window opens, as a user sees them while the file
      // loads; the picture is taken once it has loaded.
      bool loading_shot_taken = args.loading_screenshot.empty();
      while (!app.session().finished() || (app.compare_session() && !app.compare_session()->finished())) {
        bool has_data;
        {
          std::lock_guard<std::mutex> lock(app.session().mutex());
          has_data = !app.session().model().empty();
        }
        if (!loading_shot_taken && has_data && !app.session().finished()) {
          LayoutRecord loading;
          if (!args.layout.empty()) app.view().layout = &loading;
          if (!window.screenshot(
                  [&](double dt) {
                    loading.lines.clear();
                    app.frame(dt);
                  },
                  1, args.loading_screenshot, &error)) {
            std::fprintf(stderr, "lantern-view: %s\n", error.c_str());
            return kExitCannotWrite;
          }
          app.view().layout = nullptr;
          loading_shot_taken = true;
          if (!args.layout.empty()) {
            std::ofstream out(args.layout + ".loading");
            for (const auto& line : loading.lines) out << line << '\n';
          }
          continue;
        }
        window.paced_frame([&](double dt) { app.frame(dt); });
      }
      if (const std::string e = app.start_option_error(); !e.empty()) return refuse_start(e);
      // The scalability figures are computed once the trace has loaded: the picture waits for them.
      while (app.computing()) window.paced_frame([&](double dt) { app.frame(dt); });
    } else {
      // Live: the picture and the summary after it are of one moment: everything, once the
      // app disconnected (--exit-when-done), or what arrived within --after, the feed then
      // paused while the picture is taken.
      if (args.exit_when_done)
        app.session().wait_until_finished();
      else
        std::this_thread::sleep_for(std::chrono::nanoseconds(static_cast<long long>(args.after_ns)));
      app.session().pause();
      if (attach_failed(app.session(), args.attach)) return kExitNoStream;
      // The rolling window's parallelism is computed as frames are drawn (off the render
      // thread): the picture waits for its first sample, at most 10 s.
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!app.session().finished() && app.scale_figures().live().empty() &&
             std::chrono::steady_clock::now() < until)
        window.paced_frame([&](double dt) { app.frame(dt); });
    }
    if (!args.layout.empty()) app.view().layout = &layout;
    // Several frames: ImGui sizes windows, tables and tabs from the previous frame.
    if (!window.screenshot(
            [&](double dt) {
              layout.lines.clear();
              app.frame(dt);
            },
            4, args.screenshot, &error)) {
      std::fprintf(stderr, "lantern-view: %s\n", error.c_str());
      return kExitCannotWrite;
    }
    if (!args.layout.empty()) {
      std::ofstream out(args.layout);
      for (const auto& line : layout.lines) out << line << '\n';
      if (!out) {
        std::fprintf(stderr, "lantern-view: cannot write the layout to '%s'\n", args.layout.c_str());
        return kExitCannotWrite;
      }
    }
    print_summary(app.session(), args.attach.empty() ? args.file : args.attach);
    // B (--compare) gets A's checks and messages: its summary, its problems, exit 3.
    if (Session* b = app.compare_session()) print_summary(*b, args.compare);
    bool problems = false;
    const std::string a_name = args.attach.empty() ? args.file : args.attach;
    for (const auto& [s, name] : {std::pair{&app.session(), a_name}, std::pair{app.compare_session(), args.compare}}) {
      if (!s) continue;
      std::lock_guard<std::mutex> lock(s->mutex());
      if (!s->model().has_trace_errors()) continue;
      std::fprintf(stderr, "lantern-view: %s has the problems above; the picture shows what could be read\n",
                   name.c_str());
      problems = true;
    }
    return problems ? kExitTraceProblems : 0;
  }

  std::string start_error;
  window.run(
      [&](double seconds) {
        app.frame(seconds);
        start_error = app.start_option_error();
        return start_error.empty() && !(args.exit_when_done && app.session().finished());
      },
      [&] { return app.animating() || ImGui::IsAnyMouseDown(); });
  if (!start_error.empty()) return refuse_start(start_error);
  if (args.exit_when_done) print_summary(app.session(), args.attach.empty() ? args.file : args.attach);
  if (args.exit_when_done && attach_failed(app.session(), args.attach)) return kExitNoStream;
  return 0;
}
