#pragma once
/// @file
/// A CPU background agent for contiguity-aware compaction (CAC, docs/mosaic.md): while free
/// frames run low it runs dense_cache_ref::compact_step over every dense array of a two_level
/// cache on its own thread, so that sparsely used shared frames empty into other shared frames
/// of their tenant and return to the pool. Tenants never stop: readers wait only for a piece in
/// motion. A GPU agent (a block on its own stream calling compact_step) can come later.
///
/// Thread safety: construct, stop and destroy from one thread. The cache's dense arrays must
/// exist before the agent starts and outlive it (stop it before destroying an array).

#include <chrono>
#include <cstdint>
#include <thread>

#include <bam/cache/mosaic/dense_cache.hpp>
#include <bam/cache/page_cache.hpp>
#include <bam/platform/atomic.hpp>

namespace bam::cache::mosaic {

struct compactor_options {
  /// Compact while at most this many frames are free (neither OPEN nor HELD).
  std::uint32_t low_free_frames = 1;
  /// How long the agent sleeps when it found nothing to do.
  std::chrono::microseconds idle{200};
};

class compactor {
 public:
  /// Starts the agent on `cache` (a two_level cache; on any other it idles).
  explicit compactor(const page_cache_ref& cache, compactor_options options = {})
      : cache_(cache), options_(options), thread_([this] { run(); }) {}
  ~compactor() { stop(); }
  compactor(const compactor&) = delete;
  compactor& operator=(const compactor&) = delete;

  /// Stops the agent and waits for its step in progress to end.
  void stop() {
    // relaxed: the join below orders everything the agent did before our return.
    atomic_ref<std::uint32_t>(stop_).store(1u, order::relaxed);
    if (thread_.joinable()) thread_.join();
  }

  /// Pieces moved between shared frames so far, and shared frames freed by it.
  [[nodiscard]] std::uint64_t pieces_moved() const {
    return atomic_ref<std::uint64_t>(moved_).load(order::relaxed);  // relaxed: a count
  }
  [[nodiscard]] std::uint64_t frames_freed() const {
    return atomic_ref<std::uint64_t>(freed_).load(order::relaxed);  // relaxed: a count
  }

 private:
  /// One pass over the dense arrays; true when a piece moved.
  bool pass(const dense_cache_ref& dense) {
    bool worked = false;
    for (std::uint32_t i = 0; i < cache_.slot_count(); ++i) {
      const array_slot& a = *cache_.slot_at(i);
      if (a.large_table == nullptr || a.pages == 0) continue;
      const dense_cache_ref::compact_result r = dense.compact_step(a);
      if (r != dense_cache_ref::compact_result::moved &&
          r != dense_cache_ref::compact_result::freed) {
        continue;
      }
      worked = true;
      // relaxed: counts.
      atomic_ref<std::uint64_t>(moved_).fetch_add(1u, order::relaxed);
      if (r == dense_cache_ref::compact_result::freed) {
        atomic_ref<std::uint64_t>(freed_).fetch_add(1u, order::relaxed);
      }
    }
    return worked;
  }

  void run() {
    if (!cache_.frames().enabled()) return;
    const dense_cache_ref dense(cache_);
    // relaxed: a stop request; nothing is published with it.
    while (atomic_ref<std::uint32_t>(stop_).load(order::relaxed) == 0u) {
      const bool low = dense.free_frames() <= options_.low_free_frames;
      if (!low || !pass(dense)) std::this_thread::sleep_for(options_.idle);
    }
  }

  page_cache_ref cache_;
  compactor_options options_;
  std::uint32_t stop_ = 0;
  mutable std::uint64_t moved_ = 0;  // mutable: read through atomic_ref by const getters
  mutable std::uint64_t freed_ = 0;
  std::thread thread_;  // last: it starts once the fields above are set
};

}  // namespace bam::cache::mosaic
