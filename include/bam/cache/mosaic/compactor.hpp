#pragma once
/// @file
/// A CPU background agent for contiguity-aware compaction (CAC, docs/mosaic.md): while free
/// frames run low it runs dense_cache_ref::compact_step over every dense array of a two_level
/// cache on its own thread, so that sparsely used shared frames empty into other shared frames
/// of their tenant and return to the pool. Tenants never stop: readers wait only for a piece in
/// motion. The loop is compaction_agent_ref (compaction_agent.hpp); gpu_compaction_agent runs
/// the same loop on a GPU thread for a cache in GPU memory.
///
/// Thread safety: construct, stop and destroy from one thread. The cache's dense arrays must
/// exist before the agent starts and outlive it (stop it before destroying an array).

#include <chrono>
#include <cstdint>
#include <limits>
#include <thread>

#include <bam/cache/mosaic/compaction_agent.hpp>
#include <bam/cache/page_cache.hpp>

namespace bam::cache::mosaic {

struct compactor_options {
  /// Compact while at most this many frames are free (neither OPEN nor HELD).
  std::uint32_t low_free_frames = 1;
  /// How long the agent sleeps when it found nothing to do.
  std::chrono::microseconds idle{200};
};

class compactor {
 public:
  /// Starts the agent on `cache` (a two_level cache; on any other it ends at once).
  explicit compactor(const page_cache_ref& cache, compactor_options options = {})
      : agent_(cache, &words_, agent_options(options)), thread_([this] { agent_.run(); }) {}
  ~compactor() { stop(); }
  compactor(const compactor&) = delete;
  compactor& operator=(const compactor&) = delete;

  /// Stops the agent and waits for its step in progress to end.
  void stop() {
    compaction_agent_ref::request_stop(words_);
    if (thread_.joinable()) thread_.join();
  }

  /// Pieces moved between shared frames so far, and shared frames freed by it.
  [[nodiscard]] std::uint64_t pieces_moved() const {
    return compaction_agent_ref::counts(words_).pieces_moved;
  }
  [[nodiscard]] std::uint64_t frames_freed() const {
    return compaction_agent_ref::counts(words_).frames_freed;
  }
  /// Every counter of the agent (compaction_agent_words).
  [[nodiscard]] compaction_counts counts() const { return compaction_agent_ref::counts(words_); }

 private:
  /// The same sleep every time it is idle, as long as `idle` says.
  static compaction_agent_options agent_options(const compactor_options& o) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(o.idle).count();
    const auto most = std::numeric_limits<std::uint32_t>::max();
    const std::uint32_t idle =
        ns <= 0 ? 0u
                : (static_cast<std::uint64_t>(ns) > most ? most : static_cast<std::uint32_t>(ns));
    return {.low_free_frames = o.low_free_frames, .min_idle_ns = idle, .max_idle_ns = idle};
  }

  compaction_agent_words words_{};
  compaction_agent_ref agent_;
  std::thread thread_;  // last: it starts once the fields above are set
};

}  // namespace bam::cache::mosaic
