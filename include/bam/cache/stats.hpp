#pragma once
/// @file
/// Cache statistics, kept in shards so that no counter is a single hot address (a shard per SM
/// on the GPU, per pool worker on the CPU), summed on the host by array::stats().

#include <cstdint>

#include <bam/platform/agent.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>

namespace bam {

/// The counters of one array. probes = hits + misses; accesses = probes + coalesced + reused;
/// io_commands = loads + write_backs (+ read-through reads); I/O amplification =
/// bytes_moved / bytes_requested.
struct cache_stats {
  std::uint64_t accesses = 0;         ///< element reads and writes by the application
  std::uint64_t hits = 0;             ///< probes that found the line resident
  std::uint64_t misses = 0;           ///< probes that did not (including waits on a load)
  std::uint64_t miss_waits = 0;       ///< misses that waited for another thread's load
  std::uint64_t coalesced = 0;        ///< accesses served by another lane's probe
  std::uint64_t reused = 0;           ///< accesses served by a pin the thread kept
  std::uint64_t loads = 0;            ///< read commands that filled a line
  std::uint64_t write_backs = 0;      ///< write commands of dirty lines
  std::uint64_t read_through = 0;     ///< uncached reads (mode none, or a too-small cache)
  std::uint64_t evictions = 0;        ///< lines taken from another page
  std::uint64_t bytes_requested = 0;  ///< bytes the application asked for
  std::uint64_t bytes_moved = 0;      ///< bytes read and written by I/O commands
  std::uint64_t errors = 0;           ///< accesses that returned an error status
  std::uint64_t bytes_fetched = 0;    ///< bytes read by load commands (part of bytes_moved)
  /// write-backs that ran beside the evicting thread's own load (asynchronous write-back)
  std::uint64_t write_backs_beside_loads = 0;
  /// loads started by a prefetch (array_ref's prefetch_ticket; part of loads)
  std::uint64_t prefetched = 0;
  /// misses of a fresh array served by zeroing the line instead of a read (not loads)
  std::uint64_t zero_filled = 0;
  // Two-level translation (dense arrays on a two_level cache, docs/mosaic.md):
  std::uint64_t coalesces = 0;        ///< pieces given a whole frame (promotions included)
  std::uint64_t promotions = 0;       ///< splintered pieces given a whole frame again
  std::uint64_t splinters = 0;        ///< coalesced pieces turned back into base pages
  std::uint64_t bytes_compacted = 0;  ///< bytes moved between frames by compaction
  std::uint64_t fills = 0;            ///< coalesced pieces whose missing pages were loaded at once

  [[nodiscard]] std::uint64_t probes() const { return hits + misses; }
  [[nodiscard]] std::uint64_t io_commands() const { return loads + write_backs + read_through; }
  [[nodiscard]] double hit_rate() const {
    return probes() ? static_cast<double>(hits) / static_cast<double>(probes()) : 0.0;
  }
  [[nodiscard]] double amplification() const {
    return bytes_requested ? static_cast<double>(bytes_moved) / static_cast<double>(bytes_requested)
                           : 0.0;
  }
  cache_stats& operator+=(const cache_stats& o);
};

/// What one tenant (an array declared dense on a two_level cache) holds of the frame pool and
/// what it did, from page_cache::tenant_stats between launches. Frames: `coalesced` serve one
/// of its pieces; `reserved` are held by one of its reservations or evictions in progress;
/// `shared` hold base pages of several of its splintered pieces.
/// bloat_bytes: bytes of its frames that hold no resident page (reserved but empty).
struct tenant_stats {
  std::uint32_t tenant = 0;       ///< 0: the array is not a tenant (base pages)
  std::uint32_t frame_quota = 0;  ///< most frames it may hold at once; 0: no quota
  std::uint64_t frames_coalesced = 0;
  std::uint64_t frames_reserved = 0;
  std::uint64_t frames_shared = 0;
  std::uint64_t resident_bytes = 0;
  std::uint64_t bloat_bytes = 0;
  cache_stats counters;  ///< hits, misses, bytes_fetched, coalesces, splinters, ...

  [[nodiscard]] std::uint64_t frames_held() const {
    return frames_coalesced + frames_reserved + frames_shared;
  }
};

/// What of the cache's memory is taken right now (page_cache::held_resources). Between
/// launches, once the late completions of abandoned commands have been drained, every count
/// is zero: anything left is a leak (a line, slot or buffer lost to the cache for good).
struct cache_holds {
  std::uint64_t busy_lines = 0;      ///< base-pool lines BUSY (or held by abandoned commands)
  std::uint64_t pinned_lines = 0;    ///< base-pool lines with pins
  std::uint64_t busy_slots = 0;      ///< frame slots whose busy bit is set
  std::uint64_t held_frames = 0;     ///< frames HELD (being reserved, emptied or flushed)
  std::uint64_t pinned_frames = 0;   ///< frames with frame pins
  std::uint64_t bounce_buffers = 0;  ///< bounce buffers taken

  [[nodiscard]] std::uint64_t total() const {
    return busy_lines + pinned_lines + busy_slots + held_frames + pinned_frames + bounce_buffers;
  }
};

/// One shard: the same counters, on their own line.
struct alignas(hot_line_bytes) stat_shard {
  cache_stats counters;
};

/// Where a kernel adds to the statistics of one array.
struct stats_ref {
  stat_shard* shards = nullptr;
  std::uint32_t count = 0;

  /// Adds `by` to the counter at `member` of this agent's shard.
  BAM_HD void add(std::uint64_t cache_stats::*member, std::uint64_t by) const {
    bump(local().*member, by);
  }

  /// This agent's shard, for adding several counters with one look-up.
  [[nodiscard]] BAM_HD cache_stats& local() const {
    const std::uint32_t a = agent_index();
    // Shards usually outnumber agents (SMs): skip the division then.
    return shards[a < count ? a : a % count].counters;
  }

  /// Adds `by` to one counter of a shard.
  BAM_HD static void bump(std::uint64_t& counter, std::uint64_t by) {
    if (by == 0) return;
    // relaxed: a statistic; stats() is read after the kernels that wrote it have finished.
    atomic_ref<std::uint64_t>(counter).fetch_add(by, order::relaxed);
  }
};

}  // namespace bam
