// SPDX-License-Identifier: Apache-2.0
// file_size_limit.hpp - a disk that fills up, without mounting one: while a FileSizeLimit
// lives, the process may not write a file past `bytes` (RLIMIT_FSIZE) and SIGXFSZ is
// ignored, so write(2) fails with EFBIG at that point, a real kernel refusal. The limit
// and the signal's disposition are restored when it ends.
#pragma once

#include <signal.h>
#include <sys/resource.h>

#include <cstdint>

namespace lantern::testing {

class FileSizeLimit {
 public:
  explicit FileSizeLimit(std::uint64_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_limit_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = old_limit_;
    limit.rlim_cur = bytes;
    ok_ = ::setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_limit_);
    ::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

  // ok: whether the limit took effect.
  bool ok() const { return ok_; }

 private:
  rlimit old_limit_{};
  sighandler_t old_handler_ = SIG_DFL;
  bool ok_ = false;
};

}  // namespace lantern::testing
