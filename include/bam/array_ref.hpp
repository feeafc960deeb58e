#pragma once
/// @file
/// bam::array_ref<T>: what a kernel holds to read and write an array that lives on storage.
///
///     BAM_HD void operator()(bam::thread_index t) const {
///       for (std::uint64_t i = t.id; i < edges.size(); i += t.count) sum += edges[i];
///     }
///
/// operator[] reads like a plain array and returns a poison value (all bits set) if the I/O
/// behind it failed; try_read returns the status too; store(i, v) writes (marks the line
/// dirty) and exists only for arrays of non-const T. A failed access also fills the array's
/// sticky error record, which the host checks (array::check) and turns into bam::nvme_error.
/// A thread that reads tiles can start the loads of its next tile before it computes on the
/// current one: prefetch(i, ticket) with a bam::prefetch_ticket (prefetch_ticket.hpp).
///
/// Thread safety: any number of threads may use one array_ref at once. Writers to the same
/// element race as plain stores do; writers to different elements never interfere.

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <bam/cache/cache_config.hpp>
#include <bam/cache/mosaic/dense_cache.hpp>
#include <bam/cache/page_cache.hpp>
#include <bam/platform/agent.hpp>
#include <bam/platform/config.hpp>
#include <bam/platform/warp.hpp>
#include <bam/platform/warp_sync.hpp>

namespace bam {

template <class T, std::uint32_t Lines>
class prefetch_ticket;

template <class T>
class array_ref {
  static_assert(std::is_trivially_copyable_v<T>);
  static_assert((sizeof(T) & (sizeof(T) - 1)) == 0, "element size must be a power of two");

 public:
  using value_type = std::remove_const_t<T>;
  static constexpr bool writable = !std::is_const_v<T>;

  array_ref() = default;
  BAM_HD array_ref(const page_cache_ref& cache, const array_slot& slot, std::uint64_t offset_bytes,
                   std::uint64_t count, cache_mode mode, bool read_through)
      : cache_(cache),
        slot_(slot),
        offset_(offset_bytes),
        count_(count),
        mode_(mode),
        read_through_(read_through) {}

  /// A view of `count` elements already in memory the kernel can read (device memory, or
  /// pinned host memory read zero-copy): the host-memory and device-memory baselines, with the
  /// same kernel code as the cached path.
  BAM_HD array_ref(value_type* direct, std::uint64_t count) : count_(count), direct_(direct) {}

  [[nodiscard]] BAM_HD std::uint64_t size() const { return count_; }
  /// True for a view of memory rather than of storage.
  [[nodiscard]] BAM_HD bool direct() const { return direct_ != nullptr; }
  [[nodiscard]] BAM_HD cache_mode mode() const { return mode_; }
  /// Whether the array lives in the cache's large frames (declared dense on a two_level cache).
  [[nodiscard]] BAM_HD bool dense() const { return slot_.large_table != nullptr; }
  [[nodiscard]] BAM_HD bool reads_through() const {
    return read_through_ || mode_ == cache_mode::none;
  }

  /// Lines one warp may load at once ahead of its reads (apps' for_each_neighbour): set by
  /// array::ref_for_launch when the cache has lines to spare for the launch, else 0.
  [[nodiscard]] BAM_HD std::uint32_t lookahead_lines() const { return lookahead_lines_; }
  BAM_HD void set_lookahead_lines(std::uint32_t lines) { lookahead_lines_ = lines; }
  /// The cache line (of the device set) that holds element `i`.
  [[nodiscard]] BAM_HD std::uint64_t line_index(std::uint64_t i) const {
    return (offset_ + i * sizeof(T)) >> cache_.line_shift();
  }
  /// The first element in line `line` (0 for the line that holds element 0).
  [[nodiscard]] BAM_HD std::uint64_t line_first(std::uint64_t line) const {
    const std::uint64_t at = line << cache_.line_shift();
    return at > offset_ ? (at - offset_) / sizeof(T) : 0;
  }

  /// Whether view_as<U>() may be taken: U no smaller than T (so its size is a multiple of T's)
  /// and the array's first element aligned for U, in its set and in a view of memory.
  template <class U>
  [[nodiscard]] BAM_HD bool can_view_as() const {
    return sizeof(U) >= sizeof(T) && offset_ % sizeof(U) == 0 &&
           reinterpret_cast<std::uintptr_t>(direct_) % alignof(U) == 0;
  }
  /// The same bytes as elements of U, through the same cache lines, pins and statistics
  /// (accesses then count U elements; bytes are bytes): a copy of whole rows moves 16-byte
  /// words where T is a 4-byte float. The last size_bytes % sizeof(U) bytes are not in the
  /// view. A read-only array gives read-only views. Check can_view_as<U>() first.
  template <class U>
  [[nodiscard]] BAM_HD array_ref<U> view_as() const {
    static_assert(std::is_const_v<U> || writable, "a read-only array has read-only views");
    array_ref<U> v;
    v.cache_ = cache_;
    v.slot_ = slot_;
    v.offset_ = offset_;
    v.count_ = count_ * sizeof(T) / sizeof(U);
    v.mode_ = mode_;
    v.read_through_ = read_through_;
    v.lookahead_lines_ = lookahead_lines_;
    v.direct_ = reinterpret_cast<typename array_ref<U>::value_type*>(direct_);
    return v;
  }

  /// The value returned for elements whose I/O failed: every bit set.
  [[nodiscard]] BAM_HD static value_type poison() {
    value_type v{};  // GCC cannot see that try_read fills it whenever it succeeds
    std::memset(static_cast<void*>(&v), 0xff, sizeof v);
    return v;
  }

  /// Reads element `i` (poison on failure).
  [[nodiscard]] BAM_HD value_type operator[](std::uint64_t i) const {
    value_type v{};  // GCC cannot see that try_read fills it whenever it succeeds
    if (!try_read(i, v).ok()) v = poison();
    return v;
  }

  /// Reads element `i` into `out`; returns the status of the access.
  [[nodiscard]] BAM_HD io_status try_read(std::uint64_t i, value_type& out) const {
    if (!inlined()) return read_out_of_line(i, out);
    return access_inlined(
        i, [&](std::uint8_t* p) { load_element(out, p); }, false);
  }

  /// Writes element `i`.
  BAM_HD void store(std::uint64_t i, const value_type& v) const requires writable {
    (void)try_store(i, v);
  }

  [[nodiscard]] BAM_HD io_status try_store(std::uint64_t i,
                                           const value_type& v) const requires writable {
    if (!inlined()) return store_out_of_line(i, v);
    return access_inlined(
        i, [&](std::uint8_t* p) { store_element(p, v); }, true);
  }

  /// Reference reuse: a thread walking one line keeps its pin between accesses (on a dense
  /// array under frame pins, a pin of the line's frame). Create one per thread (it is a
  /// per-thread object, not shared); it drops its pin when destroyed, and before it waits on a
  /// miss. On the GPU, drop it before the thread leaves a loop whose lanes run different trip
  /// counts: a lane that holds a pin while it waits for its warp to reconverge keeps a frame
  /// from being evicted for a while (the evictor then gives up on that frame).
  class cursor {
   public:
    BAM_HD explicit cursor(const array_ref& a) : a_(&a) {
      if (a.direct_) {  // a view of memory: every element is always held
        span_ = a.count_;
        base_ = reinterpret_cast<std::uintptr_t>(a.direct_);
      }
    }
    BAM_HD ~cursor() { drop(); }
    cursor(const cursor&) = delete;
    cursor& operator=(const cursor&) = delete;

    [[nodiscard]] BAM_HD value_type operator[](std::uint64_t i) {
      value_type v{};  // GCC cannot see that try_read fills it whenever it succeeds
      if (!try_read(i, v).ok()) v = poison();
      return v;
    }
    [[nodiscard]] BAM_HD io_status try_read(std::uint64_t i, value_type& out) {
      if (!a_->reuses()) return a_->read_out_of_line(i, out);
      return a_->access_reusing(
          i, *this, [&](std::uint8_t* p) { load_element(out, p); }, false);
    }
    BAM_HD void store(std::uint64_t i, const value_type& v) requires writable {
      (void)try_store(i, v);
    }
    [[nodiscard]] BAM_HD io_status try_store(std::uint64_t i,
                                             const value_type& v) requires writable {
      if (!a_->reuses()) return a_->store_out_of_line(i, v);
      return a_->access_reusing(
          i, *this, [&](std::uint8_t* p) { store_element(p, v); }, true);
    }
    /// Reads element `i` if it lies in the line this cursor holds (and true), else reads nothing
    /// (false): an element of another line, a cursor that holds no line, or an array whose
    /// cursors keep no pins (try_read reads those). No probe, collective or call, so a thread
    /// can issue several before it uses any: after try_read has moved the cursor onto a line,
    /// the rest of the line reads with its loads in flight together.
    [[nodiscard]] BAM_HD bool read_if_pinned(std::uint64_t i, value_type& out) {
      if (!holds(i)) return false;
      ++reused_;
      load_element(out, at(i));
      return true;
    }
    /// Releases the pin this cursor holds, if any, and adds its accesses to the statistics.
    BAM_HD void drop() {
      if (pinned_) {
        a_->unpin(line_, frame_);
        pinned_ = false;
        span_ = 0;
      }
      if (reused_ != 0 && !a_->direct_) a_->count_reused(reused_);
      reused_ = 0;
    }

    /// drop() for every lane of `lanes` at once (each of them calls it): lanes that hold one
    /// line release their pins with one atomic, and one lane adds the reads of all (drop() per
    /// lane costs an atomic on the line and three statistics adds, per lane).
    BAM_HD void drop_among(std::uint32_t lanes) {
      if (a_->direct_ || a_->dense()) {
        drop();  // no pins (a view of memory), or a frame's pins, dropped one by one
        return;
      }
      a_->release_together(lanes, pinned_, line_);
      // 32 counts below 2^26 sum below 2^31; a lane with more (one cursor reading a line
      // over and over) adds its own.
      const bool alone = reused_ >= (std::uint64_t{1} << 26);
      const std::uint32_t total =
          warp::sum(lanes, alone ? 0u : static_cast<std::uint32_t>(reused_));
      if (alone) a_->count_reused(reused_);
      if (total != 0 && warp::lane() == warp::lowest_lane(lanes)) a_->count_reused(total);
      pinned_ = false;
      span_ = 0;
      reused_ = 0;
    }

   private:
    friend class array_ref;
    BAM_HD bool holds(std::uint64_t i) const { return i - lo_ < span_; }
    BAM_HD std::uint8_t* at(std::uint64_t i) const {
      return reinterpret_cast<std::uint8_t*>(base_ + i * sizeof(T));
    }

    const array_ref* a_;  // the array outlives its cursors (both live in one kernel call)
    // What the cursor holds: elements [lo_, lo_ + span_), element i at base_ + i * sizeof(T)
    // (span_ 0: nothing), so that a read of a held element is a compare and a load.
    std::uint64_t lo_ = 0;
    std::uint64_t span_ = 0;
    std::uintptr_t base_ = 0;
    // Accesses served by the pin kept, counted here and added at drop(): a statistics atomic
    // per access would cost more than the access.
    std::uint64_t reused_ = 0;
    std::uint32_t line_ = 0;
    std::uint32_t frame_ = 0;  // a dense array's: the frame pinned
    bool pinned_ = false;
  };

  [[nodiscard]] BAM_HD cursor reader() const { return cursor(*this); }

  /// Whether prefetch tickets start loads for this array: the base-page cache in optimized
  /// mode (not a view of memory, a dense array or reads through bounce buffers).
  [[nodiscard]] BAM_HD bool prefetches() const {
    return direct_ == nullptr && mode_ == cache_mode::optimized && !reads_through() &&
           slot_.large_table == nullptr;
  }
  /// Starts the load of the line holding element `i` into `t`, a ticket made for this
  /// array_ref, and returns at once: t.prefetch(i) (bam/prefetch_ticket.hpp). False for a
  /// ticket of another array_ref.
  template <std::uint32_t Lines>
  [[nodiscard]] BAM_HD bool prefetch(std::uint64_t i, prefetch_ticket<T, Lines>& t) const {
    return &t.array() == this && t.prefetch(i);
  }

  [[nodiscard]] BAM_HD const array_slot& slot() const { return slot_; }

 private:
  template <class U, std::uint32_t Lines>
  friend class prefetch_ticket;

  BAM_HD bool check_index(std::uint64_t i) const {
    if (i < count_) return true;
    if (direct_) return false;  // no error record behind a view of memory
    slot_.errors->record(error_kind::out_of_range,
                         io_status::host(status_source::index_out_of_range), 0, 0, 0, 0, i);
    slot_.stats.add(&cache_stats::errors, 1);
    return false;
  }

  /// What lanes match on to share a probe: the address of the page's translation entry, which
  /// names the cache, the array and the page at once (lanes of one warp may be reading
  /// different arrays whose page numbers coincide). User-space addresses never have bit 63
  /// set, which move_cursor keeps for lanes that probe nothing.
  BAM_HD std::uint64_t page_key(std::uint64_t page) const {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(slot_.page_table + page));
  }

  /// Elements are aligned in a line (extents are checked at open), so an element is read and
  /// written as a T: one vector load or store, where a memcpy from bytes moves bytes. (T is
  /// trivially copyable, so lines, like any allocated storage, hold T objects implicitly.)
  BAM_HD static void load_element(value_type& out, const std::uint8_t* p) {
    out = *static_cast<const value_type*>(static_cast<const void*>(p));
  }
  BAM_HD static void store_element(std::uint8_t* p, const value_type& v) {
    *static_cast<value_type*>(static_cast<void*>(p)) = v;
  }

  BAM_HD void count_access(std::uint32_t accesses) const {
    slot_.stats.add(&cache_stats::accesses, accesses);
    slot_.stats.add(&cache_stats::bytes_requested, std::uint64_t{accesses} * sizeof(T));
  }

  BAM_HD void count_reused(std::uint64_t accesses) const {
    cache_stats& s = slot_.stats.local();
    stats_ref::bump(s.accesses, accesses);
    stats_ref::bump(s.bytes_requested, accesses * sizeof(T));
    stats_ref::bump(s.reused, accesses);
  }

  BAM_HD void count_probe(const acquire_result& r) const {
    switch (r.kind) {
      case probe_kind::hit:
        slot_.stats.add(&cache_stats::hits, 1);
        break;
      case probe_kind::miss:
        slot_.stats.add(&cache_stats::misses, 1);
        break;
      case probe_kind::miss_wait:
        slot_.stats.add(&cache_stats::misses, 1);
        slot_.stats.add(&cache_stats::miss_waits, 1);
        break;
      case probe_kind::failed:
      case probe_kind::fill:
        slot_.stats.add(&cache_stats::misses, 1);
        break;
      case probe_kind::moved:  // only a dense array's base pages; counted by dense_cache_ref
        break;
    }
  }

  /// Counts one warp-wide round of grouped probes before any of them runs, called by every
  /// lane of `active`: each lane of `accessing` makes one access, the lanes that `lead` probe
  /// for their group and the others ride on a probe. Every probe counts as a hit here; a
  /// leader whose probe was not one corrects that with count_non_hit. One lane adds for the
  /// warp, so a round costs a few atomics however many groups it has. Before the probes,
  /// because a warp-wide vote after them would hold every lane's new pin until the slowest
  /// miss of the warp is served: with a small cache, pins held that way leave evictors no
  /// victim.
  BAM_HD void count_round(std::uint32_t active, std::uint32_t accessing, bool lead) const {
    const std::uint32_t leaders = warp::ballot(active, lead);
    if (warp::lane() == warp::lowest_lane(active)) {
      const std::uint32_t n = warp::popcount(accessing);
      cache_stats& s = slot_.stats.local();
      stats_ref::bump(s.accesses, n);
      stats_ref::bump(s.bytes_requested, std::uint64_t{n} * sizeof(T));
      stats_ref::bump(s.coalesced, n - warp::popcount(leaders));
      stats_ref::bump(s.hits, warp::popcount(leaders));
    }
  }

  /// The probe of `page` for the group `peers` (its lowest lane probes when `lead`), handed to
  /// every lane of the group. Called by every lane of `active`, of which `accessing` access.
  /// `group_fills`: a miss on a memory set may come back as probe_kind::fill (the group then
  /// copies the line: page_cache_ref::fill_among).
  BAM_HD acquire_result probe_for_group(std::uint64_t page, std::uint32_t active,
                                        std::uint32_t accessing, std::uint32_t peers, bool lead,
                                        bool group_fills = false) const {
    count_round(active, accessing, lead);
    std::uint64_t packed = 0;
    if (lead) {
      const acquire_result mine =
          cache_.acquire(slot_, page, warp::popcount(peers), agent_index(), group_fills);
      count_non_hit(mine);
      packed = mine.pack();
    }
    return acquire_result::unpack(warp::shfl(peers, packed, warp::lowest_lane(peers)));
  }

  /// A leader's probe that count_round counted as a hit and was not one.
  BAM_HD void count_non_hit(const acquire_result& r) const {
    if (r.kind == probe_kind::hit) return;
    // Wraps modulo 2^64 (fetch_add): the shard's sum is right once every correction is in.
    slot_.stats.add(&cache_stats::hits, ~std::uint64_t{0});
    count_probe(r);
  }

  /// The uncached path: mode none, or a launch too large for the cache (reads only).
  template <class Op>
  BAM_HD io_status access_through(std::uint64_t byte, Op&& op) const {
    value_type v{};  // filled by read_through (GCC cannot see it and warns)
    const io_status s = cache_.read_through(slot_, byte, sizeof(T), &v, agent_index());
    count_access(1);
    if (!s.ok()) {
      slot_.stats.add(&cache_stats::errors, 1);
      return s;
    }
    op(reinterpret_cast<std::uint8_t*>(&v));
    return s;
  }

  /// Whether accesses run inlined in the caller: views of memory and the base-page cache, hits
  /// and the first look of misses. Reads through bounce buffers and dense arrays' frames run
  /// out of line, so their code does not set the registers of every kernel that reads.
  [[nodiscard]] BAM_HD bool inlined() const {
    return direct_ != nullptr || (!reads_through() && slot_.large_table == nullptr);
  }

  /// Whether a cursor keeps pins: the base-page cache and dense arrays under frame pins, in
  /// optimized mode (and views of memory, which need none). Cursors on other arrays access out
  /// of line, one access at a time (under epochs a reader slot serves one section per thread,
  /// and a cursor's section would nest in any other dense access of its thread).
  [[nodiscard]] BAM_HD bool reuses() const {
    if (direct_ != nullptr) return true;
    if (mode_ != cache_mode::optimized || reads_through()) return false;
    return !dense() || cache_.frames().pinning == pinning_kind::frame_pins;
  }

  /// Called by every lane of `active`: the lanes that `release` their pin of `line` drop the
  /// pins of each line with one atomic, after a warp barrier that orders every such lane's use
  /// of the line before it. Other lanes match on a key of their own (bit 63, see page_key).
  BAM_HD void release_together(std::uint32_t active, bool release, std::uint32_t line) const {
    const std::uint64_t own = (std::uint64_t{1} << 63) | warp::lane();
    const std::uint64_t key =
        static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(cache_.line_data(line)));
    const std::uint32_t same = warp::match_any(active, release ? key : own);
    if (!release) return;
    warp::sync(same);
    if (warp::lane() == warp::lowest_lane(same)) cache_.release(line, warp::popcount(same));
  }

  /// Drops one pin that a cursor holds: of `line`, or of a dense array's `frame`.
  BAM_HD void unpin(std::uint32_t line, std::uint32_t frame) const {
    if (dense()) {
      cache::mosaic::dense_cache_ref(cache_).unpin(frame);
    } else {
      cache_.release(line);
    }
  }
  BAM_HD void mark_dirty_line(std::uint32_t line) const {
    if (dense()) {
      cache::mosaic::dense_cache_ref(cache_).mark_dirty(line);
    } else {
      cache_.mark_dirty(line);
    }
  }

  /// The paths that are not inlined() (or, for cursors, not reuses()). The element travels by
  /// value, so a caller's element never has its address taken and stays in registers.
  struct element_read {
    io_status status;
    value_type value;
  };
  BAM_HD BAM_NOINLINE element_read read_by_value(std::uint64_t i) const {
    element_read r{};
    r.status = access_out_of_line(i, cache::mosaic::element_op{&r.value, sizeof(T), false});
    return r;
  }
  BAM_HD io_status read_out_of_line(std::uint64_t i, value_type& out) const {
    const element_read r = read_by_value(i);
    if (r.status.ok()) out = r.value;
    return r.status;
  }
  BAM_HD BAM_NOINLINE io_status store_out_of_line(std::uint64_t i,
                                                  value_type v) const requires writable {
    return access_out_of_line(i, cache::mosaic::element_op{&v, sizeof(T), true});
  }

  /// An access that is not inlined(): through a bounce buffer, or to a dense array's frame
  /// (through the dense path's element entry points, compiled once for every element type).
  BAM_HD io_status access_out_of_line(std::uint64_t i, const cache::mosaic::element_op& op) const {
    if (inlined()) return access_inlined(i, op, op.store);  // a cursor on a naive-mode array
    if (!check_index(i)) return io_status::host(status_source::index_out_of_range);
    const std::uint64_t byte = offset_ + i * sizeof(T);
    if (reads_through()) return access_through(byte, op);
    const std::uint32_t shift = cache_.line_shift();
    const std::uint64_t page = (byte >> shift) - slot_.first_line;
    const std::uint64_t within = byte & ((std::uint64_t{1} << shift) - 1u);
    return cache::mosaic::dense_cache_ref(cache_).access_element(
        slot_, page, within, mode_ == cache_mode::optimized, op);
  }

  /// An access to a view of memory or through the base-page cache, coalesced over the warp
  /// in optimized mode.
  template <class Op>
  BAM_HD io_status access_inlined(std::uint64_t i, Op&& op, bool dirty) const {
    if (!check_index(i)) return io_status::host(status_source::index_out_of_range);
    if (direct_) {
      op(reinterpret_cast<std::uint8_t*>(direct_ + i));
      return {};
    }
    const std::uint64_t byte = offset_ + i * sizeof(T);
    const std::uint32_t shift = cache_.line_shift();
    const std::uint64_t page = (byte >> shift) - slot_.first_line;
    const std::uint64_t within = byte & ((std::uint64_t{1} << shift) - 1u);
    if (mode_ != cache_mode::optimized) {
      const acquire_result r = cache_.acquire(slot_, page, 1, agent_index());
      count_probe(r);
      count_access(1);
      if (!r.status.ok()) {
        slot_.stats.add(&cache_stats::errors, 1);
        return r.status;
      }
      op(cache_.line_data(r.line) + within);
      if (dirty) cache_.mark_dirty(r.line);
      cache_.release(r.line);
      return {};
    }
    // Lanes touching one line share one probe: the leader pins for the whole group and, once
    // the group is done with the line, unpins for it.
    const std::uint32_t active = warp::active_mask();
    const std::uint32_t peers = warp::match_any(active, page_key(page));
    const bool lead = warp::lane() == warp::lowest_lane(peers);
    const acquire_result r = probe_for_group(page, active, active, peers, lead);
    if (!r.status.ok()) {
      slot_.stats.add(&cache_stats::errors, 1);
      return r.status;
    }
    op(cache_.line_data(r.line) + within);
    if (dirty) cache_.mark_dirty(r.line);
    warp::sync(peers);  // every lane's use of the line before the leader's unpin
    if (lead) cache_.release(r.line, warp::popcount(peers));
    return {};
  }

  /// An access through a cursor, for arrays that reuses(): keeps the pin while the thread
  /// stays on one line.
  template <class Op>
  BAM_HD io_status access_reusing(std::uint64_t i, cursor& c, Op&& op, bool dirty) const {
    if (direct_) return access_inlined(i, op, dirty);
    if (!check_index(i)) return io_status::host(status_source::index_out_of_range);
    const bool need = !c.holds(i);
    // Every lane takes part in the collectives; while no lane of the warp leaves its line, a
    // vote is all they cost.
    const std::uint32_t active = warp::active_mask();
    const std::uint32_t moving = warp::ballot(active, need);
    if (moving != 0 && dense()) {
      const std::uint64_t byte = offset_ + i * sizeof(T);
      const std::uint32_t shift = cache_.line_shift();
      const std::uint64_t page = (byte >> shift) - slot_.first_line;
      // An op that stores writes its value here (one that loads is not called on it).
      value_type v{};
      if (dirty) op(reinterpret_cast<std::uint8_t*>(&v));
      const dense_move m = move_dense_cursor(
          page, byte & ((std::uint64_t{1} << shift) - 1u), need, c.pinned_, c.line_, c.frame_,
          need ? std::uintptr_t{0} : reinterpret_cast<std::uintptr_t>(c.at(i)), v, dirty, active);
      if (m.served) {  // done inside; no lane of the warp holds a pin any more
        if (!need) ++c.reused_;
        c.pinned_ = false;
        c.span_ = 0;
        if (!m.status.ok()) return m.status;
        if (!dirty) {
          value_type got = m.value;
          op(reinterpret_cast<std::uint8_t*>(&got));
        }
        return {};
      }
      if (need) {
        hold(c, page, m.line);
        c.frame_ = m.frame;
      }
    } else if (moving != 0) {
      const std::uint64_t page =
          ((offset_ + i * sizeof(T)) >> cache_.line_shift()) - slot_.first_line;
      // The cursor travels by value, so it stays in registers.
      const acquire_result r = move_cursor<false>(page, need, c.pinned_, c.line_, active, moving);
      if (need) {
        if (!r.status.ok()) {
          c.pinned_ = false;
          c.span_ = 0;
          return r.status;
        }
        hold(c, page, r.line);
      }
    }
    if (!need) ++c.reused_;
    op(c.at(i));
    if (dirty) mark_dirty_line(c.line_);
    return {};
  }

  /// What move_dense_cursor did for one lane: the line and frame it now holds a pin of (when
  /// it moved and was not served), or, when `served`, the access's status and the value read.
  struct dense_move {
    io_status status;
    value_type value{};
    std::uint32_t line = 0;
    std::uint32_t frame = 0;
    bool served = false;
  };

  /// move_cursor for a dense array under frame pins, called by every lane of `active`: the
  /// lanes that `need` drop their old frame pin and pin the frame of `page` (a group per piece,
  /// pin_resident). When every such page is resident that is all, and each lane goes on with
  /// its pin. When a lane's page is not, that lane goes through the miss path, which may wait
  /// (for a load, a frame, an eviction that drains this warp's pins), and so may lanes that
  /// wait for it to reconverge: so first every lane of the warp makes its access under the pin
  /// it has (at `held_at`, or in its new line) and drops it; then the lanes that missed access
  /// through dense_cache_ref::access. Each lane's access is then done (`served`), and no lane
  /// holds a pin. `v` is the value to store when `dirty`.
  BAM_HD BAM_NOINLINE dense_move move_dense_cursor(std::uint64_t page, std::uint64_t within,
                                                   bool need, bool pinned, std::uint32_t held_line,
                                                   std::uint32_t held_frame, std::uintptr_t held_at,
                                                   value_type v, bool dirty,
                                                   std::uint32_t active) const {
    const cache::mosaic::dense_cache_ref dense(cache_);
    if (need && pinned) dense.unpin(held_frame);
    dense_move m;
    const bool hit = dense.pin_resident(active, need, slot_, page, sizeof(T), m.line, m.frame);
    const std::uint32_t missed = warp::ballot(active, need && !hit);
    if (missed == 0) return m;
    m.served = true;
    if (!need || hit) {
      const std::uint32_t line = need ? m.line : held_line;
      std::uint8_t* p =
          need ? cache_.line_data(line) + within : reinterpret_cast<std::uint8_t*>(held_at);
      if (dirty) {
        store_element(p, v);
        dense.mark_dirty(line);
      } else {
        load_element(m.value, p);
      }
      dense.unpin(need ? m.frame : held_frame);
    }
    warp::sync(active);  // every pin of the warp dropped before a lane may wait
    if (need && !hit) {
      value_type* const value = dirty ? &v : &m.value;
      m.status = dense.access_element_among(missed, slot_, page, within,
                                            cache::mosaic::element_op{value, sizeof(T), dirty});
    }
    return m;
  }

  /// Points `c` at `line`, which holds `page` and which it has pinned.
  BAM_HD void hold(cursor& c, std::uint64_t page, std::uint32_t line) const {
    const std::uint32_t shift = cache_.line_shift();
    const std::uint64_t start = (slot_.first_line + page) << shift;  // set bytes
    const std::uint64_t past = start + (std::uint64_t{1} << shift);
    // Only page 0 can start before element 0; only the last page can pass the last element.
    c.lo_ = start > offset_ ? (start - offset_) / sizeof(T) : 0;
    const std::uint64_t end = (past - offset_) / sizeof(T);
    c.span_ = (end < count_ ? end : count_) - c.lo_;
    // Unsigned wrap-around keeps this exact when the line starts before element 0.
    c.base_ = reinterpret_cast<std::uintptr_t>(cache_.line_data(line)) + offset_ - start;
    c.line_ = line;
    c.pinned_ = true;
  }

  /// The lanes of `moving` pin the line of their next `page`, called by every lane of
  /// `active`; for them, returns the line or why there is none (their old pin is gone either
  /// way). Lanes that leave one line together drop their pins first (no pin is held while a
  /// miss waits) with one atomic; lanes that go to one line share one probe. Once per line,
  /// so out of line: the code of probes and misses stays out of the loops that walk lines.
  /// `GroupFills` (a memory set): a miss is copied by the group that shares the probe. Its own
  /// instance, because the call to fill_among costs every move registers saved on the stack
  /// (7a's hits ran 10% slower on an H100 with one instance for both).
  template <bool GroupFills>
  BAM_HD BAM_NOINLINE acquire_result move_cursor(std::uint64_t page, bool need, bool pinned,
                                                 std::uint32_t held, std::uint32_t active,
                                                 std::uint32_t moving) const {
    if constexpr (!GroupFills) {
      // A tail call: no value lives across it, so it costs the other moves nothing.
      if (slot_.set.memory != nullptr) {
        return move_cursor<true>(page, need, pinned, held, active, moving);
      }
    }
    release_together(active, need && pinned, held);
    // Lanes that stay use a key of their own (bit 63, see page_key): groups of one that do
    // nothing.
    const std::uint64_t own = (std::uint64_t{1} << 63) | warp::lane();
    const std::uint32_t peers = warp::match_any(active, need ? page_key(page) : own);
    const bool lead = need && warp::lane() == warp::lowest_lane(peers);
    acquire_result r = probe_for_group(page, active, moving, peers, lead, GroupFills);
    if constexpr (GroupFills) {
      if (need && r.kind == probe_kind::fill) {
        // The whole group copies the line (a miss on a memory set), and ends up pinning it.
        cache_.fill_among(slot_, page, r.line, peers, lead);
        r.kind = probe_kind::miss;
      }
    }
    if (need && !r.status.ok()) slot_.stats.add(&cache_stats::errors, 1);
    return r;
  }

  template <class U>
  friend class array_ref;  // view_as builds a view of another element type

  page_cache_ref cache_;
  array_slot slot_;
  std::uint64_t offset_ = 0;
  std::uint64_t count_ = 0;
  cache_mode mode_ = cache_mode::optimized;
  bool read_through_ = false;
  std::uint32_t lookahead_lines_ = 0;
  value_type* direct_ = nullptr;
};

}  // namespace bam

#include <bam/prefetch_ticket.hpp>
