// The compaction agent's loop on a CPU thread beside readers and writers of a dense array
// whose sparse pieces were splintered into several shared frames: the agent frees a frame
// before they start and goes on compacting while they run (how much depends on the
// interleaving: splinters, promotions and evictions keep changing the shared frames), no
// access returns wrong bytes or fails, the file ends up holding what was written, and the
// agent ends soon after its stop word is set. Misses elsewhere make loads, first touches,
// promotions, frame evictions and new splinters race with the moves. Both pinning kinds, both
// cache modes. The same workload runs on GPU threads in tests/gpu/gpu_compaction_agent.cu.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include <bam/cache.hpp>
#include <bam/cache/mosaic/compaction_agent.hpp>

#include "compaction_workload.hpp"
#include "mosaic_rig.hpp"
#include "mosaic_stress_cases.hpp"
#include "stress_support.hpp"

namespace {

using namespace bam;
using bam::testing::scaled;
using namespace bam::cache::mosaic;
using bam::stress::case_name;
using bam::stress::pinnings_and_modes;
using bam::stress::stress_case;
namespace workload = bam::testing::compaction;
using bam::testing::mosaic::rig;

/// 2,048 lines of 512 B, half of them in 16 frames of 64 lines; owner checks on.
cache_config cache_for(const stress_case& c) {
  cache_config cfg = bam::testing::mosaic::two_level(c.pinning, 512, 2048, 64);
  cfg.mode = c.mode;
  cfg.check_frame_owners = true;
  return cfg;
}

/// Three rounds of 20 pieces (60 home pages, each in its own hosted slot) over 16 frames:
/// shared frames of about 5, 20 and 20 pieces; the array has twice the pieces touched.
constexpr workload::shape shape{.words_per_page = 64,
                                .pages_per_piece = 64,
                                .shared_rounds = 3,
                                .pieces_per_round = 20,
                                .pieces = 120};

/// The workload's image, in memory (flush writes back to it).
std::shared_ptr<backing_store> image_of() {
  auto image = backing_store::in_memory(shape.words() * 8);
  auto* w = reinterpret_cast<std::uint64_t*>(image->data());
  for (std::uint64_t i = 0; i < shape.words(); ++i) w[i] = workload::image_word(i);
  return image;
}

class CompactionAgentStress : public ::testing::TestWithParam<stress_case> {};

TEST_P(CompactionAgentStress, ReadersAndWritersBesideTheAgentReadTheirBytesWhileItFreesFrames) {
  const stress_case c = GetParam();
  const std::shared_ptr<backing_store> image = image_of();
  rig r(image, cache_for(c), 8);
  compaction_counts counts;
  cache_stats stats;
  std::uint64_t shared_built = 0;
  {
    array<std::uint64_t> a(*r.cache, r.ssd->ref(), {.name = "splintered", .dense = true});
    const array_ref<std::uint64_t> ref = a.ref();
    ASSERT_EQ(a.size(), shape.words());
    workload::report built{}, during{}, after{};
    launch(*r.stream, 1, 1, workload::build_shared_frames{ref, r.cache_ref, shape, &built});
    r.stream->synchronize();
    ASSERT_EQ(built.wrong + built.failed, 0u);
    ASSERT_GE(built.shared_built, 2u) << "the set-up made too few shared frames to compact";
    shared_built = built.shared_built;
    a.reset_stats();

    const page_cache_ref& cache = r.cache_ref;
    compaction_agent_words words{};
    std::thread agent([&] {
      compaction_agent_ref(cache, &words, {.low_free_frames = cache.frames().geometry.frames})
          .run();
    });
    // Its first frame freed while nothing else runs (the set-up's shared frames merge at
    // once); the rest of its moves race with the readers and writers below.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (compaction_agent_ref::counts(words).frames_freed == 0 &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::yield();
    }
    EXPECT_GE(compaction_agent_ref::counts(words).frames_freed, 1u);
    const auto threads = static_cast<std::uint32_t>(scaled(64, 16));
    launch(*r.stream, 1, threads,
           workload::read_and_write{.a = ref,
                                    .s = shape,
                                    .out = &during,
                                    .lanes = 1,
                                    .rounds = static_cast<std::uint32_t>(scaled(3000, 200)),
                                    .writer_every = 4,
                                    .miss_percent = 2,
                                    .seed = 0xc0ffee});
    r.stream->synchronize();
    const auto asked = std::chrono::steady_clock::now();
    compaction_agent_ref::request_stop(words);
    agent.join();
    // A step waits at most the victim timeout, and only for a frame somebody is using; with
    // the readers gone the agent ends within one sleep or one step.
    EXPECT_LT(std::chrono::steady_clock::now() - asked,
              std::chrono::seconds(5 * bam::testing::stress_slowdown()));
    counts = compaction_agent_ref::counts(words);
    stats = a.stats();

    EXPECT_EQ(during.failed, 0u);
    EXPECT_EQ(during.wrong, 0u);
    for (std::uint64_t n = 0; n < std::min<std::uint64_t>(during.logged, workload::logged_max);
         ++n) {
      const workload::bad_access& b = during.first[n];
      ADD_FAILURE() << "element " << b.index << ": expected " << b.expected << ", got " << b.got
                    << " (status bits " << b.status << ")";
    }
    EXPECT_EQ(during.threads_done, threads);
    EXPECT_GE(counts.pieces_moved, counts.frames_freed);

    launch(*r.stream, 1, 8, workload::verify_all{ref, shape, &after});
    r.stream->synchronize();
    EXPECT_EQ(after.wrong + after.failed, 0u);
    EXPECT_EQ(after.reads, shape.words());
    EXPECT_EQ(a.frame_stats().frames_held(), *ref.slot().frames_held);
    EXPECT_EQ(bam::testing::mosaic::frame_pins_left(cache.frames()), 0u);
    EXPECT_EQ(bam::testing::mosaic::epoch_readers_left(cache.frames()), 0u);
    a.flush();
    EXPECT_NO_THROW(a.check());
  }
  const auto* stored = reinterpret_cast<const std::uint64_t*>(image->data());
  std::uint64_t differ = 0;
  for (std::uint64_t i = 0; i < shape.words(); ++i) differ += stored[i] != shape.expected_word(i);
  EXPECT_EQ(differ, 0u);
  // How much compaction and turnover this run saw (it depends on the interleaving).
  ::testing::Test::RecordProperty("shared_frames_built", std::to_string(shared_built));
  ::testing::Test::RecordProperty("pieces_moved", std::to_string(counts.pieces_moved));
  ::testing::Test::RecordProperty("frames_freed", std::to_string(counts.frames_freed));
  ::testing::Test::RecordProperty("steps_retried", std::to_string(counts.retries));
  ::testing::Test::RecordProperty("reservations", std::to_string(stats.coalesces));
  ::testing::Test::RecordProperty("splinters", std::to_string(stats.splinters));
  ::testing::Test::RecordProperty("misses", std::to_string(stats.misses));
}

INSTANTIATE_TEST_SUITE_P(PinningsAndModes, CompactionAgentStress, pinnings_and_modes(), case_name);

}  // namespace
