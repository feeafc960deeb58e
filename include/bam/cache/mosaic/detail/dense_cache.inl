#pragma once
// Definitions for dense_cache.hpp: the helpers its other parts share (dense_access.inl,
// dense_miss.inl, dense_eviction.inl, dense_splinter.inl). Each memory order says what it
// publishes or waits for.

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

}  // namespace detail

BAM_HD inline std::uint64_t dense_cache_ref::give_up_at(const array_slot* a) const {
  // A loader's wait is bounded by the queue's deadline, a reserver's by the victim search.
  const std::uint64_t io = a ? a->set.timeout_ns() : cache_.victim_timeout_ns();
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

}  // namespace bam::cache::mosaic
