#pragma once
// Contiguity-aware compaction (CAC) for dense_cache.hpp: a splintered piece moves from one
// shared frame of its tenant into another. Each memory order says what it publishes or waits for.
//
// One step (move_piece), with `from` and `to` the piece's entry naming each shared frame:
//   1. take the source HELD at once (take_shared; new pins fail), then CAS the entry from `from`
//      to CLOSED: readers of this piece wait, readers of the source's other pieces retry;
//   2. drain the source's pins, wait for a grace period (epochs) and for the piece's loads in
//      flight, take the busy bits of its slots (quiesce_piece, take_piece_slots, as promote);
//   3. pin the destination (its evictor needs no pins, so it stays out until step 5) and take
//      the busy bits of the same hosted slots there, each of which must be free;
//   4. copy each page with its tag and dirty bit, publish its resident bit there (release),
//      clear the source slot;
//   5. store `to` in the entry (release) while still pinning the destination, unpin;
//   6. a source left with no pages and no loads is retired and freed while still HELD (the
//      grace period of step 2 was the last one it needs); otherwise it is reopened.
// Any failure before step 4 republishes `from` under a pin of the reopened source (abandon_move)
// and the step reports retry. The mover never waits while it pins a frame.

#include <bam/cache/mosaic/detail/dense_cache.inl>  // the helpers a step shares with promote

namespace bam::cache::mosaic {

BAM_HD inline std::uint32_t dense_cache_ref::free_frames() const {
  std::uint32_t n = 0;
  for (std::uint32_t f = 0; f < pool_.geometry.frames; ++f) {
    // relaxed: a hint for when to compact.
    if (frame_free(atomic_ref<std::uint64_t>(pool_.state[f]).load(order::relaxed))) ++n;
  }
  return n;
}

BAM_HD inline bool dense_cache_ref::pick_compaction(const array_slot& a, std::uint64_t& from,
                                                    std::uint64_t& to) const {
  const std::uint64_t want = (std::uint64_t{a.tenant} << owner_tenant_shift) | shared_piece;
  // The tenant's open shared frames with their page counts.
  // relaxed (state, owner, count): candidates; the hold and the pins of move_piece decide.
  auto shared_count = [&](std::uint32_t f, std::uint64_t& s) -> std::uint32_t {
    s = atomic_ref<std::uint64_t>(pool_.state[f]).load(order::relaxed);
    if ((s & (frame_bits::open | frame_bits::held)) != frame_bits::open) return ~0u;
    if ((frame_tag(s) & entry_bits::tenant_mask) != a.tenant) return ~0u;
    if (atomic_ref<std::uint64_t>(pool_.owner[f]).load(order::relaxed) != want) return ~0u;
    return atomic_ref<std::uint32_t>(pool_.resident_count[f]).load(order::relaxed);
  };
  // The sparsest shared frame empties into the fullest other one.
  std::uint32_t src = ~0u, dst = ~0u, fewest = ~0u, most = 0;
  std::uint64_t src_state = 0, dst_state = 0, s = 0;
  for (std::uint32_t f = 0; f < pool_.geometry.frames; ++f) {
    const std::uint32_t n = shared_count(f, s);
    if (n != ~0u && n < fewest) {
      src = f;
      fewest = n;
      src_state = s;
    }
  }
  for (std::uint32_t f = 0; src != ~0u && f < pool_.geometry.frames; ++f) {
    const std::uint32_t n = f == src ? ~0u : shared_count(f, s);
    if (n != ~0u && (dst == ~0u || n > most)) {
      dst = f;
      most = n;
      dst_state = s;
    }
  }
  if (dst == ~0u) return false;
  // Only when every page of the source could fit: otherwise no frame would be freed.
  if (fewest + most + meta_lines() > pool_.geometry.lines_per_frame) return false;
  from = make_splintered(src, a.tenant, frame_gen(src_state));
  to = make_splintered(dst, a.tenant, frame_gen(dst_state));
  return true;
}

BAM_HD inline bool dense_cache_ref::fits(std::uint32_t from, std::uint32_t to,
                                         std::uint64_t piece) const {
  for (std::uint32_t k = meta_lines(); k < pool_.geometry.lines_per_frame; ++k) {
    if (!hosts_page_of(from, k, piece)) continue;
    const std::uint64_t bit = frame_pool_view::bit(k);
    // relaxed: a candidate check; take_targets decides under the busy bits.
    if ((atomic_ref<std::uint64_t>(pool_.word(pool_.resident, to, k)).load(order::relaxed) |
         atomic_ref<std::uint64_t>(pool_.word(pool_.busy, to, k)).load(order::relaxed)) &
        bit) {
      return false;
    }
  }
  return true;
}

BAM_HD inline bool dense_cache_ref::pick_piece(const array_slot& a, std::uint64_t from,
                                               std::uint64_t to, std::uint64_t& piece) const {
  const frame_geometry& g = pool_.geometry;
  const std::uint64_t pieces = (a.pages + g.lines_per_frame - 1u) >> g.frame_shift;
  // A few candidates per step: a scan of the source's tags each.
  constexpr std::uint32_t max_candidates = 8;
  std::uint32_t tried = 0;
  for (std::uint32_t k = meta_lines(); k < g.lines_per_frame && tried < max_candidates; ++k) {
    // relaxed (bit, tag, entry): candidates; move_piece checks them again under its hold.
    if (!(atomic_ref<std::uint64_t>(pool_.word(pool_.resident, entry_frame(from), k))
              .load(order::relaxed) &
          frame_pool_view::bit(k))) {
      continue;
    }
    const std::uint64_t t =
        atomic_ref<std::uint64_t>(tag_word(entry_frame(from), k)).load(order::relaxed);
    if (t == 0 || ((t - 1) >> g.frame_shift) >= pieces) continue;
    const std::uint64_t p = (t - 1) >> g.frame_shift;
    if (atomic_ref<std::uint64_t>(a.large_table[p]).load(order::relaxed) != from) continue;
    ++tried;
    if (fits(entry_frame(from), entry_frame(to), p)) {
      piece = p;
      return true;
    }
  }
  return false;
}

BAM_HD inline void dense_cache_ref::release_slots(std::uint32_t from, std::uint32_t frame,
                                                  std::uint64_t piece, std::uint32_t end) const {
  for (std::uint32_t k = meta_lines(); k < end; ++k) {
    if (!hosts_page_of(from, k, piece)) continue;
    // release: nothing was published there; ends our hold of the slot.
    atomic_ref<std::uint64_t>(pool_.word(pool_.busy, frame, k))
        .fetch_and(~frame_pool_view::bit(k), order::release);
  }
}

BAM_HD inline bool dense_cache_ref::take_targets(std::uint32_t from, std::uint32_t to,
                                                 std::uint64_t piece) const {
  std::uint32_t pages = 0;
  for (std::uint32_t k = meta_lines(); k < pool_.geometry.lines_per_frame; ++k) {
    if (!hosts_page_of(from, k, piece)) continue;
    const std::uint64_t bit = frame_pool_view::bit(k);
    atomic_ref<std::uint64_t> busy(pool_.word(pool_.busy, to, k));
    // seq_cst: as in use_shared (the destination's evictor, kept out by our pin, drains busy
    // bits); acquire: the slot's previous holder finished with it.
    const bool taken = !(busy.fetch_or(bit, order::seq_cst) & bit);
    // acquire: a set bit is another page, published with it.
    const bool free =
        taken &&
        !(atomic_ref<std::uint64_t>(pool_.word(pool_.resident, to, k)).load(order::acquire) & bit);
    if (!free) {
      if (taken) busy.fetch_and(~bit, order::release);  // release: nothing new; ends our hold
      release_slots(from, to, piece, k);
      return false;
    }
    ++pages;
  }
  // A piece whose entry names a shared frame has a page there; none would break that rule.
  if (pages == 0) release_slots(from, to, piece, pool_.geometry.lines_per_frame);
  return pages != 0;
}

BAM_HD inline std::uint32_t dense_cache_ref::move_pages(std::uint32_t from, std::uint32_t to,
                                                        std::uint64_t piece) const {
  const frame_geometry& g = pool_.geometry;
  std::uint32_t moved = 0;
  for (std::uint32_t k = meta_lines(); k < g.lines_per_frame; ++k) {
    if (!hosts_page_of(from, k, piece)) continue;
    const std::uint64_t bit = frame_pool_view::bit(k);
    atomic_ref<std::uint64_t> src_tag(tag_word(from, k));
    atomic_ref<std::uint64_t> src_dirty(pool_.word(pool_.dirty, from, k));
    const std::uint64_t t = src_tag.load(order::relaxed);  // relaxed: ours, under busy
    copy_line(static_cast<std::uint32_t>(g.line_of(from, k)),
              static_cast<std::uint32_t>(g.line_of(to, k)));
    // release: with the resident bit below (readers check the tag after the bit, holds()).
    atomic_ref<std::uint64_t>(tag_word(to, k)).store(t, order::release);
    if (src_dirty.load(order::relaxed) & bit) {  // relaxed: the hold ordered the writers
      // relaxed: read by the destination's evictor after its acquiring hold, which follows
      // our unpin (release).
      atomic_ref<std::uint64_t>(pool_.word(pool_.dirty, to, k)).fetch_or(bit, order::relaxed);
    }
    // release: the copied page and its tag before the bit.
    atomic_ref<std::uint64_t>(pool_.word(pool_.resident, to, k)).fetch_or(bit, order::release);
    // relaxed (counts): statistics.
    atomic_ref<std::uint32_t>(pool_.resident_count[to]).fetch_add(1u, order::relaxed);
    // relaxed (source): we hold it; published by the busy release below and by the release
    // that reopens or frees it.
    src_dirty.fetch_and(~bit, order::relaxed);
    atomic_ref<std::uint64_t>(pool_.word(pool_.resident, from, k)).fetch_and(~bit, order::relaxed);
    src_tag.store(0u, order::relaxed);
    atomic_ref<std::uint32_t>(pool_.resident_count[from]).fetch_sub(1u, order::relaxed);
    // release: the destination slot's page, tag and bits; ends our hold of it.
    atomic_ref<std::uint64_t>(pool_.word(pool_.busy, to, k)).fetch_and(~bit, order::release);
    // release: the source slot is free for other pieces' loads.
    atomic_ref<std::uint64_t>(pool_.word(pool_.busy, from, k)).fetch_and(~bit, order::release);
    ++moved;
  }
  return moved;
}

BAM_HD inline void dense_cache_ref::abandon_move(const array_slot& a, std::uint64_t piece,
                                                 std::uint64_t from) const {
  const std::uint32_t src = entry_frame(from);
  // The source is ours and still carries `from`'s tag: reopen it and republish the piece
  // under a pin of ours (publish_open says why).
  reopen_pinned(src);
  // release: nothing new; the piece is readable again.
  atomic_ref<std::uint64_t>(a.large_table[piece]).store(from, order::release);
  frame_unpin(pool_, src, 1);
}

BAM_HD inline bool dense_cache_ref::free_if_empty(const array_slot& a, std::uint32_t frame) const {
  for (std::uint32_t w = 0; w < pool_.geometry.words_per_frame; ++w) {
    const std::uint64_t at = std::uint64_t{frame} * pool_.geometry.words_per_frame + w;
    // seq_cst: as in wait_not_busy; a slot being loaded (or held by a command that may still
    // run, until its late completion is drained) stays. Read first: the drainer of such a
    // command sets the slot's resident bit before it clears the busy bit (and seq_cst
    // acquires that).
    if (atomic_ref<std::uint64_t>(pool_.busy[at]).load(order::seq_cst) != 0) return false;
    // relaxed: we hold the frame; a piece named here would have a resident page.
    if (atomic_ref<std::uint64_t>(pool_.resident[at]).load(order::relaxed) != 0) return false;
  }
  // No entry names the frame and its last pieces' readers left in the grace period of the
  // move: retire it (new tag, cleared bits and owner) and free it.
  retire(frame);
  free_held(a, frame);  // the frame leaves its tenant
  return true;
}

BAM_HD inline dense_cache_ref::compact_result dense_cache_ref::move_piece(const array_slot& a,
                                                                          std::uint64_t piece,
                                                                          std::uint64_t from,
                                                                          std::uint64_t to) const {
  const std::uint32_t src = entry_frame(from), dst = entry_frame(to);
  // Hold the source first, so that a piece we cannot move is never closed.
  if (!take_shared(from)) return compact_result::retry;
  atomic_ref<std::uint64_t> entry(a.large_table[piece]);
  std::uint64_t expected = from;
  // seq_cst: the close precedes the pin drain and grace period below (as in promote); acquire:
  // the splinterer's publication. One mover or promoter per piece.
  if (!entry.compare_exchange(expected, entry_bits::closed, order::seq_cst)) {
    reopen(src);
    return compact_result::retry;
  }
  const std::uint64_t deadline_ns = now_ns() + cache_.victim_timeout_ns();
  std::uint32_t taken = meta_lines();
  const bool quiet =
      quiesce_piece(src, piece, deadline_ns) && take_piece_slots(src, piece, deadline_ns, taken);
  auto give_up = [&]() {
    release_slots(src, src, piece, taken);  // nothing moved
    abandon_move(a, piece, from);
    return compact_result::retry;
  };
  if (!quiet) return give_up();
  // Our pin keeps the destination's evictor out until the entry names it (as in splinter).
  if (!frame_pin(pool_, to, 1)) return give_up();
  if (!take_targets(src, dst, piece)) {
    frame_unpin(pool_, dst, 1);
    return give_up();
  }
  const std::uint32_t moved = move_pages(src, dst, piece);
  // relaxed: a CLOCK hint.
  atomic_ref<std::uint32_t>(pool_.referenced[dst]).store(1u, order::relaxed);
  // release: the moved pages, tags and bits before the piece can be found in the destination;
  // stored while our pin keeps its evictor out, so that the evictor finds the piece there.
  entry.store(to, order::release);
  frame_unpin(pool_, dst, 1);
  if (a.stats.shards != nullptr) {
    a.stats.add(&cache_stats::bytes_compacted, std::uint64_t{moved} * cache_.line_bytes());
  }
  if (free_if_empty(a, src)) return compact_result::freed;
  reopen(src);
  return compact_result::moved;
}

BAM_HD inline dense_cache_ref::compact_result dense_cache_ref::compact_step(
    const array_slot& a) const {
  if (!splinters() || a.large_table == nullptr || a.pages == 0) return compact_result::idle;
  std::uint64_t from = 0, to = 0, piece = 0;
  if (!pick_compaction(a, from, to)) return compact_result::idle;
  // A pin keeps the source a shared frame of the tenant while we read its tags (once it is
  // evicted, its first lines are another piece's data, written by loads).
  if (!frame_pin(pool_, from, 1)) return compact_result::retry;
  const bool picked = pick_piece(a, from, to, piece);
  frame_unpin(pool_, entry_frame(from), 1);
  return picked ? move_piece(a, piece, from, to) : compact_result::idle;
}

}  // namespace bam::cache::mosaic
