// The CPU reference's direction-optimizing BFS gives a serial BFS's depths exactly, top-down
// only on directed graphs, with bottom-up steps on symmetric ones.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/bcsr.hpp>
#include <bam/graph/csr.hpp>

#include "apps/graph_cpu/bfs.hpp"
#include "apps/graph_file.hpp"
#include "graph/hubs.hpp"
#include "graph_cpu_support.hpp"

namespace bam::apps::testing {
namespace {

template <class Id>
void expect_reference_depths(graph_cpu::csr_view<Id> g, const graph::csr& reference,
                             const graph_cpu::bfs_options& options) {
  SCOPED_TRACE("from " + std::to_string(options.source));
  const graph_cpu::bfs_result r = graph_cpu::bfs(g, options);
  const std::vector<std::int32_t> expected = reference_bfs(reference, options.source);
  const std::span<const std::int32_t> depths = r.depths.span();
  ASSERT_EQ(std::vector<std::int32_t>(depths.begin(), depths.end()), expected);
  EXPECT_EQ(r.reached,
            static_cast<std::uint64_t>(std::count_if(expected.begin(), expected.end(),
                                                     [](std::int32_t d) { return d >= 0; })));
}

std::vector<std::uint64_t> some_sources(std::uint64_t n) {
  std::vector<std::uint64_t> sources;
  for (std::uint64_t v = 0; v < n; v += std::max<std::uint64_t>(1, n / 7)) sources.push_back(v);
  return sources;
}

TEST(GraphCpuBfs, DepthsEqualASerialBfsOnEveryTestGraph) {
  temp_dir dir;
  for (const auto& path : graph_cpu_test_graphs(dir.path())) {
    SCOPED_TRACE(path.string());
    const graph::csr reference = graph::read_csr(path);
    with_loaded(path, [&](auto g, bool symmetric) {
      for (const std::uint64_t s : some_sources(g.vertex_count())) {
        expect_reference_depths(g, reference, {.source = s, .direction_optimizing = symmetric});
      }
    });
  }
}

TEST(GraphCpuBfs, GoesBottomUpFromTheHubOfAPowerLawGraph) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::kron, 12, 16, 2, 4);
  const graph::csr reference = graph::read_csr(path);
  with_loaded(path, [&](auto g, bool symmetric) {
    ASSERT_TRUE(symmetric);
    const std::uint64_t hub = max_degree_vertex(g.offsets);
    const graph_cpu::bfs_result r = graph_cpu::bfs(g, {.source = hub});
    EXPECT_GT(r.bottom_up_steps, 0u);
    EXPECT_GT(r.top_down_steps, 0u);
    expect_reference_depths(g, reference, {.source = hub});
  });
}

TEST(GraphCpuBfs, BottomUpStepsAloneGiveTheSameDepthsOnSymmetricGraphs) {
  temp_dir dir;
  // An alpha this large sends every step bottom-up; a beta this small never holds it there,
  // so each step converts the frontier between bitmap and queue.
  for (const double beta : {1e-30, 18.0}) {
    for (const auto& path :
         graph_cpu_test_graphs(dir.path() / (beta < 1 ? "tiny-beta" : "beta-18"))) {
      SCOPED_TRACE(path.string());
      const graph::csr reference = graph::read_csr(path);
      with_loaded(path, [&](auto g, bool symmetric) {
        if (!symmetric) return;
        for (const std::uint64_t s : some_sources(g.vertex_count())) {
          const graph_cpu::bfs_options o{.source = s, .alpha = 1e30, .beta = beta};
          // An isolated source has no frontier edges to outweigh: its one step is top-down.
          EXPECT_EQ(graph_cpu::bfs(g, o).top_down_steps, g.degree(s) == 0 ? 1u : 0u);
          expect_reference_depths(g, reference, o);
        }
      });
    }
  }
}

TEST(GraphCpuBfs, HubsGiveTheSameDepthsAsEveryStepBottomUpOrNot) {
  temp_dir dir;
  for (const auto& path : graph_cpu_test_graphs(dir.path())) {
    SCOPED_TRACE(path.string());
    const graph::csr reference = graph::read_csr(path);
    // The file's own hubs where it has them, and three a vertex found from the lists, else each
    // vertex's last neighbour (any neighbour will do).
    const graph::hub_table file_hubs = graph::load_hubs(path);
    std::vector<std::vector<std::uint64_t>> tables;
    if (!file_hubs.empty()) {
      std::vector<std::uint64_t> three(reference.vertex_count() * 3);
      graph::fill_hubs(reference.offsets, reference.neighbors, three);
      tables = {file_hubs.ids, three};
    } else {
      std::vector<std::uint64_t> last(reference.vertex_count());
      for (std::uint64_t v = 0; v < last.size(); ++v) {
        last[v] = reference.degree(v) == 0 ? v : reference.neighbors[reference.offsets[v + 1] - 1];
      }
      tables = {last};
    }
    with_loaded(path, [&](auto g, bool symmetric) {
      if (!symmetric) return;
      for (const std::vector<std::uint64_t>& hubs : tables) {
        for (const std::uint64_t s : some_sources(g.vertex_count())) {
          expect_reference_depths(g, reference, {.source = s, .hubs = hubs});
          expect_reference_depths(g, reference, {.source = s, .alpha = 1e30, .hubs = hubs});
        }
      }
    });
  }
}

TEST(GraphCpuBfs, TopDownOnlyGivesTheSameDepthsOnAPowerLawGraph) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::kron, 12, 16, 2, 8);
  const graph::csr reference = graph::read_csr(path);
  with_loaded(path, [&](auto g, bool) {
    const std::uint64_t hub = max_degree_vertex(g.offsets);
    const graph_cpu::bfs_options o{.source = hub, .direction_optimizing = false};
    EXPECT_EQ(graph_cpu::bfs(g, o).bottom_up_steps, 0u);
    expect_reference_depths(g, reference, o);
  });
}

TEST(GraphCpuBfs, RefusesASourceNotBelowTheVertexCount) {
  temp_dir dir;
  with_loaded(make_bcsr(star(10), input_format::bcsr, dir.path(), 8), [](auto g, bool) {
    EXPECT_THROW((void)graph_cpu::bfs(g, {.source = 10}), input_error);
  });
}

}  // namespace
}  // namespace bam::apps::testing
