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

namespace {

// The calling thread's own non-blocking stream, made at its first copy and destroyed when the
// thread ends.
struct thread_copy_stream {
  cudaStream_t stream = nullptr;
  thread_copy_stream() {
    BAM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  ~thread_copy_stream() { cudaStreamDestroy(stream); }
  thread_copy_stream(const thread_copy_stream&) = delete;
  thread_copy_stream& operator=(const thread_copy_stream&) = delete;
};

}  // namespace

// Called per command by the host_thread controller while GPU kernels run, and waits for that
// copy alone: on a non-blocking stream of the controller's thread, so it orders against no
// kernel. On the legacy stream (cudaMemcpy) it waited for every kernel on a blocking stream
// of the context, such as PyTorch's default stream or a CuPy stream, whose gather kernel
// waits for this copy: a deadlock (the Python package launches on the caller's stream).
void cuda_copy_any(void* dst, const void* src, std::uint64_t bytes) {
  thread_local thread_copy_stream copies;
  if (src == nullptr) {
    BAM_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, copies.stream));
  } else {
    BAM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, copies.stream));
  }
  BAM_CUDA_CHECK(cudaStreamSynchronize(copies.stream));
}

}  // namespace bam::runtime::detail
