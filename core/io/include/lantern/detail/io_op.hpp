// SPDX-License-Identifier: Apache-2.0
// io_op.hpp - one asynchronous IO operation and the task waiting for it, in one object.
//
// An IoOp is a Job that is *not ready* from its submission until the kernel completes it
// (core/io/README.md): it sits in no queue, no worker wakes for it or sleeps on it. The
// completion stores the result and readies the job on the worker that reaped it; running
// the job calls the user's callback with the result. No liburing type appears here: the
// ring lives in io_context.cpp, so applications do not need liburing's headers.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

#include "lantern/detail/job.hpp"
#include "lantern/vocabulary.hpp"

namespace lantern {

// The operations lantern/io.hpp offers: IoKind, in lantern/vocabulary.hpp (io_submit's
// payload is IoSubmitPayload).
const char* io_kind_name(IoKind k) noexcept;

namespace detail {

class Registry;

struct IoOp : Job {
  IoOp(Execute fn, Registry& owner) noexcept : Job(fn), registry(&owner) {}
  Registry* registry;
  IoKind kind = IoKind::read;
  bool submitted = false;  // false: running the job submits it (it was handed to a worker)
  int fd = -1;
  void* buffer = nullptr;
  std::size_t length = 0;
  std::int64_t result = 0;           // bytes, new fd, 0, or -errno
  std::int64_t timeout[2] = {0, 0};  // IoKind::timeout: seconds, nanoseconds (as __kernel_timespec)
  bool plain_write = false;          // IoKind::write on something that is not a socket
  bool completion_reported = false;  // the io_complete hook fired (when a worker reaped it)
  bool counted_not_ready = false;    // already in the registry's not-ready count
  sockaddr_storage address{};        // IoKind::connect
  socklen_t address_length = 0;
  // The context's list of operations in flight, for cancelling them at shutdown.
  IoOp* prev_in_flight = nullptr;
  IoOp* next_in_flight = nullptr;
};

// submit_io hands a prepared op to the calling worker's ring, or (off the pool, or under
// the condvar strategy) to wherever this registry submits. Counts it as not ready. If
// the pool is stopping or IO is unavailable, the op completes at once with -ECANCELED or
// -ENOSYS (its callback still runs: nothing is lost silently).
void submit_io(IoOp* op);

}  // namespace detail
}  // namespace lantern
