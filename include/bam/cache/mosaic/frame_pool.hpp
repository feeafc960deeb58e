#pragma once
/// @file
/// The frame table and epoch words of a cache's frame pool: plain memory the owner allocates
/// (page_cache) and every ref carries by value. Structure of arrays, hot words first:
///
///   state[f]           frame state word (large_entry.hpp): pins, OPEN, HELD, tag
///   resident/busy/dirty[f * words_per_frame + w]   one bit per slot of the frame
///   abandoned[f * words_per_frame + w]   slots whose command was abandoned (a hint: while
///                      the slot is also busy, it waits for a late completion that may never come)
///   owner[f]           tenant << 48 | piece: whose entry to close on eviction; 0 when free
///   referenced[f]      CLOCK hint: set when a slot of the frame is loaded
///   resident_count[f]  slots resident (statistics and planning)
///   epoch, epoch_slots (pinning_kind::epochs): the global epoch and one word per reader slot
///   epoch_scan         the grace-period scan's words: the newest quiet epoch, a scanner flag
///   hand               the frame CLOCK hand

#include <cstdint>
#include <type_traits>

#include <bam/cache/cache_config.hpp>
#include <bam/cache/mosaic/frame_geometry.hpp>
#include <bam/platform/config.hpp>

namespace bam::cache::mosaic {

inline constexpr unsigned owner_tenant_shift = 48;
/// The piece field of a shared frame's owner word (no piece has this index).
inline constexpr std::uint64_t shared_piece = (std::uint64_t{1} << owner_tenant_shift) - 1;

struct frame_pool_view {
  frame_geometry geometry;
  pinning_kind pinning = pinning_kind::frame_pins;
  std::uint64_t* state = nullptr;
  std::uint64_t* resident = nullptr;
  std::uint64_t* busy = nullptr;
  std::uint64_t* dirty = nullptr;
  std::uint64_t* abandoned = nullptr;
  std::uint64_t* owner = nullptr;
  std::uint32_t* referenced = nullptr;
  std::uint32_t* resident_count = nullptr;
  std::uint64_t* hand = nullptr;
  std::uint64_t* epoch = nullptr;
  std::uint64_t* epoch_slots = nullptr;
  std::uint64_t* epoch_scan = nullptr;  ///< the grace periods' shared words (epochs.hpp)
  std::uint32_t epoch_slot_count = 0;
  bool check_owner = false;  ///< cache_config::check_frame_owners
  /// cache_config::splinter_percent: a coalesced piece whose frame is taken while it holds at
  /// most this share of the slots (at least one page) is splintered instead of dropped; 0: never.
  std::uint32_t splinter_percent = 5;
  /// cache_config::promote_percent: a splintered piece holding more than this share of the
  /// slots in its shared frame is coalesced again.
  std::uint32_t promote_percent = 50;
  /// cache_config::fill_percent as slots: a coalesced piece that reaches this many resident
  /// pages by a demand load gets the rest loaded at once (dense_cache_ref::fill_piece); 0: never.
  std::uint32_t fill_slots = 0;
  /// cache_config::base_first: pieces start on base pages (large entry BASE) and are promoted.
  bool base_first = false;

  [[nodiscard]] BAM_HD bool enabled() const { return geometry.frames != 0; }
  /// The word of `bits` (resident, busy, dirty or abandoned) holding slot `slot` of `frame`.
  [[nodiscard]] BAM_HD std::uint64_t& word(std::uint64_t* bits, std::uint32_t frame,
                                           std::uint32_t slot) const {
    return bits[std::uint64_t{frame} * geometry.words_per_frame + slot / 64];
  }
  [[nodiscard]] BAM_HD static std::uint64_t bit(std::uint32_t slot) {
    return std::uint64_t{1} << (slot % 64);
  }
};
static_assert(std::is_trivially_copyable_v<frame_pool_view>);

/// Bytes of frame-table and epoch memory for a pool of geometry `g` with `epoch_slots` slots.
BAM_HD constexpr std::uint64_t frame_table_bytes(const frame_geometry& g,
                                                 std::uint32_t epoch_slots) {
  const std::uint64_t f = g.frames;
  return f * (8 + 8 + 4 + 4) + 4 * f * g.words_per_frame * 8 + std::uint64_t{epoch_slots} * 8;
}

}  // namespace bam::cache::mosaic
