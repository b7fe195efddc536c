// SPDX-License-Identifier: Apache-2.0
// cmd_validate.cpp - `lantern-trace validate FILE`: is this trace whole and consistent?
//
// Beyond what the reader checks (structure, checksums, encoding), validate checks what
// only the whole trace can show: every event's worker is within the header's worker
// count, every payload value that names something (a state, a reason, a task source...)
// is in its vocabulary table, and no worker's clock runs backwards. Each such finding is
// reported once, with the number of events affected and the first one's chunk offset, so
// a bad file gives a short list rather than a million lines.
#include <algorithm>
#include <cinttypes>
#include <unordered_map>

#include "cli.hpp"
#include "commands.hpp"
#include "lantern/tools/program_cli.hpp"

namespace lantern::trace::cli {
namespace {

constexpr const char* kHelp =
    "usage: lantern-trace validate [--no-progress] FILE\n"
    "\n"
    "Reads the whole trace and checks it: header, chunk checksums and lengths, event\n"
    "encoding, event-table agreement, worker ids within the header's worker count,\n"
    "payload values within their tables (a worker state, state-change reason, task\n"
    "source, steal distance, wake cause, IO kind or drop reason the vocabulary does not\n"
    "have is an error), and per-worker clocks that never run backwards (a warning:\n"
    "unsynchronised TSCs across sockets can cause it). Other payload values (task ids,\n"
    "counts, latencies, IO results) have no table and are not checked. Prints every\n"
    "problem with its byte offset on stderr, and the verdict (\"ok: ...\" or \"invalid: N\n"
    "errors, M warnings\") on stdout.\n"
    "\n"
    "options:\n"
    "  --no-progress   no progress bar (it is only drawn when stderr is a terminal)\n"
    "  -h, --help      this text\n"
    "\n"
    "exit status: 0 the trace is clean (warnings may be printed), 1 problems were found,\n"
    "             2 bad options, or a file cannot be read or written (the report)\n";

struct Finding {
  std::uint64_t count = 0;
  std::uint64_t first_chunk = 0;
  std::string first;
};

// outside_table: the first payload field of `e` whose value is not in its vocabulary
// table, as "state's to (9)", or "" when every such field is in its table. Decoded by
// the vocabulary's codecs, the only code that reads payload words.
std::string outside_table(const Event& e) {
  auto check = [](std::string_view field, auto value) -> std::string {
    if (valid(value)) return {};
    return std::string(field) + " (" + std::to_string(static_cast<unsigned>(value)) + ")";
  };
  std::string bad;
  auto first = [&bad](std::string found) {
    if (bad.empty()) bad = std::move(found);
  };
  switch (e.type) {
    case EventId::state: {
      const auto p = payload<StatePayload>(e);
      first(check("from", p.from));
      first(check("to", p.to));
      first(check("reason", p.reason));
      break;
    }
    case EventId::task_begin: first(check("source", payload<TaskBeginPayload>(e).source)); break;
    case EventId::steal: {
      const auto p = payload<StealPayload>(e);
      first(check("distance", p.distance));
      first(check("source", p.source));
      break;
    }
    case EventId::wake: first(check("cause", payload<WakePayload>(e).why)); break;
    case EventId::io_submit: first(check("kind", payload<IoSubmitPayload>(e).kind)); break;
    case EventId::dropped: first(check("reason", payload<DroppedPayload>(e).reason)); break;
    default: break;  // no field with a table
  }
  return bad.empty() ? bad : std::string(info(e.type).name) + "'s " + bad;
}

}  // namespace

int run_validate(std::span<char* const> args) {
  std::string error;
  auto parsed = parse_args(args, {{"--no-progress", "", false}}, &error);
  if (!parsed) return usage_error("validate", error);
  if (const auto exit = answer_help(*parsed, kHelp)) return *exit;
  if (parsed->positional.size() != 1)
    return usage_error("validate", parsed->positional.empty() ? "missing FILE" : "expected one FILE");
  const std::string& path = parsed->positional[0];

  std::unordered_map<std::uint32_t, std::uint64_t> last_tick;
  std::uint32_t declared_workers = 0;
  bool know_workers = false;
  std::uint32_t worker_bound = kMaxWorkers;
  Finding bad_worker, bad_value, backwards;
  const Scan scan = scan_trace(
      path, !parsed->has("--no-progress"),
      [&](const DecodedChunk& chunk) {
        for (const Event& e : chunk.events) {
          if (e.worker >= worker_bound && bad_worker.count++ == 0) {
            bad_worker.first_chunk = chunk.info.offset;
            bad_worker.first = "worker " + std::to_string(e.worker);
          }
          if (const std::string bad = outside_table(e); !bad.empty() && bad_value.count++ == 0) {
            bad_value.first_chunk = chunk.info.offset;
            bad_value.first =
                "worker " + std::to_string(e.worker) + "'s " + bad + " at tick " + std::to_string(e.ticks);
          }
          auto [it, fresh] = last_tick.try_emplace(e.worker, e.ticks);
          if (!fresh) {
            if (e.ticks < it->second && backwards.count++ == 0) {
              backwards.first_chunk = chunk.info.offset;
              backwards.first = "worker " + std::to_string(e.worker) + " from tick " + std::to_string(it->second) +
                                " to " + std::to_string(e.ticks);
            }
            it->second = e.ticks;
          }
        }
      },
      [&](const TraceHeader& header, bool ok) {
        know_workers = ok && header.workers > 0;
        declared_workers = header.workers;
        // Below the header's count when it says one, and below the format's bound always
        // (kMaxWorkers: every reader drops higher ids as damage).
        worker_bound = know_workers ? std::min(declared_workers, kMaxWorkers) : kMaxWorkers;
      });
  if (scan.io_failed) {
    for (const TraceError& p : scan.problems)
      if (p.kind == TraceErrorKind::io) std::fprintf(stderr, "lantern-trace validate: %s\n", p.message.c_str());
    return kExitUsage;
  }

  // Findings of the whole-trace checks, printed like the reader's problems.
  std::vector<std::string> lines;
  std::size_t errors = 0;
  for (const TraceError& p : scan.problems) {
    lines.push_back(describe(p));
    errors += !p.warning();
  }
  if (know_workers && declared_workers > kMaxWorkers) {
    lines.push_back("error: the header declares " + std::to_string(declared_workers) +
                    " workers, more than a trace may have (" + std::to_string(kMaxWorkers) + "); events from workers " +
                    std::to_string(kMaxWorkers) + " and above are dropped by every reader");
    ++errors;
  }
  if (bad_worker.count > 0) {
    const std::string which =
        know_workers && declared_workers <= kMaxWorkers
            ? "workers the header does not have (it declares " + std::to_string(declared_workers) + ")"
            : "workers at or above the format's limit of " + std::to_string(kMaxWorkers) +
                  " (every reader drops them as damage)";
    lines.push_back("error: " + std::to_string(bad_worker.count) + " events come from " + which + "; the first, from " +
                    bad_worker.first + ", is in the chunk at offset " + std::to_string(bad_worker.first_chunk));
    ++errors;
  }
  if (bad_value.count > 0) {
    lines.push_back("error: " + std::to_string(bad_value.count) +
                    " events carry a value outside its table (damaged, or written by a newer Lantern); the first, " +
                    bad_value.first + ", is in the chunk at offset " + std::to_string(bad_value.first_chunk));
    ++errors;
  }
  if (backwards.count > 0) {
    lines.push_back("warning: " + std::to_string(backwards.count) +
                    " times a worker's clock ran backwards; the first, " + backwards.first +
                    ", is in the chunk at offset " + std::to_string(backwards.first_chunk));
  }
  std::printf("%s: %s, %" PRIu64 " chunks, %" PRIu64 " events\n", path.c_str(), format_bytes(scan.file_bytes).c_str(),
              scan.chunks, scan.events);
  if (lines.empty()) {
    std::printf("ok: no problems\n");
    return kExitOk;
  }
  tools::flush_stdout();
  std::fprintf(stderr, "lantern-trace validate: %s has %zu problem(s):\n", path.c_str(), lines.size());
  for (const std::string& line : lines)
    std::fprintf(stderr, "lantern-trace validate: %s: %s\n", path.c_str(), line.c_str());
  const std::size_t warnings = lines.size() - errors;
  std::printf("%s: %zu error%s, %zu warning%s\n", errors ? "invalid" : "ok", errors, errors == 1 ? "" : "s", warnings,
              warnings == 1 ? "" : "s");
  return errors ? kExitProblems : kExitOk;
}

}  // namespace lantern::trace::cli
