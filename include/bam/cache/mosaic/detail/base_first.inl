#pragma once
// Base first (cache_config::base_first, docs/mosaic.md "Base first"): a dense array's piece
// starts on base pages of the base pool, found through the array's page table, and is
// promoted into a frame of its own once it holds enough of them. Included by dense_cache.hpp.
//
// Who decides what: the large entry says where a piece lives (BASE, CLOSED, COALESCED); each
// page entry and line state word decides, page by page, between a promoter and the base path.
// A promoter closes the entry, then blocks each page entry (no load can start) or takes the
// page's line BUSY (no pin can be taken, and it waits for the pins there are), so a reader
// that read BASE before the close either pinned the line first (and the promoter waits for
// it) or finds it BUSY or blocked and looks at the large entry again. Blocked page entries
// stay blocked while the piece has a frame; the evictor of that frame unblocks them after its
// write-back and before the entry is BASE again.

#include <cstdint>

#include <bam/cache/line_state.hpp>
#include <bam/cache/mosaic/dense_cache.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/backoff.hpp>
#include <bam/platform/clock.hpp>

namespace bam::cache::mosaic {

BAM_HD inline std::uint32_t dense_cache_ref::base_promote_slots() const {
  const std::uint32_t n = pool_.geometry.lines_per_frame * pool_.promote_percent / 100u;
  return n == 0 ? 1u : n;
}

BAM_HD inline std::uint64_t dense_cache_ref::piece_end(const array_slot& a,
                                                       std::uint64_t piece) const {
  const std::uint64_t end = (piece + 1u) << pool_.geometry.frame_shift;
  return end < a.pages ? end : a.pages;
}

BAM_HD inline bool dense_cache_ref::claim_for_promotion(const array_slot& a, std::uint32_t pages,
                                                        bool free_only,
                                                        std::uint32_t& frame) const {
  // A tenant at its quota promotes only over one of its own frames.
  const bool admitted = admit(a);
  const std::uint64_t deadline_ns = now_ns() + cache_.victim_timeout_ns();
  // One turn of the frame CLOCK at most: a promotion is worth a free frame or a sparser one,
  // not a wait (the piece is served from the base pool meanwhile).
  const std::uint32_t frames = pool_.geometry.frames;
  // An early try looks at one chunk for a free frame (no frame holds fewer than 0 pages).
  const std::uint32_t steps = free_only ? 1u : frames / (frames < 8 ? frames : 8u) + 1u;
  for (std::uint32_t i = 0; i < steps; ++i) {
    if (claim_frame(a, !admitted, frame, deadline_ns, free_only ? 0u : pages)) return true;
  }
  if (admitted) give_back_admission(a);
  return false;
}

BAM_HD inline bool dense_cache_ref::take_base_pages(const array_slot& a, std::uint64_t piece,
                                                    std::uint64_t deadline_ns) const {
  const std::uint64_t first = piece << pool_.geometry.frame_shift;
  const std::uint64_t end = piece_end(a, piece);
  // First every page entry blocked or its line BUSY, so that no new pin or load starts on
  // the piece; then the pins already taken drain (one access each). Lines of a piece read
  // hard are never seen without pins, so taking them only with none would never finish.
  for (std::uint64_t p = first; p < end; ++p) {
    atomic_ref<std::uint32_t> pe(a.page_table[p]);
    backoff pause;
    for (;;) {
      // acquire: a loader's line (state and data) was published with its entry.
      std::uint32_t v = pe.load(order::acquire);
      if (v == page_bits::blocked) break;
      if (v == page_bits::unmapped || page_failed(v)) {
        // acquire: as above; an evictor's write-back was released with its unmapped store.
        // A failed page's failure is forgotten: its frame's demand load meets it again.
        if (pe.compare_exchange(v, page_bits::blocked, order::acquire)) break;
        continue;
      }
      if (page_mapped(v) && cache_.try_take_line(page_line(v), a.tag_base + p + 1u)) break;
      // Loading, or being evicted by the base CLOCK (whose entry store comes next).
      if (now_ns() > deadline_ns) {
        give_back_base_pages(a, first, p);
        return false;
      }
      pause.pause();
    }
  }
  for (std::uint64_t p = first; p < end; ++p) {
    // relaxed: ours since we took it.
    const std::uint32_t v = atomic_ref<std::uint32_t>(a.page_table[p]).load(order::relaxed);
    if (page_mapped(v) && !cache_.drain_line(page_line(v), deadline_ns)) {
      give_back_base_pages(a, first, end);
      return false;
    }
  }
  return true;
}

BAM_HD inline void dense_cache_ref::give_back_base_pages(const array_slot& a, std::uint64_t first,
                                                         std::uint64_t end) const {
  for (std::uint64_t p = first; p < end; ++p) {
    atomic_ref<std::uint32_t> pe(a.page_table[p]);
    const std::uint32_t v = pe.load(order::relaxed);  // relaxed: ours since we took it
    // release: nothing new; the page is loadable again (the entry's release store follows).
    if (v == page_bits::blocked) pe.store(page_bits::unmapped, order::release);
    if (page_mapped(v)) cache_.end_take(page_line(v), false);
  }
}

BAM_HD inline std::uint32_t dense_cache_ref::move_base_pages(const array_slot& a,
                                                             std::uint64_t piece,
                                                             std::uint32_t frame) const {
  const frame_geometry& g = pool_.geometry;
  const std::uint64_t first = piece << g.frame_shift;
  const std::uint64_t end = piece_end(a, piece);
  std::uint32_t moved = 0;
  for (std::uint64_t p = first; p < end; ++p) {
    atomic_ref<std::uint32_t> pe(a.page_table[p]);
    const std::uint32_t v = pe.load(order::relaxed);  // relaxed: ours since we took it
    if (!page_mapped(v)) continue;
    const std::uint32_t line = page_line(v);
    const auto slot = static_cast<std::uint32_t>(p - first);
    copy_line(line, static_cast<std::uint32_t>(g.line_of(frame, slot)));
    const std::uint64_t bit = frame_pool_view::bit(slot);
    // relaxed: we hold the frame; the release that opens it publishes the bits and the data.
    atomic_ref<std::uint64_t>(pool_.word(pool_.resident, frame, slot))
        .fetch_or(bit, order::relaxed);
    if (cache_.line_state(line) & line_bits::dirty) {  // a dirty page stays dirty, in the frame
      atomic_ref<std::uint64_t>(pool_.word(pool_.dirty, frame, slot)).fetch_or(bit, order::relaxed);
    }
    // relaxed: a reader that finds it blocked reads the large entry again (acquire there).
    pe.store(page_bits::blocked, order::relaxed);
    cache_.end_take(line, true);
    ++moved;
  }
  // relaxed: as the bits above.
  atomic_ref<std::uint32_t>(pool_.resident_count[frame]).store(moved, order::relaxed);
  return moved;
}

BAM_HD inline void dense_cache_ref::unblock_base_pages(const array_slot& a,
                                                       std::uint64_t piece) const {
  const std::uint64_t end = piece_end(a, piece);
  for (std::uint64_t p = piece << pool_.geometry.frame_shift; p < end; ++p) {
    // release: the frame's write-back before a reader that read an old BASE entry loads the
    // page from storage again.
    atomic_ref<std::uint32_t>(a.page_table[p]).store(page_bits::unmapped, order::release);
  }
}

BAM_HD inline bool dense_cache_ref::promotion_due(std::uint64_t e, bool& early) const {
  const std::uint32_t n = entry_base_count(e);
  early = n <= base_promote_slots();
  return !early || (pool_.fill_slots != 0 && n >= pool_.fill_slots);
}

BAM_HD inline bool dense_cache_ref::promote_base(const array_slot& a, std::uint64_t piece,
                                                 std::uint64_t e, bool early) const {
  atomic_ref<std::uint64_t> entry(a.large_table[piece]);
  std::uint64_t expected = e;
  // acquire: the page entries an evictor unblocked (released with its BASE store).
  if (!entry.compare_exchange(expected, entry_bits::closed, order::acquire)) return true;
  const std::uint32_t count = entry_base_count(e);
  auto give_up = [&] {
    // release: the page entries and lines given back before the piece is BASE again.
    entry.store(make_base(count / 2u), order::release);
    return false;
  };
  std::uint32_t frame = 0;
  if (!claim_for_promotion(a, count, early, frame)) return give_up();
  // Pins of base lines are held for one access, loads for one command: a short bound, since
  // a failed try only leaves the piece on base pages.
  if (!take_base_pages(a, piece, now_ns() + 100 * victim_drain_ns)) {
    free_held(a, frame);
    return give_up();
  }
  const std::uint32_t moved = move_base_pages(a, piece, frame);
  const std::uint64_t opened = publish_open(a, piece, frame);
  if (a.stats.shards != nullptr) {
    a.stats.add(&cache_stats::coalesces, 1);
    a.stats.add(&cache_stats::promotions, 1);
    a.stats.add(&cache_stats::bytes_compacted, std::uint64_t{moved} * cache_.line_bytes());
  }
  // The piece is dense: with fills on, the rest of it comes in large commands now (its own
  // demand loads would never bring it to the fill threshold, which it is past).
  if (pool_.fill_slots != 0 && moved >= pool_.fill_slots) fill_piece(a, piece, opened);
  return true;
}

}  // namespace bam::cache::mosaic
