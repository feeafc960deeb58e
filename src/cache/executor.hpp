#pragma once
// Where a cache's host-side operations run: memory of the right kind, and the byte-level
// transfers, flush and statistics that bam::array's host API needs. One implementation per
// target (CPU thread pool; GPU stream).

#include <cstdint>

#include <bam/cache/page_cache.hpp>
#include <bam/storage/backing_store.hpp>

namespace bam::detail {

class cache_executor {
 public:
  virtual ~cache_executor() = default;
  [[nodiscard]] virtual memory_kind memory() const = 0;
  [[nodiscard]] virtual std::uint64_t concurrent_warps() const = 0;
  /// Epoch reader slots that cover every thread that may run cache code at once
  /// (reader_slot()): on the CPU the registry hands each live thread the lowest free index, so
  /// this many threads may use the cache at once.
  [[nodiscard]] virtual std::uint32_t reader_slots() const { return 4096; }
  /// Lanes per warp of this executor's launches (1 for a CPU thread, 32 on a GPU).
  [[nodiscard]] virtual std::uint32_t warp_width() const = 0;
  /// Copies between host memory and cache memory.
  virtual void copy_to_cache(void* dst, const void* src, std::uint64_t bytes) = 0;
  virtual void copy_from_cache(void* dst, const void* src, std::uint64_t bytes) = 0;
  /// Moves [set_byte, +bytes) of an array between the cache and host memory; returns the
  /// first failed status (details in the array's error record).
  virtual io_status read_bytes(const page_cache_ref& cache, const array_slot& slot,
                               std::uint64_t set_byte, std::uint64_t bytes, void* out) = 0;
  virtual io_status write_bytes(const page_cache_ref& cache, const array_slot& slot,
                                std::uint64_t set_byte, std::uint64_t bytes, const void* in) = 0;
  /// Writes back every dirty line of the array, then FLUSHes the devices.
  virtual io_status flush(const page_cache_ref& cache, const array_slot& slot) = 0;
  virtual void synchronize() = 0;
};

}  // namespace bam::detail
