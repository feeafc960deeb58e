#pragma once
/// @file
/// The packed words of Mosaic's two-level translation (docs/mosaic.md).
///
/// Large entry (64 bits), one per frame-sized piece of an array declared dense:
///
///     63         62        61          40 39       24 23       0
///     | COALESCED | CLOSED | generation   | tenant    | frame    |
///
/// No flag (BASE): the piece holds no frame. With cache_config::base_first its pages are base
/// pages of the base pool, found through the array's page table, and the frame field counts
/// them (loads add one, evictions take one away; a heuristic for promotion, not an exact count);
/// otherwise the word is 0 until the first touch reserves a frame. CLOSED alone: a thread is
/// reserving a frame for the piece, evicting or splintering the piece's frame, or promoting the
/// piece; readers wait for it to change. COALESCED: base page j of the piece lives in slot j of
/// `frame`, reserved for `tenant` (array slot + 1) in `generation`. COALESCED and CLOSED together
/// (SPLINTERED): the piece holds no frame of its own; its resident pages are base pages in the
/// tenant's shared frame `frame` (dense_cache.hpp), which carries the same tag, so readers protect
/// it exactly as a coalesced piece's frame.
///
/// Frame state (64 bits), one per frame:
///
///     63                26 25    24    23       0
///     | tag (gen, tenant) | HELD | OPEN | pins    |
///
/// OPEN: the frame serves the piece whose entry names its tag; readers may use it. HELD: one
/// thread owns the frame exclusively (reserving, evicting, writing back); a frame neither
/// OPEN nor HELD is free. pins: frame pins (pinning_kind::frame_pins); a pin attempt is a
/// fetch_add undone when the returned word is not OPEN or carries another tag, so every change
/// of a frame's flags is a CAS that keeps the pin bits.

#include <cstdint>

#include <bam/platform/config.hpp>

namespace bam::cache::mosaic {

namespace entry_bits {
inline constexpr std::uint64_t frame_mask = (1ull << 24) - 1;
inline constexpr unsigned tenant_shift = 24;
inline constexpr std::uint64_t tenant_mask = (1ull << 16) - 1;
inline constexpr unsigned gen_shift = 40;
inline constexpr std::uint64_t gen_mask = (1ull << 22) - 1;
inline constexpr std::uint64_t closed = 1ull << 62;
inline constexpr std::uint64_t coalesced = 1ull << 63;
inline constexpr std::uint64_t splintered = coalesced | closed;
inline constexpr std::uint64_t empty = 0;
inline constexpr std::uint64_t max_frames = frame_mask + 1;
}  // namespace entry_bits

/// A BASE entry holding `count` base pages (base_first).
BAM_HD constexpr std::uint64_t make_base(std::uint32_t count) {
  return std::uint64_t{count} & entry_bits::frame_mask;
}
/// True for a piece with no frame of its own nor a shared one, and no thread changing that.
BAM_HD constexpr bool entry_base(std::uint64_t e) { return (e & entry_bits::splintered) == 0; }
/// The base pages a BASE entry counts.
BAM_HD constexpr std::uint32_t entry_base_count(std::uint64_t e) {
  return static_cast<std::uint32_t>(e & entry_bits::frame_mask);
}

BAM_HD constexpr std::uint64_t make_entry(std::uint32_t frame, std::uint32_t tenant,
                                          std::uint32_t gen) {
  return entry_bits::coalesced |
         ((std::uint64_t{gen} & entry_bits::gen_mask) << entry_bits::gen_shift) |
         ((std::uint64_t{tenant} & entry_bits::tenant_mask) << entry_bits::tenant_shift) |
         (std::uint64_t{frame} & entry_bits::frame_mask);
}
/// True when readers may protect the frame `e` names: COALESCED or SPLINTERED.
BAM_HD constexpr bool entry_coalesced(std::uint64_t e) { return (e & entry_bits::coalesced) != 0; }
BAM_HD constexpr bool entry_splintered(std::uint64_t e) {
  return (e & entry_bits::splintered) == entry_bits::splintered;
}
/// A splintered piece's entry: its pages are base pages of shared frame `frame`.
BAM_HD constexpr std::uint64_t make_splintered(std::uint32_t frame, std::uint32_t tenant,
                                               std::uint32_t gen) {
  return make_entry(frame, tenant, gen) | entry_bits::closed;
}
/// The CLOSED value an evictor of shared frame `frame` gives the entries it closes, so that it
/// reopens or empties only those (a promoter's plain CLOSED is left alone).
BAM_HD constexpr std::uint64_t closed_by_evictor(std::uint32_t frame) {
  return entry_bits::closed | (entry_bits::gen_mask << entry_bits::gen_shift) |
         (std::uint64_t{frame} & entry_bits::frame_mask);
}
BAM_HD constexpr std::uint32_t entry_frame(std::uint64_t e) {
  return static_cast<std::uint32_t>(e & entry_bits::frame_mask);
}
BAM_HD constexpr std::uint32_t entry_tenant(std::uint64_t e) {
  return static_cast<std::uint32_t>((e >> entry_bits::tenant_shift) & entry_bits::tenant_mask);
}
BAM_HD constexpr std::uint32_t entry_gen(std::uint64_t e) {
  return static_cast<std::uint32_t>((e >> entry_bits::gen_shift) & entry_bits::gen_mask);
}
/// The tag a frame carries while it serves the reservation an entry names.
BAM_HD constexpr std::uint64_t entry_tag(std::uint64_t e) {
  return (std::uint64_t{entry_gen(e)} << 16) | entry_tenant(e);
}

namespace frame_bits {
inline constexpr std::uint64_t pin_mask = (1ull << 24) - 1;
inline constexpr std::uint64_t open = 1ull << 24;
inline constexpr std::uint64_t held = 1ull << 25;
inline constexpr unsigned tag_shift = 26;
}  // namespace frame_bits

BAM_HD constexpr std::uint64_t frame_pins(std::uint64_t s) { return s & frame_bits::pin_mask; }
BAM_HD constexpr std::uint64_t frame_tag(std::uint64_t s) { return s >> frame_bits::tag_shift; }
BAM_HD constexpr std::uint32_t frame_gen(std::uint64_t s) {
  return static_cast<std::uint32_t>((frame_tag(s) >> 16) & entry_bits::gen_mask);
}
BAM_HD constexpr bool frame_free(std::uint64_t s) {
  return (s & (frame_bits::open | frame_bits::held)) == 0;
}
/// True when a pin taken on a frame in state `s` is a usable pin for entry `e`.
BAM_HD constexpr bool frame_pin_usable(std::uint64_t s, std::uint64_t e) {
  return (s & (frame_bits::open | frame_bits::held)) == frame_bits::open &&
         frame_tag(s) == entry_tag(e);
}
/// `s` in the next generation, pins and flags kept: an emptied frame names no entry's tag, so a
/// waiter holding an old entry sees it retagged (its pages written back) while it is still HELD.
BAM_HD constexpr std::uint64_t frame_retagged(std::uint64_t s) {
  const std::uint64_t gen = (frame_gen(s) + 1u) & entry_bits::gen_mask;
  const std::uint64_t tag = (gen << 16) | (frame_tag(s) & entry_bits::tenant_mask);
  return (s & ((1ull << frame_bits::tag_shift) - 1u)) | (tag << frame_bits::tag_shift);
}
/// `s` opened for the reservation `e` names, keeping the pin bits.
BAM_HD constexpr std::uint64_t frame_opened(std::uint64_t s, std::uint64_t e) {
  return frame_pins(s) | frame_bits::open | (entry_tag(e) << frame_bits::tag_shift);
}

static_assert(entry_base(make_base(5)) && entry_base_count(make_base(5)) == 5);
static_assert(entry_base(entry_bits::empty) && !entry_base(entry_bits::closed));
static_assert(!entry_base(make_entry(1, 2, 3)) && !entry_base(closed_by_evictor(1)));
static_assert(entry_frame(make_entry(12345, 7, 99)) == 12345);
static_assert(entry_tenant(make_entry(12345, 7, 99)) == 7);
static_assert(entry_gen(make_entry(12345, 7, 99)) == 99);
static_assert(entry_coalesced(make_entry(0, 0, 0)) && !entry_coalesced(entry_bits::closed));
static_assert(frame_pin_usable(frame_opened(3, make_entry(1, 2, 3)), make_entry(1, 2, 3)));
static_assert(!frame_pin_usable(frame_opened(3, make_entry(1, 2, 3)), make_entry(1, 2, 4)));
static_assert(!frame_pin_usable(frame_opened(0, make_entry(1, 2, 3)) | frame_bits::held,
                                make_entry(1, 2, 3)));
static_assert(frame_pins(frame_opened(5, make_entry(1, 2, 3))) == 5);
static_assert(entry_splintered(make_splintered(4, 5, 6)) && !entry_splintered(make_entry(4, 5, 6)));
static_assert(entry_coalesced(make_splintered(4, 5, 6)));
static_assert(entry_tag(make_splintered(4, 5, 6)) == entry_tag(make_entry(4, 5, 6)));
static_assert(!entry_coalesced(closed_by_evictor(0)) && closed_by_evictor(0) != entry_bits::closed);
static_assert(frame_gen(frame_retagged(frame_opened(5, make_entry(1, 2, 3)))) == 4);
static_assert(frame_tag(frame_retagged(frame_opened(5, make_entry(1, 2, 3)))) ==
              entry_tag(make_entry(1, 2, 4)));
static_assert(frame_pins(frame_retagged(frame_opened(5, make_entry(1, 2, 3)) | frame_bits::held)) ==
              5);
static_assert(frame_gen(frame_opened(5, make_entry(1, 2, entry_bits::gen_mask))) ==
              entry_bits::gen_mask);

}  // namespace bam::cache::mosaic
