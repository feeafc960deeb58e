// The JSON writer used for benchmark and command results.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <unistd.h>

#include <bam/error.hpp>

#include "common/json_writer.hpp"

namespace {

using bam::tools::json_writer;

TEST(JsonWriter, WritesAnEmptyObject) {
  json_writer j;
  j.begin_object().end_object();
  EXPECT_EQ(j.str(), "{}");
}

TEST(JsonWriter, SeparatesFieldsWithCommas) {
  json_writer j;
  j.begin_object().field("a", 1).field("b", "two").field("c", true).end_object();
  EXPECT_EQ(j.str(), R"({"a":1,"b":"two","c":true})");
}

TEST(JsonWriter, NestsArraysAndObjects) {
  json_writer j;
  j.begin_object().key("rows").begin_array();
  j.begin_object().field("x", 1).end_object();
  j.begin_object().field("x", 2).end_object();
  j.end_array().key("empty").begin_array().end_array().end_object();
  EXPECT_EQ(j.str(), R"({"rows":[{"x":1},{"x":2}],"empty":[]})");
}

TEST(JsonWriter, SeparatesArrayValuesWithCommas) {
  json_writer j;
  j.begin_array().value(1).value("a").null().value(false).end_array();
  EXPECT_EQ(j.str(), R"([1,"a",null,false])");
}

TEST(JsonWriter, EscapesQuotesBackslashesAndControlCharacters) {
  json_writer j;
  j.value(std::string_view("q\"b\\n\nt\t\x01", 9));
  EXPECT_EQ(j.str(), R"("q\"b\\n\nt\t\u0001")");
}

TEST(JsonWriter, KeepsUtf8AsIs) {
  json_writer j;
  j.value("µs");
  EXPECT_EQ(j.str(), "\"µs\"");
}

TEST(JsonWriter, WritesIntegersExactly) {
  json_writer j;
  j.begin_array()
      .value(std::numeric_limits<std::uint64_t>::max())
      .value(std::numeric_limits<std::int64_t>::min())
      .value(-3)
      .value(7u)
      .end_array();
  EXPECT_EQ(j.str(), "[18446744073709551615,-9223372036854775808,-3,7]");
}

TEST(JsonWriter, WritesDoublesWithSixSignificantDigits) {
  json_writer j;
  j.begin_array().value(0.1).value(4.5e7).value(1.0 / 3.0).end_array();
  EXPECT_EQ(j.str(), "[0.1,4.5e+07,0.333333]");
}

TEST(JsonWriter, WritesNonFiniteNumbersAsNull) {
  json_writer j;
  j.begin_array()
      .value(std::numeric_limits<double>::quiet_NaN())
      .value(std::numeric_limits<double>::infinity())
      .end_array();
  EXPECT_EQ(j.str(), "[null,null]");
}

TEST(JsonWriter, SavesTheDocumentWithATrailingNewlineCreatingFolders) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("bam_json_test_" + std::to_string(::getpid()));
  const auto path = dir / "sub" / "out.json";
  json_writer j;
  j.begin_object().field("ok", true).end_object();
  j.save(path.string());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "{\"ok\":true}\n");
  std::filesystem::remove_all(dir);
}

TEST(JsonWriter, SaveThrowsWhenTheFileCannotBeWritten) {
  json_writer j;
  j.begin_object().end_object();
  EXPECT_THROW(j.save("/proc/bam_cannot_write_here/out.json"), bam::error);
}

}  // namespace
