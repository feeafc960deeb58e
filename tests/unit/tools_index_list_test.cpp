// `bam gather --indices`: the index list reader.

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <bam/error.hpp>

#include "common/index_list.hpp"

namespace {

using bam::tools::parse_index_list;

std::string error_of(const std::string& text) {
  try {
    (void)parse_index_list(std::string_view(text), "'idx'");
  } catch (const bam::input_error& e) {
    return e.message();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(index_list, reads_one_index_a_line_skipping_blanks_and_comments) {
  const std::string text = "# header\n3\n\n  7\t\r\n18446744073709551615\n#x\n0";
  const std::vector<std::uint64_t> expected = {3, 7, 18446744073709551615ull, 0};
  EXPECT_EQ(parse_index_list(std::string_view(text), "'idx'"), expected);
  std::istringstream stream(text);
  EXPECT_EQ(parse_index_list(stream, "'idx'"), expected);
}

TEST(index_list, an_empty_list_has_no_indices) {
  EXPECT_TRUE(parse_index_list(std::string_view(""), "'idx'").empty());
}

TEST(index_list, names_the_line_of_a_bad_index) {
  const std::string m = error_of("1\n2\n-3\n");
  EXPECT_NE(m.find("'idx' line 3"), std::string::npos) << m;
  EXPECT_NE(m.find("'-3'"), std::string::npos) << m;
}

TEST(index_list, refuses_overflow_fractions_and_two_numbers_a_line) {
  for (const char* text : {"18446744073709551616\n", "1.5\n", "1 2\n", "0x10\n", "+4\n"}) {
    EXPECT_NE(error_of(text).find("not a non-negative integer"), std::string::npos) << text;
  }
}

TEST(index_list, shortens_a_long_bad_line_in_the_message) {
  const std::string m = error_of(std::string(500, 'z'));
  EXPECT_LT(m.size(), 200u) << m;
}

}  // namespace
