// Round trips: convert -> .bcsr -> export -> convert again gives the same graph, for every
// format, on graphs with isolated vertices, self loops, duplicates and many components.

#include <gtest/gtest.h>

#include <string>

#include "graph/convert.hpp"
#include "graph/formats.hpp"
#include "graph_test_support.hpp"

namespace bam::graph {
namespace {

using testing::contains;
using testing::input_error_of;
using testing::read_file;
using testing::temp_dir;
using testing::write_file;

// Many tiny components (pairs, a triangle, loops), one large one (a 300-vertex cycle with
// chords), isolated vertices in between, duplicates; the largest id has an edge so an edge
// list keeps the vertex count.
std::string mixed_edge_list(bool weighted) {
  std::string text = "# mixed test graph\n";
  std::uint64_t next_weight = 1;
  auto edge = [&](std::uint64_t u, std::uint64_t v) {
    text += std::to_string(u);
    text += ' ';
    text += std::to_string(v);
    if (weighted) {
      text += ' ';
      text += std::to_string(next_weight++ % 17);
      text += ".25";
    }
    text += '\n';
  };
  for (std::uint64_t p = 0; p < 200; p += 3) edge(p, p + 1);  // pairs; p + 2 isolated
  edge(300, 301);
  edge(301, 302);
  edge(302, 300);
  edge(303, 303);  // self loop
  edge(303, 303);  // twice
  edge(0, 1);      // duplicate
  for (std::uint64_t i = 0; i < 300; ++i) edge(400 + i, 400 + (i + 1) % 300);
  for (std::uint64_t i = 0; i < 300; i += 7) edge(400 + i, 400 + (i * 13) % 300);
  edge(999, 400);
  return text;
}

class graph_roundtrip : public ::testing::TestWithParam<graph_format> {};

const char* format_name(graph_format f) {
  switch (f) {
    case graph_format::el:
      return "el";
    case graph_format::mtx:
      return "mtx";
    case graph_format::bel:
      return "bel";
  }
  return "?";
}

std::string format_test_name(const ::testing::TestParamInfo<graph_format>& param) {
  return format_name(param.param);
}

TEST_P(graph_roundtrip, export_then_convert_gives_the_same_graph) {
  for (const bool weighted : {false, true}) {
    SCOPED_TRACE(weighted ? "weighted" : "unweighted");
    temp_dir dir;
    write_file(dir / "in.el", mixed_edge_list(weighted));
    convert_graph(dir / "in.el", dir / "first.bcsr", {});
    const csr first = read_csr(dir / "first.bcsr");
    ASSERT_EQ(first.vertex_count(), 1000u);
    ASSERT_EQ(first.weighted, weighted);

    const std::filesystem::path exported = dir / (std::string("out.") + format_name(GetParam()));
    // Weights such as 3.25 need the f32 .bel value type.
    export_graph(dir / "first.bcsr", exported, GetParam(), bel_value_type::f32);
    convert_graph(exported, dir / "second.bcsr", {.bel_values = bel_value_type::f32});
    EXPECT_EQ(read_csr(dir / "second.bcsr"), first);
    EXPECT_EQ(read_file(dir / "second.bcsr"), read_file(dir / "first.bcsr"));
  }
}

INSTANTIATE_TEST_SUITE_P(formats, graph_roundtrip,
                         ::testing::Values(graph_format::el, graph_format::mtx, graph_format::bel),
                         format_test_name);

TEST(graph_export, matrix_market_keeps_trailing_isolated_vertices) {
  temp_dir dir;
  write_file(dir / "in.mtx", "%%MatrixMarket matrix coordinate pattern general\n9 9 1\n1 2\n");
  convert_graph(dir / "in.mtx", dir / "g.bcsr", {});
  export_graph(dir / "g.bcsr", dir / "out.mtx", graph_format::mtx);
  convert_graph(dir / "out.mtx", dir / "again.bcsr", {});
  EXPECT_EQ(read_csr(dir / "again.bcsr").vertex_count(), 9u);
}

TEST(graph_export, edge_list_text_is_one_edge_per_line_in_file_order) {
  temp_dir dir;
  write_file(dir / "in.el", "2 0\n0 1\n0 0\n");
  convert_graph(dir / "in.el", dir / "g.bcsr", {});
  export_graph(dir / "g.bcsr", dir / "out.el", graph_format::el);
  EXPECT_EQ(read_file(dir / "out.el"), "0 0\n0 1\n2 0\n");
}

TEST(graph_export, bel_files_have_emogi_headers) {
  temp_dir dir;
  write_file(dir / "in.el", "0 1\n1 2\n");
  convert_graph(dir / "in.el", dir / "g.bcsr", {});
  export_graph(dir / "g.bcsr", dir / "out.bel", graph_format::bel);
  EXPECT_EQ(read_file(dir / "out.bel.col"), testing::u64_bytes({4, 0, 0, 1, 2, 2}));
  EXPECT_EQ(read_file(dir / "out.bel.dst"), testing::u64_bytes({2, 0, 1, 2}));
  EXPECT_FALSE(std::filesystem::exists(dir / "out.bel.val"));
}

TEST(graph_export, u32_bel_values_refuse_fractional_weights_and_leave_no_files) {
  temp_dir dir;
  write_file(dir / "in.el", "0 1 2.5\n");
  convert_graph(dir / "in.el", dir / "g.bcsr", {});
  const std::string message = input_error_of([&] {
    export_graph(dir / "g.bcsr", dir / "out.bel", graph_format::bel, bel_value_type::u32);
  });
  EXPECT_TRUE(contains(message, "2.5")) << message;
  EXPECT_EQ(dir.files(), (std::vector<std::string>{"g.bcsr", "in.el"}));
}

TEST(graph_export, integer_weights_round_trip_through_u32_bel_values) {
  temp_dir dir;
  write_file(dir / "in.el", "0 1 7\n1 0 4000000\n");
  convert_graph(dir / "in.el", dir / "g.bcsr", {});
  export_graph(dir / "g.bcsr", dir / "out.bel", graph_format::bel, bel_value_type::u32);
  convert_graph(dir / "out.bel", dir / "again.bcsr", {.bel_values = bel_value_type::u32});
  EXPECT_EQ(read_csr(dir / "again.bcsr"), read_csr(dir / "g.bcsr"));
}

TEST(graph_export, a_corrupt_input_leaves_no_output) {
  temp_dir dir;
  write_file(dir / "g.bcsr", "not a graph at all");
  const std::string message =
      input_error_of([&] { export_graph(dir / "g.bcsr", dir / "out.el", graph_format::el); });
  EXPECT_TRUE(contains(message, (dir / "g.bcsr").string())) << message;
  EXPECT_EQ(dir.files(), std::vector<std::string>{"g.bcsr"});
}

TEST(graph_convert, undirected_bel_input_gets_reverse_edges) {
  temp_dir dir;
  write_file(dir / "in.el", "0 1\n1 2\n");
  convert_graph(dir / "in.el", dir / "g.bcsr", {});
  export_graph(dir / "g.bcsr", dir / "g.bel", graph_format::bel);
  convert_graph(dir / "g.bel", dir / "u.bcsr", {.undirected = true});
  EXPECT_EQ(read_csr(dir / "u.bcsr"), testing::make_graph(3, {{0, 1}, {1, 0}, {1, 2}, {2, 1}}));
  EXPECT_TRUE(read_header(dir / "u.bcsr").symmetric());
}

TEST(graph_convert, an_existing_output_survives_a_failed_conversion) {
  temp_dir dir;
  write_file(dir / "out.bcsr", "previous");
  write_file(dir / "bad.el", "0 x\n");
  (void)input_error_of([&] { convert_graph(dir / "bad.el", dir / "out.bcsr", {}); });
  EXPECT_EQ(read_file(dir / "out.bcsr"), "previous");
}

}  // namespace
}  // namespace bam::graph
