// SPDX-License-Identifier: Apache-2.0
// byte_source.cpp - file and socket byte sources (POSIX).
#include "lantern/viewer/byte_source.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace lantern::viewer {
namespace {

class FileSource final : public ByteSource {
 public:
  FileSource(int fd, std::string path, std::uint64_t size) : fd_(fd), path_(std::move(path)), size_(size) {}
  ~FileSource() override { ::close(fd_); }
  Status read(std::span<std::uint8_t> buffer, std::size_t* n, std::string* message) override {
    for (;;) {
      const ssize_t got = ::read(fd_, buffer.data(), buffer.size());
      if (got > 0) {
        *n = static_cast<std::size_t>(got);
        return Status::data;
      }
      if (got == 0) return Status::end;
      if (errno == EINTR) continue;
      *message = "cannot read '" + path_ + "': " + std::strerror(errno);
      return Status::error;
    }
  }
  std::uint64_t total() const noexcept override { return size_; }
  std::string describe() const override { return path_; }

 private:
  int fd_;
  std::string path_;
  std::uint64_t size_;
};

class SocketSource final : public ByteSource {
 public:
  SocketSource(HostPort where, bool wait) : where_(std::move(where)), wait_(wait) {}
  ~SocketSource() override {
    if (fd_ >= 0) ::close(fd_);
  }
  Status read(std::span<std::uint8_t> buffer, std::size_t* n, std::string* message) override {
    if (fd_ < 0) {
      if (ever_connected_) return Status::end;
      if (!try_connect()) {
        if (!wait_) {
          *message = "nothing answered at " + where_.text() + " (" + last_error_ +
                     "): is the app running with LANTERN_STREAM=" + where_.text() +
                     "? (lantern-view --attach --wait waits for it)";
          return Status::error;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(retry_ms_));
        retry_ms_ = std::min(kMaxRetryMs, retry_ms_ + retry_ms_ / 2);
        return Status::waiting;
      }
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);  // wake up regularly so the reader can stop
    if (ready == 0 || (ready < 0 && errno == EINTR)) return Status::waiting;
    for (;;) {
      const ssize_t got = ::recv(fd_, buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (got > 0) {
        *n = static_cast<std::size_t>(got);
        return Status::data;
      }
      if (got == 0) {
        close_socket();
        return Status::end;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::waiting;
      *message = "the connection to " + where_.text() + " failed: " + std::strerror(errno);
      close_socket();
      return Status::error;
    }
  }
  std::string describe() const override {
    if (fd_ >= 0) return "connected to " + where_.text();
    if (ever_connected_) return "disconnected from " + where_.text();
    return "waiting for " + where_.text() + (last_error_.empty() ? "" : " (" + last_error_ + ")") +
           ": is the app running with LANTERN_STREAM=" + where_.text() + "?";
  }
  bool connected() const noexcept override { return fd_ >= 0; }
  bool ever_connected() const noexcept override { return ever_connected_; }

 private:
  void close_socket() {
    ::close(fd_);
    fd_ = -1;
  }
  bool try_connect() {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(where_.port);
    if (const int rc = ::getaddrinfo(where_.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
      last_error_ = ::gai_strerror(rc);
      return false;
    }
    for (addrinfo* a = found; a; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        // Big receive buffer: the app drops (and counts) when this viewer falls behind,
        // so the kernel's buffer is slack that absorbs a slow frame.
        const int bytes = 8 << 20;
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
        fd_ = fd;
        ever_connected_ = true;
        break;
      }
      last_error_ = std::strerror(errno);
      ::close(fd);
    }
    ::freeaddrinfo(found);
    return fd_ >= 0;
  }

  HostPort where_;
  bool wait_;
  int retry_ms_ = kFirstRetryMs;
  int fd_ = -1;
  bool ever_connected_ = false;
  std::string last_error_;
};

}  // namespace

std::unique_ptr<ByteSource> open_file_source(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot open trace file '" + path + "': " + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    *error = "cannot open trace file '" + path + "': it is a directory";
    return nullptr;
  }
  const std::uint64_t size = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
  return std::make_unique<FileSource>(fd, path, size);
}

std::unique_ptr<ByteSource> socket_source(const HostPort& where, bool wait) {
  return std::make_unique<SocketSource>(where, wait);
}

}  // namespace lantern::viewer
