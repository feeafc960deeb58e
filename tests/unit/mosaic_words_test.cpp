// The packed words of two-level translation: a large entry (coalesced, closed, generation,
// tenant, frame) and a frame state (pins, OPEN, HELD, tag), and how a frame pool is carved.

#include <gtest/gtest.h>

#include <cstdint>

#include <bam/cache/mosaic/frame_geometry.hpp>
#include <bam/cache/mosaic/large_entry.hpp>

namespace {

using namespace bam::cache::mosaic;

TEST(LargeEntry, FieldsRoundTripAtTheirLargestValues) {
  const auto frame = static_cast<std::uint32_t>(entry_bits::frame_mask);
  const auto tenant = static_cast<std::uint32_t>(entry_bits::tenant_mask);
  const auto gen = static_cast<std::uint32_t>(entry_bits::gen_mask);
  const std::uint64_t e = make_entry(frame, tenant, gen);
  EXPECT_TRUE(entry_coalesced(e));
  EXPECT_EQ(entry_frame(e), frame);
  EXPECT_EQ(entry_tenant(e), tenant);
  EXPECT_EQ(entry_gen(e), gen);
  EXPECT_EQ(e & entry_bits::closed, 0u) << "a coalesced entry is never closed";
}

TEST(LargeEntry, GenerationsWrapInsteadOfSpillingIntoTheFlags) {
  const std::uint64_t e = make_entry(1, 2, static_cast<std::uint32_t>(entry_bits::gen_mask) + 1u);
  EXPECT_EQ(entry_gen(e), 0u);
  EXPECT_EQ(e & entry_bits::closed, 0u);
}

TEST(LargeEntry, EmptyAndClosedAreNotCoalesced) {
  EXPECT_FALSE(entry_coalesced(entry_bits::empty));
  EXPECT_FALSE(entry_coalesced(entry_bits::closed));
}

TEST(FrameState, APinCountsOnlyOnAnOpenFrameOfTheSameReservation) {
  const std::uint64_t e = make_entry(4, 9, 17);
  const std::uint64_t open = frame_opened(0, e);
  EXPECT_TRUE(frame_pin_usable(open + 1, e));
  EXPECT_FALSE(frame_pin_usable(open | frame_bits::held, e)) << "held by an evictor";
  EXPECT_FALSE(frame_pin_usable(open & ~frame_bits::open, e)) << "closed";
  EXPECT_FALSE(frame_pin_usable(open, make_entry(4, 9, 18))) << "a later reservation";
  EXPECT_FALSE(frame_pin_usable(open, make_entry(4, 8, 17))) << "another tenant";
}

TEST(FrameState, OpeningKeepsStrayPinsAndDropsHeld) {
  const std::uint64_t e = make_entry(4, 9, 17);
  const std::uint64_t s = frame_opened(frame_bits::held | 5, e);
  EXPECT_EQ(frame_pins(s), 5u);
  EXPECT_EQ(s & frame_bits::held, 0u);
  EXPECT_EQ(frame_gen(s), 17u);
}

TEST(FrameState, AFreeFrameIsNeitherOpenNorHeld) {
  EXPECT_TRUE(frame_free(0));
  EXPECT_TRUE(frame_free(3));  // stray pin attempts do not make a frame busy
  EXPECT_FALSE(frame_free(frame_bits::open));
  EXPECT_FALSE(frame_free(frame_bits::held));
}

TEST(FrameGeometry, TwoMebibyteFramesWhenTheCacheIsLargeEnough) {
  const frame_geometry g = plan_frames(4096, (1u << 30) / 4096, 2u << 20, 50);
  EXPECT_EQ(g.frame_bytes, 2u << 20);
  EXPECT_EQ(g.lines_per_frame, 512u);
  EXPECT_EQ(g.frames, 256u);
  EXPECT_EQ(g.words_per_frame, 8u);
  EXPECT_EQ(g.frame_shift, 9u);
  EXPECT_EQ(g.frame_lines, 256u * 512u);
}

TEST(FrameGeometry, FramesShrinkUntilTheSmallPoolHoldsEnoughOfThem) {
  const frame_geometry g = plan_frames(512, 256, 2u << 20, 50);
  EXPECT_GE(g.frames, min_frames);
  EXPECT_EQ(g.lines_per_frame, 16u);
  EXPECT_EQ(g.frame_bytes, 16u * 512u);
}

TEST(FrameGeometry, ASizeThatIsNotAPowerOfTwoOfLinesRoundsDown) {
  const frame_geometry g = plan_frames(512, 1u << 16, 3 * 512, 100);
  EXPECT_EQ(g.lines_per_frame, 2u);
}

TEST(FrameGeometry, TheBasePoolKeepsAtLeastOneLine) {
  const frame_geometry g = plan_frames(512, 64, 8 * 512, 100);
  EXPECT_LT(g.frame_lines, 64u);
  EXPECT_GT(g.frames, 0u);
}

TEST(FrameGeometry, APoolTooSmallForAFrameHasNone) {
  EXPECT_EQ(plan_frames(512, 1, 2u << 20, 100).frames, 0u);
  EXPECT_EQ(plan_frames(512, 100, 2u << 20, 0).frames, 0u);
}

}  // namespace
