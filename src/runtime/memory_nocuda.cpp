// The CPU build: pinned and device memory need CUDA.
#include "runtime/memory.hpp"

#include <bam/error.hpp>

namespace bam::runtime::detail {

void* cuda_allocate(std::uint64_t, memory_kind) {
  throw error("pinned or device memory needs a CUDA build of bam");
}
void cuda_release(void*, memory_kind) noexcept {}
void cuda_fill_zero(void*, std::uint64_t) {
  throw error("device memory needs a CUDA build of bam");
}
void cuda_copy_to_device(void*, const void*, std::uint64_t) {
  throw error("device memory needs a CUDA build of bam");
}

void cuda_copy_any(void*, const void*, std::uint64_t, bool) {
  throw error("copies to GPU memory need a CUDA build of bam");
}
void cuda_copy_fence() {}
std::uint64_t cuda_copy_mark() { return 0; }
bool cuda_copy_reached(std::uint64_t) { return true; }
bool cuda_host_readable(const void*) { return true; }
void cuda_copy_batch_async(void* const*, const void* const*, const std::size_t*, std::size_t count,
                           stream_handle) {
  if (count != 0) throw error("copies to GPU memory need a CUDA build of bam");
}

}  // namespace bam::runtime::detail
