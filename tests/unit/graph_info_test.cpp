// `bam graph info`'s figures on small hand-made graphs.

#include <gtest/gtest.h>

#include "graph/info.hpp"
#include "graph_test_support.hpp"

namespace bam::graph {
namespace {

using testing::make_graph;
using testing::temp_dir;

TEST(graph_info, counts_degrees_loops_and_isolated_vertices_of_a_directed_graph) {
  temp_dir dir;
  // 0 -> {1, 1, 2}, 1 -> {1}, 2 -> {}, 3 -> {}, 4 -> {0}: vertex 2 only has an in-edge, 3 none.
  write_csr(dir / "g.bcsr", make_graph(5, {{0, 1}, {0, 1}, {0, 2}, {1, 1}, {4, 0}}));
  const graph_summary s = summarize_graph(dir / "g.bcsr", 2);
  EXPECT_EQ(s.header.vertex_count, 5u);
  EXPECT_EQ(s.header.edge_count, 5u);
  EXPECT_EQ(s.min_degree, 0u);
  EXPECT_EQ(s.max_degree, 3u);
  EXPECT_EQ(s.max_degree_vertex, 0u);
  EXPECT_DOUBLE_EQ(s.mean_degree, 1.0);
  EXPECT_EQ(s.isolated_vertices, 1u);
  EXPECT_EQ(s.self_loops, 1u);
  EXPECT_EQ(s.file_bytes, std::filesystem::file_size(dir / "g.bcsr"));
}

TEST(graph_info, isolated_vertices_of_a_symmetric_graph_are_those_without_edges) {
  temp_dir dir;
  write_csr(dir / "g.bcsr", make_graph(4, {{0, 1}, {1, 0}, {3, 3}}));
  const graph_summary s = summarize_graph(dir / "g.bcsr");
  EXPECT_TRUE(s.header.symmetric());
  EXPECT_EQ(s.isolated_vertices, 1u);  // vertex 2
  EXPECT_EQ(s.self_loops, 1u);
}

TEST(graph_info, an_empty_graph_has_zero_figures) {
  temp_dir dir;
  write_csr(dir / "g.bcsr", csr{});
  const graph_summary s = summarize_graph(dir / "g.bcsr");
  EXPECT_EQ(s.max_degree, 0u);
  EXPECT_EQ(s.isolated_vertices, 0u);
  EXPECT_DOUBLE_EQ(s.mean_degree, 0.0);
}

}  // namespace
}  // namespace bam::graph
