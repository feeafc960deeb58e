#pragma once
/// @file
/// The compaction agent's loop, written once for a CPU thread and a GPU thread (CAC,
/// docs/mosaic.md): while a two_level cache has at most `low_free_frames` free frames, it runs
/// dense_cache_ref::compact_step over every dense array of the cache, so that sparsely used
/// shared frames of a tenant empty into its other shared frames and return to the pool; when
/// there is nothing to do it sleeps, longer each time up to `max_idle_ns`. It counts what it
/// did and ends once its stop word is set.
///
/// Owners: compactor (compactor.hpp) runs it on a std::thread over a cache in host memory;
/// gpu_compaction_agent (gpu_compaction_agent.hpp) runs it on one GPU thread of its own
/// stream over a cache in GPU memory.
///
///     compaction_agent_words words{};                       // zeroed, outlives the agent
///     std::thread t([&] { compaction_agent_ref(cache.ref(), &words, {}).run(); });
///     ...
///     compaction_agent_ref::request_stop(words);            // seen within a bounded time
///     t.join();
///
/// Stop: the agent reads its stop word before every compaction step and after every sleep,
/// so it ends at most one sleep (max_idle_ns) or one step (bounded by the cache's victim
/// timeout; a few microseconds unless a frame it moves is busy) after the word is set.
///
/// Thread safety: one agent per words struct; any number of agents, readers, writers,
/// promoters and evictors may run on one cache at once (compact_step allows it). The cache's
/// dense arrays must be attached before the agent starts and stay attached until it ends.

#include <cstdint>
#include <type_traits>

#include <bam/cache/mosaic/dense_cache.hpp>
#include <bam/cache/page_cache.hpp>
#include <bam/platform/atomic.hpp>
#include <bam/platform/config.hpp>

namespace bam::cache::mosaic {

/// The shortest sleep of an idle agent; smaller idle knobs are taken as this.
inline constexpr std::uint32_t shortest_idle_ns = 64;

/// The agent's knobs.
struct compaction_agent_options {
  /// Compact while at most this many frames are free (neither OPEN nor HELD); the frame
  /// count of the pool (or more) compacts whenever two shared frames of a tenant can merge.
  std::uint32_t low_free_frames = 1;
  /// First sleep after a look that found nothing to do; each further idle look doubles it.
  std::uint32_t min_idle_ns = 10'000;
  /// Longest sleep: how late a stop request may be seen while the agent is idle.
  std::uint32_t max_idle_ns = 200'000;
};
static_assert(std::is_trivially_copyable_v<compaction_agent_options>);

/// What the agent shares with its owner. Zero it before the agent starts. The owner sets
/// `stop` (request_stop) and reads the counters (relaxed: running totals).
struct compaction_agent_words {
  /// Non-zero: end. Alone on its line: the agent reads it often, and its counters (the next
  /// line) change under it.
  alignas(hot_line_bytes) std::uint32_t stop;
  /// Pieces moved from one shared frame into another (steps that reported moved or freed).
  alignas(hot_line_bytes) std::uint64_t pieces_moved;
  /// Shared frames left empty by a move and returned to the pool.
  std::uint64_t frames_freed;
  /// Steps that found a frame or the piece busy (a promoter, evictor or load) and gave up.
  std::uint64_t retries;
  /// Passes over the dense arrays, made while free frames were low.
  std::uint64_t passes;
  /// Sleeps of the agent: looks that found free frames enough or nothing to move.
  std::uint64_t sleeps;
};
static_assert(sizeof(compaction_agent_words) == 2 * hot_line_bytes);
static_assert(std::is_trivially_copyable_v<compaction_agent_words>);

/// The counters of compaction_agent_words, read out.
struct compaction_counts {
  std::uint64_t pieces_moved = 0;
  std::uint64_t frames_freed = 0;
  std::uint64_t retries = 0;
  std::uint64_t passes = 0;
  std::uint64_t sleeps = 0;
};

/// The agent's loop: a view of a page cache and of its words, passed to a thread (or a
/// kernel) by value. Both must outlive run().
class compaction_agent_ref {
 public:
  compaction_agent_ref() = default;  // a kernel functor's warm-up launch needs one
  BAM_HD compaction_agent_ref(const page_cache_ref& cache, compaction_agent_words* words,
                              const compaction_agent_options& options = {})
      : cache_(cache), words_(words), options_(options) {}

  /// Runs until the stop word is set (at once on a cache without frames: nothing to do).
  /// Call from one thread.
  BAM_HD void run() const;
  /// One pass over the cache's dense arrays: a compaction step for each, stopping early when
  /// the stop word is set. True when a piece moved.
  BAM_HD bool pass(const dense_cache_ref& dense) const;
  [[nodiscard]] BAM_HD bool stop_requested() const;

  /// Sets the stop word from a host thread (the GPU agent's word is set by a copy instead).
  static void request_stop(compaction_agent_words& words);
  /// The counters now (relaxed: totals still moving while the agent runs).
  [[nodiscard]] static compaction_counts counts(const compaction_agent_words& words);

 private:
  page_cache_ref cache_;
  compaction_agent_words* words_ = nullptr;
  compaction_agent_options options_;
};
static_assert(std::is_trivially_copyable_v<compaction_agent_ref>);

}  // namespace bam::cache::mosaic

#include <bam/cache/mosaic/detail/compaction_agent.inl>
