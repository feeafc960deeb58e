// Fill (cache_config::fill_percent): the demand load that brings a coalesced piece to the
// threshold loads the piece's other pages at once, in runs of consecutive slots, one command of
// up to two memory pages each. Run under both pinning kinds.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mosaic_rig.hpp"

namespace {

using namespace bam;
using namespace bam::cache::mosaic;
using bam::testing::mosaic::entry_of;
using bam::testing::mosaic::kind_name;
using bam::testing::mosaic::pattern_image;
using bam::testing::mosaic::rig;
using bam::testing::mosaic::two_level;
using bam::testing::mosaic::word_at;

constexpr std::uint64_t words_per_page = 512 / 8;
constexpr std::uint64_t pages_per_piece = 8;
constexpr std::uint64_t words_per_piece = words_per_page * pages_per_piece;

/// The two_level test cache (frames of 8 pages of 512 B) with fills at `percent`.
cache_config filling(pinning_kind p, std::uint32_t percent) {
  cache_config c = two_level(p);
  c.fill_percent = percent;
  c.check_frame_owners = true;
  return c;
}

/// Resident slots of the frame that serves `piece` of `a`.
template <class T>
std::uint32_t resident_pages(const rig& r, const array<T>& a, std::uint64_t piece) {
  const frame_pool_view pool = r.pool();
  const std::uint32_t frame = entry_frame(entry_of(a, piece));
  std::uint32_t n = 0;
  for (std::uint32_t s = 0; s < pool.geometry.lines_per_frame; ++s) {
    n += (pool.word(pool.resident, frame, s) & frame_pool_view::bit(s)) != 0;
  }
  return n;
}

class DenseFill : public ::testing::TestWithParam<pinning_kind> {};

TEST_P(DenseFill, TheLoadThatReachesTheThresholdLoadsTheRestOfThePiece) {
  rig r(pattern_image(4 * words_per_piece), filling(GetParam(), 25));  // 2 of 8 slots
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  const array_ref<const std::uint64_t> ref = a.ref();
  const std::uint64_t first = words_per_piece;  // piece 1
  EXPECT_EQ(ref[first + 5 * words_per_page], word_at(first + 5 * words_per_page));
  EXPECT_EQ(a.stats().fills, 0u) << "one page of eight is below the threshold";
  EXPECT_EQ(resident_pages(r, a, 1), 1u);
  EXPECT_EQ(ref[first + 2 * words_per_page + 1], word_at(first + 2 * words_per_page + 1));
  cache_stats s = a.stats();
  EXPECT_EQ(s.fills, 1u);
  EXPECT_EQ(resident_pages(r, a, 1), pages_per_piece);
  EXPECT_EQ(s.bytes_fetched, pages_per_piece * 512) << "every page read once";
  // Slots 0-1, 3-4 and 6-7 are three runs of two pages: three commands, not six.
  EXPECT_EQ(s.loads, 2u + 3u);
  // Every word of the piece now hits without a command, and holds the file's value.
  a.reset_stats();
  for (std::uint64_t i = first; i < first + words_per_piece; ++i) ASSERT_EQ(ref[i], word_at(i));
  s = a.stats();
  EXPECT_EQ(s.loads, 0u);
  EXPECT_EQ(s.misses, 0u);
  EXPECT_FALSE(entry_coalesced(entry_of(a, 0))) << "other pieces are untouched";
}

TEST_P(DenseFill, AFullPieceIsNotFilledAgainAndZeroTurnsFillsOff) {
  for (const std::uint32_t percent : {0u, 100u}) {
    rig r(pattern_image(2 * words_per_piece), filling(GetParam(), percent));
    array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
    EXPECT_EQ(a.read(0, 2 * words_per_piece).size(), 2 * words_per_piece);
    const cache_stats s = a.stats();
    // At 100% the last demand load of a piece reaches the threshold with nothing left to load.
    EXPECT_EQ(s.fills, 0u) << percent << "%";
    EXPECT_EQ(s.loads, 2 * pages_per_piece) << percent << "%: one command per page";
  }
}

TEST_P(DenseFill, ALastPieceShorterThanAFrameLoadsOnlyThePagesOfTheArray) {
  // One piece and three pages: the second piece has pages 8-10 only.
  const std::uint64_t words = words_per_piece + 3 * words_per_page;
  rig r(pattern_image(words), filling(GetParam(), 12));  // 1 of 8 slots: the first load fills
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  const array_ref<const std::uint64_t> ref = a.ref();
  EXPECT_EQ(ref[words - 1], word_at(words - 1));
  const cache_stats s = a.stats();
  EXPECT_EQ(s.fills, 1u);
  EXPECT_EQ(s.bytes_fetched, 3 * 512u);
  EXPECT_EQ(resident_pages(r, a, 1), 3u);
  for (std::uint64_t i = words_per_piece; i < words; ++i) ASSERT_EQ(ref[i], word_at(i));
  EXPECT_NO_THROW(a.check());
}

TEST_P(DenseFill, AFillThatMeetsABadBlockLeavesItToTheReaderThatNeedsIt) {
  storage_config storage = bam::testing::mosaic::fast_storage();
  // Page 6 of piece 0 (LBA 6 at 512 B blocks) cannot be read.
  storage.faults.bad_lba_begin = 6;
  storage.faults.bad_lba_end = 7;
  rig r(pattern_image(2 * words_per_piece), filling(GetParam(), 12), 4, storage);
  array<const std::uint64_t> a(*r.cache, r.ssd->ref(), {.dense = true});
  const array_ref<const std::uint64_t> ref = a.ref();
  EXPECT_EQ(ref[0], word_at(0));  // fills slots 1-7: the command over page 6 fails
  EXPECT_LT(resident_pages(r, a, 0), pages_per_piece);
  EXPECT_NO_THROW(a.check()) << "a fill's failure is not the reader's error";
  // The pages that were read serve their values; the bad one reports its error.
  for (std::uint64_t p = 0; p < pages_per_piece; ++p) {
    std::uint64_t v = 0;
    const io_status s = ref.try_read(p * words_per_page, v);
    if (p == 6) {
      EXPECT_FALSE(s.ok());
    } else {
      ASSERT_TRUE(s.ok()) << "page " << p;
      EXPECT_EQ(v, word_at(p * words_per_page));
    }
  }
  EXPECT_THROW(a.check(), bam::error);
}

INSTANTIATE_TEST_SUITE_P(BothPinnings, DenseFill,
                         ::testing::Values(pinning_kind::frame_pins, pinning_kind::epochs),
                         kind_name);

}  // namespace
