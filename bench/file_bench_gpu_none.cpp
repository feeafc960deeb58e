// Builds without CUDA: bam bench file measures with CPU threads only.
#include <bam/error.hpp>

#include "file_bench.hpp"

namespace bam::bench {

std::vector<file_phase> run_file_phases_gpu(const file_bench_options&, const block_picker&, bool,
                                            std::uint64_t) {
  throw input_error("bam bench file --target gpu needs a CUDA build of bam (the gpu preset)");
}

}  // namespace bam::bench
