#pragma once
// Kernels behind the host-side array operations (read, write, flush), written once for the
// CPU pool and the GPU stream.

#include <cstdint>
#include <cstring>

#include <bam/cache/mosaic/dense_cache.hpp>
#include <bam/cache/page_cache.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/launch.hpp>

namespace bam::detail {

/// Keeps the first failure a launch saw. The word lives where the host can read it.
BAM_HD inline void note_failure(std::uint32_t* word, io_status s) {
  if (s.ok()) return;
  std::uint32_t none = 0;
  // relaxed: the host reads the word after the launch has completed.
  atomic_ref<std::uint32_t, scope::system>(*word).compare_exchange(none, s.bits(), order::relaxed);
}

/// Copies [set_byte, +bytes) of an array between its lines and `buffer` (which holds the
/// range), one line-sized part per logical thread, each with its line pinned.
struct copy_through_cache {
  page_cache_ref cache;
  array_slot slot;
  std::uint64_t set_byte;
  std::uint64_t bytes;
  std::uint8_t* buffer;
  bool to_cache;
  std::uint32_t* failure;

  /// One access and one probe per line part, as a kernel's access counts them (the cache
  /// counts the loads a part causes, so without its probe loads would exceed misses).
  BAM_HD void count_probe(const acquire_result& r, std::uint64_t part_bytes) const {
    slot.stats.add(&cache_stats::accesses, 1);
    slot.stats.add(&cache_stats::bytes_requested, part_bytes);
    slot.stats.add(r.kind == probe_kind::hit ? &cache_stats::hits : &cache_stats::misses, 1);
    if (r.kind == probe_kind::miss_wait) slot.stats.add(&cache_stats::miss_waits, 1);
    if (r.kind == probe_kind::failed) slot.stats.add(&cache_stats::errors, 1);
  }

  BAM_HD void operator()(thread_index t) const {
    if (bytes == 0) return;
    const std::uint32_t shift = cache.line_shift();
    const std::uint64_t first = set_byte >> shift;
    const std::uint64_t parts = ((set_byte + bytes - 1) >> shift) - first + 1;
    for (std::uint64_t p = t.id; p < parts; p += t.count) {
      const std::uint64_t line_start = (first + p) << shift;
      const std::uint64_t line_end = line_start + (std::uint64_t{1} << shift);
      const std::uint64_t from = line_start > set_byte ? line_start : set_byte;
      const std::uint64_t to = line_end < set_byte + bytes ? line_end : set_byte + bytes;
      // A dense array on a two_level cache goes through its frames (cache/mosaic).
      const cache::mosaic::dense_cache_ref dense(cache);
      const bool large = slot.large_table != nullptr;
      const std::uint64_t page = first + p - slot.first_line;
      const auto hint = static_cast<std::uint32_t>(p);
      const auto copy = [&](std::uint32_t line) {
        std::uint8_t* in_line = cache.line_data(line) + (from - line_start);
        std::uint8_t* in_buffer = buffer + (from - set_byte);
        if (to_cache) {
          std::memcpy(in_line, in_buffer, to - from);
        } else {
          std::memcpy(in_buffer, in_line, to - from);
        }
      };
      if (large) {
        // The copy and the release happen inside acquire_then (dense_cache.hpp says why).
        cache::mosaic::frame_guard guard;
        const acquire_result r =
            dense.acquire_then(slot, page, hint, guard, [&](std::uint32_t line) {
              copy(line);
              if (to_cache) dense.mark_dirty(line);
              dense.release(guard);
            });
        count_probe(r, to - from);
        if (!r.status.ok()) note_failure(failure, r.status);
        continue;
      }
      const acquire_result r = cache.acquire(slot, page, 1, hint);
      count_probe(r, to - from);
      if (!r.status.ok()) {
        note_failure(failure, r.status);
        continue;
      }
      copy(r.line);
      if (to_cache) cache.mark_dirty(r.line);
      cache.release(r.line);
    }
  }
};

/// Writes back every dirty line of one array.
struct flush_lines {
  page_cache_ref cache;
  array_slot slot;
  std::uint32_t* failure;

  BAM_HD void operator()(thread_index t) const {
    if (slot.pages == 0) return;
    if (slot.large_table != nullptr) {  // a dense array's pages live in its frames
      const cache::mosaic::dense_cache_ref dense(cache);
      for (std::uint64_t f = t.id; f < dense.pool().geometry.frames; f += t.count) {
        note_failure(failure, dense.flush_frame(slot, static_cast<std::uint32_t>(f)));
      }
      // and, under base first, the pieces on base pages in lines of the base pool
      if (!dense.pool().base_first) return;
    }
    for (std::uint64_t l = t.id; l < cache.lines(); l += t.count) {
      note_failure(failure, cache.flush_line(slot, static_cast<std::uint32_t>(l)));
    }
  }
};

}  // namespace bam::detail
