// SPDX-License-Identifier: Apache-2.0
// byte_source.hpp - where a Session's bytes come from: a trace file or a live socket.
//
// Both hand raw bytes to the same TraceDecoder; nothing here knows the format. The socket
// source connects (told to wait, it keeps retrying while the app is not up yet, every
// 10 ms at first, backing off to 100 ms), and returns "nothing yet" every poll period so
// its reader can notice it should stop.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "lantern/host_port.hpp"

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
  // ever_connected: connected at some point (a connection that has ended since, too).
  virtual bool ever_connected() const noexcept { return connected(); }
};

// open_file_source: a file. On failure returns nullptr and sets *error to a sentence
// naming the file and the OS's reason.
std::unique_ptr<ByteSource> open_file_source(const std::string& path, std::string* error);

// HostPort: where to connect, read by lantern::parse_host_port (lantern/host_port.hpp),
// the one HOST:PORT parser every Lantern program and library uses.
using lantern::HostPort;
using lantern::parse_host_port;

// socket_source: connects to `where`. wait: retrying until connected (first after
// kFirstRetryMs, the pause growing by half each time to kMaxRetryMs: an app that starts
// while a viewer waits is reached within milliseconds, and its stream keeps the start of
// the run for it); else a connection that fails is the source's error ("nothing
// answered at HOST:PORT: Connection refused").
inline constexpr int kFirstRetryMs = 10, kMaxRetryMs = 100;
std::unique_ptr<ByteSource> socket_source(const HostPort& where, bool wait = true);

}  // namespace lantern::viewer
