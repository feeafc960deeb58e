// Controller registers: doorbell offsets for every stride, and CAP field decoding.

#include <gtest/gtest.h>

#include <cstdint>

#include <bam/nvme/registers.hpp>

namespace {

using namespace bam::nvme;

TEST(Registers, SitAtTheirSpecifiedOffsets) {
  EXPECT_EQ(static_cast<std::uint32_t>(reg::cap), 0x00u);
  EXPECT_EQ(static_cast<std::uint32_t>(reg::vs), 0x08u);
  EXPECT_EQ(static_cast<std::uint32_t>(reg::cc), 0x14u);
  EXPECT_EQ(static_cast<std::uint32_t>(reg::csts), 0x1cu);
  EXPECT_EQ(static_cast<std::uint32_t>(reg::aqa), 0x24u);
  EXPECT_EQ(static_cast<std::uint32_t>(reg::asq), 0x28u);
  EXPECT_EQ(static_cast<std::uint32_t>(reg::acq), 0x30u);
}

TEST(Doorbells, AdminQueueDoorbellsStartAtFourKibibytes) {
  EXPECT_EQ(sq_tail_doorbell(0, 0), 0x1000u);
  EXPECT_EQ(cq_head_doorbell(0, 0), 0x1004u);
}

TEST(Doorbells, AlternateSubmissionAndCompletionPerQueueAtStrideZero) {
  for (std::uint16_t q = 0; q < 64; ++q) {
    EXPECT_EQ(sq_tail_doorbell(q, 0), 0x1000u + 8u * q);
    EXPECT_EQ(cq_head_doorbell(q, 0), 0x1000u + 8u * q + 4u);
  }
}

TEST(Doorbells, StrideMultipliesTheSpacingByPowersOfTwo) {
  // (2y + 1) * (4 << CAP.DSTRD), NVMe 1.4 section 3.1.
  for (std::uint32_t dstrd = 0; dstrd < 8; ++dstrd) {
    const std::uint32_t stride = 4u << dstrd;
    for (std::uint16_t q :
         {std::uint16_t{0}, std::uint16_t{1}, std::uint16_t{7}, std::uint16_t{1023}}) {
      EXPECT_EQ(sq_tail_doorbell(q, dstrd), 0x1000u + 2u * q * stride);
      EXPECT_EQ(cq_head_doorbell(q, dstrd), 0x1000u + (2u * q + 1u) * stride);
    }
  }
}

TEST(Doorbells, TheLargestQueueIdStaysInsideThirtyTwoBits) {
  EXPECT_EQ(cq_head_doorbell(0xffff, 0), 0x1000u + (2u * 0xffffu + 1u) * 4u);
}

TEST(CapRegister, DecodesMaximumQueueEntriesAsZeroBased) {
  EXPECT_EQ(cap_max_queue_entries(0x0000u), 1u);
  EXPECT_EQ(cap_max_queue_entries(0x03ffu), 1024u);
  EXPECT_EQ(cap_max_queue_entries(0xffffu), 65536u);
}

TEST(CapRegister, DecodesDoorbellStrideFromBitsThirtyTwoToThirtyFive) {
  EXPECT_EQ(cap_doorbell_stride(0x0000000300000000ull), 3u);
  EXPECT_EQ(cap_doorbell_stride(0xfffffff0ffffffffull), 0u);
}

TEST(CapRegister, DecodesTimeoutInFiveHundredMillisecondUnits) {
  EXPECT_EQ(cap_timeout_ms(0x0000000014000000ull), 20u * 500u);
}

TEST(CapRegister, DecodesMinimumPageSizeAsAPowerOfTwoFromFourKibibytes) {
  EXPECT_EQ(cap_min_page_bytes(0), 4096u);
  EXPECT_EQ(cap_min_page_bytes(0x0001000000000000ull), 8192u);
}

}  // namespace
