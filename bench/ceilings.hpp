#pragma once
/// @file
/// `bam bench ceilings`: the physical ceilings every bam figure is compared against, measured
/// on this GPU in this run (DESIGN 10, 11).
///
///   hbm_copy          device-to-device cudaMemcpyAsync; bytes read + bytes written
///   h2d_copy          host-to-device cudaMemcpyAsync from pinned memory
///   d2h_copy          device-to-host cudaMemcpyAsync into pinned memory (what write-back meets)
///   zero_copy_lines   GPU warps reading random aligned whole lines of mapped pinned host memory,
///                     once per (line size, footprint): the VM's DMA translation makes the rate
///                     fall as the touched footprint grows
///   hbm_lines         the same kernel over an HBM buffer many times the L2
///   hbm_random_8b     every thread reading independent random 8-byte words of that buffer
///
/// Each figure is the median of --repetitions timed runs (CUDA events) of about --seconds each,
/// after a warm-up that also sizes the work. Needs a GPU; a build without CUDA throws
/// bam::input_error.

#include <cstdint>
#include <string>
#include <vector>

namespace bam::bench {

struct ceilings_options {
  /// Host footprints the zero-copy reads spread over (one pinned buffer of the largest).
  std::vector<std::uint64_t> footprints = {1ull << 30, 4ull << 30, 16ull << 30};
  /// Line sizes of the random line reads: powers of two from 512 B to 64 KiB.
  std::vector<std::uint64_t> line_bytes = {512, 4096};
  double seconds = 0.15;                  ///< length of one timed repetition (at least 0.1)
  unsigned repetitions = 7;               ///< timed repetitions per figure (at least 5)
  std::uint64_t hbm_bytes = 8ull << 30;   ///< HBM buffer of the random reads
  std::uint64_t copy_bytes = 2ull << 30;  ///< one cudaMemcpyAsync of the copy ceilings
  std::string json;                       ///< where to write JSON ("" = nowhere)
};

/// Measures every ceiling, prints a table (progress goes to stderr) and writes JSON if asked.
/// Throws bam::input_error without a GPU or for bad options, bam::cuda_error when a CUDA call
/// fails, bam::error when a kernel read bytes other than those written.
void run_ceilings(const ceilings_options& options);

}  // namespace bam::bench
