#pragma once
// Memory that the kernels of a data path and the host both use. shared_buffer: host memory,
// plain on the CPU path, pinned (read and written in place by the GPU) on a GPU; for flags and
// lists the kernel touches rarely. device_totals: counters a kernel adds into often, in GPU
// memory on a GPU (an atomic on pinned host memory crosses PCIe, about a microsecond each,
// serialized per address), read back once the kernel is done. Both zeroed.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include <bam/platform/launch.hpp>
#include <bam/runtime/resources.hpp>
#include <bam/runtime/runtime.hpp>

namespace bam::tools {

class shared_buffer {
 public:
  shared_buffer(bool gpu, std::uint64_t bytes) {
#if defined(BAM_HAVE_CUDA)
    if (gpu) {
      pinned_ = pinned_memory(std::max<std::uint64_t>(bytes, 8));
      std::memset(pinned_.data(), 0, pinned_.bytes());
      return;
    }
#endif
    (void)gpu;
    host_.assign((bytes + 7) / 8, 0);
  }
  template <class T>
  [[nodiscard]] T* as() {
#if defined(BAM_HAVE_CUDA)
    if (pinned_.data() != nullptr) return static_cast<T*>(pinned_.data());
#endif
    return reinterpret_cast<T*>(host_.data());
  }

 private:
  std::vector<std::uint64_t> host_;
#if defined(BAM_HAVE_CUDA)
  pinned_memory pinned_;
#endif
};

/// Words a kernel adds into (atomics), in GPU memory on a GPU and in host memory on the CPU
/// path; the host reads them with read() after the kernel is done.
class device_totals {
 public:
  device_totals(bool gpu, std::uint64_t words, [[maybe_unused]] stream_handle stream)
      : host_(words, 0) {
#if defined(BAM_HAVE_CUDA)
    if (gpu) {
      device_ = device_memory(std::max<std::uint64_t>(words, 1) * 8);
      copy_async(device_.data(), host_.data(), words * 8, stream);
    }
#endif
    (void)gpu;
  }
  /// Where the kernel adds.
  [[nodiscard]] std::uint64_t* data() {
#if defined(BAM_HAVE_CUDA)
    if (device_.data() != nullptr) return device_.as<std::uint64_t>();
#endif
    return host_.data();
  }
  /// The totals, copied back from GPU memory on `stream` (which must have finished the
  /// kernel's work, or order it before the copy).
  [[nodiscard]] const std::vector<std::uint64_t>& read([[maybe_unused]] stream_handle stream,
                                                       [[maybe_unused]] gpu_runtime* rt) {
#if defined(BAM_HAVE_CUDA)
    if (device_.data() != nullptr) {
      copy_async(host_.data(), device_.data(), host_.size() * 8, stream);
      rt->synchronize(stream, 0, "copying a kernel's totals back");
    }
#endif
    return host_;
  }

 private:
  std::vector<std::uint64_t> host_;
#if defined(BAM_HAVE_CUDA)
  device_memory device_;
#endif
};

}  // namespace bam::tools
