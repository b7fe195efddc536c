// SPDX-License-Identifier: Apache-2.0
// trace_writer.cpp - chunking, the file sink, and turning every failure into a value.
#include "lantern/trace/trace_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <new>
#include <optional>

#include "lantern/trace/chunk_decoder.hpp"
#include "lantern/trace/crc32c.hpp"
#include "lantern/trace/varint.hpp"

namespace lantern::trace {

struct TraceWriter::Impl {
  std::string name;
  ByteSink sink;
  int fd = -1;  // owned when writing a file
  // remove_if_no_chunk: the file's identity, so that a file that never held a chunk is
  // removed when writing it fails (a disk already full leaves no empty or header-only
  // file behind), and only if the path still names it.
  std::string path;
  dev_t dev = 0;
  ino_t ino = 0;
  ChunkEncoder encoder;
  std::vector<std::uint8_t> out;
  WriterStats stats;
  std::optional<TraceError> error;
  bool closed = false;

  explicit Impl(const WriterOptions& options) : encoder(options.chunk_limits, options.labels) {}
  ~Impl() {
    if (fd >= 0) ::close(fd);
  }

  bool fail(TraceErrorKind kind, std::string message) {
    if (!error) {
      error = TraceError{kind, stats.bytes, std::move(message)};
      if (kind == TraceErrorKind::io) remove_if_no_chunk();
    }
    return false;
  }

  void remove_if_no_chunk() {
    if (fd < 0 || stats.chunks > 0 || path.empty()) return;
    struct stat now {};
    if (::stat(path.c_str(), &now) == 0 && now.st_dev == dev && now.st_ino == ino && ::unlink(path.c_str()) == 0) {
      error->message += " (the file, which held no events yet, is removed)";
    }
  }

  bool emit(std::span<const std::uint8_t> bytes, std::uint64_t chunks) {
    if (error) return false;
    std::string why;
    bool written = false;
    try {  // a sink that throws is turned into an error like any other failure
      written = sink(bytes, why);
    } catch (const std::exception& e) {
      why = name + ": the sink threw: " + e.what();
    } catch (...) {
      why = name + ": the sink threw";
    }
    if (!written) return fail(TraceErrorKind::io, why.empty() ? name + ": the sink failed" : why);
    stats.bytes += bytes.size();
    stats.chunks += chunks;
    return true;
  }

  bool finish_chunk() {
    out.clear();
    if (encoder.finish_chunk(out) == 0) return true;
    return emit(out, 1);
  }
};

namespace {

// file_sink writes with write(2), retrying short writes and EINTR, so a message can name
// the exact OS error (ENOSPC, EIO...).
ByteSink file_sink(int fd, std::string path) {
  return [fd, path = std::move(path)](std::span<const std::uint8_t> bytes, std::string& error) {
    const std::uint8_t* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        error = "cannot write trace file '" + path + "': " + std::strerror(errno);
        return false;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    return true;
  };
}

}  // namespace

TraceWriter::TraceWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceWriter::~TraceWriter() {
  if (impl_) close();
}
TraceWriter::TraceWriter(TraceWriter&&) noexcept = default;
TraceWriter& TraceWriter::operator=(TraceWriter&& other) noexcept {
  if (this != &other) {
    if (impl_) close();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

TraceWriter TraceWriter::to_sink(ByteSink sink, std::string sink_name, const TraceHeader& header,
                                 WriterOptions options) {
  auto impl = std::make_unique<Impl>(options);
  impl->name = std::move(sink_name);
  impl->sink = std::move(sink);
  try {
    impl->emit(encode_header(header), 0);
  } catch (const std::bad_alloc&) {
    impl->fail(TraceErrorKind::io, "out of memory encoding the trace header for " + impl->name);
  }
  return TraceWriter(std::move(impl));
}

namespace {

// file_kind: what a file that is not a regular one is, for the message.
const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// open_regular opens `path` for writing a trace: a new file, or an existing regular one,
// truncated. Anything else is refused without blocking and without touching it: a FIFO
// (open would wait for a reader, forever), a device (/dev/full, a terminal), a
// directory. The open is non-blocking (a FIFO then fails with ENXIO, or opens at once
// when it has a reader), fstat decides, and only then is the file truncated and the
// descriptor made blocking again. Returns the descriptor, or -1 and *error.
int open_regular(const std::string& path, struct stat* st, std::string* error) {
  const std::string refusal = "cannot record a trace to '" + path + "': it is ";
  const std::string rule = ", not a regular file (a trace is written to a regular file, or a new one)";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    if (err == ENXIO) {  // O_NONBLOCK on a FIFO nobody reads
      *error = refusal + "a FIFO" + rule;
    } else {
      *error = "cannot create trace file '" + path + "': " + std::strerror(err);
    }
    return -1;
  }
  if (::fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    *error = refusal + file_kind(st->st_mode) + rule;
    ::close(fd);
    return -1;
  }
  if (::ftruncate(fd, 0) != 0 || ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
    *error = "cannot create trace file '" + path + "': " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

TraceWriter TraceWriter::create(const std::string& path, const TraceHeader& header, WriterOptions options) {
  struct stat st {};
  std::string why;
  const int fd = open_regular(path, &st, &why);
  if (fd < 0) {
    auto impl = std::make_unique<Impl>(options);
    impl->name = path;
    impl->fail(TraceErrorKind::io, why);
    return TraceWriter(std::move(impl));
  }
  // The file's identity is known before the header is written: a failure there (a disk
  // already full) removes the file.
  auto impl = std::make_unique<Impl>(options);
  impl->name = path;
  impl->sink = file_sink(fd, path);
  impl->fd = fd;
  impl->path = path;
  impl->dev = st.st_dev;
  impl->ino = st.st_ino;
  try {
    impl->emit(encode_header(header), 0);
  } catch (const std::bad_alloc&) {
    impl->fail(TraceErrorKind::io, "out of memory encoding the trace header for " + impl->name);
  }
  return TraceWriter(std::move(impl));
}

bool TraceWriter::ok() const noexcept { return impl_ && !impl_->error; }
const TraceError* TraceWriter::error() const noexcept { return impl_ && impl_->error ? &*impl_->error : nullptr; }
const WriterStats& TraceWriter::stats() const noexcept {
  static const WriterStats kNone;
  return impl_ ? impl_->stats : kNone;
}
const std::string& TraceWriter::name() const noexcept {
  static const std::string kMovedFrom = "<moved-from writer>";
  return impl_ ? impl_->name : kMovedFrom;
}

bool TraceWriter::write(std::span<const Event> events) noexcept {
  if (!impl_) return false;
  Impl& s = *impl_;
  if (s.error) return false;
  if (s.closed) return s.fail(TraceErrorKind::invalid_argument, "write after close on trace " + s.name);
  try {
    for (const Event& e : events) {
      auto result = s.encoder.add(e);
      if (result == ChunkEncoder::AddResult::chunk_full) {
        if (!s.finish_chunk()) return false;
        result = s.encoder.add(e);
      }
      if (result == ChunkEncoder::AddResult::rejected_type) {
        ++s.stats.rejected_events;
        continue;
      }
      ++s.stats.events;
      if (s.encoder.full() && !s.finish_chunk()) return false;
    }
  } catch (const std::bad_alloc&) {
    return s.fail(TraceErrorKind::io, "out of memory encoding events for trace " + s.name);
  }
  return true;
}

bool TraceWriter::write_chunks(std::span<const std::uint8_t> bytes) noexcept {
  if (!impl_) return false;
  Impl& s = *impl_;
  if (!flush()) return false;
  // Check every chunk before writing any, so a bad buffer leaves the file untouched.
  std::size_t pos = 0, count = 0;
  while (pos < bytes.size()) {
    ChunkHeader h;
    std::string why;
    if (bytes.size() - pos < kChunkHeaderBytes ||
        parse_chunk_header(bytes.data() + pos, &h, &why) != ChunkHeaderStatus::ok ||
        bytes.size() - pos - kChunkHeaderBytes < h.payload_length ||
        crc32c(bytes.subspan(pos + kChunkHeaderBytes, h.payload_length)) != h.payload_crc) {
      return s.fail(TraceErrorKind::invalid_argument, "write_chunks on trace " + s.name + ": the bytes at position " +
                                                          std::to_string(pos) + " are not an intact chunk" +
                                                          (why.empty() ? "" : " (" + why + ")"));
    }
    pos += kChunkHeaderBytes + h.payload_length;
    ++count;
  }
  return s.emit(bytes, count);
}

bool TraceWriter::flush() noexcept {
  if (!impl_) return false;
  Impl& s = *impl_;
  if (s.error) return false;
  try {
    return s.finish_chunk();
  } catch (const std::bad_alloc&) {
    return s.fail(TraceErrorKind::io, "out of memory flushing trace " + s.name);
  }
}

bool TraceWriter::close() noexcept {
  if (!impl_) return false;
  Impl& s = *impl_;
  if (s.closed) return !s.error;
  const bool flushed = flush();
  s.closed = true;
  if (s.fd >= 0) {
    const int fd = s.fd;
    s.fd = -1;
    if (::close(fd) != 0 && flushed)
      return s.fail(TraceErrorKind::io, "cannot close trace file '" + s.name + "': " + std::strerror(errno));
  }
  return flushed && !s.error;
}

}  // namespace lantern::trace
