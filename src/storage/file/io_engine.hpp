#pragma once
// How a file server thread does its I/O: submit positioned vector reads, writes and data
// syncs, reap what finished. Two engines: io_uring (liburing; one ring per thread) and psync
// (a few pread/pwrite threads, which works wherever files do).

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bam::file_io {

enum class io_kind : std::uint8_t { read, write, datasync };

/// One operation. The iovecs must stay valid until its result is reaped.
struct io_request {
  io_kind kind = io_kind::read;
  int fd = -1;
  std::uint64_t offset = 0;
  const iovec* iov = nullptr;
  std::uint32_t iov_count = 0;
  std::uint64_t tag = 0;  ///< handed back with the result
};

struct io_result {
  std::uint64_t tag = 0;
  std::int64_t value = 0;  ///< bytes moved, or -errno
};

class io_engine {
 public:
  virtual ~io_engine() = default;
  /// Most operations in flight at once.
  [[nodiscard]] virtual std::uint32_t depth() const = 0;
  /// Queues an operation; the caller keeps at most depth() in flight.
  virtual void submit(const io_request& r) = 0;
  /// Starts what submit() queued (io_uring batches them into one system call).
  virtual void kick() = 0;
  /// Operations submit() queued that no kick() has started yet.
  [[nodiscard]] virtual std::uint32_t queued() const { return 0; }
  /// Appends finished operations to `out`. When none has finished and `wait_ns` > 0, first
  /// starts what submit() queued (io_uring: in the same system call as the wait), then waits up
  /// to `wait_ns` for `want` (at least 1) to finish, returning fewer when the time runs out.
  /// Returns how many it appended.
  virtual std::uint32_t reap(std::vector<io_result>& out, std::uint64_t wait_ns,
                             std::uint32_t want) = 0;
  /// "io_uring" or "psync".
  [[nodiscard]] virtual const char* name() const = 0;
  /// CPU seconds of threads the engine runs besides its caller's (psync's workers).
  [[nodiscard]] virtual double worker_cpu_seconds() const { return 0; }
};

/// An io_uring engine of `depth` entries, or null with the reason in `why` when the kernel or
/// sandbox refuses io_uring.
std::unique_ptr<io_engine> make_uring_engine(std::uint32_t depth, std::string& why);
/// A psync engine: `threads` worker threads doing pread/pwrite/fdatasync, `depth` queued.
std::unique_ptr<io_engine> make_psync_engine(std::uint32_t depth, std::uint32_t threads);

}  // namespace bam::file_io
