// Completion entries: dword 2 and dword 3 packing, phase tag, status field.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include <bam/nvme/completion.hpp>
#include <bam/nvme/status.hpp>

namespace {

using bam::nvme::completion_entry;

TEST(CompletionEntry, IsSixteenBytesOfFourDwords) {
  EXPECT_EQ(sizeof(completion_entry), 16u);
  EXPECT_EQ(offsetof(completion_entry, dw2), 8u);
  EXPECT_EQ(offsetof(completion_entry, dw3), 12u);
}

TEST(CompletionEntry, DwordTwoHoldsSqHeadLowAndSqIdHigh) {
  const std::uint32_t dw2 = completion_entry::make_dw2(0x1234, 0x0042);
  EXPECT_EQ(dw2, 0x00421234u);
  EXPECT_EQ(completion_entry::sq_head(dw2), 0x1234u);
  EXPECT_EQ(completion_entry::sq_id(dw2), 0x0042u);
}

TEST(CompletionEntry, DwordThreeHoldsCommandIdPhaseAndStatus) {
  const std::uint16_t status = bam::nvme::make_status_field(bam::nvme::status_type::media, 0x81);
  const std::uint32_t dw3 = completion_entry::make_dw3(0xfffe, true, status);
  EXPECT_EQ(dw3 & 0xffffu, 0xfffeu);
  EXPECT_EQ((dw3 >> 16) & 1u, 1u);
  EXPECT_EQ(dw3 >> 17, status);
  EXPECT_EQ(completion_entry::command_id(dw3), 0xfffeu);
  EXPECT_TRUE(completion_entry::phase(dw3));
  EXPECT_EQ(completion_entry::status_field(dw3), status);
}

TEST(CompletionEntry, PhaseZeroLeavesBitSixteenClear) {
  const std::uint32_t dw3 = completion_entry::make_dw3(5, false, 0);
  EXPECT_EQ(dw3, 5u);
  EXPECT_FALSE(completion_entry::phase(dw3));
}

TEST(CompletionEntry, StatusFieldKeepsFifteenBitsAndDropsTheSixteenth) {
  const std::uint32_t dw3 = completion_entry::make_dw3(0, false, 0xffff);
  EXPECT_EQ(completion_entry::status_field(dw3), 0x7fffu);
  EXPECT_FALSE(completion_entry::phase(dw3)) << "the status never spills into the phase bit";
  EXPECT_EQ(completion_entry::command_id(dw3), 0u);
}

TEST(CompletionEntry, EveryCommandIdAndStatusRoundTrip) {
  for (std::uint32_t cid = 0; cid < 0x10000u; cid += 0x111u) {
    for (std::uint32_t status = 0; status < 0x8000u; status += 0x3e1u) {
      for (bool phase : {false, true}) {
        const std::uint32_t dw3 = completion_entry::make_dw3(static_cast<std::uint16_t>(cid), phase,
                                                             static_cast<std::uint16_t>(status));
        ASSERT_EQ(completion_entry::command_id(dw3), cid);
        ASSERT_EQ(completion_entry::phase(dw3), phase);
        ASSERT_EQ(completion_entry::status_field(dw3), status);
      }
    }
  }
}

TEST(CompletionEntry, WireBytesMatchTheSpecificationLayout) {
  completion_entry e{};
  e.dw0 = 0xaabbccdd;
  e.dw2 = completion_entry::make_dw2(7, 3);
  e.dw3 = completion_entry::make_dw3(0x0102, true, 0);
  unsigned char bytes[16];
  std::memcpy(bytes, &e, sizeof e);
  EXPECT_EQ(bytes[0], 0xddu);   // DW0, little endian
  EXPECT_EQ(bytes[8], 7u);      // SQ head pointer
  EXPECT_EQ(bytes[10], 3u);     // SQ identifier
  EXPECT_EQ(bytes[12], 0x02u);  // command identifier
  EXPECT_EQ(bytes[13], 0x01u);
  EXPECT_EQ(bytes[14] & 1u, 1u);  // phase tag
}

}  // namespace
