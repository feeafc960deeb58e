// The CPU build: the GPU side of `bam bench cache` needs CUDA.
#include <bam/error.hpp>

#include "cache_bench.hpp"

namespace bam::bench {

void run_cache_bench_gpu(const cache_bench_options&) {
  throw input_error("bam bench cache --side gpu needs a GPU (built without CUDA)");
}

}  // namespace bam::bench
