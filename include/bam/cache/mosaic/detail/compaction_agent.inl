#pragma once
// The compaction agent's loop (compaction_agent.hpp). Each memory order says what it publishes
// or waits for.

#include <bam/platform/sleep.hpp>

namespace bam::cache::mosaic {

BAM_HD inline bool compaction_agent_ref::stop_requested() const {
  // relaxed: a request to end; nothing is published with it. System scope: on the GPU the
  // word is written by a copy engine, not by a GPU thread.
  return atomic_ref<std::uint32_t, scope::system>(words_->stop).load(order::relaxed) != 0u;
}

BAM_HD inline bool compaction_agent_ref::pass(const dense_cache_ref& dense) const {
  // relaxed (every counter): running totals; the owner reads them after the agent ends (a
  // join or a stream wait orders them) or as a look while it runs.
  atomic_ref<std::uint64_t>(words_->passes).fetch_add(1u, order::relaxed);
  bool worked = false;
  for (std::uint32_t i = 0; i < cache_.slot_count() && !stop_requested(); ++i) {
    const array_slot& a = *cache_.slot_at(i);
    if (a.large_table == nullptr || a.pages == 0) continue;
    switch (dense.compact_step(a)) {
      case dense_cache_ref::compact_result::freed:
        atomic_ref<std::uint64_t>(words_->frames_freed).fetch_add(1u, order::relaxed);
        [[fallthrough]];
      case dense_cache_ref::compact_result::moved:
        atomic_ref<std::uint64_t>(words_->pieces_moved).fetch_add(1u, order::relaxed);
        worked = true;
        break;
      case dense_cache_ref::compact_result::retry:
        atomic_ref<std::uint64_t>(words_->retries).fetch_add(1u, order::relaxed);
        break;
      case dense_cache_ref::compact_result::idle:
        break;
    }
  }
  return worked;
}

// Out of line: compact_step's call graph is large, and the kernels that run the loop (one
// thread) gain nothing from inlining it into them.
BAM_HD BAM_NOINLINE inline void compaction_agent_ref::run() const {
  if (!cache_.frames().enabled()) return;
  const dense_cache_ref dense(cache_);
  // Never a spin: at least shortest_idle_ns each (a spinning GPU thread takes issue slots
  // from its SM's other warps).
  const std::uint32_t longest =
      options_.max_idle_ns > shortest_idle_ns ? options_.max_idle_ns : shortest_idle_ns;
  const std::uint32_t shortest =
      options_.min_idle_ns > shortest_idle_ns ? options_.min_idle_ns : shortest_idle_ns;
  const std::uint32_t first = shortest < longest ? shortest : longest;
  std::uint32_t idle = first;
  while (!stop_requested()) {
    // A pass that moved a piece goes again at once: the next piece may fit too.
    if (dense.free_frames() <= options_.low_free_frames && pass(dense)) {
      idle = first;
      continue;
    }
    atomic_ref<std::uint64_t>(words_->sleeps).fetch_add(1u, order::relaxed);  // relaxed: a count
    sleep_ns(idle);
    idle = idle > longest / 2 ? longest : idle * 2;
  }
}

inline void compaction_agent_ref::request_stop(compaction_agent_words& words) {
  // relaxed: the owner's join (or stream wait) orders what the agent did before it ended.
  atomic_ref<std::uint32_t, scope::system>(words.stop).store(1u, order::relaxed);
}

inline compaction_counts compaction_agent_ref::counts(const compaction_agent_words& words) {
  // relaxed (every counter): running totals.
  auto read = [](const std::uint64_t& w) {
    return atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(w)).load(order::relaxed);
  };
  return {.pieces_moved = read(words.pieces_moved),
          .frames_freed = read(words.frames_freed),
          .retries = read(words.retries),
          .passes = read(words.passes),
          .sleeps = read(words.sleeps)};
}

}  // namespace bam::cache::mosaic
