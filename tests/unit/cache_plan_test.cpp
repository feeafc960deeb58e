// plan_cache: the metadata a cache and its arrays will need, before anything is allocated,
// and the configurations it refuses.

#include <gtest/gtest.h>

#include <cstdint>

#include <bam/cache.hpp>
#include <bam/error.hpp>

namespace {

using namespace bam;

TEST(CachePlan, LinesAreTheCapacityOverTheLineSize) {
  const cache_plan p = plan_cache({.line_bytes = 4096, .capacity_bytes = 1ull << 30}, 0, 0);
  EXPECT_EQ(p.lines, (1ull << 30) / 4096);
}

TEST(CachePlan, APartialLineOfCapacityIsNotALine) {
  const cache_plan p = plan_cache({.line_bytes = 4096, .capacity_bytes = 3 * 4096 + 100}, 0, 0);
  EXPECT_EQ(p.lines, 3u);
}

TEST(CachePlan, EachLineHasAStateWordAndAClockWord) {
  const cache_plan p = plan_cache({.line_bytes = 512, .capacity_bytes = 512 * 1000}, 0, 0);
  EXPECT_EQ(p.line_state_bytes, 1000u * (8 + 4));
}

TEST(CachePlan, LinesOfUpToTwoPagesNeedNoPrpList) {
  EXPECT_EQ(plan_cache({.line_bytes = 512, .capacity_bytes = 1 << 20}, 0, 0).prp_list_bytes, 0u);
  EXPECT_EQ(plan_cache({.line_bytes = 4096, .capacity_bytes = 1 << 20}, 0, 0).prp_list_bytes, 0u);
  EXPECT_EQ(plan_cache({.line_bytes = 8192, .capacity_bytes = 1 << 20}, 0, 0).prp_list_bytes, 0u);
}

// A list entry per memory page after the first, rounded up to a power of two so that no
// line's list crosses a memory page (CacheLongLines.* in the stress tests).
TEST(CachePlan, LargerLinesKeepAPowerOfTwoListEntriesPerLine) {
  const cache_plan p8 = plan_cache({.line_bytes = 8192, .capacity_bytes = 1 << 20}, 0, 0);
  EXPECT_EQ(p8.prp_list_bytes, 0u);  // PRP1 and PRP2 suffice
  const cache_plan p16 = plan_cache({.line_bytes = 16384, .capacity_bytes = 1 << 20}, 0, 0);
  EXPECT_EQ(p16.prp_list_bytes, p16.lines * 4 * 8);  // 3 needed
  const cache_plan p64 = plan_cache({.line_bytes = 65536, .capacity_bytes = 1 << 20}, 0, 0);
  EXPECT_EQ(p64.prp_list_bytes, p64.lines * 16 * 8);  // 15 needed
}

TEST(CachePlan, ThePageTableHasAWordPerLineOfDataRoundedUp) {
  const cache_config c{.line_bytes = 4096, .capacity_bytes = 1 << 20};
  EXPECT_EQ(plan_cache(c, 0, 0).page_table_bytes, 0u);
  EXPECT_EQ(plan_cache(c, 1, 0).page_table_bytes, 4u);
  EXPECT_EQ(plan_cache(c, 4096, 0).page_table_bytes, 4u);
  EXPECT_EQ(plan_cache(c, 4097, 0).page_table_bytes, 8u);
  EXPECT_EQ(plan_cache(c, 1ull << 40, 0).page_table_bytes, (1ull << 40) / 4096 * 4);
}

TEST(CachePlan, BounceBuffersAreFourKibibytesEach) {
  const cache_plan p =
      plan_cache({.line_bytes = 4096, .capacity_bytes = 1 << 20, .bounce_buffers = 10}, 0, 0);
  EXPECT_EQ(p.bounce_bytes, 10u * 4096);
}

TEST(CachePlan, MetadataIsEverythingButTheLines) {
  const cache_config c{
      .line_bytes = 16384, .capacity_bytes = 64 << 20, .bounce_buffers = 7, .stat_shards = 100};
  const cache_plan p = plan_cache(c, 10ull << 30, 500);
  EXPECT_EQ(p.metadata_bytes, p.line_state_bytes + p.prp_list_bytes + p.bounce_bytes +
                                  p.page_table_bytes + 100 * sizeof(stat_shard));
}

TEST(CachePlan, ALaunchNeedsTwoLinesPerConcurrentWarp) {
  EXPECT_EQ(plan_cache({}, 0, 4224).min_lines_for_launch, 8448u);
}

TEST(CachePlan, RefusesALineSizeThatIsNotAPowerOfTwo) {
  EXPECT_THROW((void)plan_cache({.line_bytes = 3000}, 0, 0), input_error);
}

TEST(CachePlan, RefusesLinesSmallerThan512OrLargerThan64K) {
  EXPECT_THROW((void)plan_cache({.line_bytes = 256}, 0, 0), input_error);
  EXPECT_THROW((void)plan_cache({.line_bytes = 131072, .capacity_bytes = 1 << 20}, 0, 0),
               input_error);
  EXPECT_NO_THROW((void)plan_cache({.line_bytes = 512}, 0, 0));
  EXPECT_NO_THROW((void)plan_cache({.line_bytes = 65536}, 0, 0));
}

TEST(CachePlan, RefusesACapacityThatHoldsNoLine) {
  EXPECT_THROW((void)plan_cache({.line_bytes = 4096, .capacity_bytes = 4095}, 0, 0), input_error);
}

TEST(CachePlan, RefusesMoreLinesThanAPageEntryCanName) {
  EXPECT_THROW(
      (void)plan_cache(
          {.line_bytes = 512, .capacity_bytes = 512 * (cache::page_bits::max_lines + 1)}, 0, 0),
      input_error);
}

TEST(CachePlan, RefusesZeroStatisticsShardsAndAZeroVictimTimeout) {
  EXPECT_THROW((void)plan_cache({.stat_shards = 0}, 0, 0), input_error);
  EXPECT_THROW((void)plan_cache({.victim_timeout_ns = 0}, 0, 0), input_error);
}

}  // namespace
