// SPDX-License-Identifier: Apache-2.0
// lantern_echo_client - load for lantern_echo_server (or any echo server): N connections,
// each sending a message and waiting for all of it to come back, compared byte for byte.
//
//   lantern_echo_client --port 7000 --connections 64 --seconds 5
//   lantern_echo_client --port 7000 --connections 1000 --messages 20 --size 1-65536
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "echo_load.hpp"
#include "lantern/tools/program_cli.hpp"

namespace {

constexpr const char* kUsage =
    "usage: lantern_echo_client [--host IP] [--port N] [--connections N]\n"
    "                           [--seconds S | --messages M] [--size BYTES | --size MIN-MAX] [--seed N]\n"
    "\n"
    "Each connection sends a message of random bytes, waits until every byte has come back,\n"
    "checks it, and sends the next. Prints requests per second, round-trip latency\n"
    "percentiles and any difference. Exit status: 0 all bytes came back unchanged,\n"
    "1 a mismatch, a failed connection or a report that cannot be written, 2 bad options.\n"
    "\n"
    "  --host IP        the server's IPv4 address (default 127.0.0.1)\n"
    "  --port N         server port (default 7000)\n"
    "  --connections N  concurrent connections (default 1)\n"
    "  --seconds S      run this long (default 5)\n"
    "  --messages M     instead: stop after M messages per connection\n"
    "  --size B|MIN-MAX message size in bytes, fixed or uniform in a range (default 64)\n"
    "  --seed N         seed for message contents and sizes (default 1)\n"
    "  --version        the version and the trace format version\n"
    "  -h, --help       this text\n"
    "\n"
    "The report goes to stdout; a mismatch or failed connection is also reported on stderr.\n"
    "Options follow README.md, \"Command-line conventions\".\n";

}  // namespace

int main(int argc, char** argv) {
  lantern::examples::LoadOptions o;
  o.port = 7000;
  o.seconds = 5;
  {
    lantern::tools::Program program("lantern_echo_client", kUsage);
    CLI::App& app = program.app();
    std::string size;
    std::uint64_t messages = 0;
    double seconds = 0;
    app.add_option("--host", o.host)->check(lantern::tools::ipv4_check());
    lantern::tools::number_option<std::uint16_t>(app, "--port", &o.port, 1, 65535, "a port from 1 to 65535");
    lantern::tools::number_option(app, "--connections", &o.connections, 1, 100000);
    CLI::Option* seconds_option = lantern::tools::number_option(app, "--seconds", &seconds, 1e-9, 86400.0,
                                                                "a number of seconds above 0, up to 86400");
    CLI::Option* messages_option =
        lantern::tools::number_option<std::uint64_t>(app, "--messages", &messages, 1, 1ull << 40, "a positive count");
    seconds_option->excludes(messages_option);
    app.add_option("--size", size)
        ->check(CLI::Validator(
            [](std::string& v) -> std::string {
              const std::size_t dash = v.find('-');
              const auto lo = lantern::tools::parse_number<std::size_t>(v.substr(0, dash), 1, 1u << 30);
              const auto hi = dash == std::string::npos
                                  ? lo
                                  : lantern::tools::parse_number<std::size_t>(v.substr(dash + 1), 1, 1u << 30);
              return lo && hi && *lo <= *hi ? std::string()
                                            : "takes BYTES or MIN-MAX, from 1 to 1073741824, not '" + v + "'";
            },
            "", ""));
    lantern::tools::number_option<std::uint64_t>(app, "--seed", &o.seed, 0, ~0ull, "a number");
    if (const auto exit_status = program.parse(argc, argv)) return *exit_status;
    if (seconds_option->count()) {
      o.seconds = seconds;
      o.messages_per_connection = 0;
    }
    if (messages_option->count()) {
      o.messages_per_connection = messages;
      o.seconds = 0;
    }
    if (!size.empty()) {
      const std::size_t dash = size.find('-');
      o.min_bytes = *lantern::tools::parse_number<std::size_t>(size.substr(0, dash), 1, 1u << 30);
      o.max_bytes = dash == std::string::npos
                        ? o.min_bytes
                        : *lantern::tools::parse_number<std::size_t>(size.substr(dash + 1), 1, 1u << 30);
    }
  }
  if (isatty(STDERR_FILENO)) {
    o.progress = [](double f) {
      const int width = 40;
      const int filled = static_cast<int>(f * width);
      std::fprintf(stderr, "\r[%.*s%*s] %3d%%", filled, "########################################", width - filled, "",
                   static_cast<int>(f * 100));
    };
  }
  const lantern::examples::LoadResult r = lantern::examples::run_load(o);
  if (o.progress) std::fprintf(stderr, "\r%60s\r", "");
  std::printf(
      "%d connections, %.2f s: %llu requests (%.0f/s), %llu bytes back\n"
      "round trip: p50 %s, p99 %s, max %.1f us\n"
      "mismatched bytes: %llu, failed connections: %llu\n",
      o.connections, r.seconds, static_cast<unsigned long long>(r.requests), r.requests_per_second(),
      static_cast<unsigned long long>(r.bytes), r.p50.to_string().c_str(), r.p99.to_string().c_str(), r.max_us,
      static_cast<unsigned long long>(r.mismatches), static_cast<unsigned long long>(r.errors));
  lantern::tools::flush_stdout();
  // Errors go to stderr, like every Lantern program's: the report above stays a report.
  if (r.mismatches != 0)
    std::fprintf(stderr, "lantern_echo_client: %llu bytes came back different from what was sent\n",
                 static_cast<unsigned long long>(r.mismatches));
  if (r.errors != 0)
    std::fprintf(stderr, "lantern_echo_client: %llu of %d connections failed%s%s\n",
                 static_cast<unsigned long long>(r.errors), o.connections,
                 r.first_error.empty() ? "" : "; the first: ", r.first_error.c_str());
  return r.mismatches == 0 && r.errors == 0 ? 0 : 1;
}
