// RAII owners of CUDA memory and streams (CUDA build).
#include <bam/runtime/resources.hpp>

#include <cstring>
#include <utility>

#include <cuda_runtime.h>

#include <bam/cuda_check.hpp>
#include <bam/error.hpp>

namespace bam {

device_memory::device_memory(std::size_t bytes) : bytes_(bytes) {
  BAM_CUDA_CHECK(cudaMalloc(&data_, bytes == 0 ? 256 : bytes));
}
device_memory::~device_memory() {
  if (data_) cudaFree(data_);
}
device_memory::device_memory(device_memory&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
device_memory& device_memory::operator=(device_memory&& o) noexcept {
  if (this != &o) {
    if (data_) cudaFree(data_);
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

pinned_memory::pinned_memory(std::size_t bytes) : bytes_(bytes) {
  BAM_CUDA_CHECK(
      cudaHostAlloc(&data_, bytes == 0 ? 64 : bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  std::memset(data_, 0, bytes == 0 ? 64 : bytes);
  void* device_view = nullptr;
  BAM_CUDA_CHECK(cudaHostGetDevicePointer(&device_view, data_, 0));
  if (device_view != data_) {
    cudaFreeHost(data_);
    data_ = nullptr;
    throw error(
        "mapped pinned memory has a different address on the GPU (no unified "
        "addressing?); bam needs one address on both sides");
  }
}
pinned_memory::~pinned_memory() {
  if (data_) cudaFreeHost(data_);
}
pinned_memory::pinned_memory(pinned_memory&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
pinned_memory& pinned_memory::operator=(pinned_memory&& o) noexcept {
  if (this != &o) {
    if (data_) cudaFreeHost(data_);
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

owned_stream owned_stream::create_non_blocking() {
  owned_stream s;
  cudaStream_t raw = nullptr;
  BAM_CUDA_CHECK(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
  s.stream_ = raw;
  return s;
}
owned_stream owned_stream::adopt(stream_handle raw) {
  owned_stream s;
  s.stream_ = raw;
  return s;
}
owned_stream::~owned_stream() {
  if (stream_) cudaStreamDestroy(stream_);
}
owned_stream::owned_stream(owned_stream&& o) noexcept
    : stream_(std::exchange(o.stream_, nullptr)) {}
owned_stream& owned_stream::operator=(owned_stream&& o) noexcept {
  if (this != &o) {
    if (stream_) cudaStreamDestroy(stream_);
    stream_ = std::exchange(o.stream_, nullptr);
  }
  return *this;
}

owned_event owned_event::create() {
  owned_event e;
  cudaEvent_t raw = nullptr;
  BAM_CUDA_CHECK(cudaEventCreateWithFlags(&raw, cudaEventDisableTiming));
  e.event_ = raw;
  return e;
}
owned_event::~owned_event() {
  if (event_) cudaEventDestroy(event_);
}
owned_event::owned_event(owned_event&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
owned_event& owned_event::operator=(owned_event&& o) noexcept {
  if (this != &o) {
    if (event_) cudaEventDestroy(event_);
    event_ = std::exchange(o.event_, nullptr);
  }
  return *this;
}
void owned_event::record(stream_handle stream) const {
  BAM_CUDA_CHECK(cudaEventRecord(event_, stream));
}

void copy_async(void* dst, const void* src, std::size_t bytes, stream_handle stream) {
  if (bytes == 0) return;
  BAM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
}

void zero_async(void* p, std::size_t bytes, stream_handle stream) {
  if (bytes == 0) return;
  BAM_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream));
}

}  // namespace bam
