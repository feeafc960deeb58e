#pragma once
// Where a file server's commands meet memory it cannot address: on a GPU the PRP addresses are
// GPU memory (cache lines), so reads land in pinned staging buffers and are copied into the
// lines, and writes are copied out of the lines first. The copies of a serve pass are queued
// together, issued as one batch and waited for once. One copier per server thread: a copier is
// not thread safe, and its stream and PRP-word buffer are its thread's alone.

#include <cstdint>
#include <memory>

namespace bam {
class gpu_runtime;
}

namespace bam::file_io {

class staging_copier {
 public:
  virtual ~staging_copier() = default;
  /// Queues a copy between any two of host, pinned and GPU memory; issued by wait() or
  /// read_u64(), in call order.
  virtual void copy(void* dst, const void* src, std::uint64_t bytes) = 0;
  /// Issues the queued copies, returns once every one has landed (bounded: throws bam::error
  /// past the deadline).
  virtual void wait() = 0;
  /// Reads one 8-byte word (a PRP list entry) that may be in GPU memory.
  virtual std::uint64_t read_u64(std::uint64_t address) = 0;
  /// Pinned memory for staging buffers; allocate before kernels run.
  virtual void* allocate(std::uint64_t bytes) = 0;
  virtual void release(void* p) noexcept = 0;
};

/// A copier on its own non-blocking stream of `runtime`'s GPU (throws without CUDA).
std::unique_ptr<staging_copier> make_gpu_copier(gpu_runtime& runtime);

}  // namespace bam::file_io
