#pragma once
/// @file
/// How a page cache is built and how arrays use it.

#include <cstdint>

namespace bam {

#ifdef NDEBUG
inline constexpr bool debug_build = false;
#else
inline constexpr bool debug_build = true;
#endif

/// The paper's decomposition (seed 000, Fig 8):
/// - none: every access issues its own I/O into a private buffer; nothing is shared.
/// - naive: the cache, but each thread probes for itself (no warp coalescing, no reuse).
/// - optimized: lanes of a warp touching one line share one probe (match_any), and a thread
///   walking one line keeps its pin (reference reuse).
enum class cache_mode { none, naive, optimized };

const char* to_string(cache_mode m);

/// How arrays declared dense are translated (DESIGN 5, docs/mosaic.md):
/// - base: every array uses the base-page table (one entry per line-sized page), as in BaM.
/// - two_level: part of the line pool is carved into large frames; an array declared dense gets
///   one 8-byte large entry per frame-sized piece, and its pages live in fixed slots of the
///   piece's frame (Mosaic's CoCoA and in-place coalescing). Other arrays stay on base pages.
enum class translation_kind : std::uint8_t { base, two_level };

/// How readers of a coalesced piece keep its frame from being reused under them:
/// - frame_pins: a pin count per frame, taken once per warp group (one atomic per group).
/// - epochs: a reader announces the global epoch in its own slot (a plain store); a frame is
///   reused only after a grace period in which every announced reader has left.
enum class pinning_kind : std::uint8_t { frame_pins, epochs };

inline const char* to_string(translation_kind t) {
  return t == translation_kind::base ? "base" : "two_level";
}
inline const char* to_string(pinning_kind p) {
  return p == pinning_kind::frame_pins ? "frame_pins" : "epochs";
}

struct cache_config {
  std::uint32_t line_bytes = 4096;             ///< power of two, 512 B .. 64 KiB
  std::uint64_t capacity_bytes = 64ull << 20;  ///< lines = capacity / line_bytes
  cache_mode mode = cache_mode::optimized;
  std::uint32_t clock_chunk = 32;                       ///< lines a victim search claims per step
  std::uint64_t victim_timeout_ns = 30'000'000'000ull;  ///< give up finding a free line
  std::uint32_t bounce_buffers = 0;  ///< read-through buffers (0: sized by the launch)
  std::uint32_t stat_shards = 256;
  translation_kind translation = translation_kind::base;
  pinning_kind pinning = pinning_kind::frame_pins;  ///< for coalesced pieces (two_level)
  /// Large frame: a power of two of lines; halved until the frame pool holds at least 8.
  std::uint64_t frame_bytes = 2ull << 20;
  std::uint32_t frame_percent = 50;  ///< share of the lines carved into frames (two_level)
  /// two_level: a coalesced piece holding at most this percentage of its frame's slots (at
  /// least one page) when the frame is taken keeps its pages as base pages in a shared frame
  /// of its array (splintering) instead of losing them; 0 turns splintering off.
  std::uint32_t splinter_percent = 5;
  /// two_level: a splintered piece holding more than this percentage of a frame's slots is
  /// coalesced again into a frame of its own (promotion).
  std::uint32_t promote_percent = 50;
  /// two_level: when a demand load brings a coalesced piece to this percentage of its frame's
  /// slots (at least one), the loader loads the rest of the piece at once, in commands of up
  /// to two memory pages instead of one per base page (docs/mosaic.md, "Fill"). 0 (the
  /// default) keeps pure demand loading: only pages that are touched are read.
  std::uint32_t fill_percent = 0;
  /// two_level: a dense array's pieces start on base pages of the base pool (their first touch
  /// reserves no frame) and a piece is promoted into a frame of its own once it holds more
  /// than promote_percent of a frame's pages and a frame is free or CLOCK's victim frame holds
  /// fewer pages than it (docs/mosaic.md, "Base first"). Splintering is then off: a piece whose
  /// frame is taken goes back to base pages. Off: the first touch reserves a frame.
  bool base_first = false;
  /// Epoch reader slots (epochs): 0 picks 4096 on the CPU, every resident thread on a GPU.
  std::uint32_t epoch_slots = 0;
  /// two_level: every hit on a coalesced piece checks that its frame's owner is the reading
  /// array's tenant and piece, and reports a cache error otherwise. On in debug builds.
  bool check_frame_owners = debug_build;
  /// Asynchronous write-back: the first dirty victim of a load is written back beside the
  /// load's own read instead of before it (docs/protocols.md). Off: every dirty victim is
  /// written back first, as before.
  bool write_behind = true;
  /// The PRP lists of lines longer than two memory pages in pinned host memory instead of
  /// the cache's GPU memory: for storage whose controller is a host thread (the file backend
  /// on a GPU, emulated-ssd's host_thread placement), which reads a list in place, where one in GPU
  /// memory costs it a copy and a wait per entry (16 KiB lines read 8x slower than 4 KiB ones that
  /// way on an H100).
  bool prp_lists_in_host_memory = false;
};

/// Checks the two_level policy percentages (frame_percent, below 100 under base_first;
/// promote_percent, fill_percent and splinter_percent below promote_percent), as a two_level
/// page_cache does when it opens; a tool can call it before it runs anything. Throws
/// bam::input_error naming the bad value.
void check_policy_percents(const cache_config& c);

}  // namespace bam
