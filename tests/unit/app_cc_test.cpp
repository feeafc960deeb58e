// Connected-component labels equal a sequential reference's exactly (labels are the smallest
// vertex of each component, so the partitions compare as vectors), on generated and hand-made
// graphs from every input format, directed ones taken as undirected.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <bam/graph/csr.hpp>

#include "app_support.hpp"

namespace bam::apps::testing {
namespace {

app_request cc() {
  app_request r;
  r.app = app_request::kind::cc;
  return r;
}

void expect_reference_labels(const std::filesystem::path& path, cc_algorithm algorithm,
                             const storage_shape& shape) {
  SCOPED_TRACE(path.filename().string() + " on " + to_string(shape) + ", " + to_string(algorithm));
  const graph::csr g = graph::read_csr(path);
  const graph::bcsr_header header = graph::read_header(path);
  app_request request = cc();
  request.cc = algorithm;
  const app_outcome out = run_app(path, shape, request);
  const std::vector<std::uint64_t> expected = reference_cc(g);
  ASSERT_EQ(out.cc.labels, expected);
  std::vector<std::uint64_t> sizes(g.vertex_count(), 0);
  for (const std::uint64_t l : expected) ++sizes[l];
  std::uint64_t components = 0;
  std::uint64_t largest = 0;
  for (const std::uint64_t s : sizes) {
    components += s != 0;
    largest = std::max(largest, s);
  }
  EXPECT_EQ(out.cc.components, components);
  EXPECT_EQ(out.cc.largest, largest);
  EXPECT_EQ(out.cc.edges_traversed, g.edge_count());
  const bool afforest = algorithm == cc_algorithm::afforest && header.symmetric();
  EXPECT_EQ(out.cc.algorithm, afforest ? cc_algorithm::afforest : cc_algorithm::union_find);
  EXPECT_EQ(out.cc.fell_back, algorithm == cc_algorithm::afforest && !header.symmetric());
  if (afforest) {
    // A sample stays within a cache line, or a 128-byte segment where nothing is cached; through
    // a cache a warp samples a line at a time.
    const bool cached = !shape.host_memory && shape.tile_bytes == 0;
    EXPECT_EQ(out.cc.sampled_by_units, cached);
    EXPECT_EQ(out.cc.sample_units.per_unit,
              (cached ? shape.line_bytes : aligned_read_bytes) / header.id_bytes);
    EXPECT_EQ(out.cc.sample_units.phase, 0u);
    EXPECT_EQ(out.cc.edges_read,
              reference_afforest_reads(g, 2, out.cc.giant_sample, out.cc.sample_units));
  } else {
    EXPECT_EQ(out.cc.edges_read, g.edge_count());
  }
  if (!shape.host_memory) {
    EXPECT_EQ(out.stats.bytes_requested, out.cc.edges_read * header.id_bytes);
  }
}

void expect_reference_labels(const std::filesystem::path& path, const storage_shape& shape = {}) {
  for (const cc_algorithm algorithm : cc_algorithms) {
    expect_reference_labels(path, algorithm, shape);
  }
}

TEST(AppCc, MatchesTheReferenceOnGeneratedGraphs) {
  temp_dir dir;
  for (const auto kind : {graph::graph_kind::kron, graph::graph_kind::urand}) {
    for (const std::uint32_t id_bytes : {4u, 8u}) {
      // Degree 1 leaves urand in many components, kron with many isolated vertices.
      expect_reference_labels(make_generated(dir.path(), kind, 10, 1, 5, id_bytes));
      expect_reference_labels(make_generated(dir.path(), kind, 10, 8, 5, id_bytes));
    }
  }
}

TEST(AppCc, MatchesTheReferenceOnHandMadeGraphsFromEveryFormat) {
  temp_dir dir;
  const std::vector<edge_graph> graphs = {mixed_graph(),      long_path(1500, 3),
                                          many_tiny(2000, 3), directed_forward(1500, 1200, 3),
                                          star(3000),         giant_with_oddities(2000, 3)};
  for (const edge_graph& eg : graphs) {
    for (const auto format :
         {input_format::bcsr, input_format::el, input_format::mtx, input_format::bel}) {
      const std::uint32_t id_bytes = format == input_format::mtx ? 4 : 8;
      const auto path = make_bcsr(eg, format, dir.path(), id_bytes);
      expect_reference_labels(path);
      // And the hand-made edges themselves give the same partition.
      EXPECT_EQ(reference_cc(eg.to_csr()), reference_cc(graph::read_csr(path)))
          << eg.name << " via " << to_string(format);
    }
  }
}

TEST(AppCc, TakesDirectedEdgesAsUndirected) {
  temp_dir dir;
  // 3 -> 1 and 2 -> 1 only: {1, 2, 3} is one component, labelled 1; 0 is alone.
  const edge_graph g{"inward", 4, {{3, 1}, {2, 1}}};
  const auto path = make_bcsr(g, input_format::bcsr, dir.path(), 8);
  const app_outcome out = run_app(path, {}, cc());
  EXPECT_EQ(out.cc.labels, (std::vector<std::uint64_t>{0, 1, 1, 1}));
  EXPECT_EQ(out.cc.components, 2u);
}

TEST(AppCc, LabelsEveryVertexOfAGraphWithoutEdgesByItself) {
  temp_dir dir;
  const edge_graph empty{"empty", 40, {}};
  const auto path = make_bcsr(empty, input_format::bcsr, dir.path(), 4);
  const app_outcome out = run_app(path, {}, cc());
  EXPECT_EQ(out.cc.components, 40u);
  for (std::uint64_t v = 0; v < 40; ++v) EXPECT_EQ(out.cc.labels[v], v);
}

}  // namespace
}  // namespace bam::apps::testing
