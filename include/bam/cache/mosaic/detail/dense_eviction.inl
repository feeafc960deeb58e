#pragma once
// dense_cache_ref: eviction and write-back. Frames are claimed for a reservation by CLOCK
// (claim_frame), drained of pins and busy slots, their dirty pages written back
// (write_back_dirty) and emptied (empty_held); single pages and frames are dropped and
// flushed (drop_page, drop_frame, flush_frame). Included by dense_cache.hpp.

#include <bam/cache/mosaic/detail/dense_cache.inl>  // the shared helpers

namespace bam::cache::mosaic {

BAM_HD inline bool dense_cache_ref::admit(const array_slot& a) const {
  if (a.frames_held == nullptr) return true;
  atomic_ref<std::uint32_t> held(*a.frames_held);
  // relaxed: a count; admission publishes nothing (the frame's hold and open do).
  if (a.frame_quota == 0) {
    held.fetch_add(1u, order::relaxed);
    return true;
  }
  std::uint32_t cur = held.load(order::relaxed);  // relaxed: as above
  while (cur < a.frame_quota) {
    if (held.compare_exchange(cur, cur + 1u, order::relaxed)) return true;  // relaxed: a count
  }
  return false;
}

BAM_HD inline void dense_cache_ref::give_back_admission(const array_slot& a) const {
  // relaxed: a count (admit).
  if (a.frames_held != nullptr) {
    atomic_ref<std::uint32_t>(*a.frames_held).fetch_sub(1u, order::relaxed);
  }
}

BAM_HD inline bool dense_cache_ref::try_hold(std::uint32_t frame, std::uint64_t& s,
                                             bool want_open) const {
  if ((s & frame_bits::held) || frame_pins(s) != 0) return false;
  if (want_open != ((s & frame_bits::open) != 0)) return false;
  // acquire: the last readers' accesses (released by their unpins, or by their epoch exits
  // once quiesced) and the loaders' published slots happen before we empty the frame.
  return atomic_ref<std::uint64_t>(pool_.state[frame])
      .compare_exchange(s, (s & ~frame_bits::open) | frame_bits::held, order::acquire);
}

BAM_HD inline bool dense_cache_ref::hold_and_drain(std::uint32_t frame, std::uint64_t& s,
                                                   std::uint64_t deadline_ns,
                                                   std::uint64_t& closed) const {
  closed = 0;
  if ((s & frame_bits::held) || !(s & frame_bits::open)) return false;
  atomic_ref<std::uint64_t> st(pool_.state[frame]);
  // acquire: the owner word, stored before the release that opened the frame. New pins fail
  // from here on (frame_pin); wait_unpinned acquires the readers' unpins. Pins are kept: their
  // readers still use the frame.
  if (!st.compare_exchange(s, (s & ~frame_bits::open) | frame_bits::held, order::acquire)) {
    return false;
  }
  const std::uint64_t own = atomic_ref<std::uint64_t>(pool_.owner[frame]).load(order::relaxed);
  const std::uint64_t piece = own & shared_piece;
  const array_slot* owner =
      piece == shared_piece
          ? nullptr
          : tenant_slot(static_cast<std::uint32_t>(own >> owner_tenant_shift), piece);
  if (owner != nullptr) {
    atomic_ref<std::uint64_t> entry(owner->large_table[piece]);
    // seq_cst: as empty_held's close, which this one stands for.
    const std::uint64_t old = entry.exchange(entry_bits::closed, order::seq_cst);
    if (entry_coalesced(old) && !entry_splintered(old) && entry_frame(old) == frame) {
      closed = old;
    } else if (old != entry_bits::closed) {
      // Not ours to close: give it back unless it changed meanwhile (release: as it was).
      std::uint64_t expected = entry_bits::closed;
      (void)entry.compare_exchange(expected, old, order::release);
    }
  }
  if (wait_unpinned(frame, deadline_ns)) return true;
  if (closed != 0) {
    // Reopened under a pin of ours before the entry names the frame again (publish_open).
    reopen_pinned(frame);
    // release: the reopened frame before the entry.
    atomic_ref<std::uint64_t>(owner->large_table[piece]).store(closed, order::release);
    frame_unpin(pool_, frame, 1);
  } else {
    reopen(frame);
  }
  closed = 0;
  return false;
}

BAM_HD inline void dense_cache_ref::reopen(std::uint32_t frame) const {
  // release: what we did while holding (write-backs, cleared bits) before the next pin.
  detail::update_frame(
      pool_.state[frame],
      [](std::uint64_t cur) { return (cur & ~frame_bits::held) | frame_bits::open; },
      order::release);
}

BAM_HD BAM_NOINLINE inline bool dense_cache_ref::claim_frame(const array_slot& a, bool own_only,
                                                             std::uint32_t& frame,
                                                             std::uint64_t deadline_ns,
                                                             std::uint32_t fewer_than) const {
  const std::uint32_t frames = pool_.geometry.frames;
  const std::uint32_t chunk = frames < 8 ? frames : 8;
  // relaxed: the hand only spreads the searches; the CAS in try_hold decides ownership.
  const std::uint64_t base =
      atomic_ref<std::uint64_t>(*pool_.hand).fetch_add(chunk, order::relaxed);
  // Free frames first, then CLOCK's first unreferenced frame (as the base pool does); a
  // tenant at its quota looks only at its own frames.
  for (std::uint32_t pass = own_only ? 1u : 0u; pass < 2; ++pass) {
    for (std::uint32_t i = 0; i < chunk; ++i) {
      const auto f = static_cast<std::uint32_t>((base + i) % frames);
      // relaxed: a candidate check; the CAS orders.
      std::uint64_t s = atomic_ref<std::uint64_t>(pool_.state[f]).load(order::relaxed);
      if (pass == 0) {
        if (try_hold(f, s, false)) {
          frame = f;
          return true;
        }
        continue;
      }
      if (own_only && (frame_tag(s) & entry_bits::tenant_mask) != a.tenant) continue;
      // relaxed: a count that steers the choice; the hold below decides.
      if (fewer_than != ~0u &&
          atomic_ref<std::uint32_t>(pool_.resident_count[f]).load(order::relaxed) >= fewer_than) {
        continue;
      }
      atomic_ref<std::uint32_t> ref(pool_.referenced[f]);
      if (ref.load(order::relaxed) != 0) {  // relaxed: a CLOCK hint
        ref.store(0u, order::relaxed);      // second chance
        continue;
      }
      // Emptying it would wait the whole deadline for a completion that may never come, and
      // every later search would pick it again.
      if (holds_abandoned_slot(f)) continue;
      const std::uint64_t drain_by = now_ns() + victim_drain_ns;
      std::uint64_t closed = 0;
      if (hold_and_drain(f, s, drain_by < deadline_ns ? drain_by : deadline_ns, closed)) {
        if (empty_held(f, deadline_ns, own_only ? a.tenant : 0u, true, closed)) {
          frame = f;
          return true;
        }
      }
    }
  }
  return false;
}

BAM_HD inline const array_slot* dense_cache_ref::tenant_array(std::uint32_t tenant) const {
  // Tenant ids are never reused while a frame may still name one (page_cache hands them out
  // from a counter), so a frame of a detached array finds no slot.
  const array_slot* s = nullptr;
  for (std::uint32_t i = 0; i < cache_.slot_count(); ++i) {
    const array_slot* c = cache_.slot_at(i);
    if (c->tenant == tenant && c->large_table != nullptr && c->pages != 0) s = c;
  }
  return tenant == 0 ? nullptr : s;
}

BAM_HD inline const array_slot* dense_cache_ref::tenant_slot(std::uint32_t tenant,
                                                             std::uint64_t piece) const {
  const array_slot* s = tenant_array(tenant);
  if (s == nullptr) return nullptr;
  const std::uint64_t pieces =
      (s->pages + pool_.geometry.lines_per_frame - 1u) >> pool_.geometry.frame_shift;
  return piece < pieces ? s : nullptr;  // a detached array has no pages
}

BAM_HD inline bool dense_cache_ref::wait_not_busy(std::uint32_t frame, std::uint64_t deadline_ns,
                                                  const array_slot* drain_for) const {
  backoff pause;
  std::uint64_t drain_after_ns = 0;
  for (std::uint32_t w = 0; w < pool_.geometry.words_per_frame; ++w) {
    atomic_ref<std::uint64_t> busy(
        pool_.busy[std::uint64_t{frame} * pool_.geometry.words_per_frame + w]);
    // seq_cst: pairs with the busy fetch_or of loaders and droppers (see acquire); acquire:
    // their slot work before we touch the slots.
    while (busy.load(order::seq_cst) != 0) {
      const std::uint64_t now = now_ns();
      if (now > deadline_ns) return false;
      // A slot held by an abandoned command comes back only when its late completion is
      // drained: past a command's timeout (a load in flight would be done by then), a waiter
      // with an array to drain for drains its queues itself.
      if (drain_for != nullptr) {
        if (drain_after_ns == 0) {
          drain_after_ns = now + drain_for->set.timeout_ns();
        } else if (now > drain_after_ns) {
          device_drain(drain_for->set);
        }
      }
      pause.pause();
    }
  }
  return true;
}

BAM_HD BAM_NOINLINE inline bool dense_cache_ref::write_back_dirty(const array_slot& owner,
                                                                  std::uint64_t piece,
                                                                  std::uint32_t frame) const {
  const frame_geometry& g = pool_.geometry;
  const std::uint32_t queues = owner.set.queues_per_device;
  // At most one command per queue index, submitted in increasing index order: none of our
  // tickets can wait for another of ours, nor threads for each other in a cycle (storage/io.hpp).
  const std::uint32_t batch = queues < write_back_batch ? queues : write_back_batch;
  // Where batches start among the queues: spreads the write-backs of different frames.
  const std::uint32_t start = frame % queues;
  std::uint32_t slots[write_back_batch];
  std::uint64_t pages[write_back_batch];
  line_io_issued issued[write_back_batch];
  auto dirty_word = [&](std::uint32_t w) {
    return atomic_ref<std::uint64_t>(pool_.dirty[std::uint64_t{frame} * g.words_per_frame + w]);
  };
  auto fail = [&](io_status s, const io_where& where, std::uint64_t page) {
    owner.errors->record(error_kind::write_back, s, where.device, where.queue, where.command_id,
                         where.lba, page);
  };
  // A write-back given up on may still read its slot. So each slot leaves use while its
  // command may run (busy, not resident: no reader, writer or loader touches it, and the
  // frame cannot be emptied) and comes back when the command is done: here, or by the drain of
  // its late completion (the hold sets the resident bit again, then clears the busy bit).
  // relaxed (both): we hold the frame; the release that reopens or retires it publishes these.
  auto take_slot = [&](std::uint32_t slot) {
    const std::uint64_t bit = frame_pool_view::bit(slot);
    atomic_ref<std::uint64_t>(pool_.word(pool_.busy, frame, slot)).fetch_or(bit, order::relaxed);
    atomic_ref<std::uint64_t>(pool_.word(pool_.resident, frame, slot))
        .fetch_and(~bit, order::relaxed);
  };
  auto give_back_slot = [&](std::uint32_t slot) {
    const std::uint64_t bit = frame_pool_view::bit(slot);
    atomic_ref<std::uint64_t>(pool_.word(pool_.resident, frame, slot))
        .fetch_or(bit, order::relaxed);
    atomic_ref<std::uint64_t>(pool_.word(pool_.busy, frame, slot)).fetch_and(~bit, order::relaxed);
  };
  std::uint32_t w = 0;
  // relaxed: the hold ordered the writers.
  std::uint64_t pending = dirty_word(0).load(order::relaxed);
  for (;;) {
    std::uint32_t n = 0;
    while (n < batch) {
      while (pending == 0 && w + 1u < g.words_per_frame) {
        pending = dirty_word(++w).load(order::relaxed);  // relaxed: as above
      }
      if (pending == 0) break;
      std::uint32_t b = 0;
      while (!((pending >> b) & 1u)) ++b;
      pending &= pending - 1u;
      const std::uint32_t slot = w * 64u + b;
      slots[n] = slot;
      // A shared frame names each slot's page in its tags.
      // relaxed: we hold the frame.
      pages[n] = piece == shared_piece
                     ? atomic_ref<std::uint64_t>(tag_word(frame, slot)).load(order::relaxed) - 1u
                     : (piece << g.frame_shift) + slot;
      ++n;
    }
    if (n == 0) return true;
    // Command t goes to queue index t < wrap ? t : start + t - wrap: the batch's n indexes
    // from `start` on, taken in increasing order.
    const std::uint32_t wrap = start + n > queues ? start + n - queues : 0u;
    bool ok = true;
    std::uint32_t in_flight = 0;
    for (; in_flight < n; ++in_flight) {
      const std::uint32_t t = in_flight;
      const std::uint32_t queue = t < wrap ? t : start + t - wrap;
      const std::uint64_t bit = frame_pool_view::bit(slots[t]);
      const command_hold hold{&pool_.word(pool_.busy, frame, slots[t]), bit,
                              &pool_.word(pool_.resident, frame, slots[t]), bit};
      take_slot(slots[t]);
      const io_status s = cache_.line_io_submit(
          nvme::io_opcode::write, owner, pages[t],
          static_cast<std::uint32_t>(g.line_of(frame, slots[t])), queue, issued[t], 1, hold);
      if (!s.ok()) {
        fail(s, issued[t].io.where, pages[t]);
        if (issued[t].io.where.abandoned) {
          note_abandoned(*hold.clear_word, bit);
        } else {
          give_back_slot(slots[t]);
        }
        ok = false;
        break;
      }
    }
    // Every command issued reads its line: wait for all of them, even after a failure.
    for (std::uint32_t t = 0; t < in_flight; ++t) {
      const io_status s = cache_.line_io_finish(owner, issued[t]);
      if (s.ok()) {
        // relaxed: we hold the frame.
        dirty_word(slots[t] / 64u)
            .fetch_and(~(std::uint64_t{1} << (slots[t] % 64u)), order::relaxed);
        give_back_slot(slots[t]);
      } else {
        fail(s, issued[t].io.where, pages[t]);
        // The page stays dirty (and resident, once an abandoned command is done with it).
        if (issued[t].io.where.abandoned) {
          note_abandoned(pool_.word(pool_.busy, frame, slots[t]), frame_pool_view::bit(slots[t]));
        } else {
          give_back_slot(slots[t]);
        }
        ok = false;
      }
    }
    if (!ok) return false;
  }
}

BAM_HD inline void dense_cache_ref::retire(std::uint32_t frame) const {
  const std::uint64_t first = std::uint64_t{frame} * pool_.geometry.words_per_frame;
  for (std::uint32_t w = 0; w < pool_.geometry.words_per_frame; ++w) {
    // relaxed: we hold the frame; the release that reopens or reserves it publishes these.
    atomic_ref<std::uint64_t>(pool_.resident[first + w]).store(0u, order::relaxed);
    atomic_ref<std::uint64_t>(pool_.dirty[first + w]).store(0u, order::relaxed);
    // relaxed: a hint; no slot is busy (the frame was drained), so no command is left to mark.
    atomic_ref<std::uint64_t>(pool_.abandoned[first + w]).store(0u, order::relaxed);
  }
  atomic_ref<std::uint32_t>(pool_.resident_count[frame]).store(0u, order::relaxed);
  // relaxed: as above; a frame on its way to another tenant names no owner.
  atomic_ref<std::uint64_t>(pool_.owner[frame]).store(0u, order::relaxed);
  // While we still hold it, the frame must stop carrying its old tag: a promoter or restorer
  // of a piece hosted here waits for the frame to be OPEN again or retagged, and the next
  // reserver (perhaps that very promoter's peer, waiting in turn for it) opens it only later.
  // release: the write-backs and cleared bits before a waiter's acquire load finds the new tag.
  detail::update_frame(
      pool_.state[frame], [](std::uint64_t cur) { return frame_retagged(cur); }, order::release);
}

BAM_HD inline void dense_cache_ref::note_abandoned(std::uint64_t& busy_word,
                                                   std::uint64_t bits) const {
  // relaxed: a hint for victim searches; the busy bits order the slot's reuse.
  atomic_ref<std::uint64_t>(pool_.abandoned[&busy_word - pool_.busy])
      .fetch_or(bits, order::relaxed);
}

BAM_HD inline bool dense_cache_ref::holds_abandoned_slot(std::uint32_t frame) const {
  const std::uint64_t first = std::uint64_t{frame} * pool_.geometry.words_per_frame;
  for (std::uint32_t w = 0; w < pool_.geometry.words_per_frame; ++w) {
    // relaxed (both): a hint; passing a frame over only leaves it for a later search.
    const std::uint64_t gave_up =
        atomic_ref<std::uint64_t>(pool_.abandoned[first + w]).load(order::relaxed);
    if (gave_up != 0 &&
        (atomic_ref<std::uint64_t>(pool_.busy[first + w]).load(order::relaxed) & gave_up) != 0) {
      return true;
    }
  }
  return false;
}

BAM_HD inline bool dense_cache_ref::empty_held(std::uint32_t frame, std::uint64_t deadline_ns,
                                               std::uint32_t keep_count_for, bool allow_splinter,
                                               std::uint64_t closed) const {
  // relaxed: the owner was stored by the reserver before the release that opened the frame,
  // which our acquiring hold read.
  const std::uint64_t own = atomic_ref<std::uint64_t>(pool_.owner[frame]).load(order::relaxed);
  const auto tenant = static_cast<std::uint32_t>(own >> owner_tenant_shift);
  const std::uint64_t piece = own & shared_piece;
  if (piece == shared_piece) return empty_shared(frame, deadline_ns, keep_count_for);
  const array_slot* owner = tenant_slot(tenant, piece);
  if (owner == nullptr) {  // its array is gone: nothing to close or write back
    retire(frame);
    return true;
  }
  atomic_ref<std::uint64_t> entry(owner->large_table[piece]);
  // seq_cst: the close precedes the grace period's epoch increment and our busy drain
  // (epochs.hpp, and the dropper's busy/entry pair); hold_and_drain's, when it closed, too.
  const std::uint64_t old =
      closed != 0 ? closed : entry.exchange(entry_bits::closed, order::seq_cst);
  bool ok = pinning_.quiesce(deadline_ns) && wait_not_busy(frame, deadline_ns, owner) &&
            write_back_dirty(*owner, piece, frame);
  if (!ok) {
    // The frame keeps its piece: reopen it and publish the entry again, under a pin of ours
    // (publish_open says why).
    reopen_pinned(frame);
    entry.store(old, order::release);  // release: the reopened frame before the entry
    frame_unpin(pool_, frame, 1);
    return false;
  }
  splinter_result splintered = splinter_result::none;
  if (allow_splinter && splinters()) {
    const std::uint32_t count = slot_bit_count(pool_.resident, frame);
    std::uint32_t limit = pool_.geometry.lines_per_frame * pool_.splinter_percent / 100u;
    if (limit == 0) limit = 1;
    if (count != 0 && count <= limit) splintered = splinter(*owner, piece, frame);
  }
  if (splintered == splinter_result::converted) return false;  // now the tenant's shared frame
  retire(frame);
  if (owner->stats.shards != nullptr) owner->stats.add(&cache_stats::evictions, 1);
  if (owner->frames_held != nullptr && tenant != keep_count_for) {
    // relaxed: a count (admit); the frame leaves its tenant.
    atomic_ref<std::uint32_t>(*owner->frames_held).fetch_sub(1u, order::relaxed);
  }
  if (pool_.base_first) unblock_base_pages(*owner, piece);
  // release: the write-back (and under base first the unblocked page entries) before the
  // piece can be reserved and loaded again (a splintered piece's entry was published by
  // splinter()).
  if (splintered == splinter_result::none) entry.store(entry_bits::empty, order::release);
  return true;
}

BAM_HD inline bool dense_cache_ref::drop_frame(std::uint32_t frame) const {
  // relaxed: a candidate check; the CAS orders.
  std::uint64_t s = atomic_ref<std::uint64_t>(pool_.state[frame]).load(order::relaxed);
  if (!try_hold(frame, s, true)) return false;
  if (!empty_held(frame, give_up_at(nullptr))) return false;
  // release: the emptied frame before the next reserver's acquiring hold.
  detail::update_frame(
      pool_.state[frame], [](std::uint64_t cur) { return cur & ~frame_bits::held; },
      order::release);
  return true;
}

BAM_HD inline bool dense_cache_ref::drop_page(const array_slot& a, std::uint64_t page) const {
  const std::uint32_t slot = slot_of(page);
  const std::uint64_t bit = frame_pool_view::bit(slot);
  atomic_ref<std::uint64_t> entry(a.large_table[piece_of(page)]);
  const std::uint64_t e = entry.load(order::seq_cst);  // seq_cst: see the busy pairing below
  if (!entry_coalesced(e) || entry_splintered(e)) return false;
  const std::uint32_t frame = entry_frame(e);
  atomic_ref<std::uint64_t> resident(pool_.word(pool_.resident, frame, slot));
  atomic_ref<std::uint64_t> dirty(pool_.word(pool_.dirty, frame, slot));
  if (pool_.pinning == pinning_kind::frame_pins) {
    // Pinned readers' resident loads are only acquire: take the whole frame (no pins) while
    // the page leaves; readers back off meanwhile.
    std::uint64_t s = atomic_ref<std::uint64_t>(pool_.state[frame]).load(order::relaxed);
    if (!frame_pin_usable(s, e) || !try_hold(frame, s, true)) return false;
    bool dropped = false;
    atomic_ref<std::uint64_t> busy(pool_.word(pool_.busy, frame, slot));
    // seq_cst: as in wait_not_busy; a busy slot is being loaded (or held by a command that
    // may still run).
    if (!(busy.load(order::seq_cst) & bit) && (resident.load(order::relaxed) & bit)) {
      // Our page alone: a loader whose pin failed because we hold the frame may be serving a
      // store into its own slot under its busy bit (acquire_then), and writing that slot back
      // now, then clearing its dirty bit, would lose the store.
      page_write w = page_write::written;
      if (dirty.load(order::relaxed) & bit) {
        // relaxed (both): we hold the frame; reopen publishes.
        busy.fetch_or(bit, order::relaxed);
        resident.fetch_and(~bit, order::relaxed);
        w = write_back_page(a, page, frame);
        if (w == page_write::failed) resident.fetch_or(bit, order::relaxed);  // back as it was
        if (w != page_write::abandoned) busy.fetch_and(~bit, order::relaxed);
      } else {
        resident.fetch_and(~bit, order::relaxed);  // relaxed: published by reopen
      }
      dropped = w == page_write::written;
      if (dropped) {
        atomic_ref<std::uint32_t>(pool_.resident_count[frame]).fetch_sub(1u, order::relaxed);
      }
    }
    reopen(frame);
    return dropped;
  }
  // Epochs: readers do not look at the frame word. Own the slot (busy), check that the frame
  // still serves this piece, clear the bit, and let a grace period pass before writing back.
  atomic_ref<std::uint64_t> busy(pool_.word(pool_.busy, frame, slot));
  // seq_cst: with the entry re-check below, pairs with an evictor's close-then-drain.
  if (busy.fetch_or(bit, order::seq_cst) & bit) return false;
  bool dropped = false;
  if (entry.load(order::seq_cst) == e && (resident.load(order::seq_cst) & bit)) {
    // seq_cst: readers that see the bit set precede the grace period (epochs.hpp).
    resident.fetch_and(~bit, order::seq_cst);
    page_write w = page_write::failed;
    if (pinning_.quiesce(give_up_at(&a))) {
      w = page_write::written;
      // acquire: writers' dirty bits, released by their epoch exits, were read by the scan.
      if (dirty.load(order::acquire) & bit) w = write_back_page(a, page, frame);
    }
    // An abandoned write-back's slot is the queue's now: its drain sets the resident bit
    // again and ends our busy hold.
    if (w == page_write::abandoned) return false;
    dropped = w == page_write::written;
    if (dropped) {
      atomic_ref<std::uint32_t>(pool_.resident_count[frame]).fetch_sub(1u, order::relaxed);
    } else {
      resident.fetch_or(bit, order::release);  // release: the page is back as it was
    }
  }
  busy.fetch_and(~bit, order::release);  // release: ends our hold of the slot
  return dropped;
}

BAM_HD inline dense_cache_ref::page_write dense_cache_ref::write_back_page(
    const array_slot& a, std::uint64_t page, std::uint32_t frame) const {
  const std::uint32_t slot = slot_of(page);
  const auto line = static_cast<std::uint32_t>(pool_.geometry.line_of(frame, slot));
  const std::uint64_t bit = frame_pool_view::bit(slot);
  // The caller took the slot out of use (busy, not resident): an abandoned write-back keeps it
  // so until its late completion is drained, which makes it resident and not busy again.
  const command_hold hold{&pool_.word(pool_.busy, frame, slot), bit,
                          &pool_.word(pool_.resident, frame, slot), bit};
  io_where where;
  const io_status s = cache_.line_io(nvme::io_opcode::write, a, page, line, frame, where, hold);
  if (!s.ok()) {
    a.errors->record(error_kind::write_back, s, where.device, where.queue, where.command_id,
                     where.lba, page);
    if (!where.abandoned) return page_write::failed;
    note_abandoned(*hold.clear_word, bit);
    return page_write::abandoned;
  }
  // relaxed: the caller holds the page (the frame, or the slot's busy bit) and publishes.
  atomic_ref<std::uint64_t>(pool_.word(pool_.dirty, frame, slot)).fetch_and(~bit, order::relaxed);
  return page_write::written;
}

BAM_HD inline io_status dense_cache_ref::flush_frame(const array_slot& a,
                                                     std::uint32_t frame) const {
  backoff pause;
  const std::uint64_t give_up_ns = give_up_at(&a);
  for (;;) {
    // relaxed: a candidate check; the hold's CAS orders.
    std::uint64_t s = atomic_ref<std::uint64_t>(pool_.state[frame]).load(order::relaxed);
    if (!(s & (frame_bits::open | frame_bits::held))) return {};          // free
    if ((frame_tag(s) & entry_bits::tenant_mask) != a.tenant) return {};  // another array's
    if (try_hold(frame, s, true)) break;
    if (now_ns() > give_up_ns) return flush_timeout(a, frame);
    pause.pause();
  }
  const std::uint64_t own = atomic_ref<std::uint64_t>(pool_.owner[frame]).load(order::relaxed);
  const std::uint64_t piece = own & shared_piece;
  if (!wait_not_busy(frame, give_up_ns, &a)) {
    reopen(frame);
    return flush_timeout(a, frame);
  }
  const bool ok = write_back_dirty(a, piece, frame);  // records its failures
  reopen(frame);
  return ok ? io_status{} : io_status::host(status_source::timeout);
}

BAM_HD BAM_NOINLINE inline io_status dense_cache_ref::flush_timeout(const array_slot& a,
                                                                    std::uint32_t frame) const {
  // Pinned, or a slot busy (perhaps held by a command that may still run): not written back.
  const io_status s = io_status::host(status_source::timeout);
  // relaxed: names the piece for the record only.
  const std::uint64_t piece =
      atomic_ref<std::uint64_t>(pool_.owner[frame]).load(order::relaxed) & shared_piece;
  a.errors->record(error_kind::write_back, s, 0, 0, 0, 0,
                   piece == shared_piece ? 0 : piece << pool_.geometry.frame_shift);
  return s;
}

}  // namespace bam::cache::mosaic
