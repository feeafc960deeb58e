// The CPU build: every ceiling is a GPU figure, so there is nothing to measure without CUDA.
#include <bam/error.hpp>

#include "ceilings.hpp"

namespace bam::bench {

void run_ceilings(const ceilings_options&) {
  throw input_error("bam bench ceilings needs a GPU (built without CUDA)");
}

void fill_pattern_async(void*, std::uint64_t, stream_handle) {
  throw input_error("pattern fills need a GPU (built without CUDA)");
}

rate_figure measure_random_lines(const void*, std::uint64_t, std::uint64_t,
                                 const measure_options&) {
  throw input_error("ceilings need a GPU (built without CUDA)");
}

rate_figure measure_random_words(const void*, std::uint64_t, const measure_options&) {
  throw input_error("ceilings need a GPU (built without CUDA)");
}

}  // namespace bam::bench
