// The CPU reference's Afforest partitions the vertices as a serial union-find does, labels
// each component by its smallest vertex (as apps/cc.hpp does), and on a directed graph links
// the edges of the largest component's vertices too.

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include <bam/graph/csr.hpp>

#include "apps/graph_cpu/cc.hpp"
#include "graph_cpu_support.hpp"

namespace bam::apps::testing {
namespace {

/// Component labels by a serial union-find over every edge taken as undirected, each
/// component labelled by its smallest vertex.
std::vector<std::uint64_t> union_find_labels(const graph::csr& g) {
  const std::uint64_t n = g.vertex_count();
  std::vector<std::uint64_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](std::uint64_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  for (std::uint64_t u = 0; u < n; ++u) {
    for (std::uint64_t e = g.offsets[u]; e < g.offsets[u + 1]; ++e) {
      const std::uint64_t a = find(u);
      const std::uint64_t b = find(g.neighbors[e]);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  }
  std::vector<std::uint64_t> smallest(n, n);
  for (std::uint64_t v = 0; v < n; ++v) smallest[find(v)] = std::min(smallest[find(v)], v);
  std::vector<std::uint64_t> labels(n);
  for (std::uint64_t v = 0; v < n; ++v) labels[v] = smallest[find(v)];
  return labels;
}

template <class Id>
std::vector<std::uint64_t> afforest_labels(graph_cpu::csr_view<Id> g,
                                           const graph_cpu::cc_options& options) {
  const graph_cpu::cc_result<Id> r = graph_cpu::afforest(g, options);
  return {r.labels.span().begin(), r.labels.span().end()};
}

TEST(GraphCpuCc, LabelsEqualASerialUnionFindsOnEveryTestGraph) {
  temp_dir dir;
  for (const auto& path : graph_cpu_test_graphs(dir.path())) {
    SCOPED_TRACE(path.string());
    const graph::csr reference = graph::read_csr(path);
    with_loaded(path, [&](auto g, bool symmetric) {
      for (const std::uint64_t seed : {1u, 2u, 3u}) {
        EXPECT_EQ(afforest_labels(g, {.symmetric = symmetric, .seed = seed}),
                  union_find_labels(reference));
      }
    });
  }
}

TEST(GraphCpuCc, LabelsEqualTheGpuAppsReference) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::kron, 12, 4, 5, 4);
  with_loaded(path, [&](auto g, bool symmetric) {
    EXPECT_EQ(afforest_labels(g, {.symmetric = symmetric}), reference_cc(graph::read_csr(path)));
  });
}

TEST(GraphCpuCc, WithoutSamplingRoundsEveryEdgeIsLinkedInTheLastPhase) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::kron, 11, 8, 5, 8);
  with_loaded(path, [&](auto g, bool symmetric) {
    EXPECT_EQ(afforest_labels(g, {.symmetric = symmetric, .neighbour_rounds = 0}),
              union_find_labels(graph::read_csr(path)));
  });
}

// A hub whose first out-neighbours link it into the largest tree during sampling, and whose
// other out-edges are the only edges of their ends: skipping the hub's list, as is right on a
// symmetric graph, would leave those ends alone.
TEST(GraphCpuCc, ADirectedHubsOutEdgesJoinItsComponent) {
  edge_graph g{.name = "directed-hub", .n = 201, .edges = {}};
  for (std::uint64_t v = 1; v <= 200; ++v) g.edges.emplace_back(0, v);
  for (std::uint64_t v = 1; v <= 50; ++v) g.edges.emplace_back(v, 0);
  temp_dir dir;
  with_loaded(make_bcsr(g, input_format::bcsr, dir.path(), 4), [&](auto view, bool symmetric) {
    ASSERT_FALSE(symmetric);
    const graph_cpu::cc_result r = graph_cpu::afforest(view, {.symmetric = symmetric});
    const graph_cpu::component_summary s = graph_cpu::summarize_components(r.labels.span());
    EXPECT_EQ(s.components, 1u);
    EXPECT_EQ(s.largest, 201u);
  });
}

TEST(GraphCpuCc, SummaryCountsComponentsAndTheLargest) {
  const std::vector<std::uint32_t> labels{0, 0, 2, 0, 4, 2};
  const graph_cpu::component_summary s =
      graph_cpu::summarize_components(std::span<const std::uint32_t>(labels));
  EXPECT_EQ(s.components, 3u);
  EXPECT_EQ(s.largest, 3u);
}

}  // namespace
}  // namespace bam::apps::testing
