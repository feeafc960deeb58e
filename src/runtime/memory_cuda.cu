// The CUDA build: pinned host memory (mapped, so the GPU reaches it by the same address) and
// device memory. These calls synchronize with running kernels: make them before controllers
// start (DESIGN 6).
#include "runtime/memory.hpp"

#include <atomic>
#include <vector>

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

// Whether the runtime takes batches of copies; cleared at its first refusal.
std::atomic<bool> batches_work{true};

}  // namespace

void cuda_copy_batch_async(void* const* dsts, const void* const* srcs, const std::size_t* sizes,
                           std::size_t count, stream_handle stream) {
  if (count == 0) return;
  // relaxed: a hint; a thread that still tries a batch falls back the same way.
  if (batches_work.load(std::memory_order_relaxed)) {
    cudaMemcpyAttributes attr{};
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    std::size_t first = 0;
    const cudaError_t e = cudaMemcpyBatchAsync(dsts, srcs, sizes, count, &attr, &first, 1, stream);
    if (e == cudaSuccess) return;
    // Whatever the driver refused (no batch API, a pointer kind it does not batch), the copies
    // go one call each from now on; a real fault then surfaces from those calls.
    (void)cudaGetLastError();
    batches_work.store(false, std::memory_order_relaxed);  // relaxed: a hint, as above
  }
  for (std::size_t k = 0; k < count; ++k) {
    BAM_CUDA_CHECK(cudaMemcpyAsync(dsts[k], srcs[k], sizes[k], cudaMemcpyDefault, stream));
  }
}

namespace {

// The calling thread's own non-blocking stream, made at its first copy and destroyed when the
// thread ends, and the copies queued on it but not yet issued (copy_any_async): issued as one
// batch at the next fence, so a controller pays one API call per batch, not one per command.
struct thread_copies {
  cudaStream_t stream = nullptr;
  std::vector<void*> dsts;
  std::vector<const void*> srcs;
  std::vector<std::size_t> sizes;
  // copy_mark's events, a ring: mark m (from 1) is events[(m - 1) % size], recorded after
  // the copies queued before it; marks up to `reached` are known done. The stream runs in
  // order, so marks complete in order.
  std::vector<cudaEvent_t> events;
  std::uint64_t marks = 0;
  std::uint64_t reached = 0;
  thread_copies() { BAM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
  ~thread_copies() {
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    cudaStreamDestroy(stream);
  }
  thread_copies(const thread_copies&) = delete;
  thread_copies& operator=(const thread_copies&) = delete;

  // Issues the queued copies: one cudaMemcpyBatchAsync, or one call each where the driver
  // refuses batches.
  void issue() {
    if (dsts.empty()) return;
    cuda_copy_batch_async(dsts.data(), srcs.data(), sizes.data(), dsts.size(), stream);
    dsts.clear();
    srcs.clear();
    sizes.clear();
  }
};

thread_copies& this_thread_copies() {
  thread_local thread_copies copies;
  return copies;
}

}  // namespace

// Called by the host_thread controller while GPU kernels run: on a non-blocking stream of the
// controller's thread, so its copies order against no kernel. On the legacy stream
// (cudaMemcpy) they waited for every kernel on a blocking stream of the context, such as
// PyTorch's default stream or a CuPy stream, whose gather kernel waits for these copies: a
// deadlock (the Python package launches on the caller's stream).
void cuda_copy_any(void* dst, const void* src, std::uint64_t bytes, bool wait) {
  thread_copies& c = this_thread_copies();
  if (src == nullptr) {
    c.issue();  // in call order with the copies queued before
    BAM_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, c.stream));
  } else {
    c.dsts.push_back(dst);
    c.srcs.push_back(src);
    c.sizes.push_back(bytes);
    if (c.dsts.size() >= 4096) c.issue();
  }
  if (wait) cuda_copy_fence();
}

void cuda_copy_fence() {
  thread_copies& c = this_thread_copies();
  c.issue();
  BAM_CUDA_CHECK(cudaStreamSynchronize(c.stream));
  c.reached = c.marks;
}

std::uint64_t cuda_copy_mark() {
  constexpr std::size_t ring = 64;  // marks a thread may have outstanding before one waits
  thread_copies& c = this_thread_copies();
  c.issue();
  if (c.events.empty()) {
    c.events.resize(ring);
    for (cudaEvent_t& e : c.events) {
      BAM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
  }
  if (c.marks - c.reached == ring) {  // the ring is full: the oldest mark's event is reused
    BAM_CUDA_CHECK(cudaEventSynchronize(c.events[c.reached % ring]));
    ++c.reached;
  }
  BAM_CUDA_CHECK(cudaEventRecord(c.events[c.marks % ring], c.stream));
  return ++c.marks;
}

bool cuda_copy_reached(std::uint64_t mark) {
  thread_copies& c = this_thread_copies();
  while (c.reached < mark) {
    const cudaError_t e = cudaEventQuery(c.events[c.reached % c.events.size()]);
    if (e == cudaErrorNotReady) return false;
    BAM_CUDA_CHECK(e);
    ++c.reached;
  }
  return true;
}

bool cuda_host_readable(const void* p) {
  cudaPointerAttributes a{};
  BAM_CUDA_CHECK(cudaPointerGetAttributes(&a, p));
  // Unregistered host memory reports cudaMemoryTypeUnregistered, pinned cudaMemoryTypeHost.
  return a.type == cudaMemoryTypeHost || a.type == cudaMemoryTypeUnregistered;
}

}  // namespace bam::runtime::detail
