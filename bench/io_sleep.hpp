#pragma once
// `bam bench io --figure sleep` (io_sleep.cu): __nanosleep's real duration against its request.

#include "io_bench.hpp"

namespace bam::bench {

/// Measures and reports the sleep figure (io_bench.hpp); called by run_io_bench.
void figure_sleep(const io_bench_options& o);

}  // namespace bam::bench
