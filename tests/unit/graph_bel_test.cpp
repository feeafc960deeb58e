// EMOGI's .bel files: reading them, and the errors (with byte offsets) malformed ones give.

#include <gtest/gtest.h>

#include <bit>
#include <string>
#include <vector>

#include "graph/convert.hpp"
#include "graph/formats.hpp"
#include "graph_test_support.hpp"

namespace bam::graph {
namespace {

using testing::contains;
using testing::input_error_of;
using testing::make_graph;
using testing::temp_dir;
using testing::u64_bytes;
using testing::write_file;

// 4 vertices: 0 -> {1, 2}, 1 -> {}, 2 -> {2}, 3 -> {0}.
const std::string good_col = u64_bytes({5, 0, 0, 2, 2, 3, 4});
const std::string good_dst = u64_bytes({4, 0, 1, 2, 2, 0});

std::string u32_values(std::initializer_list<std::uint32_t> values) {
  std::string bytes = u64_bytes({values.size(), 0});
  for (const std::uint32_t v : values) bytes.append(reinterpret_cast<const char*>(&v), 4);
  return bytes;
}

TEST(graph_bel, col_and_dst_read_as_a_csr) {
  temp_dir dir;
  write_file(dir / "g.bel.col", good_col);
  write_file(dir / "g.bel.dst", good_dst);
  EXPECT_EQ(read_bel(dir / "g.bel", bel_value_type::u32),
            make_graph(4, {{0, 1}, {0, 2}, {2, 2}, {3, 0}}));
}

TEST(graph_bel, any_of_the_file_names_stands_for_the_pair) {
  temp_dir dir;
  write_file(dir / "g.bel.col", good_col);
  write_file(dir / "g.bel.dst", good_dst);
  EXPECT_EQ(read_bel(dir / "g.bel.col", bel_value_type::u32),
            read_bel(dir / "g.bel.dst", bel_value_type::u32));
}

TEST(graph_bel, u32_values_become_weights) {
  temp_dir dir;
  write_file(dir / "g.bel.col", good_col);
  write_file(dir / "g.bel.dst", good_dst);
  write_file(dir / "g.bel.val", u32_values({7, 8, 9, 10}));
  EXPECT_EQ(read_bel(dir / "g.bel", bel_value_type::u32),
            make_graph(4, {{0, 1}, {0, 2}, {2, 2}, {3, 0}}, {7, 8, 9, 10}));
}

TEST(graph_bel, f32_values_keep_their_bits) {
  temp_dir dir;
  write_file(dir / "g.bel.col", good_col);
  write_file(dir / "g.bel.dst", good_dst);
  write_file(dir / "g.bel.val",
             u32_values({std::bit_cast<std::uint32_t>(0.5f), std::bit_cast<std::uint32_t>(-1.5f),
                         std::bit_cast<std::uint32_t>(3.0f), std::bit_cast<std::uint32_t>(1e9f)}));
  EXPECT_EQ(read_bel(dir / "g.bel", bel_value_type::f32),
            make_graph(4, {{0, 1}, {0, 2}, {2, 2}, {3, 0}}, {0.5f, -1.5f, 3.0f, 1e9f}));
}

struct malformed_bel {
  const char* label;
  std::string col;
  std::string dst;
  std::string val;    // empty: no .val file
  const char* file;   // which file the message must name
  const char* where;  // "byte N"
  const char* problem;
};

void PrintTo(const malformed_bel& c, std::ostream* out) { *out << c.label; }

class graph_malformed_bel : public ::testing::TestWithParam<malformed_bel> {};

TEST_P(graph_malformed_bel, error_names_file_and_byte_and_leaves_no_output) {
  const malformed_bel& c = GetParam();
  temp_dir dir;
  write_file(dir / "g.bel.col", c.col);
  write_file(dir / "g.bel.dst", c.dst);
  if (!c.val.empty()) write_file(dir / "g.bel.val", c.val);
  const std::string message =
      input_error_of([&] { convert_graph(dir / "g.bel", dir / "out.bcsr", {}); });
  EXPECT_TRUE(contains(message, (dir / c.file).string() + ": " + c.where + ": ")) << message;
  EXPECT_TRUE(contains(message, c.problem)) << message;
  for (const std::string& name : dir.files()) EXPECT_EQ(name.find("out"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    cases, graph_malformed_bel,
    ::testing::Values(malformed_bel{"col header cut", std::string("\x05\0\0", 3), good_dst, "",
                                    "g.bel.col", "byte 3", "inside the 16-byte header"},
                      malformed_bel{"col truncated", good_col.substr(0, 40), good_dst, "",
                                    "g.bel.col", "byte 40", "truncated"},
                      malformed_bel{"col trailing bytes", good_col + "xyz", good_dst, "",
                                    "g.bel.col", "byte 56", "3 bytes past"},
                      malformed_bel{"zero offset count", u64_bytes({0, 0}), good_dst, "",
                                    "g.bel.col", "byte 0", "offset count is 0"},
                      malformed_bel{"first offset not zero", u64_bytes({5, 0, 1, 2, 2, 3, 4}),
                                    good_dst, "", "g.bel.col", "byte 16", "first offset is not 0"},
                      malformed_bel{"offsets decrease", u64_bytes({5, 0, 0, 3, 2, 3, 4}), good_dst,
                                    "", "g.bel.col", "byte 32", "less than the one before"},
                      malformed_bel{"last offset is not m", u64_bytes({5, 0, 0, 2, 2, 3, 3}),
                                    good_dst, "", "g.bel.col", "byte 48", "holds 4 neighbour ids"},
                      malformed_bel{"dst truncated", good_col, good_dst.substr(0, 44), "",
                                    "g.bel.dst", "byte 44", "truncated"},
                      malformed_bel{"id past n", good_col, u64_bytes({4, 0, 1, 2, 4, 0}), "",
                                    "g.bel.dst", "byte 32",
                                    "vertex id 4 is not below the vertex count 4"},
                      malformed_bel{"val count wrong", good_col, good_dst, u32_values({1, 2, 3}),
                                    "g.bel.val", "byte 0", "3 values for 4 edges"},
                      malformed_bel{"val truncated", good_col, good_dst,
                                    u32_values({1, 2, 3, 4}).substr(0, 30), "g.bel.val", "byte 30",
                                    "truncated"}));

TEST(graph_bel, a_missing_dst_file_is_named) {
  temp_dir dir;
  write_file(dir / "g.bel.col", good_col);
  const std::string message =
      input_error_of([&] { convert_graph(dir / "g.bel", dir / "out.bcsr", {}); });
  EXPECT_TRUE(contains(message, (dir / "g.bel.dst").string())) << message;
}

}  // namespace
}  // namespace bam::graph
