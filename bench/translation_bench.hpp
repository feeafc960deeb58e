#pragma once
/// @file
/// `bam bench translation`: the hit path of each translation scheme with the working set
/// resident (translation_kernels.hpp lists them), random gathers of 4, 8, 32, 128 bytes and
/// whole lines, base pages of 512 B and 4 KiB, data sizes swept so base-page metadata goes
/// from below the L2 to far above it. Reports gathers/s, bytes/s, each scheme against the
/// no-translation ideal measured in the same run, and metadata bytes against the L2.
///
/// --side gpu (a CUDA build with a GPU) or cpu (the same kernels on a CPU pool: a check of
/// the kernels, not a figure of the GPU's memory system). Prints a table; --json FILE.

#include <cstdint>
#include <string>
#include <vector>

namespace bam::bench {

struct translation_bench_options {
  std::string side;                                     ///< gpu | cpu ("" = gpu if present)
  std::vector<std::uint64_t> line_bytes = {512, 4096};  ///< base page sizes
  /// Data sizes (multiples of the frame); empty: cpu 64M; gpu 512M,2G,8G,32G at 512 B pages
  /// and 2G,8G,32G,64G at 4 KiB pages.
  std::vector<std::uint64_t> data_bytes;
  std::vector<std::uint64_t> gather_bytes = {4, 8, 32, 128, 0};  ///< 0: a whole line
  std::vector<std::string> schemes;                              ///< empty: all
  std::uint64_t frame_bytes = 2ull << 20;
  double seconds = 0.02;     ///< per timed repetition
  unsigned repetitions = 5;  ///< median of these
  unsigned threads = 0;      ///< cpu side: pool threads (0: hardware threads)
  /// gpu side: "compiler" lets ptxas choose the gather kernels' registers (64 for the schemes
  /// with a miss path, so 1,024 threads per SM); "full" caps them at 32 so an SM holds 2,048.
  std::string occupancy = "compiler";
  std::string json;
};

/// Runs the sweep; prints a table and writes JSON if asked. Throws bam::input_error for bad
/// options (or --side gpu without a GPU), bam::error when a gather read wrong bytes.
void run_translation_bench(const translation_bench_options& options);

}  // namespace bam::bench
