// Submission entries: the wire layout and the fields each builder sets.

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>

#include <bam/nvme/command.hpp>

namespace {

using bam::nvme::submission_entry;

// The entry as the controller's DMA sees it: sixteen little-endian dwords.
std::array<std::uint32_t, 16> dwords(const submission_entry& e) {
  std::array<std::uint32_t, 16> d{};
  std::memcpy(d.data(), &e, sizeof e);
  return d;
}

TEST(SubmissionEntry, IsSixtyFourBytesAlignedToSixtyFour) {
  EXPECT_EQ(sizeof(submission_entry), 64u);
  EXPECT_EQ(alignof(submission_entry), 64u);
}

TEST(SubmissionEntry, ReadPutsOpcodeInByteZeroAndNamespaceInDwordOne) {
  const auto e = bam::nvme::make_rw(bam::nvme::io_opcode::read, 7, 0, 1, 0x1000, 0);
  const auto d = dwords(e);
  EXPECT_EQ(d[0] & 0xffu, 0x02u);
  EXPECT_EQ(d[1], 7u);
}

TEST(SubmissionEntry, WriteUsesOpcodeOne) {
  const auto e = bam::nvme::make_rw(bam::nvme::io_opcode::write, 1, 0, 1, 0x1000, 0);
  EXPECT_EQ(dwords(e)[0] & 0xffu, 0x01u);
}

TEST(SubmissionEntry, CommandIdSitsInTheHighHalfOfDwordZero) {
  auto e = bam::nvme::make_rw(bam::nvme::io_opcode::read, 1, 0, 1, 0x1000, 0);
  e.command_id = 0xbeef;
  const auto d = dwords(e);
  EXPECT_EQ(d[0] >> 16, 0xbeefu);
  EXPECT_EQ((d[0] >> 8) & 0xffu, 0u) << "fused and PSDT bits stay zero: PRPs, not fused";
}

TEST(SubmissionEntry, StartingLbaIsSplitLowIntoDwordTenHighIntoDwordEleven) {
  const std::uint64_t slba = 0x0123456789abcdefull;
  const auto e = bam::nvme::make_rw(bam::nvme::io_opcode::read, 1, slba, 1, 0x1000, 0);
  const auto d = dwords(e);
  EXPECT_EQ(d[10], 0x89abcdefu);
  EXPECT_EQ(d[11], 0x01234567u);
  EXPECT_EQ(e.slba(), slba);
}

TEST(SubmissionEntry, BlockCountIsStoredZeroBasedInTheLowHalfOfDwordTwelve) {
  const auto one = bam::nvme::make_rw(bam::nvme::io_opcode::read, 1, 0, 1, 0x1000, 0);
  EXPECT_EQ(dwords(one)[12], 0u);
  EXPECT_EQ(one.block_count(), 1u);
  const auto eight = bam::nvme::make_rw(bam::nvme::io_opcode::read, 1, 0, 8, 0x1000, 0);
  EXPECT_EQ(dwords(eight)[12], 7u);
  EXPECT_EQ(eight.block_count(), 8u);
}

TEST(SubmissionEntry, TheLargestCommandHasAllSixteenNlbBitsSet) {
  const auto e = bam::nvme::make_rw(bam::nvme::io_opcode::read, 1, 0,
                                    bam::nvme::max_blocks_per_command, 0x1000, 0);
  EXPECT_EQ(dwords(e)[12], 0xffffu);
  EXPECT_EQ(e.block_count(), bam::nvme::max_blocks_per_command);
}

TEST(SubmissionEntry, PrpEntriesOccupyDwordsSixToNine) {
  const auto e = bam::nvme::make_rw(bam::nvme::io_opcode::read, 1, 0, 16, 0x1122334455667788ull,
                                    0x99aabbccddeeff00ull);
  const auto d = dwords(e);
  EXPECT_EQ(d[6], 0x55667788u);
  EXPECT_EQ(d[7], 0x11223344u);
  EXPECT_EQ(d[8], 0xddeeff00u);
  EXPECT_EQ(d[9], 0x99aabbccu);
}

TEST(SubmissionEntry, ReadLeavesReservedAndMetadataDwordsZero) {
  const auto e = bam::nvme::make_rw(bam::nvme::io_opcode::read, 1, 5, 2, 0x1000, 0x2000);
  const auto d = dwords(e);
  for (int i : {2, 3, 4, 5, 13, 14, 15}) EXPECT_EQ(d[i], 0u) << "dword " << i;
}

TEST(SubmissionEntry, FlushNamesOnlyItsNamespace) {
  const auto e = bam::nvme::make_flush(0xffffffffu);
  const auto d = dwords(e);
  EXPECT_EQ(d[0], 0u);
  EXPECT_EQ(d[1], 0xffffffffu);
  for (int i = 2; i < 16; ++i) EXPECT_EQ(d[i], 0u) << "dword " << i;
}

TEST(SubmissionEntry, IdentifyCarriesCnsInDwordTen) {
  const auto e = bam::nvme::make_identify(bam::nvme::identify_cns::controller, 0, 0x7000);
  const auto d = dwords(e);
  EXPECT_EQ(d[0] & 0xffu, 0x06u);
  EXPECT_EQ(d[10], 1u);
  EXPECT_EQ(e.prp1, 0x7000u);
}

TEST(SubmissionEntry, CreateCompletionQueueEncodesZeroBasedSizeAndQueueId) {
  const auto e = bam::nvme::make_create_io_cq(3, 1024, 0x8000);
  const auto d = dwords(e);
  EXPECT_EQ(d[0] & 0xffu, 0x05u);
  EXPECT_EQ(d[10], (1023u << 16) | 3u);
  EXPECT_EQ(d[11], 1u) << "physically contiguous, interrupts off";
}

TEST(SubmissionEntry, CreateSubmissionQueueNamesItsCompletionQueue) {
  const auto e = bam::nvme::make_create_io_sq(4, 256, 9, 0x9000);
  const auto d = dwords(e);
  EXPECT_EQ(d[0] & 0xffu, 0x01u);
  EXPECT_EQ(d[10], (255u << 16) | 4u);
  EXPECT_EQ(d[11], (9u << 16) | 1u);
}

TEST(SubmissionEntry, SetQueueCountAsksForZeroBasedCounts) {
  const auto e = bam::nvme::make_set_queue_count(16, 8);
  const auto d = dwords(e);
  EXPECT_EQ(d[0] & 0xffu, 0x09u);
  EXPECT_EQ(d[10], 0x07u);
  EXPECT_EQ(d[11], (7u << 16) | 15u);
}

}  // namespace
