// The CPU build: every ceiling is a GPU figure, so there is nothing to measure without CUDA.
#include <bam/error.hpp>

#include "ceilings.hpp"

namespace bam::bench {

void run_ceilings(const ceilings_options&) {
  throw input_error("bam bench ceilings needs a GPU (built without CUDA)");
}

}  // namespace bam::bench
