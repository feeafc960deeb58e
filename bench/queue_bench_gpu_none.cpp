// The CPU build: `bench queue --side gpu` needs CUDA.
#include <bam/error.hpp>

#include "queue_bench.hpp"

namespace bam::bench {

void run_queue_bench_gpu(const queue_bench_options&) {
  throw input_error("--side gpu needs a CUDA build of bam");
}

}  // namespace bam::bench
