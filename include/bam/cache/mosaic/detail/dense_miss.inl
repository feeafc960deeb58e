#pragma once
// dense_cache_ref: the miss path. acquire_then finds or loads a page under its piece's
// protection; a first touch reserves a frame (reserve, claim_reserved, publish_open), and a
// splintered piece is served from its shared frame (use_shared). Included by dense_cache.hpp.

#include <bam/cache/mosaic/detail/dense_cache.inl>  // the shared helpers

namespace bam::cache::mosaic {

BAM_HD BAM_NOINLINE inline acquire_result dense_cache_ref::gave_up(const array_slot& a,
                                                                   std::uint64_t page) const {
  const io_status s = io_status::host(status_source::timeout);
  a.errors->record(error_kind::cache, s, 0, 0, 0, 0, page);
  return {0, s, probe_kind::failed};
}

BAM_HD inline acquire_result dense_cache_ref::acquire(const array_slot& a, std::uint64_t page,
                                                      std::uint32_t hint,
                                                      frame_guard& guard) const {
  return acquire_then(a, page, hint, guard, detail::keep_protection{});
}

template <class Use>
BAM_HD acquire_result dense_cache_ref::acquire_then(const array_slot& a, std::uint64_t page,
                                                    std::uint32_t hint, frame_guard& guard,
                                                    Use&& use) const {
  const std::uint64_t piece = piece_of(page);
  const std::uint32_t slot = slot_of(page);
  const std::uint64_t bit = frame_pool_view::bit(slot);
  std::uint64_t& entry_word = a.large_table[piece];
  const order slot_order = pinning_.slot_order();
  backoff pause;
  std::uint64_t give_up_ns = 0, drain_after_ns = 0;
  bool waited = false, loaded = false, promoted = false;
  for (;;) {
    // Every turn of the loop is bounded, not only those that wait: a page loaded (or a frame
    // reserved) and gone again before we read it sends us round without a wait.
    if (give_up_ns != 0 && now_ns() > give_up_ns) return gave_up(a, page);
    const enter_result r = pinning_.enter(entry_word, 1, guard);
    if (r == enter_result::no_reader_slot) {
      const io_status s = io_status::host(status_source::invalid_request);
      a.errors->record(error_kind::cache, s, 0, 0, 0, 0, page);
      return {0, s, probe_kind::failed};
    }
    if (r == enter_result::protected_frame && entry_splintered(guard.entry)) {
      std::uint32_t line = 0;
      io_status failure;
      const std::uint64_t e = guard.entry;
      const shared_step step = use_shared(a, page, hint, guard, line, failure);
      if (step == shared_step::hit) {
        if (!owner_is(a, e, piece)) {
          release(guard);
          return wrong_owner(a, page);
        }
        // After our own load, count the piece's pages while the shared frame is protected
        // (its tags are only tags while it serves this tenant); promote once, unprotected.
        const std::uint64_t limit =
            std::uint64_t{pool_.geometry.lines_per_frame} * pool_.promote_percent / 100;
        if (loaded && !promoted && pages_in(entry_frame(e), piece) > limit) {
          release(guard);
          promoted = true;
          promote(a, piece, e);
          continue;
        }
        use(line);
        return {line,
                {},
                loaded   ? probe_kind::miss
                : waited ? probe_kind::miss_wait
                         : probe_kind::hit};
      }
      if (step == shared_step::failed) return {0, failure, probe_kind::failed};
      if (step == shared_step::loaded) {
        loaded = true;
        if (give_up_ns == 0) give_up_ns = give_up_at(&a);
        continue;  // read it under protection
      }
      // Another page holds the slot: the piece gets a frame of its own.
      if (step == shared_step::promote) promote(a, piece, e);
      waited = true;
    } else if (r == enter_result::protected_frame) {
      const std::uint32_t frame = entry_frame(guard.entry);
      const auto line = static_cast<std::uint32_t>(pool_.geometry.line_of(frame, slot));
      atomic_ref<std::uint64_t> resident(pool_.word(pool_.resident, frame, slot));
      // slot_order (acquire or seq_cst, pinning.hpp): the loader released the slot's data
      // with the bit.
      if (resident.load(slot_order) & bit) {
        if (!owner_is(a, guard.entry, piece)) {
          release(guard);
          return wrong_owner(a, page);
        }
        use(line);
        return {line,
                {},
                loaded   ? probe_kind::miss
                : waited ? probe_kind::miss_wait
                         : probe_kind::hit};
      }
      atomic_ref<std::uint64_t> busy(pool_.word(pool_.busy, frame, slot));
      // relaxed: a look before the read-modify-write, which alone takes the slot. A slot held
      // by a fill stays busy for several rounds of commands, and thousands of waiters that
      // each retried a fetch_or on its word would queue at that word's L2 slice.
      // seq_cst on the fetch_or: a page dropper (epochs) sets busy then re-reads the entry,
      // an evictor closes the entry then reads busy: one of us sees the other. Also acquire:
      // the previous holder of the slot finished with it.
      const std::uint64_t before =
          (busy.load(order::relaxed) & bit) ? bit : busy.fetch_or(bit, order::seq_cst);
      if (before & bit) {
        release(guard);  // a load or a drop is in progress: wait for it unprotected
        waited = true;
      } else if (resident.load(slot_order) & bit) {
        // Loaded between our two looks: give the slot back and read it.
        busy.fetch_and(~bit, order::release);  // release: nothing new; ends our hold
        release(guard);
        continue;
      } else {
        // The slot is ours. Leave the frame before the I/O: the busy bit keeps the frame
        // from being emptied (eviction waits for busy bits) and the slot from other loads.
        release(guard);
        io_where where;
        // A read given up on may still write the slot: its busy bit (which also keeps the
        // frame) stays until the late completion is drained, which clears it.
        const command_hold hold{&pool_.word(pool_.busy, frame, slot), bit};
        const io_status s =
            cache_.line_io(nvme::io_opcode::read, a, page, line, hint, where, hold);
        if (!s.ok()) {
          a.errors->record(error_kind::read, s, where.device, where.queue, where.command_id,
                           where.lba, page);
          if (where.abandoned) {
            note_abandoned(*hold.clear_word, bit);  // the queue's hold now
          } else {
            busy.fetch_and(~bit, order::release);  // release: nothing is published; ends our hold
          }
          return {0, s, probe_kind::failed};
        }
        // release: the slot's data, read by the command, before the resident bit.
        resident.fetch_or(bit, order::release);
        // relaxed: statistics and a CLOCK hint.
        const std::uint32_t resident_before =
            atomic_ref<std::uint32_t>(pool_.resident_count[frame]).fetch_add(1u, order::relaxed);
        atomic_ref<std::uint32_t>(pool_.referenced[frame]).store(1u, order::relaxed);
        // The load that makes the piece dense enough loads the rest of it, unprotected, once
        // its own access is served (its warp-mates may be waiting for that).
        const bool fill = fill_due(resident_before);
        if constexpr (std::is_same_v<std::decay_t<Use>, detail::keep_protection>) {
          if (fill) fill_piece(a, piece, guard.entry);  // we return protected: fill first
        }
        // Our access is served before the busy bit goes, which keeps the frame from being
        // emptied (eviction drains busy bits): going round the loop instead lets an evictor
        // close the entry between our load and our read, and where evictions are slow and
        // frames few (epochs: one grace period each) loaders then never read what they load.
        // Protected again if the entry still names the frame (a look and a pin or an
        // announcement, no wait); else, when `use` releases, under the busy bit alone.
        const std::uint64_t loaded_entry = guard.entry;
        const enter_result again = pinning_.enter(entry_word, 1, guard);
        if (again == enter_result::protected_frame && guard.entry == loaded_entry) {
          // release: ends our hold of the slot (an evictor's seq_cst drain acquires it).
          busy.fetch_and(~bit, order::release);
          if (!owner_is(a, guard.entry, piece)) {
            release(guard);
            return wrong_owner(a, page);
          }
          use(line);
          if constexpr (!std::is_same_v<std::decay_t<Use>, detail::keep_protection>) {
            if (fill) fill_piece(a, piece, loaded_entry);  // `use` released
          }
          return {line, {}, probe_kind::miss};
        }
        if (again == enter_result::protected_frame) release(guard);
        if constexpr (!std::is_same_v<std::decay_t<Use>, detail::keep_protection>) {
          guard = frame_guard{.entry = loaded_entry, .slot = guard.slot, .pins = 0};
          use(line);  // ends with release(guard): no pin to give back, no announcement left
          busy.fetch_and(~bit, order::release);  // release: as above, after our use
          if (fill) fill_piece(a, piece, loaded_entry);
          return {line, {}, probe_kind::miss};
        }
        busy.fetch_and(~bit, order::release);  // release: as above
        loaded = true;
        if (give_up_ns == 0) give_up_ns = give_up_at(&a);
        continue;  // read it under protection
      }
    } else if (r == enter_result::not_coalesced && pool_.base_first && entry_base(guard.entry)) {
      // A piece on base pages: promote it once it holds enough of them (one try per access),
      // else serve the page from the base pool.
      const std::uint64_t e = guard.entry;
      bool early = false;
      if (!promoted && promotion_due(e, early)) {
        promoted = true;
        if (promote_base(a, piece, e, early)) continue;
      }
      const acquire_result b = cache_.acquire(a, page, 1, hint);
      if (b.kind == probe_kind::failed) return b;
      if (b.kind != probe_kind::moved) {
        guard = frame_guard{.entry = e, .base_line = b.line + 1u};
        use(b.line);
        return {b.line, {}, waited && b.kind == probe_kind::hit ? probe_kind::miss_wait : b.kind};
      }
      waited = true;  // the piece left base pages under us: wait for its entry
    } else if (r == enter_result::not_coalesced && guard.entry == entry_bits::empty) {
      std::uint64_t expected = entry_bits::empty;
      // acquire: an evictor wrote the piece's dirty pages back before it emptied the entry.
      if (atomic_ref<std::uint64_t>(entry_word)
              .compare_exchange(expected, entry_bits::closed, order::acquire)) {
        io_status failure;
        if (!reserve(a, piece, entry_word, failure)) return {0, failure, probe_kind::failed};
        if (give_up_ns == 0) give_up_ns = give_up_at(&a);
        continue;
      }
      continue;  // someone else is reserving; look again
    } else {
      waited = true;  // CLOSED (reserving or evicting), or the frame changed under us
    }
    const std::uint64_t now = now_ns();
    if (drain_after_ns == 0) {
      if (give_up_ns == 0) give_up_ns = give_up_at(&a);
      drain_after_ns = now + a.set.timeout_ns();
    } else if (now > give_up_ns) {
      return gave_up(a, page);
    } else if (now > drain_after_ns) {
      // Waited longer than a loader's command may take: the slot (or frame) may be held by an
      // abandoned command, which only the drain of its late completion gives back.
      device_drain(a.set);
    }
    pinning_.wait_turn(pause);  // unprotected here on every path
  }
}

BAM_HD BAM_NOINLINE inline dense_cache_ref::shared_step dense_cache_ref::use_shared(
    const array_slot& a, std::uint64_t page, std::uint32_t hint, frame_guard& guard,
    std::uint32_t& line, io_status& failure) const {
  const std::uint32_t frame = entry_frame(guard.entry);
  const std::uint32_t k = hosted_slot(slot_of(page));
  const std::uint64_t bit = frame_pool_view::bit(k);
  if (resident_line(guard.entry, page, line)) return shared_step::hit;
  atomic_ref<std::uint64_t> resident(pool_.word(pool_.resident, frame, k));
  atomic_ref<std::uint64_t> busy(pool_.word(pool_.busy, frame, k));
  // slot_order: as in holds(); a set bit here is another page's.
  if (resident.load(pinning_.slot_order()) & bit) {
    release(guard);
    return shared_step::promote;
  }
  // seq_cst: pairs with an evictor's close-then-drain, as on the coalesced path; acquire:
  // the slot's previous holder finished with it.
  if (busy.fetch_or(bit, order::seq_cst) & bit) {
    release(guard);  // a load or a move is in progress: wait for it unprotected
    return shared_step::wait;
  }
  if (resident.load(pinning_.slot_order()) & bit) {
    busy.fetch_and(~bit, order::release);  // release: nothing new; ends our hold
    release(guard);
    return shared_step::wait;
  }
  // release: with the resident bit below; a reader checks the tag after the bit (holds()).
  atomic_ref<std::uint64_t>(tag_word(frame, k)).store(page + 1, order::release);
  // The busy bit keeps the slot and the frame (its evictor drains busy bits); leave first.
  release(guard);
  io_where where;
  // As for a coalesced slot: an abandoned read keeps the busy bit until its late completion.
  const command_hold hold{&pool_.word(pool_.busy, frame, k), bit};
  const io_status s = cache_.line_io(nvme::io_opcode::read, a, page, line, hint, where, hold);
  if (!s.ok()) {
    a.errors->record(error_kind::read, s, where.device, where.queue, where.command_id, where.lba,
                     page);
    if (where.abandoned) {
      note_abandoned(*hold.clear_word, bit);  // the queue's hold now
    } else {
      busy.fetch_and(~bit, order::release);  // release: nothing is published; ends our hold
    }
    failure = s;
    return shared_step::failed;
  }
  // release: the slot's data and tag before the resident bit.
  resident.fetch_or(bit, order::release);
  // relaxed: statistics and a CLOCK hint.
  atomic_ref<std::uint32_t>(pool_.resident_count[frame]).fetch_add(1u, order::relaxed);
  atomic_ref<std::uint32_t>(pool_.referenced[frame]).store(1u, order::relaxed);
  busy.fetch_and(~bit, order::release);  // release: ends our hold of the slot
  return shared_step::loaded;
}

BAM_HD inline bool dense_cache_ref::claim_reserved(const array_slot& a, std::uint64_t deadline_ns,
                                                   std::uint32_t& frame) const {
  backoff pause;
  std::uint64_t drain_after_ns = 0;
  for (;;) {
    // Under its quota a tenant takes a free frame or CLOCK's victim; at its quota only one of
    // its own frames, whose count then carries over to the new piece.
    const bool admitted = admit(a);
    if (claim_frame(a, !admitted, frame, deadline_ns)) return true;
    if (admitted) give_back_admission(a);
    const std::uint64_t now = now_ns();
    if (now > deadline_ns) return false;
    // Slots held by abandoned commands keep their frames until the late completions are
    // drained, which no one else may be doing: a reservation that has found no frame for a
    // quarter of its time drains (sooner would cost every contended reservation a look at
    // each queue of the set).
    if (drain_after_ns == 0) {
      drain_after_ns = now + (deadline_ns - now) / 4;
    } else if (now > drain_after_ns) {
      device_drain(a.set);
    }
    pause.pause();
  }
}

BAM_HD inline void dense_cache_ref::open_pinned(std::uint32_t frame, std::uint64_t e) const {
  // release: the owner, the bitmaps and any moved pages before the frame can be pinned OPEN.
  detail::update_frame(
      pool_.state[frame], [e](std::uint64_t cur) { return frame_opened(cur, e) + 1u; },
      order::release);
}

BAM_HD inline void dense_cache_ref::reopen_pinned(std::uint32_t frame) const {
  // release: what we did while holding before the next pin (reopen).
  detail::update_frame(
      pool_.state[frame],
      [](std::uint64_t cur) { return ((cur & ~frame_bits::held) | frame_bits::open) + 1u; },
      order::release);
}

BAM_HD inline std::uint64_t dense_cache_ref::publish_open(const array_slot& a, std::uint64_t piece,
                                                          std::uint32_t frame) const {
  atomic_ref<std::uint64_t> st(pool_.state[frame]);
  const std::uint64_t s = st.load(order::relaxed);  // relaxed: only a holder changes the tag
  const std::uint64_t e = make_entry(frame, a.tenant, frame_gen(s) + 1u);
  // relaxed: published by the release that opens the frame; read by holders only.
  atomic_ref<std::uint64_t>(pool_.owner[frame])
      .store((std::uint64_t{a.tenant} << owner_tenant_shift) | piece, order::relaxed);
  atomic_ref<std::uint32_t>(pool_.referenced[frame]).store(1u, order::relaxed);  // CLOCK hint
  // Opened with a pin of ours, dropped once the entry names the frame: an evictor (it needs
  // no pins) that took the open frame before the entry store would close our CLOSED marker and
  // later empty the entry over our publication, leaving it naming a frame that moved on.
  open_pinned(frame, e);
  // release: the opened frame and its contents before the entry can be found coalesced.
  atomic_ref<std::uint64_t>(a.large_table[piece]).store(e, order::release);
  frame_unpin(pool_, frame, 1);
  return e;
}

BAM_HD inline void dense_cache_ref::free_held(const array_slot& a, std::uint32_t frame) const {
  // release: the emptied frame before the next reserver's acquiring hold.
  detail::update_frame(
      pool_.state[frame], [](std::uint64_t cur) { return cur & ~frame_bits::held; },
      order::release);
  give_back_admission(a);
}

BAM_HD BAM_NOINLINE inline bool dense_cache_ref::reserve(const array_slot& a, std::uint64_t piece,
                                                         std::uint64_t& entry_word,
                                                         io_status& failure) const {
  atomic_ref<std::uint64_t> entry(entry_word);
  std::uint32_t frame = 0;
  if (!claim_reserved(a, now_ns() + cache_.victim_timeout_ns(), frame)) {
    failure = io_status::host(status_source::cache_exhausted);
    a.errors->record(error_kind::cache, failure, 0, 0, 0, 0, piece << pool_.geometry.frame_shift);
    // release: nothing was reserved; a later accessor may try again.
    entry.store(entry_bits::empty, order::release);
    return false;
  }
  // The frame is HELD by us and empty: give it to this piece in a new generation.
  publish_open(a, piece, frame);
  if (a.stats.shards != nullptr) a.stats.add(&cache_stats::coalesces, 1);
  return true;
}

BAM_HD inline bool dense_cache_ref::hosts_page_of(std::uint32_t shared, std::uint32_t k,
                                                  std::uint64_t piece) const {
  // relaxed: the caller holds the frame with the piece's readers and loads done; loaders of
  // other pieces only take slots whose bit is clear.
  if (!(atomic_ref<std::uint64_t>(pool_.word(pool_.resident, shared, k)).load(order::relaxed) &
        frame_pool_view::bit(k))) {
    return false;
  }
  const std::uint64_t t = atomic_ref<std::uint64_t>(tag_word(shared, k)).load(order::relaxed);
  return t != 0 && ((t - 1) >> pool_.geometry.frame_shift) == piece;
}

BAM_HD inline bool dense_cache_ref::take_shared(std::uint64_t e) const {
  atomic_ref<std::uint64_t> st(pool_.state[entry_frame(e)]);
  std::uint64_t s = st.load(order::relaxed);  // relaxed: a candidate check; the CAS orders
  // A shared frame is pinned by the readers of all its pieces and may never be seen with no
  // pins: take it HELD at once (new pins fail) and let the pins drain (quiesce_piece).
  while (frame_pin_usable(s, e)) {
    // acquire: as in try_hold, completed by the drain of the pins.
    if (st.compare_exchange(s, (s & ~frame_bits::open) | frame_bits::held, order::acquire)) {
      return true;
    }
  }
  return false;
}

BAM_HD inline bool dense_cache_ref::wait_unpinned(std::uint32_t frame,
                                                  std::uint64_t deadline_ns) const {
  backoff pause;
  // The drain ends unless a pinned reader waits: readers of access() release before any point
  // where their warp may reconverge with a lane that waits (acquire_then), and cursors drop
  // their pins before a lane of their warp takes a miss, but a cursor's lane may wait for its
  // warp elsewhere (claim_frame bounds its drain by victim_drain_ns for that).
  // acquire: the last readers' unpins (release) before we touch the frame.
  while (frame_pins(atomic_ref<std::uint64_t>(pool_.state[frame]).load(order::acquire)) != 0) {
    if (now_ns() > deadline_ns) return false;
    pause.pause();
  }
  return true;
}

BAM_HD inline bool dense_cache_ref::quiesce_piece(std::uint32_t shared, std::uint64_t piece,
                                                  std::uint64_t deadline_ns) const {
  if (!wait_unpinned(shared, deadline_ns) || !pinning_.quiesce(deadline_ns)) return false;
  backoff pause;
  const frame_geometry& g = pool_.geometry;
  for (std::uint32_t k = meta_lines(); k < g.lines_per_frame; ++k) {
    atomic_ref<std::uint64_t> busy(pool_.word(pool_.busy, shared, k));
    // seq_cst: as in wait_not_busy; a loader stored its tag before taking the slot's I/O.
    while ((busy.load(order::seq_cst) & frame_pool_view::bit(k)) != 0) {
      const std::uint64_t t = atomic_ref<std::uint64_t>(tag_word(shared, k)).load(order::acquire);
      if (t == 0 || ((t - 1) >> g.frame_shift) != piece) break;  // another piece's load
      if (now_ns() > deadline_ns) return false;
      pause.pause();
    }
  }
  return true;
}

BAM_HD inline bool dense_cache_ref::take_piece_slots(std::uint32_t shared, std::uint64_t piece,
                                                     std::uint64_t deadline_ns,
                                                     std::uint32_t& taken) const {
  backoff pause;
  // The only other claims on a resident slot are transient re-checks.
  for (taken = meta_lines(); taken < pool_.geometry.lines_per_frame; ++taken) {
    if (!hosts_page_of(shared, taken, piece)) continue;
    atomic_ref<std::uint64_t> busy(pool_.word(pool_.busy, shared, taken));
    const std::uint64_t bit = frame_pool_view::bit(taken);
    // seq_cst: as in use_shared.
    while (busy.fetch_or(bit, order::seq_cst) & bit) {
      if (now_ns() > deadline_ns) return false;
      pause.pause();
    }
  }
  return true;
}

}  // namespace bam::cache::mosaic
