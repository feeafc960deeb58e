#pragma once
// Raw allocations by kind. Host memory is page aligned; pinned and device memory come from
// CUDA and exist only in a CUDA build (elsewhere they throw bam::error).

#include <cstddef>
#include <cstdint>
#include <string>

#include <bam/runtime/resources.hpp>
#include <bam/storage/backing_store.hpp>

namespace bam::runtime {

/// `bytes` of memory of `kind`, page aligned. Throws bam::error when it cannot be had.
void* allocate(std::uint64_t bytes, memory_kind kind);
/// Frees what allocate returned (null is fine). Never throws.
void release(void* p, memory_kind kind) noexcept;
/// Zeroes `bytes` at `p`.
void fill_zero(void* p, std::uint64_t bytes, memory_kind kind);
/// Reads `bytes` of the open file `fd` into `p` (device memory through a staging buffer).
/// Throws bam::input_error naming `path` on a short read.
void load_file(int fd, const std::string& path, void* p, std::uint64_t bytes, memory_kind kind);
/// Copies `bytes` between any two of host, pinned and device memory, and waits; `src` null
/// writes zeroes. For host threads that serve GPU kernels (the host_thread controller).
void copy_any(void* dst, const void* src, std::uint64_t bytes);
/// copy_any without the wait: queued on the calling thread's copy stream, done once that
/// thread's copy_fence() returns. A controller queues a batch of commands' copies, then waits
/// once, instead of a round trip to the GPU per command.
void copy_any_async(void* dst, const void* src, std::uint64_t bytes);
/// Waits for every copy the calling thread queued with copy_any_async.
void copy_fence();
/// Issues the copies the calling thread queued and returns a mark that copy_reached reports
/// on: a controller keeps several batches of copies in flight instead of waiting for each.
/// The calling thread's marks outstanding are bounded (the oldest is waited for past that).
std::uint64_t copy_mark();
/// Whether every copy the calling thread queued before `mark` is done. Never waits.
bool copy_reached(std::uint64_t mark);
/// Whether the host can load from `p` in place: host memory, or pinned memory (CUDA's
/// view of it). False for GPU memory.
bool host_readable(const void* p);

namespace detail {
// CUDA halves of the above (memory_cuda.cu, or memory_nocuda.cpp that throws).
void* cuda_allocate(std::uint64_t bytes, memory_kind kind);
void cuda_release(void* p, memory_kind kind) noexcept;
void cuda_fill_zero(void* p, std::uint64_t bytes);
void cuda_copy_to_device(void* dst, const void* src, std::uint64_t bytes);
void cuda_copy_any(void* dst, const void* src, std::uint64_t bytes, bool wait);
void cuda_copy_fence();
std::uint64_t cuda_copy_mark();
bool cuda_copy_reached(std::uint64_t mark);
bool cuda_host_readable(const void* p);
/// Queues `count` copies on `stream`: one cudaMemcpyBatchAsync, or one cudaMemcpyAsync each
/// where the runtime refuses batches (then for the rest of the process); checked, asynchronous.
void cuda_copy_batch_async(void* const* dsts, const void* const* srcs, const std::size_t* sizes,
                           std::size_t count, stream_handle stream);
}  // namespace detail

}  // namespace bam::runtime
