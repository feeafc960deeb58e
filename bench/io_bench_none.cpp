// The CPU build: `bam bench io` measures the GPU path only.
#include <bam/error.hpp>

#include "io_bench.hpp"

namespace bam::bench {

void run_io_bench(const io_bench_options&) {
  throw input_error("bam bench io needs a GPU (built without CUDA)");
}

}  // namespace bam::bench
