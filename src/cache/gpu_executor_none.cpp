// A build without CUDA: no GPU executor.
#include <bam/error.hpp>

#include "cache/gpu_executor.hpp"

namespace bam::detail {

std::unique_ptr<cache_executor> make_gpu_executor(gpu_runtime&) {
  throw error("a GPU page cache needs a CUDA build of bam");
}

}  // namespace bam::detail
