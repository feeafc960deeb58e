#pragma once
// The GPU path's executor: cache memory in HBM, host operations as kernels on the runtime's
// application stream, waits bounded by the runtime.

#include <memory>

#include "cache/executor.hpp"

namespace bam {
class gpu_runtime;
}

namespace bam::detail {

/// Throws bam::error in a build without CUDA, or when `rt` has no GPU.
std::unique_ptr<cache_executor> make_gpu_executor(gpu_runtime& rt);

}  // namespace bam::detail
