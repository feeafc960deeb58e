// The CUDA build: pinned host memory (mapped, so the GPU reaches it by the same address) and
// device memory. These calls synchronize with running kernels: make them before controllers
// start (DESIGN 6).
#include "runtime/memory.hpp"

#include <bam/cuda_check.hpp>

namespace bam::runtime::detail {

void* cuda_allocate(std::uint64_t bytes, memory_kind kind) {
  void* p = nullptr;
  if (kind == memory_kind::pinned) {
    BAM_CUDA_CHECK(
        cudaHostAlloc(&p, bytes == 0 ? 4096 : bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  } else {
    BAM_CUDA_CHECK(cudaMalloc(&p, bytes == 0 ? 4096 : bytes));
  }
  return p;
}

void cuda_release(void* p, memory_kind kind) noexcept {
  if (kind == memory_kind::pinned) {
    cudaFreeHost(p);
  } else {
    cudaFree(p);
  }
}

// cudaMemset of device memory, and cudaMemcpy from pageable memory, may return before the
// bytes land, on the legacy stream, which does not order against the runtime's non-blocking
// streams (in other contexts, too). A kernel or copy on those streams could then run first and
// have its writes undone by the late fill: wait for the legacy stream before returning. (It
// waits for nothing else: every other stream of ours is non-blocking.)
void cuda_fill_zero(void* p, std::uint64_t bytes) {
  BAM_CUDA_CHECK(cudaMemset(p, 0, bytes));
  BAM_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

void cuda_copy_to_device(void* dst, const void* src, std::uint64_t bytes) {
  BAM_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  BAM_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

// Called per command by the host_thread controller while GPU kernels run: the legacy stream
// (primary context) does not wait for them, since ours are all non-blocking streams.
void cuda_copy_any(void* dst, const void* src, std::uint64_t bytes) {
  if (src == nullptr) {
    BAM_CUDA_CHECK(cudaMemset(dst, 0, bytes));
  } else {
    BAM_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
  }
  BAM_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

}  // namespace bam::runtime::detail
