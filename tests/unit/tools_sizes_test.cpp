// Byte sizes on the command line and their formatting.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <bam/error.hpp>

#include "common/sizes.hpp"

namespace {

using bam::tools::parse_size;

TEST(ParseSize, AcceptsAPlainByteCount) { EXPECT_EQ(parse_size("4096"), 4096u); }

TEST(ParseSize, ReadsUnitsAsPowersOfTwo) {
  EXPECT_EQ(parse_size("64K"), 64u << 10);
  EXPECT_EQ(parse_size("3M"), 3u << 20);
  EXPECT_EQ(parse_size("8G"), 8ull << 30);
  EXPECT_EQ(parse_size("2T"), 2ull << 40);
}

TEST(ParseSize, AcceptsLowerCaseAndByteSuffixes) {
  EXPECT_EQ(parse_size("64k"), 64u << 10);
  EXPECT_EQ(parse_size("64KB"), 64u << 10);
  EXPECT_EQ(parse_size("8GiB"), 8ull << 30);
  EXPECT_EQ(parse_size("512B"), 512u);
}

TEST(ParseSize, AcceptsFractionsThatMakeWholeBytes) {
  EXPECT_EQ(parse_size("1.5M"), 1572864u);
  EXPECT_EQ(parse_size("0.5K"), 512u);
}

TEST(ParseSize, IgnoresTrailingWhitespace) { EXPECT_EQ(parse_size("16K \n"), 16u << 10); }

TEST(ParseSize, RejectsAnEmptyString) {
  EXPECT_THROW(parse_size(""), bam::input_error);
  EXPECT_THROW(parse_size("   "), bam::input_error);
}

TEST(ParseSize, RejectsTextWithoutANumber) {
  EXPECT_THROW(parse_size("abc"), bam::input_error);
  EXPECT_THROW(parse_size("K"), bam::input_error);
  EXPECT_THROW(parse_size("-5"), bam::input_error);
}

TEST(ParseSize, RejectsUnknownUnits) {
  EXPECT_THROW(parse_size("12Q"), bam::input_error);
  EXPECT_THROW(parse_size("12KK"), bam::input_error);
  EXPECT_THROW(parse_size("4 K"), bam::input_error);
}

TEST(ParseSize, RejectsMalformedNumbers) {
  EXPECT_THROW(parse_size("1.2.3"), bam::input_error);
  EXPECT_THROW(parse_size("."), bam::input_error);
}

TEST(ParseSize, RejectsFractionsOfAByte) { EXPECT_THROW(parse_size("1.5"), bam::input_error); }

TEST(ParseSize, RejectsSizesThatOverflowSixtyFourBits) {
  EXPECT_THROW(parse_size("16777216T"), bam::input_error);  // 2^64
  EXPECT_THROW(parse_size("99999999999999999999"), bam::input_error);
  EXPECT_EQ(parse_size("16777215T"), 16777215ull << 40);
}

TEST(ParseSize, NamesTheOptionAndTheTextInItsError) {
  try {
    (void)parse_size("12Q", "--cache");
    FAIL() << "no exception";
  } catch (const bam::input_error& e) {
    const std::string what = e.message();
    EXPECT_NE(what.find("--cache"), std::string::npos) << what;
    EXPECT_NE(what.find("'12Q'"), std::string::npos) << what;
  }
}

TEST(FormatBytes, PicksTheLargestBinaryUnit) {
  EXPECT_EQ(bam::tools::format_bytes(512), "512 B");
  EXPECT_EQ(bam::tools::format_bytes(4096), "4 KiB");
  EXPECT_EQ(bam::tools::format_bytes(1.5 * (1 << 30)), "1.5 GiB");
  EXPECT_EQ(bam::tools::format_bytes(1048560), "1024 KiB");  // not 1.02e+03 KiB
}

TEST(FormatCount, PicksTheLargestDecimalUnit) {
  EXPECT_EQ(bam::tools::format_count(823), "823");
  EXPECT_EQ(bam::tools::format_count(45.8e6), "45.8 M");
}

}  // namespace
