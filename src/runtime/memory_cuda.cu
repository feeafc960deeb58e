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

void cuda_fill_zero(void* p, std::uint64_t bytes) { BAM_CUDA_CHECK(cudaMemset(p, 0, bytes)); }

void cuda_copy_to_device(void* dst, const void* src, std::uint64_t bytes) {
  BAM_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

}  // namespace bam::runtime::detail
