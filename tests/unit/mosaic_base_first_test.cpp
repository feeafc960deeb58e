// Base first (cache_config::base_first): a dense array's pieces start on base pages of the
// base pool and are promoted into a frame of their own once they hold more than
// promote_percent of a frame's pages and a frame is free or sparser. Sparse random access
// then stays on base pages and holds no frame; a dense scan promotes every piece; written
// pages survive promotion and eviction. Run under both pinning kinds.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <bam/cache.hpp>

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
using bam::testing::mosaic::written_at;

constexpr std::uint64_t words_per_page = adaptive_geometry::words_per_page;
constexpr std::uint64_t pages_per_piece = adaptive_geometry::pages_per_piece;
constexpr std::uint64_t words_per_piece = adaptive_geometry::words_per_piece;

/// 1024 lines of 512 B: 8 frames of 64 pages, and a base pool of 512 lines. A piece is
/// promoted past 32 base pages.
cache_config base_first(pinning_kind p) {
  cache_config c = adaptive(p);
  c.base_first = true;
  return c;
}

/// Reads `count` random words of the first `pieces` pieces; counts misreads and failures.
std::uint64_t random_reads(const array_ref<const std::uint64_t>& ref, std::uint64_t pieces,
                           std::uint64_t count, std::uint64_t seed) {
  lcg g{seed};
  std::uint64_t wrong = 0;
  for (std::uint64_t n = 0; n < count; ++n) {
    const std::uint64_t i = g.below(pieces * words_per_piece);
    std::uint64_t v = 0;
    if (!ref.try_read(i, v).ok() || v != word_at(i)) ++wrong;
  }
  return wrong;
}

class BaseFirst : public ::testing::TestWithParam<pinning_kind> {};

TEST_P(BaseFirst, SparseRandomAccessBeyondTheCacheStaysOnBasePagesAndHoldsNoFrame) {
  // 64 pieces, 4,096 pages: eight times the base pool, so no piece can hold more than a few
  // of its 64 pages at once (the case that reserved a frame per miss before).
  constexpr std::uint64_t pieces = 64;
  rig r(pattern_image(pieces * words_per_piece), base_first(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  EXPECT_EQ(random_reads(a.ref(), pieces, 20'000, 11), 0u);
  const cache_stats s = a.stats();
  EXPECT_EQ(s.coalesces, 0u);
  EXPECT_EQ(s.promotions, 0u);
  EXPECT_GT(s.evictions, 0u) << "the base pool turned over";
  const tenant_stats t = a.frame_stats();
  EXPECT_EQ(t.frames_coalesced + t.frames_reserved + t.frames_shared, 0u);
  EXPECT_EQ(t.bloat_bytes, 0u);
  for (std::uint64_t p = 0; p < pieces; ++p) {
    const std::uint64_t e = entry_of(a, p);
    ASSERT_TRUE(entry_base(e)) << "piece " << p;
    EXPECT_LE(entry_base_count(e), 32u) << "piece " << p;
  }
  EXPECT_NO_THROW(a.check());
}

TEST_P(BaseFirst, WithFillsSparsePiecesTakeOnlyFreeFramesAndFillThem) {
  // The same sparse access with fills at 12% (8 of 64 pages): the first pieces to get there
  // take the free frames and load the rest of themselves; once the frames are full the other
  // pieces stay on base pages, and no frame holds an empty slot.
  constexpr std::uint64_t pieces = 64;
  cache_config c = base_first(GetParam());
  c.fill_percent = 12;
  rig r(pattern_image(pieces * words_per_piece), c);
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  EXPECT_EQ(random_reads(a.ref(), pieces, 20'000, 12), 0u);
  const std::uint32_t frames = r.pool().geometry.frames;
  const cache_stats s = a.stats();
  EXPECT_EQ(s.promotions, frames) << "free frames only: none was taken from another piece";
  EXPECT_EQ(s.fills, frames);
  const tenant_stats t = a.frame_stats();
  EXPECT_EQ(t.frames_coalesced, frames);
  EXPECT_EQ(t.bloat_bytes, 0u);
  std::uint64_t on_base = 0;
  for (std::uint64_t p = 0; p < pieces; ++p) on_base += entry_base(entry_of(a, p));
  EXPECT_EQ(on_base, pieces - frames);
  EXPECT_NO_THROW(a.check());
}

TEST_P(BaseFirst, ADenseScanPromotesEveryPieceAndReadsEachPageOnce) {
  constexpr std::uint64_t pieces = 8;  // as many as frames
  rig r(pattern_image(pieces * words_per_piece), base_first(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  const std::vector<std::uint64_t> got = a.read(0, pieces * words_per_piece);
  for (std::uint64_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], word_at(i)) << i;
  const cache_stats s = a.stats();
  EXPECT_EQ(s.promotions, pieces);
  EXPECT_EQ(s.coalesces, pieces);
  EXPECT_EQ(s.loads, pieces * pages_per_piece) << "a promoted page is moved, not read again";
  EXPECT_GT(s.bytes_compacted, pieces * 32 * 512) << "more than half of each piece moved";
  for (std::uint64_t p = 0; p < pieces; ++p) {
    const std::uint64_t e = entry_of(a, p);
    EXPECT_TRUE(entry_coalesced(e) && !entry_splintered(e)) << "piece " << p;
  }
  EXPECT_EQ(a.frame_stats().frames_coalesced, pieces);
  // Now every access hits in the frames.
  a.reset_stats();
  EXPECT_EQ(a.read(0, pieces * words_per_piece), got);
  EXPECT_EQ(a.stats().loads, 0u);
}

TEST_P(BaseFirst, APromotionDoesNotEvictAFrameHoldingMorePages) {
  constexpr std::uint64_t pieces = 9;  // one more than frames
  rig r(pattern_image(pieces * words_per_piece), base_first(GetParam()));
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  EXPECT_EQ(a.read(0, 8 * words_per_piece).size(), 8 * words_per_piece);  // 8 full frames
  const std::vector<std::uint64_t> last = a.read(8 * words_per_piece, words_per_piece);
  for (std::uint64_t k = 0; k < words_per_piece; ++k) {
    ASSERT_EQ(last[k], word_at(8 * words_per_piece + k));
  }
  EXPECT_TRUE(entry_base(entry_of(a, 8))) << "its frames are fuller than it ever gets";
  for (std::uint64_t p = 0; p < 8; ++p) EXPECT_TRUE(entry_coalesced(entry_of(a, p))) << p;
  EXPECT_EQ(a.stats().promotions, 8u);
}

TEST_P(BaseFirst, WrittenPagesSurvivePromotionEvictionAndFlush) {
  constexpr std::uint64_t pieces = 4;
  auto image = pattern_image(pieces * words_per_piece);
  const auto* stored = reinterpret_cast<const std::uint64_t*>(image->data());
  rig r(image, base_first(GetParam()));
  array<std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  // A few words of every piece, written while the pieces are on base pages.
  std::vector<std::uint64_t> written;
  for (std::uint64_t p = 0; p < pieces; ++p) {
    for (std::uint64_t j = 0; j < pages_per_piece; j += 9) {
      written.push_back(p * words_per_piece + j * words_per_page + 3);
    }
  }
  for (const std::uint64_t i : written) a.write(i, {written_at(i)});
  for (std::uint64_t p = 0; p < pieces; ++p) EXPECT_TRUE(entry_base(entry_of(a, p))) << p;
  // Reading pieces 0 and 1 whole promotes them: their written pages move dirty into frames.
  std::vector<std::uint64_t> got = a.read(0, 2 * words_per_piece);
  EXPECT_EQ(a.stats().promotions, 2u);
  // Evicting those frames writes the pages back and puts the pieces on base pages again.
  const dense_cache_ref dense = r.dense();
  for (std::uint64_t p = 0; p < 2; ++p) {
    const std::uint64_t e = entry_of(a, p);
    ASSERT_TRUE(entry_coalesced(e)) << p;
    EXPECT_TRUE(dense.drop_frame(entry_frame(e))) << p;
    EXPECT_EQ(entry_of(a, p), entry_bits::empty) << p;
  }
  got = a.read(0, pieces * words_per_piece);
  std::uint64_t next = 0;
  for (std::uint64_t i = 0; i < got.size(); ++i) {
    const bool mine = next < written.size() && written[next] == i;
    ASSERT_EQ(got[i], mine ? written_at(i) : word_at(i)) << i;
    next += mine;
  }
  a.flush();
  for (const std::uint64_t i : written) EXPECT_EQ(stored[i], written_at(i)) << i;
  EXPECT_NO_THROW(a.check());
}

INSTANTIATE_TEST_SUITE_P(BothPinnings, BaseFirst,
                         ::testing::Values(pinning_kind::frame_pins, pinning_kind::epochs),
                         kind_name);

}  // namespace
