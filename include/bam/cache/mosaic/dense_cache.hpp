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
///   until no reader can use the frame, waits for loads in flight, writes dirty pages back
///   (up to write_back_batch commands in flight, on distinct queues), empties the entry and
///   hands the frame to the new piece.
///
/// Adaptive part (splinter and promote): when a frame is taken while its piece holds few pages
/// (frame_pool_view::splinter_percent), the piece is splintered: its pages (written back first)
/// move into holes of a *shared* frame of the same tenant, or the frame itself becomes that
/// tenant's shared frame when it has none, and the entry is published SPLINTERED naming the
/// shared frame. A shared frame keeps a tag per slot (the array page + 1) in its first
/// meta_lines() lines and is direct-mapped: page j of any hosted piece lives in slot
/// hosted_slot(j) (j itself for j >= meta_lines()). A hit on a splintered piece reads the entry,
/// protects the shared frame as usual, and checks the slot's resident bit and tag. A miss loads
/// into that slot when it is free; when it holds another page, or once the piece holds more
/// than promote_percent of the slots, the piece is promoted: its entry is closed, a frame is
/// reserved, its pages move into their fixed slots under their busy bits, and the entry is
/// published COALESCED again. Evicting a shared frame closes every entry that names it.
/// Compaction (CAC, compact_step; compactor.hpp runs it on a CPU thread) moves whole splintered
/// pieces out of a tenant's sparsest shared frame into its fullest other one and frees the
/// frame left empty.
///
/// Fill: once a coalesced piece holds frame_pool_view::fill_slots pages, the loader whose page
/// got it there loads every other page of the piece that is not resident, in commands of up to
/// two memory pages (fill_piece): dense use of a piece is then paid in a few large commands
/// instead of one per base page, which is what a device (and PCIe) serves best.
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
/// dense_cache_ref is a view of a page_cache_ref that outlives it (cheap; build one where needed).

#include <cstdint>
#include <cstring>

#include <bam/cache/mosaic/frame_pool.hpp>
#include <bam/cache/mosaic/large_entry.hpp>
#include <bam/cache/mosaic/pinning.hpp>
#include <bam/cache/page_cache.hpp>
#include <bam/platform/config.hpp>
#include <bam/platform/warp.hpp>

namespace bam::cache::mosaic {

/// One element access as a single type for every element type and direction: a store writes
/// `bytes` from `value` into the line, a load copies them from the line into `value`.
/// array_ref hands its dense accesses over as this type, so that the dense path (tens of
/// thousands of PTX lines) is compiled once per translation unit instead of once per element
/// type and direction: `bam gather` held eight copies of it, and its ptxas step took minutes.
struct element_op {
  void* value;
  std::uint32_t bytes;  ///< a power of two (array_ref's element sizes)
  bool store;

  BAM_HD void operator()(std::uint8_t* p) const {
    switch (bytes) {
      case 1:
        move<std::uint8_t>(p);
        break;
      case 2:
        move<std::uint16_t>(p);
        break;
      case 4:
        move<std::uint32_t>(p);
        break;
      case 8:
        move<std::uint64_t>(p);
        break;
      default:
        if (store) {
          std::memcpy(p, value, bytes);
        } else {
          std::memcpy(value, p, bytes);
        }
    }
  }

 private:
  // Elements are aligned in their line (array extents are checked at open), so one word moves.
  template <class W>
  BAM_HD void move(std::uint8_t* p) const {
    W* line = static_cast<W*>(static_cast<void*>(p));
    W* mine = static_cast<W*>(value);
    if (store) {
      *line = *mine;
    } else {
      *mine = *line;
    }
  }
};

class dense_cache_ref {
 public:
  /// Most write-backs a frame's write-back keeps in flight at once (fewer when the device set
  /// has fewer queues per device).
  static constexpr std::uint32_t write_back_batch = 16;
  /// How long a reservation waits for the pins of CLOCK's victim frame to drain before it
  /// reopens the frame and looks for another: pins held that long belong to readers that may
  /// themselves wait (a cursor's pin, kept while its warp waits for the reserving lane).
  static constexpr std::uint64_t victim_drain_ns = 100'000;
  /// Most commands a fill (fill_piece) keeps in flight at once (fewer when the device set has
  /// fewer queues per device).
  static constexpr std::uint32_t fill_batch = 32;
  /// Bitmap words a fill takes at once (4,096 slots: a 2 MiB frame of 512 B lines).
  static constexpr std::uint32_t fill_words = 64;

  /// A view: `cache` must outlive it. It keeps references, not copies, so that a kernel whose
  /// functor holds the page_cache_ref (in parameter space) reads its fields there: a copy in
  /// every thread's local memory (500 bytes, since acquire() is out of line and takes `this`)
  /// would cost the hit path loads that miss L1.
  BAM_HD explicit dense_cache_ref(const page_cache_ref& cache)
      : cache_(cache), pool_(cache.frames()), pinning_(cache.frames()) {}
  dense_cache_ref(const page_cache_ref&&) = delete;

  [[nodiscard]] BAM_HD const frame_pool_view& pool() const { return pool_; }
  [[nodiscard]] BAM_HD std::uint64_t piece_of(std::uint64_t page) const {
    return page >> pool_.geometry.frame_shift;
  }
  [[nodiscard]] BAM_HD std::uint32_t slot_of(std::uint64_t page) const {
    return static_cast<std::uint32_t>(page & (pool_.geometry.lines_per_frame - 1u));
  }

  /// Makes `page` of dense array `a` resident and protects its frame; the line is
  /// result.line. Call release(guard) when done with it. On failure nothing is held.
  /// On the GPU prefer acquire_then(): a thread that keeps the protection past acquire()'s
  /// return may wait there for lanes of its warp to reconverge, one of which may be waiting
  /// for that very protection to end (a reservation's grace period, or its wait for a frame
  /// without pins); the wait then lasts until that lane's timeout.
  [[nodiscard]] BAM_HD acquire_result acquire(const array_slot& a, std::uint64_t page,
                                              std::uint32_t hint, frame_guard& guard) const;
  /// acquire(), with `use(line)` called under the protection in the same turn of the loop
  /// that found the line resident. `use` must end with release(guard) (or the caller's
  /// equivalent) when the caller runs on a GPU: then no thread holds a frame at a point where
  /// its warp could reconverge (the end of the loop, of acquire, of the caller) with a lane
  /// that went on to reserve or evict. On failure `use` is not called and nothing is held.
  template <class Use>
  [[nodiscard]] BAM_HD acquire_result acquire_then(const array_slot& a, std::uint64_t page,
                                                   std::uint32_t hint, frame_guard& guard,
                                                   Use&& use) const;
  BAM_HD void release(const frame_guard& guard) const {
    if (guard.base_line != 0) {
      cache_.release(guard.base_line - 1u);
    } else {
      pinning_.leave(guard);
    }
  }
  /// Marks a protected line dirty (before release).
  BAM_HD void mark_dirty(std::uint32_t line) const;

  /// One element access of `bytes` at `within` of `page`, by a whole warp when `warp_groups`:
  /// lanes touching one piece share one protection, taken by their leader; lanes whose slot
  /// is resident are served at once. Of the lanes that miss one page, one goes through
  /// acquire() and the others look again once it is done. Counts statistics. Every active lane
  /// must call it (collectives).
  template <class Op>
  BAM_HD io_status access(const array_slot& a, std::uint64_t page, std::uint64_t within,
                          std::uint32_t bytes, bool warp_groups, bool dirty, Op&& op) const;
  /// access() with warp groups, called by every lane of `lanes` and no other (for callers that
  /// know which lanes are here: a subset of a warp that is itself inside a collective call).
  template <class Op>
  BAM_HD io_status access_among(std::uint32_t lanes, const array_slot& a, std::uint64_t page,
                                std::uint64_t within, std::uint32_t bytes, bool dirty,
                                Op&& op) const;

  /// access() and access_among() for an element_op (dirty when it stores), out of line: every
  /// array_ref<T> calls these, so a unit compiles the dense path once whatever its element types.
  BAM_HD io_status access_element(const array_slot& a, std::uint64_t page, std::uint64_t within,
                                  bool warp_groups, const element_op& op) const;
  BAM_HD io_status access_element_among(std::uint32_t lanes, const array_slot& a,
                                        std::uint64_t page, std::uint64_t within,
                                        const element_op& op) const;

  /// Accesses a section serves before it is closed and opened again, so that a grace period
  /// waits for at most this many of a reader's accesses.
  static constexpr std::uint32_t section_renewal = 64;
  /// access() for one thread that keeps an epoch section open across calls (pinning_kind::
  /// epochs; under frame pins it is access() without warp groups, and `section` stays closed).
  /// A hit reads the large entry and the resident bit inside the section: no announcement, fence
  /// or atomic read-modify-write of its own. A miss closes the section before it goes through
  /// acquire() (which may wait), and so do the lanes that call it together with a missing
  /// lane (they may wait for it to reconverge). Lanes need not call it together. Call
  /// close(section) before the thread waits for anything else, before it ends, and on the GPU
  /// before any point where lanes of its warp may wait for each other (the end of a loop whose
  /// lanes run different trip counts): a lane there waits for the others with its section open.
  template <class Op>
  BAM_HD io_status access(const array_slot& a, std::uint64_t page, std::uint64_t within,
                          std::uint32_t bytes, bool dirty, reader_section& section, Op&& op) const;
  BAM_HD void close(reader_section& section) const { pinning_.close(section); }

  /// For cursors that keep a frame pin between accesses (pinning_kind::frame_pins only): the
  /// lanes of `lanes` that `want` pin the frame of their `page`, grouped by piece as in
  /// access() (the leader pins for its group). True, with `line` and `frame`, for a lane whose
  /// page is resident in a frame of its piece's own (not a shared frame, whose pins promotions
  /// and compaction wait out): it then holds one pin of that frame (unpin(frame) drops it), and its
  /// access of `bytes` is counted as a hit (or coalesced under its group's). A lane whose page
  /// is not resident holds nothing and counts nothing. Never waits; every lane of `lanes`
  /// calls it (collectives). The caller must not wait, nor let its warp wait for a lane that
  /// does, while it holds the pin (array_ref's cursor drops every pin of a warp before any of
  /// its lanes goes through a miss).
  BAM_HD bool pin_resident(std::uint32_t lanes, bool want, const array_slot& a, std::uint64_t page,
                           std::uint32_t bytes, std::uint32_t& line, std::uint32_t& frame) const;
  /// Drops one pin of `frame` taken by pin_resident.
  BAM_HD void unpin(std::uint32_t frame) const { frame_unpin(pool_, frame, 1); }

  /// Evicts one base page of `a`: clears its resident bit (writing it back first if dirty);
  /// the piece stays coalesced. False if the page was not resident or could not be taken now,
  /// or its piece is splintered (its pages leave with promotion or the shared frame).
  BAM_HD bool drop_page(const array_slot& a, std::uint64_t page) const;
  /// Evicts frame `frame` if it serves a piece or is a shared frame, leaving it free (it never
  /// splinters). False if it was free, pinned, or could not be emptied.
  BAM_HD bool drop_frame(std::uint32_t frame) const;
  /// Lines at the start of a shared frame that hold its per-slot tags.
  [[nodiscard]] BAM_HD std::uint32_t meta_lines() const;
  /// The slot of a shared frame that page j of a splintered piece lives in.
  [[nodiscard]] BAM_HD std::uint32_t hosted_slot(std::uint32_t j) const {
    const std::uint32_t m = meta_lines();
    return j >= m ? j : pool_.geometry.lines_per_frame - m + j;
  }
  /// True when frames are large enough to hold shared frames and splintering is on.
  [[nodiscard]] BAM_HD bool splinters() const;
  /// Pages of `piece` held by shared frame `frame` (a scan of its tags).
  [[nodiscard]] BAM_HD std::uint32_t pages_in(std::uint32_t frame, std::uint64_t piece) const;
  /// Writes back the dirty pages of `frame` if it serves array `a`. Run between launches
  /// (a writer storing into the frame meanwhile would race with the write-back).
  [[nodiscard]] BAM_HD io_status flush_frame(const array_slot& a, std::uint32_t frame) const;

  /// What one compaction step did.
  enum class compact_result : std::uint8_t {
    idle,   ///< the tenant has fewer than two shared frames, or no piece fits elsewhere
    moved,  ///< a piece moved into another shared frame; its old one still hosts others
    freed,  ///< a piece moved and the shared frame it left, now empty, is free
    retry,  ///< a frame or the piece was busy (promoted, evicted, loading): try again later
  };
  /// One step of contiguity-aware compaction (CAC) for dense array `a`: moves every page of one
  /// splintered piece out of the tenant's sparsest shared frame into the free slots (the same
  /// hosted slots) of its fullest other shared frame, then re-points the piece's entry there;
  /// the frame left empty is freed. Readers of the moving piece wait for it (as for a
  /// promotion); readers of every other piece, and every other tenant, go on. Any thread may
  /// call it, concurrently with everything else, outside any protection; it never waits
  /// while it protects a frame, and every wait is bounded by the victim timeout.
  BAM_HD compact_result compact_step(const array_slot& a) const;
  /// Frames neither OPEN nor HELD (a scan; a hint for when to compact).
  [[nodiscard]] BAM_HD std::uint32_t free_frames() const;

 private:
  enum class shared_step : std::uint8_t { hit, loaded, wait, promote, failed };
  enum class splinter_result : std::uint8_t { none, moved, converted };

  /// access()'s hit path for the warp's `lanes` (each of them calls it): the group of lanes on
  /// one piece enters once, and the lanes whose page is resident run `op`. True for the lanes
  /// served (counted as hits, or coalesced for all but the leader).
  template <class Op>
  BAM_HD bool group_hit(std::uint32_t lanes, const array_slot& a, std::uint64_t page,
                        std::uint64_t within, bool dirty, Op& op) const;
  /// The unprotected tail of both access()es: acquire_then() with `op` and the release, counted.
  template <class Op>
  BAM_HD io_status access_by_acquire(const array_slot& a, std::uint64_t page, std::uint64_t within,
                                     bool dirty, Op& op) const;
  BAM_HD void count(const array_slot& a, std::uint64_t cache_stats::*member,
                    std::uint64_t by = 1) const {
    // Arrays count; a caller without statistics (the translation benchmark) passes none.
    if (a.stats.shards != nullptr) a.stats.add(member, by);
  }
  /// Counts for a warp's lanes at once, one shard update per warp instead of one per lane (a
  /// hot shard line per SM took three atomics from every lane of every access): each lane of
  /// `lanes` calls it, and the lowest adds the accesses of `accessing` (of `bytes` each), the
  /// lanes of `hits` as hits and those of `coalesced` as served under a leader's protection.
  BAM_HD void count_lanes(const array_slot& a, std::uint32_t lanes, std::uint32_t accessing,
                          std::uint32_t bytes, std::uint32_t hits, std::uint32_t coalesced) const {
    if (a.stats.shards == nullptr || warp::lane() != warp::lowest_lane(lanes)) return;
    cache_stats& s = a.stats.local();
    const std::uint32_t n = warp::popcount(accessing);
    stats_ref::bump(s.accesses, n);
    stats_ref::bump(s.bytes_requested, std::uint64_t{n} * bytes);
    stats_ref::bump(s.hits, warp::popcount(hits));
    stats_ref::bump(s.coalesced, warp::popcount(coalesced));
  }

  /// acquire_then past its deadline: records the timeout.
  BAM_HD acquire_result gave_up(const array_slot& a, std::uint64_t page) const;
  BAM_HD bool reserve(const array_slot& a, std::uint64_t piece, std::uint64_t& entry_word,
                      io_status& failure) const;
  BAM_HD bool claim_reserved(const array_slot& a, std::uint64_t deadline_ns,
                             std::uint32_t& frame) const;
  BAM_HD std::uint64_t publish_open(const array_slot& a, std::uint64_t piece,
                                    std::uint32_t frame) const;
  BAM_HD void open_pinned(std::uint32_t frame, std::uint64_t e) const;
  BAM_HD void reopen_pinned(std::uint32_t frame) const;
  BAM_HD void free_held(const array_slot& a, std::uint32_t frame) const;
  BAM_HD shared_step use_shared(const array_slot& a, std::uint64_t page, std::uint32_t hint,
                                frame_guard& guard, std::uint32_t& line, io_status& failure) const;
  BAM_HD bool holds(std::uint32_t frame, std::uint32_t k, std::uint64_t page) const;
  BAM_HD std::uint64_t& tag_word(std::uint32_t frame, std::uint32_t k) const;
  BAM_HD bool resident_line(std::uint64_t e, std::uint64_t page, std::uint32_t& line) const;
  BAM_HD void promote(const array_slot& a, std::uint64_t piece, std::uint64_t e) const;
  BAM_HD void restore_splintered(const array_slot& a, std::uint64_t piece, std::uint64_t e) const;
  BAM_HD bool find_shared(std::uint32_t tenant, std::uint32_t exclude, std::uint64_t& e) const;
  BAM_HD splinter_result splinter(const array_slot& owner, std::uint64_t piece,
                                  std::uint32_t frame) const;
  BAM_HD bool convert_to_shared(const array_slot& owner, std::uint64_t piece,
                                std::uint32_t frame) const;
  BAM_HD bool empty_shared(std::uint32_t frame, std::uint64_t deadline_ns,
                           std::uint32_t keep_count_for) const;
  BAM_HD const array_slot* tenant_array(std::uint32_t tenant) const;
  BAM_HD void copy_line(std::uint32_t from, std::uint32_t to) const;
  BAM_HD std::uint32_t slot_bit_count(std::uint64_t* bits, std::uint32_t frame) const;
  /// One CLOCK step over frames (a chunk): a free frame, else the first unreferenced frame
  /// holding fewer than `fewer_than` pages, emptied and HELD for the caller.
  BAM_HD bool claim_frame(const array_slot& a, bool own_only, std::uint32_t& frame,
                          std::uint64_t deadline_ns, std::uint32_t fewer_than = ~0u) const;
  /// Base first (detail/base_first.inl). Pages a BASE piece must hold to be promoted.
  BAM_HD std::uint32_t base_promote_slots() const;
  /// Promotes BASE piece `piece` (entry `e`) into a frame of its own: closes the entry, claims
  /// a free frame or a victim with fewer pages, takes every page of the piece off the base
  /// path, moves the resident ones into their slots and publishes the entry COALESCED. When no
  /// frame or page can be had in time the entry is BASE again, with half its count (so that
  /// the next try waits for more loads). True when the entry changed (look again).
  /// `early`: a try that takes only a free frame (below).
  BAM_HD bool promote_base(const array_slot& a, std::uint64_t piece, std::uint64_t e,
                           bool early) const;
  /// Whether BASE entry `e` is due a promotion try: past promote_percent, or (`early`) past
  /// the fill threshold when fills are on, for a free frame only. Filled at once, a frame that
  /// nobody else wanted holds data rather than nothing, and a piece used densely skips most
  /// of its base phase (one command per page).
  BAM_HD bool promotion_due(std::uint64_t e, bool& early) const;
  BAM_HD bool claim_for_promotion(const array_slot& a, std::uint32_t pages, bool free_only,
                                  std::uint32_t& frame) const;
  /// Blocks every page entry of `piece` (a load in progress is waited for), takes the lines
  /// of its mapped pages BUSY and waits for their pins to drain; false past the deadline,
  /// with everything given back.
  BAM_HD bool take_base_pages(const array_slot& a, std::uint64_t piece,
                              std::uint64_t deadline_ns) const;
  /// Gives back what take_base_pages took of pages [first, end).
  BAM_HD void give_back_base_pages(const array_slot& a, std::uint64_t first,
                                   std::uint64_t end) const;
  /// Copies the taken lines of `piece` into their slots of HELD `frame` (dirty bits kept) and
  /// frees them; returns how many.
  BAM_HD std::uint32_t move_base_pages(const array_slot& a, std::uint64_t piece,
                                       std::uint32_t frame) const;
  /// The page entries of `piece` become unmapped again (its frame is being emptied).
  BAM_HD void unblock_base_pages(const array_slot& a, std::uint64_t piece) const;
  /// One past the last page of `piece` in `a` (the last piece may be short).
  BAM_HD std::uint64_t piece_end(const array_slot& a, std::uint64_t piece) const;
  BAM_HD bool admit(const array_slot& a) const;
  BAM_HD void give_back_admission(const array_slot& a) const;
  BAM_HD bool owner_is(const array_slot& a, std::uint64_t e, std::uint64_t piece) const;
  BAM_HD acquire_result wrong_owner(const array_slot& a, std::uint64_t page) const;
  BAM_HD bool try_hold(std::uint32_t frame, std::uint64_t& s, bool want_open) const;
  /// Takes an OPEN frame HELD whatever its pins (new pins fail from then on), closes the entry
  /// of the piece it serves (`closed`: the entry it held; 0 for a shared frame, or when the
  /// entry did not name the frame yet) and waits for the pins to drain. Under heavy traffic a
  /// frame may never be seen with no pins at all, which try_hold needs; and readers pin without
  /// looking at the frame word (frame_pin), so only the closed entry stops new pins. On timeout
  /// the entry and the frame are as before and the result false.
  BAM_HD bool hold_and_drain(std::uint32_t frame, std::uint64_t& s, std::uint64_t deadline_ns,
                             std::uint64_t& closed) const;
  BAM_HD void reopen(std::uint32_t frame) const;
  /// Empties a HELD frame. `closed`: the entry hold_and_drain closed, if it did.
  BAM_HD bool empty_held(std::uint32_t frame, std::uint64_t deadline_ns,
                         std::uint32_t keep_count_for = 0, bool allow_splinter = false,
                         std::uint64_t closed = 0) const;
  /// Waits until no slot of `frame` is busy (false past the deadline); with `drain_for`, drains
  /// that array's queues meanwhile (a cold caller: flush).
  BAM_HD bool wait_not_busy(std::uint32_t frame, std::uint64_t deadline_ns,
                            const array_slot* drain_for = nullptr) const;
  /// Writes back the dirty pages of HELD `frame`. Each slot leaves use (busy, not resident)
  /// while its command runs; a command abandoned after a timeout keeps it so until its late
  /// completion is drained. False (recorded) when a write failed or was abandoned.
  BAM_HD bool write_back_dirty(const array_slot& owner, std::uint64_t piece,
                               std::uint32_t frame) const;
  enum class page_write : std::uint8_t { written, failed, abandoned };
  /// Writes back page `page` of `a` from its slot of `frame`; the caller holds the slot's busy
  /// bit and has cleared its resident bit. Written: the dirty bit is cleared. Failed
  /// (recorded): the slot is the caller's as before. Abandoned (recorded): the command may
  /// still run, and the slot is the queue's until its late completion is drained, which sets
  /// the resident bit and clears the busy bit; the caller leaves both alone.
  BAM_HD page_write write_back_page(const array_slot& a, std::uint64_t page,
                                    std::uint32_t frame) const;
  /// Records that flush_frame could not write `frame` back in time.
  BAM_HD io_status flush_timeout(const array_slot& a, std::uint32_t frame) const;
  BAM_HD void retire(std::uint32_t frame) const;
  /// Marks `bits` of the busy word `busy_word` as held by abandoned commands (a hint for
  /// victim searches; the late completion's drain clears the busy bits as before).
  BAM_HD void note_abandoned(std::uint64_t& busy_word, std::uint64_t bits) const;
  /// Whether a slot of `frame` is busy and was last held by an abandoned command: emptying the
  /// frame would wait for a completion that may never come (a dropped one), so a victim search
  /// passes over it. A hint; a slot reloaded since may make a frame look so while it loads.
  BAM_HD bool holds_abandoned_slot(std::uint32_t frame) const;
  BAM_HD const array_slot* tenant_slot(std::uint32_t tenant, std::uint64_t piece) const;
  BAM_HD bool hosts_page_of(std::uint32_t shared, std::uint32_t k, std::uint64_t piece) const;
  BAM_HD bool take_shared(std::uint64_t e) const;
  /// Waits until `frame` has no pins (false past the deadline).
  BAM_HD bool wait_unpinned(std::uint32_t frame, std::uint64_t deadline_ns) const;
  BAM_HD bool quiesce_piece(std::uint32_t shared, std::uint64_t piece,
                            std::uint64_t deadline_ns) const;
  BAM_HD bool take_piece_slots(std::uint32_t shared, std::uint64_t piece, std::uint64_t deadline_ns,
                               std::uint32_t& taken) const;
  BAM_HD bool pick_compaction(const array_slot& a, std::uint64_t& from, std::uint64_t& to) const;
  BAM_HD bool pick_piece(const array_slot& a, std::uint64_t from, std::uint64_t to,
                         std::uint64_t& piece) const;
  BAM_HD bool fits(std::uint32_t from, std::uint32_t to, std::uint64_t piece) const;
  BAM_HD bool take_targets(std::uint32_t from, std::uint32_t to, std::uint64_t piece) const;
  /// Ends our hold of the slots of `frame` that host pages of `piece` in `from`, below `end`.
  BAM_HD void release_slots(std::uint32_t from, std::uint32_t frame, std::uint64_t piece,
                            std::uint32_t end) const;
  BAM_HD std::uint32_t move_pages(std::uint32_t from, std::uint32_t to, std::uint64_t piece) const;
  BAM_HD compact_result move_piece(const array_slot& a, std::uint64_t piece, std::uint64_t from,
                                   std::uint64_t to) const;
  BAM_HD void abandon_move(const array_slot& a, std::uint64_t piece, std::uint64_t from) const;
  BAM_HD bool free_if_empty(const array_slot& a, std::uint32_t frame) const;
  BAM_HD std::uint64_t give_up_at(const array_slot* a) const;
  /// Fill: whether a load that found `resident_before` pages in its frame brings the piece to
  /// frame_pool_view::fill_slots (one loader per piece gets there).
  BAM_HD bool fill_due(std::uint32_t resident_before) const;
  /// Loads every page of coalesced piece `piece` (entry `e`) that is neither resident nor being
  /// loaded, in runs of consecutive slots, one command of up to two memory pages per run and up
  /// to fill_batch commands in flight. Unprotected; takes the busy bits of up to fill_words
  /// words at once under a protection of its own, and stops when the entry changed or a
  /// command failed. Errors are not
  /// recorded: the pages stay empty, and a reader that needs one meets the error on its own load.
  BAM_HD void fill_piece(const array_slot& a, std::uint64_t piece, std::uint64_t e) const;
  /// fill_piece's slots of bitmap words [first, first + words), into `mine`: under one
  /// protection, the busy bits of the slots that were neither resident nor busy. False (and
  /// nothing taken) when the entry is no longer `e`.
  BAM_HD bool fill_take(const array_slot& a, std::uint64_t piece, std::uint64_t e,
                        std::uint32_t first, std::uint32_t words, std::uint64_t* mine) const;
  /// How many of `lines` consecutive slots from `slot` (page `page`) one command can read.
  BAM_HD std::uint32_t fill_run(const array_slot& a, std::uint64_t page, std::uint32_t slot,
                                std::uint32_t lines, std::uint32_t frame) const;

  const page_cache_ref& cache_;
  const frame_pool_view& pool_;
  frame_pinning pinning_;
};

}  // namespace bam::cache::mosaic

#include <bam/cache/mosaic/detail/base_first.inl>
#include <bam/cache/mosaic/detail/compaction.inl>
#include <bam/cache/mosaic/detail/dense_access.inl>
#include <bam/cache/mosaic/detail/dense_cache.inl>
#include <bam/cache/mosaic/detail/dense_eviction.inl>
#include <bam/cache/mosaic/detail/dense_miss.inl>
#include <bam/cache/mosaic/detail/dense_splinter.inl>
#include <bam/cache/mosaic/detail/fill.inl>
