#pragma once
/// @file
/// Mosaic in the page cache, part 1 (DESIGN 5, docs/mosaic.md): arrays declared dense are
/// translated through one 8-byte large entry per frame-sized piece and live in large frames
/// carved from the line pool, base page j of a piece in slot j of its frame.
///
/// - Static CoCoA: the first touch of a piece reserves a whole frame for it and publishes the
///   entry coalesced at once (the in-place coalescer has nothing to move); a frame serves one
///   tenant (array) at a time.
/// - Base pages fill their fixed slots on demand through the device set's queues, one command
///   per page as on the base path; threads that miss on a slot being loaded wait for it.
/// - A hit reads the large entry and the frame's resident bit, nothing per base page; the
///   frame is protected by frame pins or epochs (pinning.hpp), taken once per warp group.
/// - Eviction of one base page (drop_page) clears its resident bit; the piece stays coalesced.
///   Eviction of a frame (for a new reservation, by CLOCK over frames) closes its entry, waits
///   until no reader can use the frame, waits for loads in flight, writes dirty pages back,
///   empties the entry and hands the frame to the new piece.
///
/// Tenants: a dense array is a tenant; a frame serves one tenant at a time and is written back
/// and its bitmaps and owner cleared before another gets it. A tenant with a frame quota that
/// holds its quota evicts one of its own frames to reserve another. With check_owner (debug
/// builds by default) every hit checks the frame's owner against the reader's tenant and piece.
///
/// Rules that keep it deadlock-free: nobody waits while protecting a frame (a loader marks its
/// slot busy, leaves, then does the I/O; the busy bit keeps the frame); reservations and
/// evictions happen outside any protection; every wait is bounded and reports what it waited on.
///
/// dense_cache_ref is a view built from a page_cache_ref (cheap; build one where needed).

#include <cstdint>

#include <bam/cache/mosaic/frame_pool.hpp>
#include <bam/cache/mosaic/large_entry.hpp>
#include <bam/cache/mosaic/pinning.hpp>
#include <bam/cache/page_cache.hpp>
#include <bam/platform/config.hpp>

namespace bam::cache::mosaic {

class dense_cache_ref {
 public:
  BAM_HD explicit dense_cache_ref(const page_cache_ref& cache)
      : cache_(cache), pool_(cache.frames()), pinning_(cache.frames()) {}

  [[nodiscard]] BAM_HD const frame_pool_view& pool() const { return pool_; }
  [[nodiscard]] BAM_HD std::uint64_t piece_of(std::uint64_t page) const {
    return page >> pool_.geometry.frame_shift;
  }
  [[nodiscard]] BAM_HD std::uint32_t slot_of(std::uint64_t page) const {
    return static_cast<std::uint32_t>(page & (pool_.geometry.lines_per_frame - 1u));
  }

  /// Makes `page` of dense array `a` resident and protects its frame; the line is
  /// result.line. Call release(guard) when done with it. On failure nothing is held.
  [[nodiscard]] BAM_HD acquire_result acquire(const array_slot& a, std::uint64_t page,
                                              std::uint32_t hint, frame_guard& guard) const;
  BAM_HD void release(const frame_guard& guard) const { pinning_.leave(guard); }
  /// Marks a protected line dirty (before release).
  BAM_HD void mark_dirty(std::uint32_t line) const;

  /// One element access of `bytes` at `within` of `page`, by a whole warp when `warp_groups`:
  /// lanes touching one piece share one protection, taken by their leader; lanes whose slot
  /// is resident are served at once, the others go through acquire(). Counts statistics.
  /// Every active lane must call it (collectives).
  template <class Op>
  BAM_HD io_status access(const array_slot& a, std::uint64_t page, std::uint64_t within,
                          std::uint32_t bytes, bool warp_groups, bool dirty, Op&& op) const;

  /// Evicts one base page of `a`: clears its resident bit (writing it back first if dirty);
  /// the piece stays coalesced. False if the page was not resident or could not be taken now.
  BAM_HD bool drop_page(const array_slot& a, std::uint64_t page) const;
  /// Evicts frame `frame` if it serves a piece (as a reservation would), leaving it free.
  /// False if it was free, pinned, or could not be emptied.
  BAM_HD bool drop_frame(std::uint32_t frame) const;
  /// Writes back the dirty pages of `frame` if it serves array `a`. Run between launches
  /// (a writer storing into the frame meanwhile would race with the write-back).
  [[nodiscard]] BAM_HD io_status flush_frame(const array_slot& a, std::uint32_t frame) const;

 private:
  BAM_HD bool reserve(const array_slot& a, std::uint64_t piece, std::uint64_t& entry_word,
                      io_status& failure) const;
  BAM_HD bool claim_frame(const array_slot& a, bool own_only, std::uint32_t& frame,
                          std::uint64_t deadline_ns) const;
  BAM_HD bool admit(const array_slot& a) const;
  BAM_HD void give_back_admission(const array_slot& a) const;
  BAM_HD bool owner_is(const array_slot& a, std::uint32_t frame, std::uint64_t piece) const;
  BAM_HD acquire_result wrong_owner(const array_slot& a, std::uint64_t page) const;
  BAM_HD bool try_hold(std::uint32_t frame, std::uint64_t& s, bool want_open) const;
  BAM_HD void reopen(std::uint32_t frame) const;
  BAM_HD bool empty_held(std::uint32_t frame, std::uint64_t deadline_ns,
                         std::uint32_t keep_count_for = 0) const;
  BAM_HD bool wait_not_busy(std::uint32_t frame, std::uint64_t deadline_ns) const;
  BAM_HD bool write_back_dirty(const array_slot& owner, std::uint64_t piece,
                               std::uint32_t frame) const;
  BAM_HD void reset_bits(std::uint32_t frame) const;
  BAM_HD const array_slot* tenant_slot(std::uint32_t tenant, std::uint64_t piece) const;
  BAM_HD std::uint64_t give_up_at(const array_slot* a) const;

  page_cache_ref cache_;
  frame_pool_view pool_;
  frame_pinning pinning_;
};

}  // namespace bam::cache::mosaic

#include <bam/cache/mosaic/detail/dense_cache.inl>
