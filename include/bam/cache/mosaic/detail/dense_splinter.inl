#pragma once
// dense_cache_ref: the adaptive part. A sparse piece is splintered into a shared frame of its
// tenant (splinter, convert_to_shared), promoted back into a frame of its own once dense
// enough (promote), and shared frames are emptied whole (empty_shared). Included by
// dense_cache.hpp.

#include <bam/cache/mosaic/detail/dense_cache.inl>  // the shared helpers

namespace bam::cache::mosaic {

BAM_HD inline void dense_cache_ref::promote(const array_slot& a, std::uint64_t piece,
                                            std::uint64_t e) const {
  atomic_ref<std::uint64_t> entry(a.large_table[piece]);
  std::uint64_t expected = e;
  // seq_cst: the close precedes the grace period below (epochs.hpp); acquire: the splinterer's
  // or previous promoter's publication. Only one thread promotes a piece at a time.
  if (!entry.compare_exchange(expected, entry_bits::closed, order::seq_cst)) return;
  const std::uint32_t shared = entry_frame(e);
  const std::uint64_t deadline_ns = now_ns() + cache_.victim_timeout_ns();
  std::uint32_t frame = 0;
  if (!claim_reserved(a, deadline_ns, frame)) {
    restore_splintered(a, piece, e);
    return;
  }
  const frame_geometry& g = pool_.geometry;
  std::uint32_t moved = 0;
  bool held = false;
  backoff pause;
  // The claim may have evicted the shared frame itself (then our pages were written back).
  while (frame != shared) {
    // acquire: an evictor's write-backs happen before we find the frame retagged or free.
    const std::uint64_t s = atomic_ref<std::uint64_t>(pool_.state[shared]).load(order::acquire);
    if (frame_tag(s) != entry_tag(e) || frame_free(s)) break;  // evicted: pages written back
    if (take_shared(e)) {
      held = true;
      break;
    }
    if (now_ns() > deadline_ns) {
      free_held(a, frame);
      restore_splintered(a, piece, e);
      return;
    }
    pause.pause();
  }
  if (held) {
    // Our readers and our loads in flight must be done with the shared frame's slots before
    // they move; then take every page of ours, so that the moves below cannot fail half-way.
    const std::uint32_t m = meta_lines();
    std::uint32_t taken = m;
    bool ok = quiesce_piece(shared, piece, deadline_ns) &&
              take_piece_slots(shared, piece, deadline_ns, taken);
    auto ours = [&](std::uint32_t k) { return hosts_page_of(shared, k, piece); };
    for (std::uint32_t k = m; k < taken && k < g.lines_per_frame; ++k) {
      if (!ours(k)) continue;
      const std::uint64_t bit = frame_pool_view::bit(k);
      atomic_ref<std::uint64_t> busy(pool_.word(pool_.busy, shared, k));
      if (ok) {
        atomic_ref<std::uint64_t> resident(pool_.word(pool_.resident, shared, k));
        atomic_ref<std::uint64_t> dirty(pool_.word(pool_.dirty, shared, k));
        atomic_ref<std::uint64_t> tag(tag_word(shared, k));
        const std::uint64_t t = tag.load(order::relaxed);  // relaxed: ours, under busy
        const auto j = static_cast<std::uint32_t>((t - 1) & (g.lines_per_frame - 1u));
        copy_line(static_cast<std::uint32_t>(g.line_of(shared, k)),
                  static_cast<std::uint32_t>(g.line_of(frame, j)));
        // relaxed (new frame): it is ours until publish_open publishes it.
        atomic_ref<std::uint64_t>(pool_.word(pool_.resident, frame, j))
            .fetch_or(frame_pool_view::bit(j), order::relaxed);
        if (dirty.load(order::relaxed) & bit) {  // relaxed: the hold ordered the writers
          atomic_ref<std::uint64_t>(pool_.word(pool_.dirty, frame, j))
              .fetch_or(frame_pool_view::bit(j), order::relaxed);
        }
        // relaxed (shared frame): published by the busy release below and by reopen.
        dirty.fetch_and(~bit, order::relaxed);
        resident.fetch_and(~bit, order::relaxed);
        tag.store(0u, order::relaxed);
        atomic_ref<std::uint32_t>(pool_.resident_count[shared]).fetch_sub(1u, order::relaxed);
        ++moved;
      }
      busy.fetch_and(~bit, order::release);  // release: the slot is free for other pieces' loads
    }
    reopen(shared);
    if (!ok) {
      free_held(a, frame);
      restore_splintered(a, piece, e);
      return;
    }
  }
  // relaxed: statistics; published with the frame.
  atomic_ref<std::uint32_t>(pool_.resident_count[frame]).store(moved, order::relaxed);
  // The moved pages are published with the frame (publish_open).
  publish_open(a, piece, frame);
  if (a.stats.shards != nullptr) {
    cache_stats& shard = a.stats.local();
    stats_ref::bump(shard.coalesces, 1);
    stats_ref::bump(shard.promotions, 1);
    stats_ref::bump(shard.bytes_compacted, std::uint64_t{moved} * cache_.line_bytes());
  }
}

BAM_HD inline void dense_cache_ref::restore_splintered(const array_slot& a, std::uint64_t piece,
                                                       std::uint64_t e) const {
  atomic_ref<std::uint64_t> entry(a.large_table[piece]);
  const std::uint32_t shared = entry_frame(e);
  const std::uint64_t give_up_ns = give_up_at(&a);
  backoff pause;
  for (;;) {
    // A pin keeps the shared frame's evictor out while the entry names the frame again.
    if (frame_pin(pool_, e, 1)) {
      entry.store(e, order::release);  // release: nothing new; the piece is readable again
      frame_unpin(pool_, shared, 1);
      return;
    }
    // acquire: an evictor's write-back of our pages before we find the frame retagged or free.
    const std::uint64_t s = atomic_ref<std::uint64_t>(pool_.state[shared]).load(order::acquire);
    if (frame_tag(s) != entry_tag(e) || frame_free(s)) {
      entry.store(entry_bits::empty, order::release);  // release: as in empty_held
      return;
    }
    if (now_ns() > give_up_ns) {
      // The shared frame stayed held: leave the piece closed rather than risk stale data.
      const io_status st = io_status::host(status_source::timeout);
      a.errors->record(error_kind::cache, st, 0, 0, 0, 0, piece << pool_.geometry.frame_shift);
      return;
    }
    pause.pause();
  }
}

BAM_HD inline bool dense_cache_ref::find_shared(std::uint32_t tenant, std::uint32_t exclude,
                                                std::uint64_t& e) const {
  const std::uint64_t want = (std::uint64_t{tenant} << owner_tenant_shift) | shared_piece;
  for (std::uint32_t f = 0; f < pool_.geometry.frames; ++f) {
    if (f == exclude) continue;
    // relaxed (both): a candidate check; the pin below decides.
    const std::uint64_t s = atomic_ref<std::uint64_t>(pool_.state[f]).load(order::relaxed);
    if ((s & (frame_bits::open | frame_bits::held)) != frame_bits::open) continue;
    if ((frame_tag(s) & entry_bits::tenant_mask) != tenant) continue;
    if (atomic_ref<std::uint64_t>(pool_.owner[f]).load(order::relaxed) != want) continue;
    e = make_splintered(f, tenant, frame_gen(s));
    // Our pin keeps the frame from being taken while we add pages and publish an entry.
    if (!frame_pin(pool_, e, 1)) continue;
    // relaxed: the pin's acquire saw the opener's owner, which changes only with no pins.
    if (atomic_ref<std::uint64_t>(pool_.owner[f]).load(order::relaxed) == want) return true;
    frame_unpin(pool_, f, 1);
  }
  return false;
}

BAM_HD inline dense_cache_ref::splinter_result dense_cache_ref::splinter(
    const array_slot& owner, std::uint64_t piece, std::uint32_t frame) const {
  // The frame is held, its entry closed, its readers and loads gone, its pages clean.
  std::uint64_t e = 0;
  if (!find_shared(owner.tenant, frame, e)) {
    return convert_to_shared(owner, piece, frame) ? splinter_result::converted
                                                  : splinter_result::none;
  }
  const std::uint32_t shared = entry_frame(e);
  const frame_geometry& g = pool_.geometry;
  std::uint32_t moved = 0;
  for (std::uint32_t j = 0; j < g.lines_per_frame; ++j) {
    // relaxed: we hold the frame.
    if (!(atomic_ref<std::uint64_t>(pool_.word(pool_.resident, frame, j)).load(order::relaxed) &
          frame_pool_view::bit(j))) {
      continue;
    }
    const std::uint32_t k = hosted_slot(j);
    const std::uint64_t bit = frame_pool_view::bit(k);
    atomic_ref<std::uint64_t> busy(pool_.word(pool_.busy, shared, k));
    atomic_ref<std::uint64_t> resident(pool_.word(pool_.resident, shared, k));
    // seq_cst: as in use_shared; a slot being loaded or moved is no hole.
    if (busy.fetch_or(bit, order::seq_cst) & bit) continue;
    // acquire: the slot's previous occupant was published with its bit.
    if (!(resident.load(order::acquire) & bit)) {
      copy_line(static_cast<std::uint32_t>(g.line_of(frame, j)),
                static_cast<std::uint32_t>(g.line_of(shared, k)));
      // release: with the resident bit below (readers check the tag after the bit).
      atomic_ref<std::uint64_t>(tag_word(shared, k))
          .store((piece << g.frame_shift) + j + 1u, order::release);
      resident.fetch_or(bit, order::release);  // release: the copied page and its tag
      // relaxed: statistics.
      atomic_ref<std::uint32_t>(pool_.resident_count[shared]).fetch_add(1u, order::relaxed);
      ++moved;
    }
    busy.fetch_and(~bit, order::release);  // release: ends our hold of the slot
  }
  if (moved != 0) {
    atomic_ref<std::uint32_t>(pool_.referenced[shared]).store(1u, order::relaxed);  // CLOCK hint
    // release: the moved pages before the entry; published while our pin keeps the shared
    // frame's evictor out, so it will find this piece among the tags.
    atomic_ref<std::uint64_t>(owner.large_table[piece]).store(e, order::release);
    if (owner.stats.shards != nullptr) {
      owner.stats.add(&cache_stats::splinters, 1);
      owner.stats.add(&cache_stats::bytes_compacted, std::uint64_t{moved} * cache_.line_bytes());
    }
  }
  frame_unpin(pool_, shared, 1);
  return moved != 0 ? splinter_result::moved : splinter_result::none;
}

BAM_HD inline bool dense_cache_ref::convert_to_shared(const array_slot& owner, std::uint64_t piece,
                                                      std::uint32_t frame) const {
  const frame_geometry& g = pool_.geometry;
  const std::uint32_t m = meta_lines();
  const std::uint64_t first = std::uint64_t{frame} * g.words_per_frame;
  // relaxed throughout: we hold the frame; the release that opens it publishes all of it.
  auto is_set = [&](std::uint64_t* bits, std::uint32_t k) {
    return (atomic_ref<std::uint64_t>(pool_.word(bits, frame, k)).load(order::relaxed) &
            frame_pool_view::bit(k)) != 0;
  };
  auto set = [&](std::uint64_t* bits, std::uint32_t k, bool on) {
    atomic_ref<std::uint64_t> w(pool_.word(bits, frame, k));
    if (on) {
      w.fetch_or(frame_pool_view::bit(k), order::relaxed);
    } else {
      w.fetch_and(~frame_pool_view::bit(k), order::relaxed);
    }
  };
  // Pages in the tag lines move to their hosted slots (dropped, being clean, when their own
  // page is there); the dirty bits, all clear after the write-back, mark the moved ones.
  std::uint32_t moved = 0;
  for (std::uint32_t j = 0; j < m; ++j) {
    if (!is_set(pool_.resident, j)) continue;
    const std::uint32_t k = hosted_slot(j);
    if (!is_set(pool_.resident, k)) {
      copy_line(static_cast<std::uint32_t>(g.line_of(frame, j)),
                static_cast<std::uint32_t>(g.line_of(frame, k)));
      set(pool_.resident, k, true);
      set(pool_.dirty, k, true);
      ++moved;
    }
    set(pool_.resident, j, false);
  }
  std::uint32_t count = 0;
  for (std::uint32_t k = 0; k < g.lines_per_frame; ++k) {
    const bool here = k >= m && is_set(pool_.resident, k);
    const std::uint32_t j = is_set(pool_.dirty, k) ? k + m - g.lines_per_frame : k;
    atomic_ref<std::uint64_t>(tag_word(frame, k))
        .store(here ? (piece << g.frame_shift) + j + 1u : 0u, order::relaxed);
    count += here ? 1u : 0u;
  }
  for (std::uint32_t w = 0; w < g.words_per_frame; ++w) {
    atomic_ref<std::uint64_t>(pool_.dirty[first + w]).store(0u, order::relaxed);
  }
  if (count == 0) return false;
  atomic_ref<std::uint32_t>(pool_.resident_count[frame]).store(count, order::relaxed);
  atomic_ref<std::uint64_t>(pool_.owner[frame])
      .store((std::uint64_t{owner.tenant} << owner_tenant_shift) | shared_piece, order::relaxed);
  atomic_ref<std::uint32_t>(pool_.referenced[frame]).store(1u, order::relaxed);
  const std::uint64_t s = atomic_ref<std::uint64_t>(pool_.state[frame]).load(order::relaxed);
  const std::uint64_t e = make_splintered(frame, owner.tenant, frame_gen(s) + 1u);
  // Opened under a pin of ours until the entry names it (publish_open says why).
  open_pinned(frame, e);
  // release: the opened frame before the entry can be found splintered.
  atomic_ref<std::uint64_t>(owner.large_table[piece]).store(e, order::release);
  frame_unpin(pool_, frame, 1);
  if (owner.stats.shards != nullptr) {
    owner.stats.add(&cache_stats::splinters, 1);
    owner.stats.add(&cache_stats::bytes_compacted, std::uint64_t{moved} * cache_.line_bytes());
  }
  return true;
}

BAM_HD inline bool dense_cache_ref::empty_shared(std::uint32_t frame, std::uint64_t deadline_ns,
                                                 std::uint32_t keep_count_for) const {
  // relaxed (owner, state, bits, tags): our acquiring hold saw them; only holders change them.
  const std::uint64_t own = atomic_ref<std::uint64_t>(pool_.owner[frame]).load(order::relaxed);
  const auto tenant = static_cast<std::uint32_t>(own >> owner_tenant_shift);
  const array_slot* owner = tenant_array(tenant);
  if (owner == nullptr) {
    retire(frame);
    return true;
  }
  const frame_geometry& g = pool_.geometry;
  const std::uint64_t pieces = (owner->pages + g.lines_per_frame - 1u) >> g.frame_shift;
  const std::uint64_t s = atomic_ref<std::uint64_t>(pool_.state[frame]).load(order::relaxed);
  const std::uint64_t hosted = make_splintered(frame, tenant, frame_gen(s));
  const std::uint64_t mark = closed_by_evictor(frame);
  // Every entry that names this frame has a page here (a piece leaves only by promotion, which
  // takes them all), and none is added while we hold it. A page whose write-back was abandoned
  // is busy and not resident until its late completion is drained: it counts too.
  auto each_piece = [&](auto f) {
    for (std::uint32_t k = meta_lines(); k < g.lines_per_frame; ++k) {
      const std::uint64_t bit = frame_pool_view::bit(k);
      // acquire: a drainer that gives such a slot back sets its resident bit before it clears
      // the busy bit, so seeing the busy bit clear we see the resident bit set.
      const bool busy =
          (atomic_ref<std::uint64_t>(pool_.word(pool_.busy, frame, k)).load(order::acquire) &
           bit) != 0;
      // relaxed: we hold the frame; only such a drainer changes the bit meanwhile.
      if (!busy &&
          !(atomic_ref<std::uint64_t>(pool_.word(pool_.resident, frame, k)).load(order::relaxed) &
            bit)) {
        continue;
      }
      const std::uint64_t t = atomic_ref<std::uint64_t>(tag_word(frame, k)).load(order::relaxed);
      if (t == 0 || ((t - 1) >> g.frame_shift) >= pieces) continue;
      f(atomic_ref<std::uint64_t>(owner->large_table[(t - 1) >> g.frame_shift]));
    }
  };
  // seq_cst: as the close in empty_held (grace period and busy drain follow it).
  each_piece([&](atomic_ref<std::uint64_t> entry) {
    std::uint64_t want = hosted;
    entry.compare_exchange(want, mark, order::seq_cst);
  });
  const bool ok = pinning_.quiesce(deadline_ns) && wait_not_busy(frame, deadline_ns, owner) &&
                  write_back_dirty(*owner, shared_piece, frame);
  // On failure the entries are restored under a pin of ours (publish_open says why).
  if (!ok) reopen_pinned(frame);
  // release: the write-back (or the reopened frame) before the entries change.
  each_piece([&](atomic_ref<std::uint64_t> entry) {
    std::uint64_t want = mark;
    entry.compare_exchange(want, ok ? entry_bits::empty : hosted, order::release);
  });
  if (!ok) {
    frame_unpin(pool_, frame, 1);
    return false;
  }
  retire(frame);
  if (owner->stats.shards != nullptr) owner->stats.add(&cache_stats::evictions, 1);
  if (owner->frames_held != nullptr && tenant != keep_count_for) {
    // relaxed: a count (admit); the frame leaves its tenant.
    atomic_ref<std::uint32_t>(*owner->frames_held).fetch_sub(1u, order::relaxed);
  }
  return true;
}

}  // namespace bam::cache::mosaic
