#pragma once
// Definitions for dense_cache.hpp. Each memory order says what it publishes or waits for.

#include <cstring>
#include <type_traits>

#include <bam/cache/line_state.hpp>
#include <bam/platform/agent.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/backoff.hpp>
#include <bam/platform/clock.hpp>
#include <bam/platform/warp.hpp>
#include <bam/platform/warp_sync.hpp>
#include <bam/storage/io.hpp>

namespace bam::cache::mosaic {

namespace detail {

/// Applies `f` to a frame state word with a CAS loop (stray pin attempts add and undo pins
/// on any frame). Returns the new value.
template <class F>
BAM_HD BAM_INLINE std::uint64_t update_frame(std::uint64_t& word, F f, order o) {
  atomic_ref<std::uint64_t> s(word);
  std::uint64_t cur = s.load(order::relaxed);  // relaxed: the CAS below orders
  std::uint64_t next = f(cur);
  while (!s.compare_exchange(cur, next, o)) next = f(cur);
  return next;
}

/// acquire()'s use: none, and the protection outlives acquire_then (its caller releases).
struct keep_protection {
  BAM_HD void operator()(std::uint32_t) const {}
};

/// A command that may still complete could write its buffer later.
BAM_HD inline bool may_land_later(io_status s) {
  return s.source() == status_source::timeout || s.source() == status_source::queue_halted;
}

}  // namespace detail

BAM_HD inline std::uint64_t dense_cache_ref::give_up_at(const array_slot* a) const {
  // A loader's wait is bounded by the queue's deadline, a reserver's by the victim search.
  const std::uint64_t io = a ? a->set.queue(0, 0).timeout_ns() : cache_.victim_timeout_ns();
  return now_ns() + 2 * cache_.victim_timeout_ns() + 2 * io;
}

BAM_HD inline void dense_cache_ref::mark_dirty(std::uint32_t line) const {
  // A base page of a piece on base pages (base first) lives in a line of the base pool.
  if (line >= pool_.geometry.frame_lines) {
    cache_.mark_dirty(line);
    return;
  }
  const std::uint32_t frame = line >> pool_.geometry.frame_shift;
  const std::uint32_t slot = line & (pool_.geometry.lines_per_frame - 1u);
  atomic_ref<std::uint64_t> d(pool_.word(pool_.dirty, frame, slot));
  const std::uint64_t bit = frame_pool_view::bit(slot);
  // relaxed: the bit (and the data written before it) are published by the release that
  // ends our protection; reading first keeps a hot clean-to-dirty word from bouncing.
  if (!(d.load(order::relaxed) & bit)) d.fetch_or(bit, order::relaxed);
}

BAM_HD inline bool dense_cache_ref::owner_is(const array_slot& a, std::uint64_t e,
                                             std::uint64_t piece) const {
  if (!pool_.check_owner) return true;
  // relaxed: the reserver stored the owner before the release that opened the frame and
  // published the entry, which our protection acquired; it changes only once every protected
  // reader has left (the frame is taken with no pins, or after a grace period).
  const std::uint64_t own =
      atomic_ref<std::uint64_t>(pool_.owner[entry_frame(e)]).load(order::relaxed);
  const std::uint64_t want = entry_splintered(e) ? shared_piece : piece;
  return own == ((std::uint64_t{a.tenant} << owner_tenant_shift) | want);
}

BAM_HD inline std::uint32_t dense_cache_ref::meta_lines() const {
  const std::uint64_t bytes = std::uint64_t{pool_.geometry.lines_per_frame} * 8;
  const std::uint64_t lines = (bytes + cache_.line_bytes() - 1) / cache_.line_bytes();
  return lines == 0 ? 1u : static_cast<std::uint32_t>(lines);
}

BAM_HD inline bool dense_cache_ref::splinters() const {
  const std::uint32_t p = pool_.geometry.lines_per_frame;
  // Under base first an evicted frame's piece goes back to base pages instead.
  return !pool_.base_first && pool_.splinter_percent != 0 && p >= 4 && 2 * meta_lines() <= p;
}

BAM_HD inline std::uint64_t& dense_cache_ref::tag_word(std::uint32_t frame, std::uint32_t k) const {
  // The tags fill the first lines of a shared frame (whose pages never land there).
  auto* tags = reinterpret_cast<std::uint64_t*>(
      cache_.line_data(static_cast<std::uint32_t>(pool_.geometry.line_of(frame, 0))));
  return tags[k];
}

BAM_HD inline bool dense_cache_ref::holds(std::uint32_t frame, std::uint32_t k,
                                          std::uint64_t page) const {
  atomic_ref<std::uint64_t> resident(pool_.word(pool_.resident, frame, k));
  const std::uint64_t bit = frame_pool_view::bit(k);
  // slot_order: the loader or mover released the slot's data and tag with the bit.
  if (!(resident.load(pinning_.slot_order()) & bit)) return false;
  // acquire: a tag stored by a later occupant comes after the slot was freed, so the look
  // below then sees the bit cleared or that occupant's release.
  if (atomic_ref<std::uint64_t>(tag_word(frame, k)).load(order::acquire) != page + 1) return false;
  // slot_order: as above; a slot freed and refilled between our looks is caught here.
  return (resident.load(pinning_.slot_order()) & bit) != 0;
}

BAM_HD inline bool dense_cache_ref::resident_line(std::uint64_t e, std::uint64_t page,
                                                  std::uint32_t& line) const {
  const std::uint32_t frame = entry_frame(e);
  const std::uint32_t slot = slot_of(page);
  if (entry_splintered(e)) {
    const std::uint32_t k = hosted_slot(slot);
    line = static_cast<std::uint32_t>(pool_.geometry.line_of(frame, k));
    return holds(frame, k, page);
  }
  line = static_cast<std::uint32_t>(pool_.geometry.line_of(frame, slot));
  // slot_order: the loader released the slot's data with the bit.
  return (atomic_ref<std::uint64_t>(pool_.word(pool_.resident, frame, slot))
              .load(pinning_.slot_order()) &
          frame_pool_view::bit(slot)) != 0;
}

BAM_HD inline std::uint32_t dense_cache_ref::pages_in(std::uint32_t frame,
                                                      std::uint64_t piece) const {
  std::uint32_t n = 0;
  for (std::uint32_t k = meta_lines(); k < pool_.geometry.lines_per_frame; ++k) {
    // relaxed: a count that only steers promotion.
    if (!(atomic_ref<std::uint64_t>(pool_.word(pool_.resident, frame, k)).load(order::relaxed) &
          frame_pool_view::bit(k))) {
      continue;
    }
    const std::uint64_t t = atomic_ref<std::uint64_t>(tag_word(frame, k)).load(order::relaxed);
    if (t != 0 && ((t - 1) >> pool_.geometry.frame_shift) == piece) ++n;
  }
  return n;
}

BAM_HD inline std::uint32_t dense_cache_ref::slot_bit_count(std::uint64_t* bits,
                                                            std::uint32_t frame) const {
  std::uint32_t n = 0;
  for (std::uint32_t w = 0; w < pool_.geometry.words_per_frame; ++w) {
    // relaxed: the caller holds the frame.
    std::uint64_t x =
        atomic_ref<std::uint64_t>(bits[std::uint64_t{frame} * pool_.geometry.words_per_frame + w])
            .load(order::relaxed);
    for (; x != 0; x &= x - 1) ++n;
  }
  return n;
}

BAM_HD inline void dense_cache_ref::copy_line(std::uint32_t from, std::uint32_t to) const {
  std::memcpy(cache_.line_data(to), cache_.line_data(from), cache_.line_bytes());
}

BAM_HD inline acquire_result dense_cache_ref::wrong_owner(const array_slot& a,
                                                          std::uint64_t page) const {
  const io_status s = io_status::host(status_source::invalid_request);
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
  std::uint64_t give_up_ns = 0;
  bool waited = false, loaded = false, promoted = false;
  for (;;) {
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
        const io_status s = cache_.line_io(nvme::io_opcode::read, a, page, line, hint, where);
        if (!s.ok()) {
          a.errors->record(error_kind::read, s, where.device, where.queue, where.command_id,
                           where.lba, page);
          // A command that may still land keeps the slot busy for good (lost to the cache,
          // and its frame with it) rather than let another page's data be overwritten.
          // release: nothing is published; ends our hold.
          if (!detail::may_land_later(s)) busy.fetch_and(~bit, order::release);
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
        continue;
      }
      continue;  // someone else is reserving; look again
    } else {
      waited = true;  // CLOSED (reserving or evicting), or the frame changed under us
    }
    const std::uint64_t now = now_ns();
    if (give_up_ns == 0) {
      give_up_ns = give_up_at(&a);
    } else if (now > give_up_ns) {
      const io_status s = io_status::host(status_source::timeout);
      a.errors->record(error_kind::cache, s, 0, 0, 0, 0, page);
      return {0, s, probe_kind::failed};
    }
    pinning_.wait_turn(pause);  // unprotected here on every path
  }
}

BAM_HD inline dense_cache_ref::shared_step dense_cache_ref::use_shared(
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
  const io_status s = cache_.line_io(nvme::io_opcode::read, a, page, line, hint, where);
  if (!s.ok()) {
    a.errors->record(error_kind::read, s, where.device, where.queue, where.command_id, where.lba,
                     page);
    // release: nothing is published; ends our hold (kept for good if the command may land).
    if (!detail::may_land_later(s)) busy.fetch_and(~bit, order::release);
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
  for (;;) {
    // Under its quota a tenant takes a free frame or CLOCK's victim; at its quota only one of
    // its own frames, whose count then carries over to the new piece.
    const bool admitted = admit(a);
    if (claim_frame(a, !admitted, frame, deadline_ns)) return true;
    if (admitted) give_back_admission(a);
    if (now_ns() > deadline_ns) return false;
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

BAM_HD inline bool dense_cache_ref::reserve(const array_slot& a, std::uint64_t piece,
                                            std::uint64_t& entry_word, io_status& failure) const {
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

BAM_HD inline bool dense_cache_ref::claim_frame(const array_slot& a, bool own_only,
                                                std::uint32_t& frame, std::uint64_t deadline_ns,
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

BAM_HD inline bool dense_cache_ref::wait_not_busy(std::uint32_t frame,
                                                  std::uint64_t deadline_ns) const {
  backoff pause;
  for (std::uint32_t w = 0; w < pool_.geometry.words_per_frame; ++w) {
    atomic_ref<std::uint64_t> busy(
        pool_.busy[std::uint64_t{frame} * pool_.geometry.words_per_frame + w]);
    // seq_cst: pairs with the busy fetch_or of loaders and droppers (see acquire); acquire:
    // their slot work before we touch the slots.
    while (busy.load(order::seq_cst) != 0) {
      if (now_ns() > deadline_ns) return false;
      pause.pause();
    }
  }
  return true;
}

BAM_HD inline bool dense_cache_ref::write_back_dirty(const array_slot& owner, std::uint64_t piece,
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
      const io_status s = cache_.line_io_submit(
          nvme::io_opcode::write, owner, pages[t],
          static_cast<std::uint32_t>(g.line_of(frame, slots[t])), queue, issued[t]);
      if (!s.ok()) {
        fail(s, issued[t].io.where, pages[t]);
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
      } else {
        fail(s, issued[t].io.where, pages[t]);
        ok = false;  // the page stays dirty and resident
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
  bool ok = pinning_.quiesce(deadline_ns) && wait_not_busy(frame, deadline_ns) &&
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
  // takes them all), and none is added while we hold it.
  auto each_piece = [&](auto f) {
    for (std::uint32_t k = meta_lines(); k < g.lines_per_frame; ++k) {
      if (!(atomic_ref<std::uint64_t>(pool_.word(pool_.resident, frame, k)).load(order::relaxed) &
            frame_pool_view::bit(k))) {
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
  const bool ok = pinning_.quiesce(deadline_ns) && wait_not_busy(frame, deadline_ns) &&
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
    // seq_cst: as in wait_not_busy; a busy slot is being loaded (or lost to a late command).
    const bool busy =
        (atomic_ref<std::uint64_t>(pool_.word(pool_.busy, frame, slot)).load(order::seq_cst) &
         bit) != 0;
    if (!busy && (resident.load(order::relaxed) & bit)) {
      // Our page alone: a loader whose pin failed because we hold the frame may be serving a
      // store into its own slot under its busy bit (acquire_then), and writing that slot back
      // now, then clearing its dirty bit, would lose the store.
      dropped = !(dirty.load(order::relaxed) & bit) || write_back_page(a, page, frame);
      if (dropped) {
        resident.fetch_and(~bit, order::relaxed);  // relaxed: published by reopen
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
    if (pinning_.quiesce(give_up_at(&a))) {
      dropped = true;
      // acquire: writers' dirty bits, released by their epoch exits, were read by the scan.
      if (dirty.load(order::acquire) & bit) dropped = write_back_page(a, page, frame);
    }
    if (dropped) {
      atomic_ref<std::uint32_t>(pool_.resident_count[frame]).fetch_sub(1u, order::relaxed);
    } else {
      resident.fetch_or(bit, order::release);  // release: the page is back as it was
    }
  }
  busy.fetch_and(~bit, order::release);  // release: ends our hold of the slot
  return dropped;
}

BAM_HD inline bool dense_cache_ref::write_back_page(const array_slot& a, std::uint64_t page,
                                                    std::uint32_t frame) const {
  const std::uint32_t slot = slot_of(page);
  const auto line = static_cast<std::uint32_t>(pool_.geometry.line_of(frame, slot));
  io_where where;
  const io_status s = cache_.line_io(nvme::io_opcode::write, a, page, line, frame, where);
  if (!s.ok()) {
    a.errors->record(error_kind::write_back, s, where.device, where.queue, where.command_id,
                     where.lba, page);
    return false;
  }
  // relaxed: the caller holds the page (the frame, or the slot's busy bit) and publishes.
  atomic_ref<std::uint64_t>(pool_.word(pool_.dirty, frame, slot))
      .fetch_and(~frame_pool_view::bit(slot), order::relaxed);
  return true;
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
    if (now_ns() > give_up_ns) return io_status::host(status_source::timeout);
    pause.pause();
  }
  const std::uint64_t own = atomic_ref<std::uint64_t>(pool_.owner[frame]).load(order::relaxed);
  const std::uint64_t piece = own & shared_piece;
  const bool ok = wait_not_busy(frame, give_up_ns) && write_back_dirty(a, piece, frame);
  reopen(frame);
  return ok ? io_status{} : io_status::host(status_source::timeout);
}

template <class Op>
BAM_HD bool dense_cache_ref::group_hit(std::uint32_t lanes, const array_slot& a, std::uint64_t page,
                                       std::uint64_t within, bool dirty, Op& op) const {
  if (pool_.pinning == pinning_kind::epochs) {
    // One announcement for the warp, whatever pieces its lanes read: no grouping by piece and
    // one fence per warp access instead of one per piece (a random gather's 32).
    const std::uint32_t slot = pinning_.enter_lanes(lanes);
    bool served = false;
    if (slot != reader_section::closed) {
      const std::uint64_t e =
          pinning_.entry_in(reader_section{slot}, a.large_table[piece_of(page)]);
      std::uint32_t line = 0;
      if (entry_coalesced(e) && resident_line(e, page, line) && owner_is(a, e, piece_of(page))) {
        op(cache_.line_data(line) + within);
        if (dirty) mark_dirty(line);
        served = true;
      }
    }
    // One probe (a hit) for the warp's announcement; its other served lanes rode on it.
    const std::uint32_t served_lanes = warp::ballot(lanes, served);
    const std::uint32_t first = served_lanes & (0u - served_lanes);
    count_lanes(a, lanes, 0, 0, first, served_lanes & ~first);
    pinning_.leave_lanes(lanes, slot);
    return served;
  }
  // Lanes touching one piece share one protection: the leader enters for the group, every
  // lane whose page is resident (in its slot, or in the shared frame of a splintered piece)
  // reads, the group meets, the leader leaves.
  std::uint64_t& entry_word = a.large_table[piece_of(page)];
  const std::uint32_t peers = warp::match_any(
      lanes, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&entry_word)));
  const unsigned leader = warp::lowest_lane(peers);
  frame_guard g;
  std::uint64_t held = 0;
  if (warp::lane() == leader) {
    if (pinning_.enter(entry_word, warp::popcount(peers), g) == enter_result::protected_frame) {
      held = g.entry;
    }
  }
  held = warp::shfl(peers, held, leader);
  std::uint32_t line = 0;
  bool served = false;
  if (entry_coalesced(held) && resident_line(held, page, line) &&
      owner_is(a, held, piece_of(page))) {
    op(cache_.line_data(line) + within);
    if (dirty) mark_dirty(line);
    served = true;
  }
  const std::uint32_t served_lanes = warp::ballot(lanes, served);
  const std::uint32_t served_leaders = warp::ballot(lanes, served && warp::lane() == leader);
  count_lanes(a, lanes, 0, 0, served_leaders, served_lanes & ~served_leaders);
  warp::sync(peers);  // every lane's use of the frame before the leader's release
  if (warp::lane() == leader && entry_coalesced(held)) pinning_.leave(g);
  return served;
}

BAM_HD inline bool dense_cache_ref::pin_resident(std::uint32_t lanes, bool want,
                                                 const array_slot& a, std::uint64_t page,
                                                 std::uint32_t bytes, std::uint32_t& line,
                                                 std::uint32_t& frame) const {
  std::uint64_t* const entry_word = want ? &a.large_table[piece_of(page)] : nullptr;
  // Lanes that want nothing use a key of their own: bit 63 is never set in a user address.
  const std::uint64_t key =
      want ? static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(entry_word))
           : (std::uint64_t{1} << 63) | warp::lane();
  const std::uint32_t peers = warp::match_any(lanes, key);
  const unsigned leader = warp::lowest_lane(peers);
  std::uint64_t held = 0;
  if (want && warp::lane() == leader) {
    frame_guard g;
    if (pinning_.enter(*entry_word, warp::popcount(peers), g) == enter_result::protected_frame) {
      held = g.entry;
    }
  }
  held = warp::shfl(peers, held, leader);
  bool hit = false;
  if (want && entry_coalesced(held)) {
    frame = entry_frame(held);
    // Not a splintered piece's: its shared frame's pins are drained by promotions and
    // compaction, which wait for them without the drain bound of claim_frame.
    hit = !entry_splintered(held) && resident_line(held, page, line) &&
          owner_is(a, held, piece_of(page));
    if (!hit) unpin(frame);  // our share of the leader's pins
  }
  // One hit per group that has one; its other hitting lanes rode on it.
  const std::uint32_t hits = warp::ballot(lanes, hit);
  const bool first = hit && warp::lane() == warp::lowest_lane(hits & peers);
  const std::uint32_t firsts = warp::ballot(lanes, first);
  count_lanes(a, lanes, hits, bytes, firsts, hits & ~firsts);
  return hit;
}

template <class Op>
BAM_HD io_status dense_cache_ref::access(const array_slot& a, std::uint64_t page,
                                         std::uint64_t within, std::uint32_t bytes,
                                         bool warp_groups, bool dirty, Op&& op) const {
  if (warp_groups) return access_among(warp::active_mask(), a, page, within, bytes, dirty, op);
  count(a, &cache_stats::accesses);
  count(a, &cache_stats::bytes_requested, bytes);
  return access_by_acquire(a, page, within, dirty, op);
}

template <class Op>
BAM_HD io_status dense_cache_ref::access_among(std::uint32_t here, const array_slot& a,
                                               std::uint64_t page, std::uint64_t within,
                                               std::uint32_t bytes, bool dirty, Op&& op) const {
  // Every collective below names its lanes: lanes that leave early are in no later mask.
  count_lanes(a, here, here, bytes, 0, 0);
  const bool served = group_hit(here, a, page, within, dirty, op);
  const std::uint32_t missed = warp::ballot(here, !served);
  if (served) return {};
  // Lanes that missed one page: one of them loads it (and serves its own access), the
  // others look again once it is done. Without this, every lane of a warp that reads one
  // line takes the miss path on its own, as half of a scan's accesses did (docs/mosaic.md).
  // Tenant ids are unique and pages below 2^48, so lanes share a key only for one page (a
  // lane looks again for its own page anyway).
  const std::uint64_t key = std::uint64_t{a.tenant} << 48 | page;
  const std::uint32_t same_page = warp::match_any(missed, key);
  const unsigned loader = warp::lowest_lane(same_page);
  if (same_page != (1u << loader)) {
    io_status s{};
    if (warp::lane() == loader) s = access_by_acquire(a, page, within, dirty, op);
    // The loader has released what it protected, and the others protect nothing: the wait
    // here holds up no eviction.
    warp::sync(same_page);
    if (warp::lane() == loader) return s;
    if (group_hit(same_page & ~(1u << loader), a, page, within, dirty, op)) return {};
  }
  return access_by_acquire(a, page, within, dirty, op);
}

template <class Op>
BAM_HD io_status dense_cache_ref::access(const array_slot& a, std::uint64_t page,
                                         std::uint64_t within, std::uint32_t bytes, bool dirty,
                                         reader_section& section, Op&& op) const {
  if (pool_.pinning != pinning_kind::epochs)
    return access(a, page, within, bytes, false, dirty, op);
  const std::uint32_t here = warp::active_mask();
  if (section.uses >= section_renewal) pinning_.close(section);
  bool served = false;
  if (pinning_.open(section)) {
    ++section.uses;
    const std::uint64_t e = pinning_.entry_in(section, a.large_table[piece_of(page)]);
    std::uint32_t line = 0;
    if (entry_coalesced(e) && resident_line(e, page, line) && owner_is(a, e, piece_of(page))) {
      op(cache_.line_data(line) + within);
      if (dirty) mark_dirty(line);
      served = true;
    }
  }
  const std::uint32_t missed = warp::ballot(here, !served);
  count_lanes(a, here, here, bytes, here & ~missed, 0);
  // A lane that misses may reserve a frame and wait for a grace period, and the lanes beside it
  // may wait for it to reconverge (the end of this call): they must not hold their sections
  // there. So when any lane here misses, every lane here closes (the miss path may wait).
  if (missed != 0) pinning_.close(section);
  if (served) return {};
  return access_by_acquire(a, page, within, dirty, op);
}

template <class Op>
BAM_HD io_status dense_cache_ref::access_by_acquire(const array_slot& a, std::uint64_t page,
                                                    std::uint64_t within, bool dirty,
                                                    Op& op) const {
  frame_guard g;
  const acquire_result r = acquire_then(a, page, agent_index(), g, [&](std::uint32_t line) {
    op(cache_.line_data(line) + within);
    if (dirty) mark_dirty(line);
    release(g);
  });
  count(a, r.kind == probe_kind::hit ? &cache_stats::hits : &cache_stats::misses);
  if (r.kind == probe_kind::miss_wait) count(a, &cache_stats::miss_waits);
  if (!r.status.ok()) {
    count(a, &cache_stats::errors);
    return r.status;
  }
  return {};
}

}  // namespace bam::cache::mosaic
