#pragma once
/// @file
/// bam::page_cache: the owner of a software page cache (lines, line states, CLOCK hand, PRP
/// lists, bounce buffers) and of the per-array state of the arrays that use it. Kernels get
/// page_cache_ref (cache/page_cache.hpp) through bam::array_ref.
///
///     bam::host_stream stream;                                    // the CPU path
///     bam::page_cache cache({.line_bytes = 4096, .capacity_bytes = 64 << 20}, stream);
///     bam::array<const std::uint64_t> edges(cache, ssd.ref(), {.offset_bytes = 65536});
///
/// Not thread safe: set-up and host-side calls from one thread. Everything is allocated at
/// construction (attach allocates an array's page table), never while kernels run.

#include <cstdint>
#include <memory>
#include <string>

#include <bam/cache/cache_config.hpp>
#include <bam/cache/error_record.hpp>
#include <bam/cache/page_cache.hpp>
#include <bam/cache/stats.hpp>
#include <bam/platform/launch.hpp>
#include <bam/storage/backing_store.hpp>
#include <bam/storage/device_set.hpp>

namespace bam {

class gpu_runtime;
namespace detail {
class cache_executor;
}

/// The metadata a cache and an array will need, before anything is allocated (bam plan).
struct cache_plan {
  std::uint64_t lines = 0;
  std::uint64_t line_state_bytes = 0;  ///< state word + CLOCK reference word per line
  std::uint64_t prp_list_bytes = 0;
  std::uint64_t bounce_bytes = 0;
  std::uint64_t page_table_bytes = 0;      ///< per base page of the data, for the whole data set
  std::uint64_t metadata_bytes = 0;        ///< everything but the lines themselves
  std::uint64_t min_lines_for_launch = 0;  ///< 2 x concurrent warps
  // two_level translation (config.translation): the frame pool and a dense array's large table.
  std::uint64_t frames = 0;
  std::uint64_t frame_bytes = 0;
  std::uint64_t frame_table_bytes = 0;  ///< frame states, bitmaps, owners, epoch slots
  std::uint64_t large_table_bytes = 0;  ///< 8 bytes per frame-sized piece of the data
};

/// Plans a cache of `config` over `data_bytes` of array data for launches of
/// `concurrent_warps` warps.
cache_plan plan_cache(const cache_config& config, std::uint64_t data_bytes,
                      std::uint64_t concurrent_warps);

class page_cache {
 public:
  /// A cache in host memory whose host-side operations run on `stream` (the CPU path).
  /// Throws bam::input_error for a bad configuration.
  page_cache(const cache_config& config, host_stream& stream);
  /// A cache in GPU memory whose host-side operations run on `runtime`'s application stream.
  /// Construct it (and its arrays) before runtime.start(): it allocates and warms up kernels.
  page_cache(const cache_config& config, gpu_runtime& runtime);
  ~page_cache();
  page_cache(const page_cache&) = delete;
  page_cache& operator=(const page_cache&) = delete;

  [[nodiscard]] page_cache_ref ref() const;
  [[nodiscard]] const cache_config& config() const;
  [[nodiscard]] std::uint32_t lines() const;
  /// Warps that can run at once on this cache's executor (for the launch size check).
  [[nodiscard]] std::uint64_t concurrent_warps() const;
  /// Lanes per warp of its launches: 1 on the CPU path, 32 on a GPU.
  [[nodiscard]] std::uint32_t warp_width() const;

  // ---- used by bam::array ----
  struct attachment {
    std::uint32_t index;
    array_slot slot;
  };
  /// Registers an array of `pages` lines starting at set line `first_line`. A `dense` array on
  /// a two_level cache is translated through large frames (cache/mosaic/dense_cache.hpp). A
  /// `fresh` array (writable, base pages) zero-fills the pages it never wrote instead of
  /// reading them (array_options::fresh).
  attachment attach(const device_set_ref& set, std::uint64_t first_line, std::uint64_t pages,
                    bool writable, const std::string& name, bool dense = false,
                    std::uint32_t frame_quota = 0, bool fresh = false);
  void detach(std::uint32_t index) noexcept;
  /// Host-side transfers through the cache (wait for completion). Throw bam::nvme_error.
  void read_bytes(std::uint32_t index, std::uint64_t set_byte, std::uint64_t bytes, void* out);
  void write_bytes(std::uint32_t index, std::uint64_t set_byte, std::uint64_t bytes,
                   const void* in);
  /// Writes every dirty line of the array back, then FLUSHes every device; waits.
  void flush(std::uint32_t index);
  [[nodiscard]] cache_stats stats(std::uint32_t index) const;
  void reset_stats(std::uint32_t index);
  /// What the array holds of the frame pool as a tenant, and its counters (tenant 0 and no
  /// frames for an array on base pages). Reads the frame table: call between launches.
  [[nodiscard]] tenant_stats frame_stats(std::uint32_t index) const;
  /// What of the cache's memory is taken now: BUSY or pinned lines, busy frame slots, HELD or
  /// pinned frames, bounce buffers. Call it between launches; a command abandoned after a
  /// timeout keeps what its buffer needs until its late completion is drained, after which
  /// everything counted here should be zero. Reads cache memory (copies it on a GPU).
  [[nodiscard]] cache_holds held_resources() const;
  /// Throws bam::nvme_error if the array's error record holds an error (then clears it).
  void check(std::uint32_t index);
  /// Forgets failed page loads so they are tried again.
  void clear_failures(std::uint32_t index);
  /// Waits for every launch on the cache's stream.
  void synchronize();

 private:
  void init(const cache_config& config, std::unique_ptr<detail::cache_executor> exec);
  void init_frames();
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace bam
