#pragma once
/// @file
/// How a line pool is carved into large frames (CoCoA's frame pool): frame f holds lines
/// [f * lines_per_frame, (f + 1) * lines_per_frame); the lines after the last frame stay the
/// base pool that sparse arrays' CLOCK searches. The frame size is the configured one, halved
/// until the pool holds at least min_frames frames (small caches), and never below one line.

#include <cstdint>

#include <bam/platform/config.hpp>

namespace bam::cache::mosaic {

inline constexpr std::uint32_t min_frames = 8;

struct frame_geometry {
  std::uint64_t frame_bytes = 0;
  std::uint32_t lines_per_frame = 0;
  std::uint32_t frames = 0;
  std::uint32_t words_per_frame = 0;  ///< 64-bit words of one frame's bitmaps
  std::uint32_t frame_shift = 0;      ///< log2(lines_per_frame): page -> piece
  std::uint64_t frame_lines = 0;      ///< frames * lines_per_frame: first base-pool line

  [[nodiscard]] BAM_HD std::uint64_t line_of(std::uint32_t frame, std::uint32_t slot) const {
    return std::uint64_t{frame} * lines_per_frame + slot;
  }
};

/// Carves `lines` lines of `line_bytes` (both powers of two except `lines`): `percent` of them
/// into frames of at most `frame_bytes`. At least one line is left to the base pool. Returns
/// frames == 0 when not even one frame of one line fits.
BAM_HD constexpr frame_geometry plan_frames(std::uint32_t line_bytes, std::uint64_t lines,
                                            std::uint64_t frame_bytes, std::uint32_t percent) {
  frame_geometry g;
  if (lines < 2 || line_bytes == 0) return g;
  std::uint64_t share = lines * (percent > 100 ? 100 : percent) / 100;
  if (share > lines - 1) share = lines - 1;
  std::uint64_t per = frame_bytes / line_bytes;
  std::uint64_t p2 = 1;
  while (p2 * 2 <= per) p2 *= 2;  // a power of two of lines
  per = per == 0 ? 1 : p2;
  while (per > 1 && share / per < min_frames) per /= 2;
  std::uint64_t frames = share / per;
  if (frames > (1ull << 24)) frames = 1ull << 24;
  if (frames == 0) return g;
  g.lines_per_frame = static_cast<std::uint32_t>(per);
  g.frame_bytes = per * line_bytes;
  g.frames = static_cast<std::uint32_t>(frames);
  g.words_per_frame = static_cast<std::uint32_t>((per + 63) / 64);
  while ((1ull << g.frame_shift) < per) ++g.frame_shift;
  g.frame_lines = frames * per;
  return g;
}

static_assert(plan_frames(4096, 16384, 2ull << 20, 50).lines_per_frame == 512);
static_assert(plan_frames(4096, 16384, 2ull << 20, 50).frames == 16);
static_assert(plan_frames(512, 128, 2ull << 20, 50).lines_per_frame == 8);  // shrinks
static_assert(plan_frames(512, 128, 2ull << 20, 100).frame_lines <= 127);   // base keeps a line
static_assert(plan_frames(512, 1, 2ull << 20, 50).frames == 0);

}  // namespace bam::cache::mosaic
