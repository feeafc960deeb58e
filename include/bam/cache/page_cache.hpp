#pragma once
/// @file
/// BaM's software page cache (seed 000 sections 4.1, 4.3, 4.4; DESIGN section 5).
///
/// A fixed pool of lines allocated at start-up. Translation (array page -> line, one 32-bit
/// entry per page in each array's page table) is kept apart from line state (one 64-bit word
/// per line, line_state.hpp). A hit reads the page entry and pins the line with one atomic; a
/// miss locks the page entry (unmapped -> loading), picks a victim by CLOCK with a hand that
/// advances in chunks, skips pinned lines, writes back a dirty victim, reads the page through
/// the device set's queues and publishes the line. Threads that miss on a page that is loading
/// wait for it (one command per page load).
///
/// Pinning is behind acquire()/release(): a per-line count today; callers never see which.
/// The cache cannot deadlock on its own size: no caller holds a pin while it waits on a load,
/// and the victim search is bounded.
///
/// A buffer named by a command that may still run is not reused (docs/protocols.md): a line
/// whose read or write-back was abandoned stays BUSY, and a bounce buffer taken, until the
/// queue that drains the late completion gives it back (command_hold).
///
/// page_cache (cache_owner.hpp) owns the memory; page_cache_ref is what kernels hold.

#include <cstdint>
#include <type_traits>

#include <bam/cache/cache_config.hpp>
#include <bam/cache/error_record.hpp>
#include <bam/cache/line_state.hpp>
#include <bam/cache/mosaic/frame_pool.hpp>
#include <bam/cache/stats.hpp>
#include <bam/nvme/status.hpp>
#include <bam/platform/config.hpp>
#include <bam/storage/device_set.hpp>
#include <bam/storage/io.hpp>

namespace bam {

/// What the cache knows of one array that uses it: where its pages live on the device set,
/// its page table, statistics and error record.
struct array_slot {
  std::uint64_t tag_base = 0;  ///< global page id of the array's page 0
  std::uint64_t pages = 0;
  std::uint32_t* page_table = nullptr;
  std::uint64_t first_line = 0;  ///< set line index of page 0
  device_set_ref set;
  stats_ref stats;
  error_record* errors = nullptr;
  std::uint32_t writable = 0;
  /// Declared dense on a two_level cache: one large entry per frame-sized piece
  /// (cache/mosaic/dense_cache.hpp); page_table is then unused. Null: base pages.
  std::uint64_t* large_table = nullptr;
  std::uint32_t tenant = 0;  ///< frame owner id of a dense array (never reused by the cache)
  /// Most frames the tenant may hold at once (0: no quota); a reservation at the quota
  /// evicts one of the tenant's own frames.
  std::uint32_t frame_quota = 0;
  /// Frames the tenant holds, counting reservations in progress (a word of cache memory).
  std::uint32_t* frames_held = nullptr;
  /// A fresh array's pages written to the devices at least once, a bit each (null: not a
  /// fresh array). A missed page whose bit is clear is zero-filled instead of read.
  std::uint32_t* stored_pages = nullptr;
};
static_assert(std::is_trivially_copyable_v<array_slot>);

/// How an acquire went.
/// moved: the page's entry is blocked (a dense array's piece left base pages, base_first):
/// nothing is pinned; look at the piece's large entry again.
/// fill: a miss on a memory set whose copy the caller's group makes (acquire's group_fills):
/// `line` is BUSY and tagged, the page entry loading, until page_cache_ref::fill_among.
enum class probe_kind : std::uint8_t {
  hit = 0,
  miss = 1,
  miss_wait = 2,
  failed = 3,
  moved = 4,
  fill = 5
};

struct acquire_result {
  std::uint32_t line = 0;
  io_status status;
  probe_kind kind = probe_kind::hit;

  /// Packs into one word for a warp shuffle.
  BAM_HD std::uint64_t pack() const {
    return std::uint64_t{line} | (std::uint64_t{status.bits() & 0xffffffu} << 32) |
           (std::uint64_t{static_cast<std::uint8_t>(kind)} << 56);
  }
  BAM_HD static acquire_result unpack(std::uint64_t w) {
    return {static_cast<std::uint32_t>(w),
            io_status::from_bits(static_cast<std::uint32_t>(w >> 32) & 0xffffffu),
            static_cast<probe_kind>(w >> 56)};
  }
};

/// A line's command between page_cache_ref::line_io_submit and line_io_finish.
struct line_io_issued {
  io_issued io;  ///< io.where names the command when either half fails
  std::uint64_t bytes = 0;
  nvme::io_opcode op = nvme::io_opcode::read;
};

/// Where a line a prefetch asked for stands (page_cache_ref::start_load, end_load).
enum class started_kind : std::uint8_t {
  pinned = 0,    ///< resident: `line` holds the page with one pin of the caller's
  issued = 1,    ///< the caller loads it: `line` BUSY, its read in flight until end_load
  deferred = 2,  ///< nothing started (another thread loads it, no victim at once): end_load
                 ///< acquires it as a miss does
  failed = 3,    ///< the load failed (`status`, recorded); nothing held
};

/// One line of a prefetch between page_cache_ref::start_load and end_load.
struct started_load {
  line_io_issued read;  ///< kind issued: the command in flight
  std::uint64_t page = 0;
  std::uint32_t line = 0;
  io_status status;  ///< kind failed
  started_kind kind = started_kind::deferred;
};

/// A view of a page cache, passed to kernels by value. All members may be called by any
/// number of threads at once.
class page_cache_ref {
 public:
  /// Pins the line holding `page` of `array` `pins` times (a warp leader pins for its group),
  /// loading it on a miss. On failure the status says why and nothing is pinned. With
  /// `group_fills`, a miss on a memory set is not copied here: it comes back as
  /// probe_kind::fill, and the caller's group of `pins` lanes calls fill_among.
  [[nodiscard]] BAM_HD acquire_result acquire(const array_slot& array, std::uint64_t page,
                                              std::uint32_t pins, std::uint32_t hint,
                                              bool group_fills = false) const;

  /// Ends an acquire that came back as probe_kind::fill, called by every lane of `group` (the
  /// lanes that shared the probe; `lead` is the one that probed): each copies its share of
  /// the page from the memory set into `line`, then the leader publishes the line with one pin
  /// per lane. A warp copies a line with 16-byte loads side by side, so from pinned host
  /// memory each round of them crosses PCIe as one 512-byte read, all rounds in flight at once.
  BAM_HD void fill_among(const array_slot& array, std::uint64_t page, std::uint32_t line,
                         std::uint32_t group, bool lead) const;

  /// Drops `pins` pins taken by acquire.
  BAM_HD void release(std::uint32_t line, std::uint32_t pins = 1) const;

  /// Marks a pinned line dirty (call before release).
  BAM_HD void mark_dirty(std::uint32_t line) const;

  /// Writes `line` back if it is dirty and belongs to `array`; waits (bounded) for pins to
  /// drop. Used by flush(). Every failure is recorded in the array's error record.
  [[nodiscard]] BAM_HD io_status flush_line(const array_slot& array, std::uint32_t line) const;

  /// Reads `bytes` at set byte `set_byte` of `array` without caching, through a bounce
  /// buffer, into `out` (mode none, and launches too large for the cache).
  [[nodiscard]] BAM_HD io_status read_through(const array_slot& array, std::uint64_t set_byte,
                                              std::uint32_t bytes, void* out,
                                              std::uint32_t hint) const;

  [[nodiscard]] BAM_HD std::uint8_t* line_data(std::uint32_t line) const {
    return data_ + std::uint64_t{line} * line_bytes_;
  }
  [[nodiscard]] BAM_HD std::uint32_t line_bytes() const { return line_bytes_; }
  [[nodiscard]] BAM_HD std::uint32_t line_shift() const { return line_shift_; }
  [[nodiscard]] BAM_HD std::uint32_t lines() const { return lines_; }
  [[nodiscard]] BAM_HD std::uint64_t line_state(std::uint32_t line) const;
  /// The frame pool of a two_level cache (frames == 0 otherwise): lines [0, frame_lines) are
  /// frames, and the base CLOCK searches only the lines after them.
  [[nodiscard]] BAM_HD const cache::mosaic::frame_pool_view& frames() const { return frames_; }
  [[nodiscard]] BAM_HD std::uint64_t victim_timeout_ns() const { return victim_timeout_ns_; }
  [[nodiscard]] BAM_HD std::uint32_t slot_count() const { return slot_count_; }
  [[nodiscard]] BAM_HD const array_slot* slot_at(std::uint32_t i) const { return &slots_[i]; }

  /// Takes `line` BUSY if it holds global page `tag` - 1, VALID, with no other holder. Pins
  /// already taken stay (their readers finish; drain_line waits for them) and new ones fail.
  /// For moving a page out of the base pool.
  BAM_HD bool try_take_line(std::uint32_t line, std::uint64_t tag) const;
  /// Waits until a line taken by try_take_line has no pins; false past the deadline.
  BAM_HD bool drain_line(std::uint32_t line, std::uint64_t deadline_ns) const;
  /// Ends a hold taken by try_take_line: with `empty` the line no longer holds its page (not
  /// VALID nor dirty, no tag: the next victim search takes it first), else it is as it was.
  BAM_HD void end_take(std::uint32_t line, bool empty) const;

  /// Reads or writes page `page` of `a` into or from `line` (one command); counts it. On a
  /// failure with where.abandoned the command may still run: the queue keeps `hold` (what
  /// the caller holds for the line) and gives it back once the late completion is drained,
  /// so the caller must leave it alone.
  BAM_HD io_status line_io(nvme::io_opcode op, const array_slot& a, std::uint64_t page,
                           std::uint32_t line, std::uint32_t hint, io_where& where,
                           const command_hold& hold = {}) const;

  /// line_io's first half: issues the command without waiting. On success it is in flight
  /// and the caller keeps `line` (and its PRP list) untouched until line_io_finish(out); on
  /// failure nothing is in flight unless out.io.where.abandoned (then the queue keeps `hold`).
  /// `hint` picks the queue (hint % queues per device); a caller holding several commands
  /// follows device_io_submit's rule on queues. `lines` > 1 moves pages page.. into lines
  /// line.. in one command: the lines must be adjacent, in one stripe, and span at most two
  /// memory pages (only `line`'s PRP list is there).
  BAM_HD io_status line_io_submit(nvme::io_opcode op, const array_slot& a, std::uint64_t page,
                                  std::uint32_t line, std::uint32_t hint, line_io_issued& out,
                                  std::uint32_t lines = 1, const command_hold& hold = {}) const;
  /// line_io's second half: waits for the command and counts it as line_io does; on a
  /// timeout the command is abandoned (issued.io.where.abandoned) with its hold.
  BAM_HD io_status line_io_finish(const array_slot& a, line_io_issued& issued) const;

  /// Starts the load of `page` of `a` and returns at once (a prefetch): a resident page is
  /// pinned; a page this thread wins (unmapped -> loading) takes a victim found without
  /// waiting, is tagged BUSY and has its read submitted on queue index `queue` (< queues per
  /// device); anything else is deferred to end_load. A dirty victim is written back first only
  /// when `holds_commands` is false (the write-back may need any queue); otherwise the victim
  /// is given back and the page deferred. Counts the probe (hit or miss) and, for an issued
  /// read, `prefetched`. The caller follows device_io_submit's rule on queues: `queue` above
  /// every command it holds.
  [[nodiscard]] BAM_HD started_load start_load(const array_slot& a, std::uint64_t page,
                                               std::uint32_t queue, bool holds_commands) const;
  /// Ends a started load of kind issued: waits for the read and publishes the line (VALID
  /// with the caller's pin, then the page entry), or records its failure as a miss's load
  /// does. Afterwards `s` is pinned or failed; other kinds are left as they are (a deferred
  /// page is acquired as any miss, once the caller holds no command: acquire may load).
  BAM_HD void end_load(const array_slot& a, started_load& s) const;

  /// Set up by the owner.
  struct memory {
    std::uint8_t* data;
    std::uint64_t* state;
    std::uint32_t* referenced;
    std::uint64_t* hand;
    std::uint64_t* prp_lists;
    std::uint32_t prp_per_line;
    std::uint8_t* bounce;
    std::uint64_t* bounce_busy;  ///< a flag per buffer (a hold word), then a release count
    std::uint32_t bounce_count;
    std::uint32_t bounce_bytes;
    array_slot* slots;
    std::uint32_t slot_count;
    cache::mosaic::frame_pool_view frames;  ///< two_level only
  };
  page_cache_ref() = default;
  BAM_HD page_cache_ref(const memory& m, const cache_config& c, std::uint32_t lines);

 private:
  /// acquire past its first look: waits, misses and failures. `waited`: a pin attempt already
  /// found the line being evicted.
  BAM_HD acquire_result acquire_slow(const array_slot& a, std::uint64_t page, std::uint64_t tag,
                                     std::uint32_t pins, std::uint32_t hint, bool waited,
                                     bool group_fills) const;
  BAM_HD acquire_result load(const array_slot& a, std::uint64_t page, std::uint64_t tag,
                             std::uint32_t pins, std::uint32_t hint, bool group_fills) const;
  /// The bytes of `page` of `a` a line holds on the devices: a line, or up to the set's end
  /// in whole blocks for the last line of a set that ends inside it.
  BAM_HD std::uint64_t page_bytes(const array_slot& a, std::uint64_t set_byte,
                                  std::uint32_t lines) const;
  /// Counts a line's load (`read`) or write-back of `bytes` that completed.
  BAM_HD static void count_transfer(const array_slot& a, bool read, std::uint64_t bytes);
  /// Adds `pins` to `line`, which the page entry names, if it holds the page of `tag` usably
  /// (and marks it referenced); else takes them back and returns false (being evicted).
  BAM_HD bool pin_mapped(std::uint32_t line, std::uint64_t tag, std::uint32_t pins) const;
  /// A miss's read into `line` (BUSY, unmapped) is about to be submitted: the line takes the
  /// page's tag.
  BAM_HD void tag_for_load(std::uint32_t line, std::uint64_t tag) const;
  /// A read of `page` into `line` failed (`s`, `where`): the line is emptied (unless the
  /// command was abandoned: the queue's hold keeps it BUSY), the failure recorded and the page
  /// entry failed.
  BAM_HD void fail_load(const array_slot& a, std::uint64_t page, std::uint32_t line, io_status s,
                        const io_where& where) const;
  /// Whether a fresh array's `page` was ever written to the devices (its bit in stored_pages).
  BAM_HD static bool stored(const array_slot& a, std::uint64_t page);
  /// A write of `lines` pages from `page` of a fresh array is about to be submitted.
  BAM_HD static void mark_stored(const array_slot& a, std::uint64_t page, std::uint32_t lines);
  /// Zeroes `line`'s data (a fresh array's page that was never written).
  BAM_HD void zero_line(std::uint32_t line) const;
  /// A read of `page` (tag `tag`) into `line` succeeded: VALID with `pins`, then the entry.
  BAM_HD void publish_load(const array_slot& a, std::uint64_t page, std::uint64_t tag,
                           std::uint32_t line, std::uint32_t pins) const;
  /// Claims a line BUSY by CLOCK; false past the deadline. Between chunks that had no
  /// candidate it drains `drain`'s queues (lines held by abandoned commands come back then).
  BAM_HD bool claim_victim(std::uint32_t& line, std::uint64_t& old_state, std::uint64_t deadline_ns,
                           const device_set_ref& drain) const;
  BAM_HD io_status evict(std::uint32_t line, std::uint64_t old_state,
                         const array_slot& for_array) const;
  /// A write-back of `page` of `owner` from `line` failed (`s`, `where`): recorded, and the line
  /// stays valid, dirty and mapped; BUSY only while an abandoned write may still run.
  BAM_HD void keep_unwritten(const array_slot& owner, std::uint64_t page, std::uint32_t line,
                             io_status s, const io_where& where) const;
  /// `page` of `owner` left its line (written back, or clean): unmapped and counted.
  BAM_HD void unmap_evicted(const array_slot& owner, std::uint64_t page,
                            const array_slot& for_array) const;
  /// A dirty victim whose write-back load() runs beside its own read (docs/protocols.md,
  /// asynchronous write-back): the line stays BUSY and mapped until the write completes.
  struct write_behind {
    std::uint32_t line = 0;
    std::uint64_t old_state = 0;
    const array_slot* owner = nullptr;  ///< null: none
    std::uint64_t page = 0;             ///< the owner's page in the line
    std::uint32_t queue = 0;            ///< its queue index (never the read's)
  };
  /// Whether the write-back of dirty victim `old_state` (claimed BUSY as `line`) can run
  /// beside a read on queue index `read_queue`; if so fills `w`.
  BAM_HD bool take_write_behind(std::uint32_t read_queue, std::uint32_t line,
                                std::uint64_t old_state, write_behind& w) const;
  /// Submits w's write-back; false (recorded, the line given back or left to the queue's
  /// hold) when it could not be issued.
  BAM_HD bool submit_write_behind(const write_behind& w, line_io_issued& issued) const;
  /// Waits for w's write-back and ends it: written, the page is unmapped and the line freed;
  /// failed, the line stays valid, dirty and mapped (BUSY while an abandoned write may run).
  BAM_HD void finish_write_behind(const write_behind& w, const array_slot& for_array,
                                  line_io_issued& issued) const;
  /// load() found no victim it could use in time: records it and gives the page entry back.
  BAM_HD acquire_result no_victim(const array_slot& a, std::uint64_t page) const;
  /// Drains the queues an abandoned write-back of `line` would have used (a waiter on a line
  /// held that way helps its late completion along).
  BAM_HD void drain_for_line(const array_slot& a, std::uint32_t line) const;
  BAM_HD const array_slot* slot_of_tag(std::uint64_t tag) const;
  /// base_first: counts a base page of a dense array's piece in its BASE large entry.
  BAM_HD void count_base_page(const array_slot& a, std::uint64_t page, bool loaded) const;
  BAM_HD std::uint64_t set_state(std::uint32_t line, std::uint64_t keep_mask, std::uint64_t bits,
                                 std::uint32_t add_pins) const;

  std::uint8_t* data_ = nullptr;
  std::uint64_t* state_ = nullptr;
  std::uint32_t* referenced_ = nullptr;
  std::uint64_t* hand_ = nullptr;
  std::uint64_t* prp_lists_ = nullptr;
  std::uint8_t* bounce_ = nullptr;
  std::uint64_t* bounce_busy_ = nullptr;
  array_slot* slots_ = nullptr;
  cache::mosaic::frame_pool_view frames_;
  std::uint64_t victim_timeout_ns_ = 0;
  std::uint32_t prp_per_line_ = 0;
  std::uint32_t bounce_count_ = 0;
  std::uint32_t bounce_bytes_ = 0;
  std::uint32_t slot_count_ = 0;
  std::uint32_t lines_ = 0;
  std::uint32_t line_bytes_ = 0;
  std::uint32_t line_shift_ = 0;
  std::uint32_t clock_chunk_ = 32;
  bool write_behind_ = true;
};
static_assert(std::is_trivially_copyable_v<page_cache_ref>);

}  // namespace bam

#include <bam/cache/detail/page_cache.inl>
