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

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: lantern_echo_client [--host IP] [--port N] [--connections N]\n"
               "                           [--seconds S | --messages M] [--size BYTES | --size MIN-MAX] [--seed N]\n"
               "\n"
               "Each connection sends a message of random bytes, waits until every byte has come back,\n"
               "checks it, and sends the next. Prints requests per second, round-trip latency\n"
               "percentiles and any difference. Exit status: 0 all bytes came back unchanged,\n"
               "1 a mismatch or a failed connection, 2 bad options.\n"
               "\n"
               "  --host IP        server address (default 127.0.0.1)\n"
               "  --port N         server port (default 7000)\n"
               "  --connections N  concurrent connections (default 1)\n"
               "  --seconds S      run this long (default 5)\n"
               "  --messages M     instead: stop after M messages per connection\n"
               "  --size B|MIN-MAX message size in bytes, fixed or uniform in a range (default 64)\n"
               "  --seed N         seed for message contents and sizes (default 1)\n"
               "  --help           this text\n");
}

bool parse_u64(const std::string& s, unsigned long long max, unsigned long long* out) {
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::stoull(s);
  return *out <= max;
}

}  // namespace

int main(int argc, char** argv) {
  lantern::examples::LoadOptions o;
  o.port = 7000;
  o.seconds = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "lantern_echo_client: %s needs a value (see --help)\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    auto bad = [&](const char* name, const std::string& v, const char* want) {
      std::fprintf(stderr, "lantern_echo_client: %s takes %s, not '%s'\n", name, want, v.c_str());
      std::exit(2);
    };
    unsigned long long n = 0;
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else if (arg == "--host") {
      o.host = value("--host");
    } else if (arg == "--port") {
      const std::string v = value("--port");
      if (!parse_u64(v, 65535, &n) || n == 0) bad("--port", v, "a port from 1 to 65535");
      o.port = static_cast<std::uint16_t>(n);
    } else if (arg == "--connections") {
      const std::string v = value("--connections");
      if (!parse_u64(v, 100000, &n) || n == 0) bad("--connections", v, "a number from 1 to 100000");
      o.connections = static_cast<int>(n);
    } else if (arg == "--seconds") {
      const std::string v = value("--seconds");
      char* end = nullptr;
      const double s = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(s > 0) || s > 86400) bad("--seconds", v, "a duration from 0 to 86400");
      o.seconds = s;
      o.messages_per_connection = 0;
    } else if (arg == "--messages") {
      const std::string v = value("--messages");
      if (!parse_u64(v, 1ull << 40, &n) || n == 0) bad("--messages", v, "a positive count");
      o.messages_per_connection = n;
      o.seconds = 0;
    } else if (arg == "--size") {
      const std::string v = value("--size");
      const std::size_t dash = v.find('-');
      unsigned long long lo = 0, hi = 0;
      const bool ok = dash == std::string::npos ? parse_u64(v, 1ull << 30, &lo) && (hi = lo, true)
                                                : parse_u64(v.substr(0, dash), 1ull << 30, &lo) &&
                                                      parse_u64(v.substr(dash + 1), 1ull << 30, &hi);
      if (!ok || lo == 0 || hi < lo) bad("--size", v, "BYTES or MIN-MAX, from 1 to 1073741824");
      o.min_bytes = lo;
      o.max_bytes = hi;
    } else if (arg == "--seed") {
      const std::string v = value("--seed");
      if (!parse_u64(v, ~0ull, &n)) bad("--seed", v, "a number");
      o.seed = n;
    } else {
      std::fprintf(stderr, "lantern_echo_client: unknown option '%s' (see --help)\n", arg.c_str());
      return 2;
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
  std::printf("%d connections, %.2f s: %llu requests (%.0f/s), %llu bytes back\n"
              "round trip: p50 %s, p99 %s, max %.1f us\n"
              "mismatched bytes: %llu, failed connections: %llu%s%s\n",
              o.connections, r.seconds, static_cast<unsigned long long>(r.requests), r.requests_per_second(),
              static_cast<unsigned long long>(r.bytes), r.p50.to_string().c_str(), r.p99.to_string().c_str(), r.max_us,
              static_cast<unsigned long long>(r.mismatches), static_cast<unsigned long long>(r.errors),
              r.first_error.empty() ? "" : " (first: ", r.first_error.empty() ? "" : (r.first_error + ")").c_str());
  return r.mismatches == 0 && r.errors == 0 ? 0 : 1;
}
