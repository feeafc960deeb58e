// The CPU build: `bench translation --side gpu` needs CUDA.
#include <bam/error.hpp>

#include "translation_runner.hpp"

namespace bam::bench::translation {

bool gpu_runner_available() { return false; }

std::unique_ptr<runner> make_gpu_runner(const translation_bench_options&) {
  throw input_error("bam bench translation --side gpu needs a CUDA build of bam");
}

}  // namespace bam::bench::translation
