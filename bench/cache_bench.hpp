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
};

/// Runs the benchmark; prints a table and writes JSON if asked. Throws bam::input_error for
/// bad options and bam::error when a read failed or returned wrong bytes.
void run_cache_bench(const cache_bench_options& options);

}  // namespace bam::bench
