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

namespace bam {

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
  [[nodiscard]] BAM_HD bool reads_through() const {
    return read_through_ || mode_ == cache_mode::none;
  }

  /// The value returned for elements whose I/O failed: every bit set.
  [[nodiscard]] BAM_HD static value_type poison() {
    value_type v;
    std::memset(static_cast<void*>(&v), 0xff, sizeof v);
    return v;
  }

  /// Reads element `i` (poison on failure).
  [[nodiscard]] BAM_HD value_type operator[](std::uint64_t i) const {
    value_type v;
    if (!try_read(i, v).ok()) v = poison();
    return v;
  }

  /// Reads element `i` into `out`; returns the status of the access.
  [[nodiscard]] BAM_HD io_status try_read(std::uint64_t i, value_type& out) const {
    return access(
        i, [&](std::uint8_t* p) { std::memcpy(static_cast<void*>(&out), p, sizeof(T)); }, false);
  }

  /// Writes element `i`.
  BAM_HD void store(std::uint64_t i, const value_type& v) const requires writable {
    (void)try_store(i, v);
  }

  [[nodiscard]] BAM_HD io_status try_store(std::uint64_t i,
                                           const value_type& v) const requires writable {
    return access(
        i, [&](std::uint8_t* p) { std::memcpy(p, static_cast<const void*>(&v), sizeof(T)); }, true);
  }

  /// Reference reuse: a thread walking one line keeps its pin between accesses. Create one
  /// per thread (it is a per-thread object, not shared); it drops its pin when destroyed, and
  /// before it waits on a miss.
  class cursor {
   public:
    BAM_HD explicit cursor(const array_ref& a) : a_(&a) {}
    BAM_HD ~cursor() { drop(); }
    cursor(const cursor&) = delete;
    cursor& operator=(const cursor&) = delete;

    [[nodiscard]] BAM_HD value_type operator[](std::uint64_t i) {
      value_type v;
      if (!try_read(i, v).ok()) v = poison();
      return v;
    }
    [[nodiscard]] BAM_HD io_status try_read(std::uint64_t i, value_type& out) {
      return a_->access_reusing(
          i, *this, [&](std::uint8_t* p) { std::memcpy(static_cast<void*>(&out), p, sizeof(T)); },
          false);
    }
    BAM_HD void store(std::uint64_t i, const value_type& v) requires writable {
      (void)a_->access_reusing(
          i, *this,
          [&](std::uint8_t* p) { std::memcpy(p, static_cast<const void*>(&v), sizeof(T)); }, true);
    }
    /// Releases the pin this cursor holds, if any.
    BAM_HD void drop() {
      if (pinned_) a_->cache_.release(line_);
      pinned_ = false;
    }

   private:
    friend class array_ref;
    const array_ref* a_;  // the array outlives its cursors (both live in one kernel call)
    std::uint64_t page_ = 0;
    std::uint32_t line_ = 0;
    bool pinned_ = false;
  };

  [[nodiscard]] BAM_HD cursor reader() const { return cursor(*this); }

  [[nodiscard]] BAM_HD const array_slot& slot() const { return slot_; }

 private:
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
  /// set, which access_reusing keeps for lanes that probe nothing.
  BAM_HD std::uint64_t page_key(std::uint64_t page) const {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(slot_.page_table + page));
  }

  BAM_HD void count_access(std::uint32_t accesses) const {
    slot_.stats.add(&cache_stats::accesses, accesses);
    slot_.stats.add(&cache_stats::bytes_requested, std::uint64_t{accesses} * sizeof(T));
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
        slot_.stats.add(&cache_stats::misses, 1);
        break;
    }
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

  /// One access through the cache: coalesced over the warp in optimized mode.
  template <class Op>
  BAM_HD io_status access(std::uint64_t i, Op&& op, bool dirty) const {
    if (!check_index(i)) return io_status::host(status_source::index_out_of_range);
    if (direct_) {
      op(reinterpret_cast<std::uint8_t*>(direct_ + i));
      return {};
    }
    const std::uint64_t byte = offset_ + i * sizeof(T);
    if (reads_through()) return access_through(byte, op);
    const std::uint32_t shift = cache_.line_shift();
    const std::uint64_t page = (byte >> shift) - slot_.first_line;
    const std::uint64_t within = byte & ((std::uint64_t{1} << shift) - 1u);
    if (slot_.large_table != nullptr) {  // declared dense on a two_level cache
      return cache::mosaic::dense_cache_ref(cache_).access(
          slot_, page, within, sizeof(T), mode_ == cache_mode::optimized, dirty, op);
    }
    acquire_result r;
    if (mode_ == cache_mode::optimized) {
      // Lanes touching one line share one probe: the leader pins for the whole group.
      const std::uint32_t peers = warp::match_any(warp::active_mask(), page_key(page));
      const unsigned leader = warp::lowest_lane(peers);
      std::uint64_t packed = 0;
      if (warp::lane() == leader) {
        const std::uint32_t group = warp::popcount(peers);
        r = cache_.acquire(slot_, page, group, agent_index());
        count_probe(r);
        count_access(group);
        slot_.stats.add(&cache_stats::coalesced, group - 1u);
        packed = r.pack();
      }
      r = acquire_result::unpack(warp::shfl(peers, packed, leader));
    } else {
      r = cache_.acquire(slot_, page, 1, agent_index());
      count_probe(r);
      count_access(1);
    }
    if (!r.status.ok()) {
      slot_.stats.add(&cache_stats::errors, 1);
      return r.status;
    }
    op(cache_.line_data(r.line) + within);
    if (dirty) cache_.mark_dirty(r.line);
    cache_.release(r.line);
    return {};
  }

  /// An access through a cursor: keeps the pin while the thread stays on one line.
  template <class Op>
  BAM_HD io_status access_reusing(std::uint64_t i, cursor& c, Op&& op, bool dirty) const {
    // Dense arrays take their frame's protection per access (part 1 keeps no frame across
    // accesses: an epoch section held while a thread waits would stall every grace period).
    if (direct_ || mode_ != cache_mode::optimized || reads_through() ||
        slot_.large_table != nullptr) {
      return access(i, op, dirty);
    }
    if (!check_index(i)) return io_status::host(status_source::index_out_of_range);
    const std::uint64_t byte = offset_ + i * sizeof(T);
    const std::uint32_t shift = cache_.line_shift();
    const std::uint64_t page = (byte >> shift) - slot_.first_line;
    const std::uint64_t within = byte & ((std::uint64_t{1} << shift) - 1u);
    const bool need = !(c.pinned_ && c.page_ == page);
    if (need) c.drop();  // never hold a pin while waiting on a miss
    // Every lane takes part in the collectives; lanes that keep their line use a key of
    // their own, so they form groups of one and probe nothing.
    const std::uint64_t key = need ? page_key(page) : (std::uint64_t{1} << 63) | warp::lane();
    const std::uint32_t peers = warp::match_any(warp::active_mask(), key);
    const unsigned leader = warp::lowest_lane(peers);
    std::uint64_t packed = 0;
    if (need && warp::lane() == leader) {
      const std::uint32_t group = warp::popcount(peers);
      const acquire_result r = cache_.acquire(slot_, page, group, agent_index());
      count_probe(r);
      slot_.stats.add(&cache_stats::coalesced, group - 1u);
      packed = r.pack();
    }
    packed = warp::shfl(peers, packed, leader);
    count_access(1);
    if (need) {
      const acquire_result r = acquire_result::unpack(packed);
      if (!r.status.ok()) {
        slot_.stats.add(&cache_stats::errors, 1);
        return r.status;
      }
      c.line_ = r.line;
      c.page_ = page;
      c.pinned_ = true;
    } else {
      slot_.stats.add(&cache_stats::reused, 1);
    }
    op(cache_.line_data(c.line_) + within);
    if (dirty) cache_.mark_dirty(c.line_);
    return {};
  }

  page_cache_ref cache_;
  array_slot slot_;
  std::uint64_t offset_ = 0;
  std::uint64_t count_ = 0;
  cache_mode mode_ = cache_mode::optimized;
  bool read_through_ = false;
  value_type* direct_ = nullptr;
};

}  // namespace bam
