#pragma once
/// @file
/// Per-frame pins (pinning_kind::frame_pins): a reader of a coalesced piece adds to its frame's
/// pin count, once per warp group (the leader pins for the lanes that read the same piece), and
/// a frame is taken (HELD) only while its count is zero. One atomic per group per access on a
/// word per frame instead of one per line: the frame table is small enough to stay in L2.

#include <cstdint>

#include <bam/cache/mosaic/frame_pool.hpp>
#include <bam/cache/mosaic/large_entry.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>

namespace bam::cache::mosaic {

/// Pins the frame entry `e` names `pins` times. True when the pins count: the frame is OPEN
/// and still serves that reservation; otherwise nothing is left pinned.
BAM_HD BAM_INLINE bool frame_pin(const frame_pool_view& p, std::uint64_t e, std::uint32_t pins) {
  atomic_ref<std::uint64_t> st(p.state[entry_frame(e)]);
  // relaxed: at a shared frame, a look first, so that readers of a frame being taken do not
  // add pins it must then wait out (the fetch_add below decides). A coalesced piece's evictor
  // closes the entry before it waits for pins to drain (hold_and_drain), which stops new pins
  // as well; a look there would cost every hit a dependent load.
  if (entry_splintered(e) && !frame_pin_usable(st.load(order::relaxed), e)) return false;
  // acquire: the reserver's bitmaps and the loaders' published slots (released with OPEN and
  // with the resident bits) are visible once our pin counts.
  const std::uint64_t s = st.fetch_add(pins, order::acquire);
  if (frame_pin_usable(s, e)) return true;
  st.fetch_sub(pins, order::relaxed);  // relaxed: undoes a pin that never counted
  return false;
}

/// Drops `pins` pins taken by frame_pin.
BAM_HD BAM_INLINE void frame_unpin(const frame_pool_view& p, std::uint32_t frame,
                                   std::uint32_t pins) {
  // release: our group's reads and writes of the frame before an evictor's acquiring CAS.
  atomic_ref<std::uint64_t>(p.state[frame]).fetch_sub(pins, order::release);
}

}  // namespace bam::cache::mosaic
