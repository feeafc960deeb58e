#pragma once
/// @file
/// `bam bench cache`: random element reads through a bam::array and its page cache.
///
/// --pattern hit: the data fits in the cache and is read once first, so the timed reads hit.
/// --pattern miss: the data is many times the cache, so nearly every timed read misses and
///                 costs an I/O command.
/// Figures: accesses/s, bytes/s the application asked for, hit rate, I/O commands and I/O
/// amplification, against the ceiling measured in the same run (the same random reads straight
/// from the image in host memory). CPU path (a host_stream and the CPU controller); the kernels
/// (cache_bench_kernels.hpp) are portable so a GPU side can launch them unchanged.
///
/// --side gpu (cache_bench_gpu.cu): the GPU cache against the GPU controller, GPU-memory image,
/// each figure beside its ceiling measured in the same run (docs/results.md):
///   --figure lines     (7a) data resident; each warp reads whole lines in random order through
///                      a cursor (512 B and 4 KiB lines) vs random whole-line HBM reads over the
///                      same footprint
///   --figure elements  (7b) data resident; random 8-byte elements through operator[] vs random
///                      8-byte HBM reads, and vs the same kernel over the data in HBM directly
///   --figure modes     (8) a random gather with misses (each warp reads a random 256-byte row)
///                      in cache modes none, naive and optimized, vs the gather from HBM

#include <cstdint>
#include <string>

namespace bam::bench {

struct cache_bench_options {
  std::string pattern = "miss";     ///< hit | miss
  std::uint32_t line_bytes = 4096;  ///< cache line, a power of two from 512 to 64 KiB
  std::uint64_t cache_bytes = 16ull << 20;
  std::uint64_t data_bytes = 0;        ///< 0: hit 1/2 of the cache, miss 16 x the cache
  std::uint32_t element_bytes = 8;     ///< 4 or 8
  std::uint64_t accesses = 1'000'000;  ///< timed reads in total
  unsigned threads = 64;               ///< CPU worker threads (logical threads of the launch)
  std::string mode = "optimized";      ///< none | naive | optimized
  double latency_us = 0;               ///< modelled device latency (0: the protocol alone)
  std::string json;                    ///< where to write JSON ("" = nowhere)
  std::string side = "cpu";            ///< cpu | gpu
  std::string figure = "lines";        ///< gpu side: lines | elements | modes
  double seconds = 0.2;                ///< gpu side: length of one timed run
  std::uint32_t controller_sms = 8;    ///< gpu side
};

/// Runs the benchmark; prints a table and writes JSON if asked. Throws bam::input_error for
/// bad options and bam::error when a read failed or returned wrong bytes.
void run_cache_bench(const cache_bench_options& options);

/// The GPU side (cache_bench_gpu.cu; throws bam::input_error without CUDA or a GPU). Each
/// figure has its own sizes (the CPU side's size and thread options do not apply); figure,
/// seconds, controller_sms, latency_us (modes) and json do.
void run_cache_bench_gpu(const cache_bench_options& options);

}  // namespace bam::bench
