// Status fields (SCT, SC, DNR), bam::io_status sources, and readable names.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <bam/nvme/status.hpp>

namespace {

using bam::io_status;
using bam::status_source;
using namespace bam::nvme;

TEST(StatusField, PutsCodeInBitsZeroToSevenAndTypeInBitsEightToTen) {
  EXPECT_EQ(make_status_field(status_type::media, 0x81), 0x0281u);
  EXPECT_EQ(make_status_field(status_type::vendor, 0xff), 0x07ffu);
}

TEST(StatusField, DoNotRetryIsBitFourteen) {
  EXPECT_EQ(make_status_field(generic_status::lba_out_of_range, true), 0x4080u);
  EXPECT_EQ(make_status_field(generic_status::lba_out_of_range, false), 0x0080u);
}

TEST(StatusField, TypedOverloadsPickTheirStatusCodeType) {
  EXPECT_EQ(make_status_field(generic_status::invalid_opcode), 0x0001u);
  EXPECT_EQ(make_status_field(command_status::invalid_queue_size), 0x0102u);
  EXPECT_EQ(make_status_field(media_status::write_fault), 0x0280u);
}

TEST(IoStatus, DefaultIsSuccess) {
  const io_status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.bits(), 0u);
  EXPECT_EQ(s.source(), status_source::device);
  EXPECT_STREQ(s.name(), "generic: success");
}

TEST(IoStatus, FromDeviceDecodesTypeCodeAndDoNotRetry) {
  const io_status s =
      io_status::from_device(make_status_field(media_status::unrecovered_read_error, true));
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.source(), status_source::device);
  EXPECT_EQ(s.sct(), 2u);
  EXPECT_EQ(s.sc(), 0x81u);
  EXPECT_TRUE(s.do_not_retry());
  EXPECT_EQ(s.status_field(), 0x4281u);
}

TEST(IoStatus, FromDeviceIgnoresBitsAboveTheFifteenBitField) {
  const io_status s = io_status::from_device(0xffff);
  EXPECT_EQ(s.status_field(), 0x7fffu);
  EXPECT_EQ(s.source(), status_source::device);
}

TEST(IoStatus, HostSourcesCarryNoNvmeStatus) {
  for (auto src : {status_source::timeout, status_source::command_lost,
                   status_source::invalid_request, status_source::cache_exhausted,
                   status_source::index_out_of_range, status_source::queue_halted,
                   status_source::submit_timeout}) {
    const io_status s = io_status::host(src);
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(s.source(), src);
    EXPECT_EQ(s.status_field(), 0u);
  }
}

TEST(IoStatus, SurvivesARoundTripThroughItsBits) {
  const io_status a = io_status::host(status_source::command_lost);
  const io_status b = io_status::from_device(make_status_field(generic_status::invalid_field));
  EXPECT_EQ(io_status::from_bits(a.bits()), a);
  EXPECT_EQ(io_status::from_bits(b.bits()), b);
  EXPECT_NE(a, b);
}

TEST(IoStatus, HostSourcesHaveTheirOwnNames) {
  EXPECT_STREQ(io_status::host(status_source::timeout).name(), "timeout waiting for a completion");
  EXPECT_STREQ(io_status::host(status_source::submit_timeout).name(),
               "timeout waiting to enter the queue");
  EXPECT_STREQ(io_status::host(status_source::queue_halted).name(),
               "queue halted after a lost command (reset the queue)");
  EXPECT_STREQ(io_status::host(status_source::command_lost).name(),
               "command slot held by an earlier command that never completed");
  EXPECT_STREQ(io_status::from_bits(0xff0000u).name(), "unknown status");
}

TEST(IoStatus, DeviceStatusesAreNamedByTheirTypeAndCode) {
  EXPECT_STREQ(io_status::from_device(make_status_field(generic_status::lba_out_of_range)).name(),
               "generic: LBA out of range");
  EXPECT_STREQ(io_status::from_device(make_status_field(media_status::write_fault)).name(),
               "media: write fault");
}

TEST(StatusName, NamesEveryGenericCodeBamUses) {
  for (auto sc : {generic_status::success, generic_status::invalid_opcode,
                  generic_status::invalid_field, generic_status::command_id_conflict,
                  generic_status::data_transfer_error, generic_status::internal_error,
                  generic_status::abort_requested, generic_status::invalid_namespace,
                  generic_status::prp_offset_invalid, generic_status::lba_out_of_range,
                  generic_status::capacity_exceeded, generic_status::namespace_not_ready}) {
    const std::string name = status_name(0, static_cast<std::uint8_t>(sc));
    EXPECT_EQ(name.rfind("generic: ", 0), 0u);
    EXPECT_EQ(name.find("unknown"), std::string::npos) << name;
  }
  EXPECT_STREQ(status_name(0, 0x13), "generic: PRP offset invalid");
}

TEST(StatusName, NamesCommandSpecificAndMediaCodes) {
  EXPECT_STREQ(status_name(1, 0x01), "command specific: invalid queue identifier");
  EXPECT_STREQ(status_name(2, 0x81), "media: unrecovered read error");
  EXPECT_STREQ(status_name(2, 0x86), "media: access denied");
}

TEST(StatusName, UnknownCodesSayWhichTypeTheyBelongTo) {
  EXPECT_STREQ(status_name(0, 0x55), "generic: unknown status code");
  EXPECT_STREQ(status_name(1, 0x55), "command specific: unknown status code");
  EXPECT_STREQ(status_name(2, 0x00), "media: unknown status code");
  EXPECT_STREQ(status_name(3, 0x00), "path related status");
  EXPECT_STREQ(status_name(7, 0x00), "vendor specific status");
  EXPECT_STREQ(status_name(5, 0x00), "reserved status code type");
}

}  // namespace
