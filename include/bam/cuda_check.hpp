#pragma once
/// @file
/// Checking CUDA runtime calls. Every CUDA call and launch in bam goes through BAM_CUDA_CHECK.

#include <source_location>

#include <cuda_runtime.h>

#include <bam/error.hpp>

namespace bam::detail {

inline void check_cuda(cudaError_t code, const char* expression,
                       std::source_location where = std::source_location::current()) {
  if (code != cudaSuccess) {
    throw cuda_error(static_cast<int>(code),
                     std::string(expression) + " failed: " + cudaGetErrorName(code) + ": " +
                         cudaGetErrorString(code),
                     where);
  }
}

}  // namespace bam::detail

#define BAM_CUDA_CHECK(expression) ::bam::detail::check_cuda((expression), #expression)
