#pragma once
/// @file
/// A CUDA event owned by one object: the GPU benchmarks time their runs between two of them.

#include <cuda_runtime.h>

#include <bam/cuda_check.hpp>

namespace bam::bench {

class cuda_event {
 public:
  cuda_event() { BAM_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~cuda_event() { cudaEventDestroy(e_); }
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;
  [[nodiscard]] cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace bam::bench
