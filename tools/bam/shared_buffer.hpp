#pragma once
// Host memory that the kernels of a data path can read and write: plain on the CPU path,
// pinned (read and written in place by the GPU) on a GPU. Zeroed.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include <bam/runtime/resources.hpp>

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

}  // namespace bam::tools
