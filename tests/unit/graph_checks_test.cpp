// Damaged or hand-edited .bcsr files meet clean errors: offsets that drop or jump past the
// file, flags the edges contradict; and converters that refuse to overwrite their input.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <bam/graph/bcsr.hpp>
#include <bam/graph/csr.hpp>

#include "graph/convert.hpp"
#include "graph/formats.hpp"
#include "graph/info.hpp"
#include "graph_test_support.hpp"

namespace bam::graph {
namespace {

using testing::contains;
using testing::input_error_of;
using testing::make_graph;
using testing::read_file;
using testing::temp_dir;
using testing::write_file;

// Rewrites `bytes` of the file at `at`.
void patch(const std::filesystem::path& path, std::uint64_t at, const void* bytes,
           std::size_t size) {
  std::string file = read_file(path);
  ASSERT_LE(at + size, file.size());
  std::memcpy(file.data() + at, bytes, size);
  write_file(path, file);
}

void set_offset(const std::filesystem::path& path, std::uint64_t v, std::uint64_t value) {
  const bcsr_header h = read_header(path);
  patch(path, h.offsets.offset + v * 8, &value, 8);
}

void add_flags(const std::filesystem::path& path, std::uint32_t flags) {
  bcsr_header h = read_header(path);
  h.flags |= flags;
  patch(path, offsetof(bcsr_header, flags), &h.flags, sizeof h.flags);
}

// A ring of 64 vertices each way: symmetric, sorted, simple.
csr ring(std::uint64_t n = 64) {
  csr g;
  g.offsets = {0};
  for (std::uint64_t v = 0; v < n; ++v) {
    std::vector<std::uint64_t> list = {(v + n - 1) % n, (v + 1) % n};
    std::sort(list.begin(), list.end());
    g.neighbors.insert(g.neighbors.end(), list.begin(), list.end());
    g.offsets.push_back(g.neighbors.size());
  }
  return g;
}

TEST(graph_checks, info_refuses_an_offset_that_jumps_past_the_file) {
  temp_dir dir;
  write_csr(dir / "g.bcsr", ring());
  set_offset(dir / "g.bcsr", 1, std::uint64_t{1} << 40);
  const std::string message = input_error_of([&] { (void)summarize_graph(dir / "g.bcsr", 2); });
  EXPECT_TRUE(contains(message, "offsets[2] = 4 is less than offsets[1] = 1099511627776"))
      << message;
}

TEST(graph_checks, export_refuses_an_offset_that_jumps_past_the_file_and_leaves_no_file) {
  temp_dir dir;
  write_csr(dir / "g.bcsr", ring());
  set_offset(dir / "g.bcsr", 1, std::uint64_t{1} << 40);
  for (const graph_format f : {graph_format::el, graph_format::mtx, graph_format::bel}) {
    const std::string message =
        input_error_of([&] { export_graph(dir / "g.bcsr", dir / "out.txt", f); });
    EXPECT_TRUE(contains(message, "is less than offsets[1]")) << message;
    EXPECT_EQ(dir.files(), std::vector<std::string>{"g.bcsr"});
  }
}

TEST(graph_checks, the_apps_reader_names_the_same_offset) {
  temp_dir dir;
  write_csr(dir / "g.bcsr", ring());
  set_offset(dir / "g.bcsr", 1, std::uint64_t{1} << 40);
  const std::string message = input_error_of([&] { (void)load_offsets(dir / "g.bcsr"); });
  EXPECT_TRUE(contains(message, "byte " + std::to_string(65536 + 16))) << message;
}

TEST(graph_checks, info_refuses_a_symmetric_flag_on_a_directed_graph_naming_an_edge) {
  temp_dir dir;
  write_csr(dir / "g.bcsr", make_graph(4, {{0, 1}, {1, 2}, {2, 1}, {3, 3}}));
  ASSERT_FALSE(read_header(dir / "g.bcsr").symmetric());
  add_flags(dir / "g.bcsr", bcsr_flags::symmetric);
  const std::string message = input_error_of([&] { (void)summarize_graph(dir / "g.bcsr"); });
  EXPECT_TRUE(contains(message, "symmetric flag is set")) << message;
  EXPECT_TRUE(contains(message, "edge 0 -> 1 has no reverse 1 -> 0")) << message;
}

TEST(graph_checks, info_counts_repeated_edges_when_it_checks_symmetry) {
  temp_dir dir;
  write_csr(dir / "g.bcsr", make_graph(3, {{0, 1}, {0, 1}, {1, 0}, {1, 2}, {2, 1}}));
  add_flags(dir / "g.bcsr", bcsr_flags::symmetric);
  const std::string message = input_error_of([&] { (void)summarize_graph(dir / "g.bcsr"); });
  EXPECT_TRUE(contains(message, "edge 0 -> 1 is stored 2 times but 1 -> 0 1")) << message;
}

TEST(graph_checks, info_says_whether_the_edges_are_symmetric_whatever_the_flag) {
  temp_dir dir;
  write_csr(dir / "sym.bcsr", ring());
  EXPECT_TRUE(summarize_graph(dir / "sym.bcsr").edges_symmetric);
  write_csr(dir / "dir.bcsr", make_graph(3, {{0, 1}, {1, 2}, {2, 0}}));
  EXPECT_FALSE(summarize_graph(dir / "dir.bcsr").edges_symmetric);
}

TEST(graph_checks, info_refuses_sorted_and_simple_flags_the_lists_contradict) {
  temp_dir dir;
  csr unsorted = make_graph(3, {{0, 2}, {0, 1}});
  std::swap(unsorted.neighbors[0], unsorted.neighbors[1]);  // 0 -> {2, 1}
  write_csr(dir / "u.bcsr", unsorted);
  ASSERT_FALSE(read_header(dir / "u.bcsr").sorted());
  add_flags(dir / "u.bcsr", bcsr_flags::sorted);
  EXPECT_TRUE(contains(input_error_of([&] { (void)summarize_graph(dir / "u.bcsr"); }),
                       "sorted flag is set, but the list of vertex 0"));

  write_csr(dir / "loop.bcsr", make_graph(2, {{0, 1}, {1, 1}}));
  add_flags(dir / "loop.bcsr", bcsr_flags::simple);
  EXPECT_TRUE(contains(input_error_of([&] { (void)summarize_graph(dir / "loop.bcsr"); }),
                       "vertex 1 has a self loop"));

  write_csr(dir / "twice.bcsr", make_graph(2, {{0, 1}, {0, 1}}));
  add_flags(dir / "twice.bcsr", bcsr_flags::simple);
  EXPECT_TRUE(contains(input_error_of([&] { (void)summarize_graph(dir / "twice.bcsr"); }),
                       "holds a neighbour twice"));
}

TEST(graph_checks, convert_refuses_to_write_over_its_input_by_any_name) {
  temp_dir dir;
  const std::string text = "0 1\n1 2\n";
  write_file(dir / "g.el", text);
  std::filesystem::create_directory(dir / "sub");
  std::filesystem::create_symlink(dir / "g.el", dir / "link.el");
  for (const std::filesystem::path& out :
       {dir / "g.el", dir / "sub" / ".." / "g.el", dir / "link.el"}) {
    const std::string message =
        input_error_of([&] { convert_graph(dir / "g.el", out, {.format = graph_format::el}); });
    EXPECT_TRUE(contains(message, "same file as input")) << message;
  }
  EXPECT_EQ(read_file(dir / "g.el"), text);
}

TEST(graph_checks, convert_refuses_to_write_over_an_emogi_input_file) {
  temp_dir dir;
  write_file(dir / "g.bel.col", testing::u64_bytes({3, 0, 0, 1, 1}));
  write_file(dir / "g.bel.dst", testing::u64_bytes({1, 0, 1}));
  const std::string message =
      input_error_of([&] { convert_graph(dir / "g.bel", dir / "g.bel.dst", {}); });
  EXPECT_TRUE(contains(message, "same file as input")) << message;
  EXPECT_EQ(read_file(dir / "g.bel.dst"), testing::u64_bytes({1, 0, 1}));
}

TEST(graph_checks, export_refuses_to_write_over_its_input) {
  temp_dir dir;
  write_csr(dir / "g.bcsr", ring());
  const std::string before = read_file(dir / "g.bcsr");
  EXPECT_TRUE(contains(
      input_error_of([&] { export_graph(dir / "g.bcsr", dir / "g.bcsr", graph_format::el); }),
      "same file as input"));
  EXPECT_EQ(read_file(dir / "g.bcsr"), before);
}

TEST(graph_checks, an_empty_edge_list_is_refused_like_an_empty_matrix_market_file) {
  temp_dir dir;
  write_file(dir / "e.el", "");
  write_file(dir / "e.mtx", "");
  EXPECT_TRUE(contains(input_error_of([&] { convert_graph(dir / "e.el", dir / "a.bcsr", {}); }),
                       "no edges"));
  EXPECT_TRUE(contains(input_error_of([&] { convert_graph(dir / "e.mtx", dir / "b.bcsr", {}); }),
                       "empty file"));
  EXPECT_EQ(dir.files(), (std::vector<std::string>{"e.el", "e.mtx"}));
}

TEST(graph_checks, a_matrix_market_size_line_of_zeros_is_the_way_to_an_empty_graph) {
  temp_dir dir;
  write_file(dir / "z.mtx", "%%MatrixMarket matrix coordinate pattern general\n0 0 0\n");
  convert_graph(dir / "z.mtx", dir / "z.bcsr", {});
  EXPECT_EQ(read_csr(dir / "z.bcsr"), csr{});
}

}  // namespace
}  // namespace bam::graph
