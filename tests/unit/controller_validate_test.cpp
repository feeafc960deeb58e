// The emulated controller's command checks: each bad command gets its NVMe status.

#include <gtest/gtest.h>

#include <cstdint>

#include <bam/nvme/command.hpp>
#include <bam/nvme/status.hpp>

#include "storage/emulated/command_engine.hpp"

namespace {

using bam::emulated::namespace_view;
using bam::emulated::validate;
using bam::nvme::generic_status;
using bam::nvme::io_opcode;
using bam::nvme::make_rw;
using bam::nvme::make_status_field;

namespace_view small_namespace() {
  namespace_view ns;
  ns.block_bytes = 512;
  ns.capacity_blocks = 1000;
  ns.max_transfer_bytes = 64 * 1024;
  return ns;
}

constexpr std::uint64_t buffer = 0x10000;

std::uint16_t status_of(const bam::nvme::submission_entry& c) {
  return validate(c, small_namespace());
}

std::uint16_t dnr(generic_status s) { return make_status_field(s, true); }

TEST(Validate, AcceptsAReadInsideTheNamespace) {
  EXPECT_EQ(status_of(make_rw(io_opcode::read, 1, 10, 8, buffer, 0)), 0u);
}

TEST(Validate, AcceptsAWriteEndingOnTheLastBlock) {
  EXPECT_EQ(status_of(make_rw(io_opcode::write, 1, 990, 10, buffer, 0)), 0u);
}

TEST(Validate, AcceptsAFlushOfNamespaceOneOrAllNamespaces) {
  EXPECT_EQ(status_of(bam::nvme::make_flush(1)), 0u);
  EXPECT_EQ(status_of(bam::nvme::make_flush(0xffffffffu)), 0u);
}

TEST(Validate, RejectsAnUnknownOpcodeAsInvalidOpcode) {
  auto c = make_rw(io_opcode::read, 1, 0, 1, buffer, 0);
  c.opcode = 0x7f;
  EXPECT_EQ(status_of(c), dnr(generic_status::invalid_opcode));
}

TEST(Validate, RejectsAnOpcodeItDoesNotImplementAsInvalidOpcode) {
  auto c = make_rw(io_opcode::read, 1, 0, 1, buffer, 0);
  c.opcode = static_cast<std::uint8_t>(io_opcode::write_zeroes);
  EXPECT_EQ(status_of(c), dnr(generic_status::invalid_opcode));
}

TEST(Validate, RejectsAReadOfAnotherNamespaceAsInvalidNamespace) {
  EXPECT_EQ(status_of(make_rw(io_opcode::read, 2, 0, 1, buffer, 0)),
            dnr(generic_status::invalid_namespace));
  EXPECT_EQ(status_of(make_rw(io_opcode::read, 0, 0, 1, buffer, 0)),
            dnr(generic_status::invalid_namespace));
}

TEST(Validate, RejectsAFlushOfAnotherNamespaceAsInvalidNamespace) {
  EXPECT_EQ(status_of(bam::nvme::make_flush(3)), dnr(generic_status::invalid_namespace));
}

TEST(Validate, RejectsAStartPastTheEndAsLbaOutOfRange) {
  EXPECT_EQ(status_of(make_rw(io_opcode::read, 1, 1000, 1, buffer, 0)),
            dnr(generic_status::lba_out_of_range));
}

TEST(Validate, RejectsATransferRunningPastTheEndAsLbaOutOfRange) {
  EXPECT_EQ(status_of(make_rw(io_opcode::read, 1, 995, 6, buffer, 0)),
            dnr(generic_status::lba_out_of_range));
}

TEST(Validate, RejectsAStartNearTwoToTheSixtyFourWithoutOverflowing) {
  EXPECT_EQ(status_of(make_rw(io_opcode::read, 1, ~0ull - 2, 8, buffer, 0)),
            dnr(generic_status::lba_out_of_range));
}

TEST(Validate, RejectsATransferLargerThanTheMaximumAsInvalidField) {
  // 129 blocks of 512 bytes is one block more than the 64 KiB maximum.
  EXPECT_EQ(status_of(make_rw(io_opcode::read, 1, 0, 129, buffer, 0)),
            dnr(generic_status::invalid_field));
  EXPECT_EQ(status_of(make_rw(io_opcode::read, 1, 0, 128, buffer, 0)), 0u);
}

TEST(Validate, RejectsScatterGatherListsAsInvalidField) {
  auto c = make_rw(io_opcode::read, 1, 0, 1, buffer, 0);
  c.flags = 0x40;  // PSDT = 01: SGL
  EXPECT_EQ(status_of(c), dnr(generic_status::invalid_field));
}

TEST(Validate, RejectsADwordMisalignedPrp1AsPrpOffsetInvalid) {
  EXPECT_EQ(status_of(make_rw(io_opcode::read, 1, 0, 1, buffer + 2, 0)),
            dnr(generic_status::prp_offset_invalid));
}

TEST(Validate, RejectsANullPrp1AsPrpOffsetInvalid) {
  EXPECT_EQ(status_of(make_rw(io_opcode::write, 1, 0, 1, 0, 0)),
            dnr(generic_status::prp_offset_invalid));
}

TEST(Validate, SetsDoNotRetryOnEveryRejection) {
  auto c = make_rw(io_opcode::read, 1, 5000, 1, buffer, 0);
  const bam::io_status s = bam::io_status::from_device(status_of(c));
  EXPECT_TRUE(s.do_not_retry());
  EXPECT_EQ(s.sct(), 0u);
  EXPECT_EQ(s.sc(), 0x80u);
}

}  // namespace
