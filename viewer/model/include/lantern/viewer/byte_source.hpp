// byte_source.hpp - where a Session's bytes come from: a trace file or a live socket.
//
// Both hand raw bytes to the same TraceDecoder; nothing here knows the format. The socket
// source connects (and keeps retrying while the app is not up yet), and returns
// "nothing yet" every poll period so its reader can notice it should stop.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace lantern::viewer {

class ByteSource {
 public:
  enum class Status : std::uint8_t {
    data,     // *n bytes were read
    waiting,  // nothing yet (poll timeout, still connecting): call again
    end,      // no more bytes will come (end of file, connection closed)
    error,    // *message says what went wrong; no more bytes will come
  };
  virtual ~ByteSource() = default;
  virtual Status read(std::span<std::uint8_t> buffer, std::size_t* n, std::string* message) = 0;
  // total: the size when known in advance (a file), else 0.
  virtual std::uint64_t total() const noexcept { return 0; }
  // describe: the phase for a status bar ("connecting to ...", "connected").
  virtual std::string describe() const = 0;
  virtual bool connected() const noexcept { return true; }
};

// open_file_source: a file. On failure returns nullptr and sets *error to a sentence
// naming the file and the OS's reason.
std::unique_ptr<ByteSource> open_file_source(const std::string& path, std::string* error);

// HostPort: "HOST:PORT", "[v6]:PORT", ":PORT" or "PORT" (host defaults to 127.0.0.1).
struct HostPort {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string text() const;
};
// parse_host_port returns false and sets *error for anything else.
bool parse_host_port(const std::string& text, HostPort* out, std::string* error);

// socket_source: connects to `where`, retrying every retry_ms until connected.
std::unique_ptr<ByteSource> socket_source(const HostPort& where, int retry_ms = 500);

}  // namespace lantern::viewer
