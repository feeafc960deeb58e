// Where a queue pair's arrays live in its allocation, and the control block's line layout.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include <bam/queue/queue_pair.hpp>

namespace {

using bam::queue_control;
using bam::queue_layout;

class QueueLayoutForDepth : public testing::TestWithParam<std::uint32_t> {};

TEST_P(QueueLayoutForDepth, PutsTheRingsOnFourKibibytePages) {
  const queue_layout l = queue_layout::for_depth(GetParam());
  EXPECT_EQ(l.depth, GetParam());
  EXPECT_EQ(l.control, 0u);
  EXPECT_EQ(l.sq % 4096, 0u);
  EXPECT_EQ(l.cq % 4096, 0u);
  EXPECT_EQ(l.bytes % 4096, 0u);
}

TEST_P(QueueLayoutForDepth, StartsEachPerSlotArrayOnItsOwnLine) {
  const queue_layout l = queue_layout::for_depth(GetParam());
  for (std::uint64_t offset : {l.turn, l.mark, l.mailbox, l.cq_laps, l.holds}) {
    EXPECT_EQ(offset % bam::hot_line_bytes, 0u);
  }
}

TEST_P(QueueLayoutForDepth, KeepsTheArraysInOrderWithoutOverlap) {
  const std::uint64_t d = GetParam();
  const queue_layout l = queue_layout::for_depth(GetParam());
  EXPECT_GE(l.sq, sizeof(queue_control));
  EXPECT_GE(l.cq, l.sq + d * 64);
  EXPECT_GE(l.turn, l.cq + d * 16);
  EXPECT_GE(l.mark, l.turn + d * 4);
  EXPECT_GE(l.mailbox, l.mark + d * 4);
  EXPECT_GE(l.cq_laps, l.mailbox + d * 8);
  EXPECT_GE(l.holds, l.cq_laps + d * 4);
  EXPECT_GE(l.bytes, l.holds + d * sizeof(bam::command_hold));
}

TEST_P(QueueLayoutForDepth, WastesLessThanAPagePerArray) {
  const std::uint64_t d = GetParam();
  const queue_layout l = queue_layout::for_depth(GetParam());
  const std::uint64_t payload =
      sizeof(queue_control) + d * (64 + 16 + 4 + 4 + 8 + 4 + sizeof(bam::command_hold));
  EXPECT_LT(l.bytes, payload + 3 * 4096 + 5 * bam::hot_line_bytes);
}

INSTANTIATE_TEST_SUITE_P(Depths, QueueLayoutForDepth,
                         testing::Values(2u, 3u, 17u, 64u, 256u, 4096u, 65535u));

TEST(QueueLayout, IsAConstantExpression) {
  constexpr queue_layout l = queue_layout::for_depth(64);
  static_assert(l.sq == 4096);
  EXPECT_EQ(l.cq, 8192u);
}

TEST(QueueControl, KeepsWordsWrittenByDifferentAgentsOnSeparateLines) {
  const auto line = [](std::size_t offset) { return offset / bam::hot_line_bytes; };
  const std::size_t lines[] = {
      line(offsetof(queue_control, ticket)),      line(offsetof(queue_control, tail_lock)),
      line(offsetof(queue_control, sq_head)),     line(offsetof(queue_control, cq_lock)),
      line(offsetof(queue_control, halted)),      line(offsetof(queue_control, counters)),
      line(offsetof(queue_control, sq_doorbell)), line(offsetof(queue_control, cq_doorbell))};
  for (std::size_t i = 0; i < std::size(lines); ++i) {
    for (std::size_t j = i + 1; j < std::size(lines); ++j) {
      EXPECT_NE(lines[i], lines[j]) << "fields " << i << " and " << j;
    }
  }
}

TEST(QueueControl, KeepsTheTailLockWithTheVirtualTailItGuards) {
  EXPECT_EQ(offsetof(queue_control, tail_lock) / bam::hot_line_bytes,
            offsetof(queue_control, vtail) / bam::hot_line_bytes);
}

TEST(QueueControl, KeepsTheCqLockWithTheCqStateItGuards) {
  EXPECT_EQ(offsetof(queue_control, cq_lock) / bam::hot_line_bytes,
            offsetof(queue_control, cq_state) / bam::hot_line_bytes);
}

TEST(QueueControl, IsAWholeNumberOfLines) {
  EXPECT_EQ(sizeof(queue_control) % bam::hot_line_bytes, 0u);
  EXPECT_EQ(alignof(queue_control), bam::hot_line_bytes);
}

}  // namespace
