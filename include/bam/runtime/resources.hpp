#pragma once
/// @file
/// RAII owners of GPU resources: device memory, mapped pinned host memory, streams and events.
///
/// Readable by a plain C++ compiler: a stream is a `bam::stream_handle`, the same pointer
/// type as `cudaStream_t`. In a build without CUDA every constructor throws bam::error.
///
/// Allocation and release synchronize with running kernels in CUDA (a persistent controller
/// never ends), so make these before `gpu_runtime::start()` and drop them after
/// `gpu_runtime::stop()` (DESIGN 6). Move-only; destructors never throw.

#include <cstddef>
#include <cstdint>

struct CUstream_st;
struct CUevent_st;

namespace bam {

/// A CUDA stream, the same type as cudaStream_t. Null is the legacy default stream, which bam
/// never uses while controllers run.
using stream_handle = CUstream_st*;
/// A CUDA event, the same type as cudaEvent_t.
using event_handle = CUevent_st*;

/// Device (HBM) memory from cudaMalloc. Contents are undefined until written.
class device_memory {
 public:
  device_memory() = default;
  explicit device_memory(std::size_t bytes);
  ~device_memory();
  device_memory(device_memory&& other) noexcept;
  device_memory& operator=(device_memory&& other) noexcept;
  device_memory(const device_memory&) = delete;
  device_memory& operator=(const device_memory&) = delete;

  [[nodiscard]] void* data() const { return data_; }
  template <class T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(data_);
  }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Page-locked host memory mapped into the GPU. Under unified addressing the GPU uses the same
/// pointer as the host (checked at allocation). Zero-filled.
class pinned_memory {
 public:
  pinned_memory() = default;
  explicit pinned_memory(std::size_t bytes);
  ~pinned_memory();
  pinned_memory(pinned_memory&& other) noexcept;
  pinned_memory& operator=(pinned_memory&& other) noexcept;
  pinned_memory(const pinned_memory&) = delete;
  pinned_memory& operator=(const pinned_memory&) = delete;

  [[nodiscard]] void* data() const { return data_; }
  template <class T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(data_);
  }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// An owned stream. Made by the runtime (inside a green context) or here (a plain
/// non-blocking stream in the primary context).
class owned_stream {
 public:
  owned_stream() = default;
  /// A new non-blocking stream in the current device's primary context.
  static owned_stream create_non_blocking();
  /// Takes ownership of `s` (destroyed with cudaStreamDestroy).
  static owned_stream adopt(stream_handle s);
  ~owned_stream();
  owned_stream(owned_stream&& other) noexcept;
  owned_stream& operator=(owned_stream&& other) noexcept;
  owned_stream(const owned_stream&) = delete;
  owned_stream& operator=(const owned_stream&) = delete;

  [[nodiscard]] stream_handle get() const { return stream_; }

 private:
  stream_handle stream_ = nullptr;
};

/// An owned CUDA event without timing: a point of a stream that the host can wait for
/// (gpu_runtime::synchronize) without waiting for the work queued after it.
class owned_event {
 public:
  owned_event() = default;
  /// A new event of the current device.
  static owned_event create();
  ~owned_event();
  owned_event(owned_event&& other) noexcept;
  owned_event& operator=(owned_event&& other) noexcept;
  owned_event(const owned_event&) = delete;
  owned_event& operator=(const owned_event&) = delete;

  /// Marks the point of `stream` after the work queued there so far; checked.
  void record(stream_handle stream) const;
  [[nodiscard]] event_handle get() const { return event_; }

 private:
  event_handle event_ = nullptr;
};

/// cudaMemcpyAsync with the direction inferred (unified addressing), on `stream`; checked.
/// Asynchronous: wait with gpu_runtime::synchronize.
void copy_async(void* dst, const void* src, std::size_t bytes, stream_handle stream);

/// cudaMemsetAsync(p, 0, bytes) on `stream`; checked. Asynchronous.
void zero_async(void* p, std::size_t bytes, stream_handle stream);

}  // namespace bam
