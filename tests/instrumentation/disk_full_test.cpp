// SPDX-License-Identifier: Apache-2.0
// disk_full_test.cpp - a trace whose disk fills up mid-run, on a real full filesystem: a
// 256 KiB tmpfs mounted for the test. The failure is reported when it happens, once,
// naming the file and the bytes written; the program keeps running; the collector
// exposes it as a status. An unwritable path (/dev/full) is a failure from the start. A
// disk already full, or one that refuses the first chunk, leaves no file (it never was
// a trace).
//
// Mounting needs root (CAP_SYS_ADMIN). Without it the test limits the process's file
// size instead (RLIMIT_FSIZE, SIGXFSZ ignored): write(2) then fails with EFBIG at the
// same point, a real kernel refusal rather than a simulated one; the test says which.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lantern/instrumentation/collector.hpp"
#include "lantern/instrumentation/recorder.hpp"
#include "lantern/instrumentation/trace_sinks.hpp"
#include "lantern/lantern.hpp"
#include "lantern/trace/trace_reader.hpp"
#include "support/fib.hpp"
#include "support/file_size_limit.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using lantern::instrumentation::Collector;
using lantern::instrumentation::Recorder;
using lantern::instrumentation::TraceFileSink;
using lantern::testing::FileSizeLimit;

constexpr std::size_t kFilesystemBytes = 256u << 10;

// SmallFilesystem: a directory on which at most kFilesystemBytes can be written.
class SmallFilesystem {
 public:
  SmallFilesystem() {
    char name[] = "/tmp/lantern-full-XXXXXX";
    dir_ = ::mkdtemp(name);
    const std::string options = "size=" + std::to_string(kFilesystemBytes);
    mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, options.c_str()) == 0;
    if (!mounted_) limit_.emplace(kFilesystemBytes);
  }
  ~SmallFilesystem() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    limit_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const std::string& dir() const { return dir_; }
  const char* how() const { return mounted_ ? "a 256 KiB tmpfs" : "RLIMIT_FSIZE 256 KiB (not root: no mount)"; }

 private:
  std::string dir_;
  bool mounted_ = false;
  std::optional<FileSizeLimit> limit_;  // when not mounted
};

struct Reports {
  std::mutex mutex;
  std::vector<std::string> messages;
  TraceFileSink::Report callback() {
    return [this](const std::string& m) {
      std::lock_guard<std::mutex> lock(mutex);
      messages.push_back(m);
    };
  }
  std::vector<std::string> get() {
    std::lock_guard<std::mutex> lock(mutex);
    return messages;
  }
};

TEST(DiskFull, ATraceThatFillsTheDiskIsReportedOnceWhenItHappensAndTheAppRunsOn) {
  lantern::testing::Watchdog watchdog("ATraceThatFillsTheDiskIsReportedOnce", 120s);
  SmallFilesystem small;
  std::printf("full filesystem: %s\n", small.how());
  const std::string path = small.dir() + "/run.trace";
  Reports reports;

  Recorder recorder(2, {.level = lantern::trace::Level::full});
  lantern::Scheduler pool({.workers = 2, .observer = &recorder});
  Collector collector(recorder);
  auto sink = std::make_shared<TraceFileSink>(path, lantern::instrumentation::make_trace_header(pool, "disk_full_test"),
                                              &lantern::instrumentation::process_labels(), reports.callback());
  ASSERT_TRUE(sink->ok()) << sink->failure();
  collector.attach(sink);
  collector.start();

  // Work until the disk is full: level full records tens of bytes per fib call.
  const auto give_up = std::chrono::steady_clock::now() + 20s * lantern::testing::sanitizer_slowdown();
  while (reports.get().empty()) {
    ASSERT_EQ(pool.run([] { return lantern::testing::fib(20); }), 6765);
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "no failure reported while the trace ran on " << small.how()
                                                         << "; wrote " << sink->stats().bytes << " bytes";
  }
  // Reported while the program runs, not at exit; with the path and the bytes written.
  const std::vector<std::string> first = reports.get();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_NE(first[0].find(path), std::string::npos) << first[0];
  const std::uint64_t written = sink->stats().bytes;
  EXPECT_GT(written, 0u);
  EXPECT_LE(written, kFilesystemBytes);
  EXPECT_NE(first[0].find("after " + std::to_string(written) + " bytes"), std::string::npos) << first[0];
  EXPECT_FALSE(sink->ok());
  EXPECT_EQ(sink->failure(), first[0]);
  ASSERT_EQ(collector.failures().size(), 1u);
  EXPECT_EQ(collector.failures()[0], first[0]);

  // The app keeps running and the failure is not reported again.
  for (int i = 0; i < 50; ++i) ASSERT_EQ(pool.run([] { return lantern::testing::fib(20); }), 6765);
  collector.drain_now();
  collector.stop();
  EXPECT_EQ(reports.get().size(), 1u);

  // What was written before the failure reads back (up to the last complete chunk).
  auto reader = lantern::trace::TraceReader::open(path);
  ASSERT_TRUE(reader.read_header());
  std::uint64_t events = 0;
  while (reader.next_chunk()) events += reader.chunk().events.size();
  EXPECT_GT(events, 0u);
}

// A disk already full when the trace starts: the header cannot be written. The failure
// is said at once, and no empty or partial file is left behind (it never was a trace).
TEST(DiskFull, ADiskAlreadyFullLeavesNoFile) {
  SmallFilesystem small;
  const std::string path = small.dir() + "/t.trace";
  lantern::trace::TraceHeader header;
  header.workers = 1;
  {
    // Filled: with the tmpfs, by a file that takes all its room; else a size limit of 0.
    const std::string filler = small.dir() + "/filler";
    std::FILE* f = std::fopen(filler.c_str(), "w");
    ASSERT_NE(f, nullptr);
    const std::vector<char> block(4096, 'x');
    while (std::fwrite(block.data(), 1, block.size(), f) == block.size() && std::fflush(f) == 0) {
    }
    std::fclose(f);
  }
  FileSizeLimit none(0);  // the tmpfs is full already; this makes it so without one
  Reports reports;
  TraceFileSink sink(path, header, nullptr, reports.callback());
  EXPECT_FALSE(sink.ok());
  EXPECT_NE(sink.failure().find(path), std::string::npos) << sink.failure();
  EXPECT_NE(sink.failure().find("removed"), std::string::npos) << sink.failure();
  EXPECT_FALSE(fs::exists(path)) << "a 0-byte or partial file was left: " << fs::file_size(path) << " bytes";
}

// The header fits, the first chunk does not: the file held no event, so it goes too.
TEST(DiskFull, AFileThatNeverHeldAChunkIsRemoved) {
  char name[] = "/tmp/lantern-header-only-XXXXXX";
  const std::string dir = ::mkdtemp(name);
  const std::string path = dir + "/t.trace";
  Recorder recorder(1, {.level = lantern::trace::Level::full});
  lantern::Scheduler pool({.workers = 1, .observer = &recorder});
  const lantern::trace::TraceHeader header = lantern::instrumentation::make_trace_header(pool, "header_only");
  Reports reports;
  {
    FileSizeLimit limit(lantern::trace::encode_header(header).size() + 16);
    auto sink = std::make_shared<TraceFileSink>(path, header, nullptr, reports.callback());
    ASSERT_TRUE(sink->ok()) << sink->failure();
    EXPECT_TRUE(fs::exists(path));
    Collector collector(recorder);
    collector.attach(sink);
    collector.start();
    pool.run([] { return lantern::testing::fib(16); });
    collector.stop();  // drains and flushes: the first chunk fails
    EXPECT_FALSE(sink->ok());
  }
  ASSERT_EQ(reports.get().size(), 1u);
  EXPECT_NE(reports.get()[0].find("removed"), std::string::npos) << reports.get()[0];
  EXPECT_FALSE(fs::exists(path)) << "a header-only file was left behind";
  fs::remove_all(dir);
}

TEST(DiskFull, AnUnwritablePathIsAFailureFromTheStart) {
  Reports reports;
  lantern::trace::TraceHeader header;
  header.workers = 1;
  TraceFileSink sink("/dev/full", header, nullptr, reports.callback());
  EXPECT_FALSE(sink.ok());
  EXPECT_NE(sink.failure().find("/dev/full"), std::string::npos) << sink.failure();
  EXPECT_TRUE(reports.get().empty()) << "the constructor's failure is the caller's to print";
  Recorder recorder(1, {.level = lantern::trace::Level::off});
  Collector collector(recorder);
  collector.attach(std::shared_ptr<TraceFileSink>(&sink, [](TraceFileSink*) {}));
  ASSERT_EQ(collector.failures().size(), 1u);
  EXPECT_EQ(collector.failures()[0], sink.failure());
  collector.detach(&sink);
}

}  // namespace
