// The packed words of the cache: a line's state (pins, flags, owner tag) and a page's
// translation entry (unmapped, loading, line + 1, failed with a status).

#include <gtest/gtest.h>

#include <cstdint>

#include <bam/cache/line_state.hpp>
#include <bam/nvme/status.hpp>

namespace {

using namespace bam;
using namespace bam::cache;

TEST(LineState, PinsFlagsAndTagOccupySeparateBits) {
  const std::uint64_t pins = line_bits::pin_mask;  // the most pins a line can hold
  const std::uint64_t s = with_tag(pins | line_bits::valid | line_bits::dirty, line_bits::max_tag);
  EXPECT_EQ(line_pins(s), pins);
  EXPECT_EQ(line_tag(s), line_bits::max_tag);
  EXPECT_TRUE(s & line_bits::valid);
  EXPECT_TRUE(s & line_bits::dirty);
  EXPECT_FALSE(s & line_bits::busy);
}

TEST(LineState, FlagsAreDistinctAndOutsideThePinCount) {
  EXPECT_EQ(line_bits::valid & line_bits::pin_mask, 0u);
  EXPECT_EQ(line_bits::dirty & line_bits::pin_mask, 0u);
  EXPECT_EQ(line_bits::busy & line_bits::pin_mask, 0u);
  EXPECT_EQ(line_bits::valid & line_bits::dirty, 0u);
  EXPECT_EQ(line_bits::valid & line_bits::busy, 0u);
  EXPECT_EQ(line_bits::dirty & line_bits::busy, 0u);
  EXPECT_LT(line_bits::busy, std::uint64_t{1} << line_bits::tag_shift);
}

TEST(LineState, OnePinMoreThanTheMaskWouldCarryIntoValid) {
  // Why a line holds at most pin_mask pins: the next one would set VALID.
  EXPECT_EQ(line_bits::pin_mask + line_bits::pin_one, line_bits::valid);
}

TEST(LineState, WithTagReplacesTheTagAndKeepsPinsAndFlags) {
  const std::uint64_t before = with_tag(5 | line_bits::busy | line_bits::dirty, 77);
  const std::uint64_t after = with_tag(before, 1234567);
  EXPECT_EQ(line_tag(after), 1234567u);
  EXPECT_EQ(line_pins(after), 5u);
  EXPECT_EQ(after & (line_bits::busy | line_bits::dirty), line_bits::busy | line_bits::dirty);
}

TEST(LineState, TheLargestTagRoundTrips) {
  EXPECT_EQ(line_tag(with_tag(0, line_bits::max_tag)), line_bits::max_tag);
  EXPECT_EQ(line_bits::max_tag, (std::uint64_t{1} << (64 - line_bits::tag_shift)) - 1);
}

TEST(LineState, APinIsUsableOnlyOnAValidIdleLineOfTheSamePage) {
  const std::uint64_t tag = 42;
  EXPECT_TRUE(pin_usable(with_tag(line_bits::valid | 3, tag), tag));
  EXPECT_TRUE(pin_usable(with_tag(line_bits::valid | line_bits::dirty, tag), tag));
  EXPECT_FALSE(pin_usable(with_tag(line_bits::valid | line_bits::busy, tag), tag));
  EXPECT_FALSE(pin_usable(with_tag(line_bits::busy, tag), tag));
  EXPECT_FALSE(pin_usable(with_tag(0, tag), tag));
  EXPECT_FALSE(pin_usable(with_tag(line_bits::valid, tag + 1), tag));
  EXPECT_FALSE(pin_usable(line_bits::valid, tag));  // a valid line of no page
}

TEST(PageEntry, UnmappedAndLoadingAreNeitherMappedNorFailed) {
  EXPECT_FALSE(page_mapped(page_bits::unmapped));
  EXPECT_FALSE(page_failed(page_bits::unmapped));
  EXPECT_FALSE(page_mapped(page_bits::loading));
  EXPECT_FALSE(page_failed(page_bits::loading));
}

TEST(PageEntry, EveryLineOfTheLargestCacheRoundTrips) {
  for (const std::uint64_t line :
       {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{65535}, page_bits::max_lines - 1}) {
    const std::uint32_t e = page_entry_for_line(static_cast<std::uint32_t>(line));
    EXPECT_TRUE(page_mapped(e)) << "line " << line;
    EXPECT_FALSE(page_failed(e)) << "line " << line;
    EXPECT_EQ(page_line(e), line);
  }
}

TEST(PageEntry, AFailureKeepsTheDeviceStatusField) {
  const io_status s = io_status::from_device(
      nvme::make_status_field(nvme::media_status::unrecovered_read_error, true));
  const std::uint32_t e = page_failure(s);
  EXPECT_TRUE(page_failed(e));
  EXPECT_FALSE(page_mapped(e));
  EXPECT_NE(e, page_bits::loading);
  EXPECT_EQ(page_failure_status(e), s);
  EXPECT_EQ(page_failure_status(e).sct(), 2u);
  EXPECT_EQ(page_failure_status(e).sc(), 0x81u);
  EXPECT_TRUE(page_failure_status(e).do_not_retry());
}

TEST(PageEntry, AFailureKeepsTheHostSource) {
  for (const status_source src :
       {status_source::timeout, status_source::command_lost, status_source::invalid_request,
        status_source::cache_exhausted, status_source::queue_halted,
        status_source::submit_timeout}) {
    const std::uint32_t e = page_failure(io_status::host(src));
    EXPECT_TRUE(page_failed(e));
    EXPECT_NE(e, page_bits::loading);
    EXPECT_EQ(page_failure_status(e), io_status::host(src)) << static_cast<int>(src);
  }
}

TEST(PageEntry, TheLargestStatusFieldIsNotMistakenForLoading) {
  const io_status s = io_status::from_device(0x7fff);
  EXPECT_NE(page_failure(s), page_bits::loading);
  EXPECT_EQ(page_failure_status(page_failure(s)), s);
}

}  // namespace
