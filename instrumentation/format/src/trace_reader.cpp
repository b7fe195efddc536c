// SPDX-License-Identifier: Apache-2.0
// trace_reader.cpp - feeds a TraceDecoder from a file descriptor or a memory span.
#include "lantern/trace/trace_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lantern::trace {
namespace {
constexpr std::size_t kBlockBytes = 1u << 20;
}

struct TraceReader::Impl {
  std::string name;
  int fd = -1;
  std::span<const std::uint8_t> memory;  // when reading from memory
  std::uint64_t position = 0;            // bytes taken from the source
  std::uint64_t total = 0;
  std::vector<std::uint8_t> block;
  TraceDecoder decoder;
  std::vector<TraceError> problems;
  bool io_failed = false;
  bool finished = false;
  bool header_done = false;
  bool stashed_chunk = false;  // read_header() ran into the first chunk: deliver it next

  ~Impl() {
    if (fd >= 0) ::close(fd);
  }

  void io_error(std::string message) {
    problems.push_back(TraceError{TraceErrorKind::io, position, std::move(message)});
    io_failed = true;
    finished = true;
  }

  // fill feeds the decoder the next block; false at the end of the source or on error.
  bool fill() {
    if (fd < 0) {
      if (position >= memory.size()) return false;
      const std::size_t n = std::min<std::size_t>(kBlockBytes, memory.size() - position);
      decoder.feed(memory.subspan(position, n));
      position += n;
      return true;
    }
    block.resize(kBlockBytes);
    for (;;) {
      const ssize_t n = ::read(fd, block.data(), block.size());
      if (n > 0) {
        decoder.feed({block.data(), static_cast<std::size_t>(n)});
        position += static_cast<std::uint64_t>(n);
        return true;
      }
      if (n == 0) return false;
      if (errno == EINTR) continue;
      io_error("cannot read trace file '" + name + "' at offset " + std::to_string(position) + ": " +
               std::strerror(errno));
      return false;
    }
  }

  enum class Got : std::uint8_t { end, header, chunk };

  // pump runs the decoder until a chunk or the end; with until_header it also stops
  // once the header has been read.
  Got pump(bool until_header) {
    while (!finished) {
      switch (decoder.next()) {
        case TraceDecoder::Step::need_input:
          if (!fill()) {
            if (io_failed) return Got::end;
            decoder.end_of_input();
          }
          break;
        case TraceDecoder::Step::header:
          header_done = true;
          if (until_header) return Got::header;
          break;
        case TraceDecoder::Step::chunk: header_done = true; return Got::chunk;
        case TraceDecoder::Step::problem: problems.push_back(decoder.problem()); break;
        case TraceDecoder::Step::end:
          header_done = true;
          finished = true;
          break;
      }
    }
    return Got::end;
  }
};

TraceReader::TraceReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceReader::~TraceReader() = default;
TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;

TraceReader TraceReader::open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->name = path;
  impl->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl->fd < 0) {
    impl->io_error("cannot open trace file '" + path + "': " + std::strerror(errno));
    return TraceReader(std::move(impl));
  }
  struct stat st {};
  if (::fstat(impl->fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      impl->io_error("cannot read trace file '" + path + "': it is a directory");
      return TraceReader(std::move(impl));
    }
    if (S_ISREG(st.st_mode)) impl->total = static_cast<std::uint64_t>(st.st_size);
  }
  return TraceReader(std::move(impl));
}

TraceReader TraceReader::from_bytes(std::span<const std::uint8_t> bytes, std::string name) {
  auto impl = std::make_unique<Impl>();
  impl->name = std::move(name);
  impl->memory = bytes;
  impl->total = bytes.size();
  return TraceReader(std::move(impl));
}

bool TraceReader::read_header() {
  Impl& s = *impl_;
  if (!s.header_done && !s.stashed_chunk) {
    // If the header is damaged the decoder goes straight on to chunks: keep the first.
    if (s.pump(true) == Impl::Got::chunk) s.stashed_chunk = true;
  }
  return s.decoder.header_ok();
}

bool TraceReader::next_chunk() {
  Impl& s = *impl_;
  if (s.stashed_chunk) {
    s.stashed_chunk = false;
    return true;
  }
  return s.pump(false) == Impl::Got::chunk;
}

const DecodedChunk& TraceReader::chunk() const noexcept { return impl_->decoder.chunk(); }
const LabelTable& TraceReader::labels() const noexcept { return impl_->decoder.labels(); }
const TraceHeader& TraceReader::header() const noexcept { return impl_->decoder.header(); }
bool TraceReader::header_ok() const noexcept { return impl_->decoder.header_ok(); }
const std::vector<TraceError>& TraceReader::problems() const noexcept { return impl_->problems; }
bool TraceReader::has_errors() const noexcept {
  for (const TraceError& p : impl_->problems)
    if (!p.warning()) return true;
  return false;
}
bool TraceReader::io_failed() const noexcept { return impl_->io_failed; }
std::uint64_t TraceReader::bytes_read() const noexcept { return impl_->position; }
std::uint64_t TraceReader::total_bytes() const noexcept { return impl_->total; }
const std::string& TraceReader::name() const noexcept { return impl_->name; }

namespace {
TraceContents read_all(TraceReader reader) {
  TraceContents out;
  while (reader.next_chunk()) {
    out.chunks.push_back(reader.chunk().info);
    const auto& events = reader.chunk().events;
    out.events.insert(out.events.end(), events.begin(), events.end());
  }
  out.header = reader.header();
  out.header_ok = reader.header_ok();
  out.labels = reader.labels();
  out.problems = reader.problems();
  return out;
}
}  // namespace

TraceContents read_trace(const std::string& path) { return read_all(TraceReader::open(path)); }
TraceContents read_trace_bytes(std::span<const std::uint8_t> bytes) { return read_all(TraceReader::from_bytes(bytes)); }

}  // namespace lantern::trace
