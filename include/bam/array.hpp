#pragma once
/// @file
/// bam::array<T>: an array that lives on a device set and is read and written through a page
/// cache, on demand, by GPU threads (or CPU threads on the CPU path). The owner lives on the
/// host; kernels get array_ref<T> by value from ref().
///
///     bam::array<const std::uint64_t> edges(cache, ssd.ref(), {.offset_bytes = 65536, .count =
///     m}); bam::launch(stream, grid, block, my_kernel{edges.ref_for_launch(grid, block)});
///     stream.synchronize();
///     edges.check();                       // throws bam::nvme_error on a recorded device error
///     auto s = edges.stats();
///
/// array<const T> is read-only (no dirty tracking, no store). Not thread safe: host-side calls
/// from one thread; kernels may use refs concurrently.

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <bam/array_ref.hpp>
#include <bam/cache.hpp>
#include <bam/error.hpp>

namespace bam {

struct array_options {
  std::uint64_t offset_bytes = 0;  ///< where element 0 is in the set (a multiple of sizeof(T))
  std::uint64_t count = 0;         ///< elements; 0: as many as fit up to the end of the set
  std::string name = "array";      ///< used in error messages
  /// Declares the array dense: on a cache with translation two_level it is translated through
  /// large frames (one 8-byte entry per frame-sized piece; docs/mosaic.md says when to). On a
  /// base cache it changes nothing.
  bool dense = false;
  /// Dense arrays on a two_level cache: the most frames the array (a tenant) may hold at once;
  /// at the quota its reservations evict its own frames. 0: no quota.
  std::uint32_t frame_quota = 0;
  /// The array's old contents on the devices are not wanted (an output the kernels write):
  /// a line the array has never written back is zero-filled on a miss instead of read, so a
  /// store to it costs no read. Elements of such a line that nobody stores read as zero and are
  /// written as zero. A line written back once is read again as usual. Writable arrays on base
  /// pages only (not dense on a two_level cache).
  bool fresh = false;
};

template <class T>
class array {
 public:
  using value_type = std::remove_const_t<T>;
  static constexpr bool writable = !std::is_const_v<T>;

  /// Binds to an extent of `set`. Throws bam::input_error if the extent is misaligned, lies
  /// outside the set, or the cache cannot serve it (mode none for a writable array, a line
  /// larger than a command may move, a stripe that is not a multiple of the line).
  array(page_cache& cache, const device_set_ref& set, const array_options& options = {})
      : cache_(&cache), set_(set), name_(options.name) {
    const std::uint64_t line = cache.config().line_bytes;
    const std::string what = "array '" + name_ + "': ";
    if (options.offset_bytes % sizeof(T) != 0) {
      throw input_error(what + "offset " + std::to_string(options.offset_bytes) +
                        " is not a multiple of the element size " + std::to_string(sizeof(T)));
    }
    if (line % sizeof(T) != 0) throw input_error(what + "element larger than a cache line");
    if (options.offset_bytes > set.capacity_bytes) {
      throw input_error(what + "offset " + std::to_string(options.offset_bytes) +
                        " is past the end of the set (" + std::to_string(set.capacity_bytes) +
                        " bytes)");
    }
    const std::uint64_t room = (set.capacity_bytes - options.offset_bytes) / sizeof(T);
    count_ = options.count == 0 ? room : options.count;
    if (count_ > room || count_ == 0) {
      throw input_error(what + std::to_string(count_) + " elements at byte " +
                        std::to_string(options.offset_bytes) + " do not fit in the set's " +
                        std::to_string(set.capacity_bytes) + " bytes");
    }
    if (writable && cache.config().mode == cache_mode::none) {
      throw input_error(what + "cache mode 'none' serves read-only arrays (use array<const T>)");
    }
    if (line > set.max_transfer_bytes) {
      throw input_error(what + "line of " + std::to_string(line) +
                        " bytes exceeds the devices' largest command (" +
                        std::to_string(set.max_transfer_bytes) + " bytes)");
    }
    if (!set.replicated && set.devices > 1 && set.stripe_bytes % line != 0) {
      throw input_error(what + "stripe unit " + std::to_string(set.stripe_bytes) +
                        " is not a multiple of the line size " + std::to_string(line));
    }
    offset_ = options.offset_bytes;
    const std::uint64_t first_line = offset_ / line;
    const std::uint64_t last_line = (offset_ + count_ * sizeof(T) - 1) / line;
    attachment_ = cache.attach(set, first_line, last_line - first_line + 1, writable, name_,
                               options.dense, options.frame_quota, options.fresh);
  }

  /// An array over `count` elements already in memory kernels can read: device memory (the
  /// device-memory baseline), pinned host memory (the host-memory baseline, read zero-copy by
  /// a GPU), or host memory on the CPU path. No cache, no I/O, no statistics; the memory must
  /// outlive the array. `host_accessible` says whether read() and write() may touch it.
  static array over_memory(value_type* data, std::uint64_t count, bool host_accessible,
                           std::string name = "array") {
    array a;
    a.name_ = std::move(name);
    a.count_ = count;
    a.direct_ = data;
    a.host_accessible_ = host_accessible;
    return a;
  }

  ~array() {
    if (!cache_) return;
    if constexpr (writable) {
      // Destructors never throw: flush() explicitly (before the controllers stop) to see
      // write-back errors. Only an array that may hold unflushed writes flushes here.
      if (maybe_dirty_) {
        try {
          cache_->flush(attachment_.index);
        } catch (...) {
        }
      }
    }
    cache_->detach(attachment_.index);
  }
  array(array&& o) noexcept
      : cache_(std::exchange(o.cache_, nullptr)),
        set_(o.set_),
        name_(std::move(o.name_)),
        attachment_(o.attachment_),
        offset_(o.offset_),
        count_(o.count_),
        direct_(o.direct_),
        host_accessible_(o.host_accessible_),
        maybe_dirty_(o.maybe_dirty_) {}
  array& operator=(array&&) = delete;
  array(const array&) = delete;
  array& operator=(const array&) = delete;

  [[nodiscard]] std::uint64_t size() const { return count_; }
  [[nodiscard]] const std::string& name() const { return name_; }

  /// The view for kernels, using the cache as configured.
  [[nodiscard]] array_ref<T> ref() const {
    if (direct_) return array_ref<T>(direct_, count_);
    if constexpr (writable) maybe_dirty_ = true;
    return array_ref<T>(cache_->ref(), attachment_.slot, offset_, count_, cache_->config().mode,
                        false);
  }

  /// The view for one launch of `grid` x `block` threads: where the cache has fewer lines than
  /// twice the warps that can run at once, a read-only array falls back to uncached reads
  /// through bounce buffers; a writable one throws bam::input_error.
  [[nodiscard]] array_ref<T> ref_for_launch(std::uint32_t grid, std::uint32_t block) const {
    if (direct_) return ref();
    const std::uint64_t threads = std::uint64_t{grid} * block;
    std::uint64_t warps = cache_->concurrent_warps();
    const std::uint64_t width = cache_->warp_width();
    const std::uint64_t launch_warps = (threads + width - 1) / width;
    if (launch_warps < warps) warps = launch_warps;
    const bool too_small = cache_->lines() < 2 * warps;
    if constexpr (writable) maybe_dirty_ = true;
    if (too_small && writable) {
      throw input_error("array '" + name_ + "': the cache has " + std::to_string(cache_->lines()) +
                        " lines; a launch of " + std::to_string(warps) +
                        " concurrent warps needs at least " + std::to_string(2 * warps));
    }
    array_ref<T> r(cache_->ref(), attachment_.slot, offset_, count_, cache_->config().mode,
                   too_small);
    // A warp that loads k lines at once holds up to k of them busy while the loads run: allow
    // that only while every warp of the launch could do so with three quarters of the cache to
    // spare for everyone's hits. Optimized mode only (dense arrays too: their slots stay busy
    // the same way, and the lines of one list mostly lie in one piece).
    if (!too_small && !r.reads_through() && r.mode() == cache_mode::optimized) {
      const std::uint64_t spare = cache_->lines() / (4 * warps);
      r.set_lookahead_lines(static_cast<std::uint32_t>(std::min<std::uint64_t>(spare, 32)));
    }
    return r;
  }

  /// Reads elements [first, first + count) on the host through the cache. Throws
  /// bam::input_error past the end, bam::nvme_error on an I/O error.
  [[nodiscard]] std::vector<value_type> read(std::uint64_t first, std::uint64_t count) const {
    check_range(first, count);
    std::vector<value_type> out(count);
    if (direct_) {
      require_host_access();
      std::copy_n(direct_ + first, count, out.begin());
    } else if (count) {
      cache_->read_bytes(attachment_.index, offset_ + first * sizeof(T), count * sizeof(T),
                         out.data());
    }
    return out;
  }

  /// Writes elements [first, first + values.size()) on the host through the cache (the lines
  /// become dirty; flush() writes them to the devices).
  void write(std::uint64_t first, const std::vector<value_type>& values) requires writable {
    check_range(first, values.size());
    if (direct_) {
      require_host_access();
      std::copy(values.begin(), values.end(), direct_ + first);
    } else if (!values.empty()) {
      maybe_dirty_ = true;
      cache_->write_bytes(attachment_.index, offset_ + first * sizeof(T), values.size() * sizeof(T),
                          values.data());
    }
  }

  /// Writes every dirty line of this array back and FLUSHes the devices; waits.
  void flush() requires writable {
    if (cache_) cache_->flush(attachment_.index);
    maybe_dirty_ = false;
  }

  /// Throws bam::nvme_error naming the queue, command id, LBA and NVMe status of the first
  /// error a kernel recorded for this array (and clears the record).
  void check() const {
    if (cache_) cache_->check(attachment_.index);
  }

  /// Forgets failed page loads so the next access tries the I/O again.
  void clear_failures() {
    if (cache_) cache_->clear_failures(attachment_.index);
  }

  /// The array's cache statistics (all zero for a view of memory).
  [[nodiscard]] cache_stats stats() const {
    return cache_ ? cache_->stats(attachment_.index) : cache_stats{};
  }
  void reset_stats() {
    if (cache_) cache_->reset_stats(attachment_.index);
  }
  /// The array's share of the frame pool as a tenant and its counters (docs/mosaic.md); call
  /// between launches.
  [[nodiscard]] tenant_stats frame_stats() const {
    return cache_ ? cache_->frame_stats(attachment_.index) : tenant_stats{};
  }

 private:
  void check_range(std::uint64_t first, std::uint64_t count) const {
    if (first > count_ || count > count_ - first) {
      throw input_error("array '" + name_ + "': elements [" + std::to_string(first) + ", " +
                        std::to_string(first + count) + ") are past its end (" +
                        std::to_string(count_) + " elements)");
    }
  }

  array() = default;
  void require_host_access() const {
    if (!host_accessible_) {
      throw input_error("array '" + name_ +
                        "' is a view of device memory: the host cannot read or write it directly");
    }
  }

  page_cache* cache_ = nullptr;
  device_set_ref set_;
  std::string name_;
  page_cache::attachment attachment_{};
  std::uint64_t offset_ = 0;
  std::uint64_t count_ = 0;
  value_type* direct_ = nullptr;
  bool host_accessible_ = false;
  mutable bool maybe_dirty_ = false;  ///< a ref or write since the last flush
};

}  // namespace bam
