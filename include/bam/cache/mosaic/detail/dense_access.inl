#pragma once
// dense_cache_ref: the access entry points and the hit path. Lanes on one piece share one
// protection (group_hit), cursors pin a frame (pin_resident), and misses go to acquire_then
// (dense_miss.inl). Included by dense_cache.hpp.

#include <bam/cache/mosaic/detail/dense_cache.inl>  // the shared helpers

namespace bam::cache::mosaic {

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

BAM_HD BAM_NOINLINE inline io_status dense_cache_ref::access_element(const array_slot& a,
                                                                     std::uint64_t page,
                                                                     std::uint64_t within,
                                                                     bool warp_groups,
                                                                     const element_op& op) const {
  return access(a, page, within, op.bytes, warp_groups, op.store, op);
}

BAM_HD BAM_NOINLINE inline io_status dense_cache_ref::access_element_among(
    std::uint32_t lanes, const array_slot& a, std::uint64_t page, std::uint64_t within,
    const element_op& op) const {
  return access_among(lanes, a, page, within, op.bytes, op.store, op);
}

template <class Op>
BAM_HD BAM_NOINLINE io_status dense_cache_ref::access_by_acquire(const array_slot& a,
                                                                 std::uint64_t page,
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
