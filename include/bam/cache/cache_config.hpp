#pragma once
/// @file
/// How a page cache is built and how arrays use it.

#include <cstdint>

namespace bam {

/// The paper's decomposition (seed 000, Fig 8):
/// - none: every access issues its own I/O into a private buffer; nothing is shared.
/// - naive: the cache, but each thread probes for itself (no warp coalescing, no reuse).
/// - optimized: lanes of a warp touching one line share one probe (match_any), and a thread
///   walking one line keeps its pin (reference reuse).
enum class cache_mode { none, naive, optimized };

const char* to_string(cache_mode m);

struct cache_config {
  std::uint32_t line_bytes = 4096;             ///< power of two, 512 B .. 64 KiB
  std::uint64_t capacity_bytes = 64ull << 20;  ///< lines = capacity / line_bytes
  cache_mode mode = cache_mode::optimized;
  std::uint32_t clock_chunk = 32;                       ///< lines a victim search claims per step
  std::uint64_t victim_timeout_ns = 30'000'000'000ull;  ///< give up finding a free line
  std::uint32_t bounce_buffers = 0;  ///< read-through buffers (0: sized by the launch)
  std::uint32_t stat_shards = 256;
};

}  // namespace bam
