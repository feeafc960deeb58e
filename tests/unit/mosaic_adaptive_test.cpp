// Mosaic's adaptive policy on dense arrays: a piece whose frame is taken while it holds few
// pages keeps them as base pages in a shared frame of its array (splintered), and a piece that
// fills up again gets a frame of its own (promoted). Run under both pinning kinds.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <bam/cache.hpp>
#include <bam/error.hpp>

#include "mosaic_rig.hpp"

namespace {

using namespace bam;
using namespace bam::cache::mosaic;
using bam::testing::mosaic::adaptive;
using bam::testing::mosaic::adaptive_geometry;
using bam::testing::mosaic::entry_of;
using bam::testing::mosaic::kind_name;
using bam::testing::mosaic::lcg;
using bam::testing::mosaic::pattern_image;
using bam::testing::mosaic::rig;
using bam::testing::mosaic::word_at;

constexpr std::uint64_t words_per_page = adaptive_geometry::words_per_page;
constexpr std::uint64_t pages_per_piece = adaptive_geometry::pages_per_piece;
constexpr std::uint64_t words_per_piece = adaptive_geometry::words_per_piece;
constexpr std::uint64_t pieces = 48;
constexpr std::uint64_t words = pieces * words_per_piece;

/// Reads one word of every `count` random pages, one page per piece at a time; counts misreads.
std::uint64_t sparse_reads(const array_ref<const std::uint64_t>& ref, std::uint64_t count,
                           std::uint64_t seed) {
  lcg g{seed};
  std::uint64_t wrong = 0;
  for (std::uint64_t n = 0; n < count; ++n) {
    const std::uint64_t i = g.below(pieces) * words_per_piece +
                            g.below(pages_per_piece) * words_per_page + g.below(words_per_page);
    std::uint64_t v = 0;
    if (!ref.try_read(i, v).ok() || v != word_at(i)) ++wrong;
  }
  return wrong;
}

class Adaptive : public ::testing::TestWithParam<pinning_kind> {};

TEST_P(Adaptive, SparseRandomAccessEndsUpSplinteredAndKeepsMorePiecesThanFrames) {
  rig r(pattern_image(words), adaptive(GetParam()));
  const dense_cache_ref dense = r.dense();
  ASSERT_TRUE(dense.splinters());
  ASSERT_EQ(r.pool().geometry.frames, 8u);
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.name = "sparse", .dense = true});
  EXPECT_EQ(sparse_reads(a.ref(), 600, 1), 0u);
  std::uint64_t splintered = 0, coalesced = 0;
  for (std::uint64_t p = 0; p < pieces; ++p) {
    const std::uint64_t e = entry_of(a, p);
    if (entry_splintered(e)) {
      ++splintered;
      EXPECT_GT(dense.pages_in(entry_frame(e), p), 0u) << "piece " << p;
    } else if (entry_coalesced(e)) {
      ++coalesced;
    }
  }
  const cache_stats s = a.stats();
  EXPECT_GT(s.splinters, 0u);
  EXPECT_GT(splintered, 0u);
  // Whole frames would hold at most one piece each; shared frames hold many.
  EXPECT_GT(splintered + coalesced, std::uint64_t{r.pool().geometry.frames});
  const tenant_stats t = a.frame_stats();
  EXPECT_GT(t.frames_shared, 0u);
  EXPECT_LE(t.frames_held(), std::uint64_t{r.pool().geometry.frames});
  EXPECT_EQ(a.stats().errors, 0u);
  EXPECT_NO_THROW(a.check());
}

TEST_P(Adaptive, ADenseScanCoalescesEverySplinteredPieceAgain) {
  rig r(pattern_image(words), adaptive(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.name = "dense", .dense = true});
  const array_ref<const std::uint64_t> ref = a.ref();
  ASSERT_EQ(sparse_reads(ref, 600, 2), 0u);
  const std::uint64_t coalesces_before = a.stats().coalesces;
  const std::uint64_t promotions_before = a.stats().promotions;
  std::uint64_t promoted = 0, wrong = 0;
  for (std::uint64_t p = 0; p < pieces; ++p) {
    const bool was_splintered = entry_splintered(entry_of(a, p));
    for (std::uint64_t page = 0; page < pages_per_piece; ++page) {
      const std::uint64_t i = p * words_per_piece + page * words_per_page + page % words_per_page;
      std::uint64_t v = 0;
      if (!ref.try_read(i, v).ok() || v != word_at(i)) ++wrong;
    }
    const std::uint64_t e = entry_of(a, p);
    EXPECT_TRUE(entry_coalesced(e) && !entry_splintered(e)) << "piece " << p;
    promoted += was_splintered ? 1u : 0u;
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(promoted, 0u);
  EXPECT_GE(a.stats().coalesces - coalesces_before, promoted);
  // Promotions are coalesces too; a piece whose shared frame was evicted first is reserved
  // a frame afresh instead.
  const std::uint64_t promotions = a.stats().promotions - promotions_before;
  EXPECT_GT(promotions, 0u);
  EXPECT_LE(promotions, a.stats().coalesces - coalesces_before);
  EXPECT_GT(a.stats().bytes_compacted, 0u);
  EXPECT_NO_THROW(a.check());
}

TEST_P(Adaptive, DroppingASharedFrameEmptiesItsPiecesWhichLoadAgain) {
  rig r(pattern_image(words), adaptive(GetParam()));
  const dense_cache_ref dense = r.dense();
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.name = "dense", .dense = true});
  ASSERT_EQ(sparse_reads(a.ref(), 600, 3), 0u);
  std::vector<std::uint32_t> shared;
  for (std::uint64_t p = 0; p < pieces; ++p) {
    const std::uint64_t e = entry_of(a, p);
    if (entry_splintered(e)) shared.push_back(entry_frame(e));
  }
  ASSERT_FALSE(shared.empty());
  ASSERT_TRUE(dense.drop_frame(shared.front()));
  for (std::uint64_t p = 0; p < pieces; ++p) {
    const std::uint64_t e = entry_of(a, p);
    EXPECT_FALSE(entry_splintered(e) && entry_frame(e) == shared.front()) << "piece " << p;
    EXPECT_FALSE(e == entry_bits::closed || e == closed_by_evictor(shared.front()));
  }
  EXPECT_EQ(sparse_reads(a.ref(), 200, 3), 0u);
  EXPECT_NO_THROW(a.check());
}

TEST_P(Adaptive, SplinterPercentZeroKeepsEveryPieceWhole) {
  cache_config c = adaptive(GetParam());
  c.splinter_percent = 0;
  rig r(pattern_image(words), c);
  ASSERT_FALSE(r.dense().splinters());
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.name = "sparse", .dense = true});
  EXPECT_EQ(sparse_reads(a.ref(), 600, 4), 0u);
  for (std::uint64_t p = 0; p < pieces; ++p) {
    EXPECT_FALSE(entry_splintered(entry_of(a, p))) << "piece " << p;
  }
  EXPECT_EQ(a.stats().splinters, 0u);
  EXPECT_EQ(a.stats().errors, 0u);
  EXPECT_NO_THROW(a.check());
}

TEST(AdaptiveKnobs, AreCheckedWithTheCacheConfiguration) {
  cache_config c = adaptive(pinning_kind::frame_pins);
  EXPECT_NO_THROW(plan_cache(c, 1u << 20, 1));
  c.promote_percent = 0;
  EXPECT_THROW(plan_cache(c, 1u << 20, 1), input_error);
  c.promote_percent = 101;
  EXPECT_THROW(plan_cache(c, 1u << 20, 1), input_error);
  c.promote_percent = 40;
  c.splinter_percent = 40;  // splintered and promoted at the same residency
  EXPECT_THROW(plan_cache(c, 1u << 20, 1), input_error);
  EXPECT_THROW(check_policy_percents(c), input_error);  // the same rule, for tools up front
  c.splinter_percent = 0;
  EXPECT_NO_THROW(plan_cache(c, 1u << 20, 1));
  EXPECT_NO_THROW(check_policy_percents(c));
  c.base_first = true;  // its pieces start outside the frames: some lines must be left
  c.frame_percent = 100;
  EXPECT_THROW(check_policy_percents(c), input_error);
  c.frame_percent = 99;
  EXPECT_NO_THROW(check_policy_percents(c));
}

INSTANTIATE_TEST_SUITE_P(BothPinnings, Adaptive,
                         ::testing::Values(pinning_kind::frame_pins, pinning_kind::epochs),
                         kind_name);

}  // namespace
