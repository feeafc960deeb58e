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

#include <bam/runtime/resources.hpp>

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

// --- The same measurements as building blocks, for benchmarks that put a figure beside its
// ceiling in one run. They allocate and launch kernels on `stream` (a plain stream of the
// primary context), so call them before gpu_runtime::start() or after stop() (DESIGN 6).
// The bytes they read must hold the pattern of bench_pattern.hpp (fill_pattern_async).

struct measure_options {
  stream_handle stream = nullptr;
  double seconds = 0.1;      ///< length of one timed repetition
  unsigned repetitions = 5;  ///< timed repetitions (median)
};

/// A ceiling: the median repetition's rate, and every repetition's time.
struct rate_figure {
  double lines_per_s = 0;  ///< lines (or 8-byte words) read per second
  double bytes_per_s = 0;
  double seconds = 0;  ///< median repetition
  std::uint64_t lines_per_repetition = 0;
  std::vector<double> repetition_seconds;
};

/// Writes pattern_word(offset) into every 8-byte word of [base, base + bytes) (device memory
/// or mapped pinned memory by its device address); asynchronous on `stream`.
void fill_pattern_async(void* base, std::uint64_t bytes, stream_handle stream);

/// Warps reading random aligned whole lines of `line_bytes` over [base, base + footprint)
/// (zero_copy_lines / hbm_lines of run_ceilings). Throws bam::error on a wrong word.
rate_figure measure_random_lines(const void* base, std::uint64_t footprint,
                                 std::uint64_t line_bytes, const measure_options& m);

/// Threads reading independent random 8-byte words of [base, base + bytes) (hbm_random_8b).
rate_figure measure_random_words(const void* base, std::uint64_t bytes, const measure_options& m);

}  // namespace bam::bench
