// The compaction agent's loop (compaction_agent_ref) on a CPU thread: it frees a shared frame
// when two of a tenant's can merge and counts what it did, leaves frames alone while enough
// are free, ends at once on a cache without frames, and sees a stop while it sleeps. Both
// pinning kinds.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include <bam/cache.hpp>
#include <bam/cache/mosaic/compaction_agent.hpp>

#include "compaction_workload.hpp"
#include "mosaic_rig.hpp"

namespace {

using namespace bam;
using namespace bam::cache::mosaic;
namespace workload = bam::testing::compaction;
using bam::testing::mosaic::adaptive;
using bam::testing::mosaic::kind_name;
using bam::testing::mosaic::rig;

using clock_type = std::chrono::steady_clock;

/// The adaptive rig's geometry (8 frames of 64 pages of 512 B); `rounds` shared frames of 12
/// sparse pieces each at most.
workload::shape shape_of(std::uint32_t rounds) {
  return {.words_per_page = 64,
          .pages_per_piece = 64,
          .shared_rounds = rounds,
          .pieces_per_round = 12,
          .pieces = 24};
}

std::shared_ptr<backing_store> image_of(const workload::shape& s) {
  auto image = backing_store::in_memory(s.words() * 8);
  auto* w = reinterpret_cast<std::uint64_t*>(image->data());
  for (std::uint64_t i = 0; i < s.words(); ++i) w[i] = workload::image_word(i);
  return image;
}

/// A dense array on the adaptive rig whose sparse pieces the set-up splintered into
/// `rounds` shared frames.
struct splintered {
  splintered(pinning_kind k, std::uint32_t rounds)
      : s(shape_of(rounds)),
        r(image_of(s), adaptive(k)),
        a(*r.cache, r.ssd->ref(), {.name = "splintered", .dense = true}),
        ref(a.ref()) {
    launch(*r.stream, 1, 1, workload::build_shared_frames{ref, r.cache_ref, s, &built});
    r.stream->synchronize();
  }

  [[nodiscard]] std::uint32_t shared_frames() const {
    return workload::count_shared(r.pool(), ref.slot().tenant, false);
  }
  /// Elements read wrong (or not at all) in a pass over the whole array.
  std::uint64_t misreads() {
    workload::report out{};
    launch(*r.stream, 1, 4, workload::verify_all{ref, s, &out});
    r.stream->synchronize();
    return out.wrong + out.failed;
  }

  workload::shape s;
  rig r;
  array<std::uint64_t> a;
  array_ref<std::uint64_t> ref;
  workload::report built{};
};

/// Runs the loop on a thread until `done(words)` or a minute (a liveness bound only), then
/// stops it; returns how long the stop took.
template <class Done>
clock_type::duration run_agent_until(const page_cache_ref& cache, compaction_agent_words& words,
                                     const compaction_agent_options& options, Done&& done) {
  std::thread agent([&] { compaction_agent_ref(cache, &words, options).run(); });
  const auto give_up = clock_type::now() + std::chrono::seconds(60);
  while (!done(words) && clock_type::now() < give_up) std::this_thread::yield();
  const auto asked = clock_type::now();
  compaction_agent_ref::request_stop(words);
  agent.join();
  return clock_type::now() - asked;
}

class CompactionAgent : public ::testing::TestWithParam<pinning_kind> {};

TEST_P(CompactionAgent, FreesASharedFrameOnAThreadAndCountsWhatItMoved) {
  splintered t(GetParam(), 2);
  ASSERT_EQ(t.built.wrong + t.built.failed, 0u);
  const std::uint32_t shared_before = t.shared_frames();
  ASSERT_GE(shared_before, 2u);
  const std::uint32_t free_before = t.r.dense().free_frames();
  compaction_agent_words words{};
  run_agent_until(t.r.cache_ref, words, {.low_free_frames = t.r.pool().geometry.frames},
                  [](const compaction_agent_words& w) {
                    return compaction_agent_ref::counts(w).frames_freed != 0;
                  });
  const compaction_counts c = compaction_agent_ref::counts(words);
  EXPECT_GE(c.frames_freed, 1u);
  EXPECT_GE(c.pieces_moved, c.frames_freed);
  EXPECT_GE(c.passes, 1u);
  EXPECT_EQ(t.shared_frames(), shared_before - c.frames_freed);
  EXPECT_EQ(t.r.dense().free_frames(), free_before + c.frames_freed);
  EXPECT_EQ(t.a.frame_stats().frames_held(), *t.ref.slot().frames_held);
  EXPECT_GE(t.a.stats().bytes_compacted, c.pieces_moved * 512);
  EXPECT_EQ(t.misreads(), 0u);
  EXPECT_NO_THROW(t.a.check());
}

TEST_P(CompactionAgent, LeavesSharedFramesAloneWhileMoreThanLowFramesAreFree) {
  splintered t(GetParam(), 2);
  const std::uint32_t shared_before = t.shared_frames();
  ASSERT_GE(shared_before, 2u);
  const dense_cache_ref dense = t.r.dense();
  // Free one frame that serves a coalesced piece, so that at least one is free.
  for (std::uint32_t f = 0; f < t.r.pool().geometry.frames && dense.free_frames() == 0; ++f) {
    const std::uint64_t owner = atomic_ref<std::uint64_t>(t.r.pool().owner[f]).load(order::acquire);
    if ((owner & shared_piece) != shared_piece) dense.drop_frame(f);
  }
  const std::uint32_t free_now = dense.free_frames();
  ASSERT_GE(free_now, 1u);
  compaction_agent_words words{};
  run_agent_until(
      t.r.cache_ref, words, {.low_free_frames = free_now - 1},
      [](const compaction_agent_words& w) { return compaction_agent_ref::counts(w).sleeps >= 8; });
  const compaction_counts c = compaction_agent_ref::counts(words);
  EXPECT_EQ(c.passes, 0u);
  EXPECT_EQ(c.pieces_moved, 0u);
  EXPECT_EQ(t.shared_frames(), shared_before);
  EXPECT_EQ(t.misreads(), 0u);
}

TEST_P(CompactionAgent, SeesAStopWhileIdleWithinItsLongestSleep) {
  splintered t(GetParam(), 1);  // one shared frame: nothing to merge
  compaction_agent_words words{};
  const auto took = run_agent_until(
      t.r.cache_ref, words,
      {.low_free_frames = t.r.pool().geometry.frames,
       .min_idle_ns = 1'000,
       .max_idle_ns = 1'000'000},
      [](const compaction_agent_words& w) { return compaction_agent_ref::counts(w).sleeps >= 16; });
  const compaction_counts c = compaction_agent_ref::counts(words);
  EXPECT_GE(c.sleeps, 16u);
  EXPECT_EQ(c.pieces_moved, 0u);
  // The longest sleep is 1 ms; a scheduler that is slow to wake the thread gets the rest.
  EXPECT_LT(took, std::chrono::seconds(2));
}

TEST_P(CompactionAgent, EndsAtOnceOnACacheWithoutFrames) {
  cache_config base = adaptive(GetParam());
  base.translation = translation_kind::base;
  rig r(backing_store::in_memory(1 << 20), base);
  compaction_agent_words words{};
  compaction_agent_ref(r.cache_ref, &words, {}).run();  // returns although no stop was asked
  const compaction_counts c = compaction_agent_ref::counts(words);
  EXPECT_EQ(c.passes + c.sleeps + c.pieces_moved, 0u);
}

INSTANTIATE_TEST_SUITE_P(BothPinnings, CompactionAgent,
                         ::testing::Values(pinning_kind::frame_pins, pinning_kind::epochs),
                         kind_name);

}  // namespace
