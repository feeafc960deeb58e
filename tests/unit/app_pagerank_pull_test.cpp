// PageRank by pull (each vertex sums over its in-list) agrees with the sequential reference of
// push's formula on every backend and warp width: over a symmetric graph's own lists, and over
// a directed graph's transpose (bam graph convert --transpose) with the graph's out-degrees.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/csr.hpp>

#include "app_support.hpp"

namespace bam::apps::testing {
namespace {

app_request pull(unsigned iterations) {
  app_request r;
  r.app = app_request::kind::pagerank;
  r.iterations = iterations;
  r.pagerank = pagerank_algorithm::pull;
  return r;
}

void expect_ranks(const std::vector<double>& ranks, const graph::csr& g, unsigned iterations) {
  const rank_error e = compare_ranks(ranks, reference_pagerank(g, iterations, 0.85));
  EXPECT_LE(e.l1, rank_l1_tolerance);
  EXPECT_LE(e.max_abs, rank_max_tolerance);
  EXPECT_NEAR(std::accumulate(ranks.begin(), ranks.end(), 0.0), 1.0, 1e-9);
}

// Backends and shapes: the cache (both modes, both line sizes, a cache much smaller than the
// graph), ids in host memory, tiling through a small buffer.
std::vector<storage_shape> shapes() {
  std::vector<storage_shape> all;
  all.push_back({});
  all.push_back({.mode = cache_mode::naive, .line_bytes = 512, .cache_lines = 16});
  all.push_back({.line_bytes = 512, .cache_lines = 8, .devices = 3});
  all.push_back({.host_memory = true});
  all.push_back({.host_memory = true, .tile_bytes = 4096});
  return all;
}

TEST(AppPagerankPull, MatchesTheReferenceOnSymmetricGraphsOnEveryBackend) {
  temp_dir dir;
  const std::vector<std::filesystem::path> paths = {
      make_generated(dir.path(), graph::graph_kind::kron, 10, 8, 3, 4),
      make_generated(dir.path(), graph::graph_kind::urand, 10, 8, 4, 8),
      make_bcsr(star(3000), input_format::bcsr, dir.path(), 8),
      make_bcsr(many_tiny(2000, 5), input_format::bcsr, dir.path(), 4)};
  for (const auto& path : paths) {
    const graph::csr g = graph::read_csr(path);
    for (const storage_shape& shape : shapes()) {
      SCOPED_TRACE(path.filename().string() + " on " + to_string(shape));
      const app_outcome out = run_app(path, shape, pull(10));
      EXPECT_EQ(out.pagerank.iterations, 10u);
      expect_ranks(out.pagerank.ranks, g, 10);
      EXPECT_EQ(out.pagerank.edges_traversed, 10 * g.edge_count());
    }
  }
}

TEST(AppPagerankPull, WarpSumsAgreeOnSoftwareWarpsOfEveryWidth) {
  // The lanes' partial sums meet in a butterfly of shuffles: widths 2 to 32, lists shorter and
  // longer than a warp (the star's hub spans many lines).
  temp_dir dir;
  const std::vector<std::filesystem::path> paths = {
      make_generated(dir.path(), graph::graph_kind::kron, 8, 8, 6, 8),
      make_bcsr(star(700), input_format::bcsr, dir.path(), 4)};
  for (const auto& path : paths) {
    const graph::csr g = graph::read_csr(path);
    for (const unsigned width : {2u, 8u, 32u}) {
      SCOPED_TRACE(path.filename().string() + ", warp width " + std::to_string(width));
      app_request r = pull(3);
      r.software_warp_width = width;
      expect_ranks(run_app(path, {}, r).pagerank.ranks, g, 3);
      expect_ranks(run_app(path, {.host_memory = true}, r).pagerank.ranks, g, 3);
    }
  }
}

TEST(AppPagerankPull, OverATransposeMatchesTheDirectedGraphsRanks) {
  // The transpose made by the converter from each input format (bel: a CSR transposed in
  // memory; el and mtx: the edges reversed before the build), its lists read, the out-degrees
  // from the graph itself. Dangling vertices (sinks) and a vertex with no in-edges included.
  temp_dir dir;
  for (const edge_graph& eg : {directed_forward(1500, 4000, 5), mixed_graph()}) {
    const auto forward = make_bcsr(eg, input_format::bcsr, dir.path(), 8);
    const graph::csr g = graph::read_csr(forward);
    for (const auto format :
         {input_format::bcsr, input_format::el, input_format::mtx, input_format::bel}) {
      const std::uint32_t id_bytes = format == input_format::bel ? 4 : 8;
      const auto in_lists = make_bcsr(eg, format, dir.path(), id_bytes, /*transpose=*/true);
      for (const storage_shape& shape : shapes()) {
        SCOPED_TRACE(eg.name + " transposed from " + to_string(format) + " on " + to_string(shape));
        app_request r = pull(20);
        r.pagerank_out_offsets = g.offsets;
        expect_ranks(run_app(in_lists, shape, r).pagerank.ranks, g, 20);
      }
    }
  }
}

TEST(AppPagerankPull, PullOverTheListsOfADirectedGraphIsNotPush) {
  // Reading out-lists as in-lists computes another thing: the test above would notice a driver
  // that ignored the transpose's out-degrees, and this one a pull that read nothing.
  temp_dir dir;
  const auto path = make_bcsr(directed_forward(500, 2000, 3), input_format::bcsr, dir.path(), 8);
  const graph::csr g = graph::read_csr(path);
  const rank_error e =
      compare_ranks(run_app(path, {}, pull(20)).pagerank.ranks, reference_pagerank(g, 20, 0.85));
  EXPECT_GT(e.l1, 1e-3);
}

TEST(AppPagerankPull, RejectsOutDegreesOfAGraphOfAnotherSize) {
  temp_dir dir;
  const auto path = make_bcsr(mixed_graph(), input_format::bcsr, dir.path(), 8);
  const std::vector<std::uint64_t> wrong = {0, 1, 2};
  app_request r = pull(3);
  r.pagerank_out_offsets = wrong;
  EXPECT_THROW((void)run_app(path, {}, r), input_error);
  // Out-degrees of another graph are for pull only.
  r.pagerank = pagerank_algorithm::push;
  r.pagerank_out_offsets = graph::read_csr(path).offsets;
  EXPECT_THROW((void)run_app(path, {}, r), input_error);
}

TEST(GraphTranspose, TransposingTwiceGivesTheGraphBack) {
  temp_dir dir;
  const edge_graph eg = directed_forward(800, 3000, 9);
  const graph::csr g = graph::read_csr(make_bcsr(eg, input_format::el, dir.path(), 8));
  const graph::csr t = graph::read_csr(make_bcsr(eg, input_format::el, dir.path(), 8, true));
  ASSERT_EQ(t.vertex_count(), g.vertex_count());
  ASSERT_EQ(t.edge_count(), g.edge_count());
  // Every edge u->v of g is v->u in t, as many times.
  std::vector<std::uint64_t> in_degree(g.vertex_count(), 0);
  for (const std::uint64_t v : g.neighbors) ++in_degree[v];
  for (std::uint64_t v = 0; v < t.vertex_count(); ++v) {
    ASSERT_EQ(t.offsets[v + 1] - t.offsets[v], in_degree[v]) << "vertex " << v;
    for (std::uint64_t e = t.offsets[v]; e < t.offsets[v + 1]; ++e) {
      const std::uint64_t u = t.neighbors[e];
      const auto first = g.neighbors.begin() + static_cast<std::ptrdiff_t>(g.offsets[u]);
      const auto last = g.neighbors.begin() + static_cast<std::ptrdiff_t>(g.offsets[u + 1]);
      EXPECT_NE(std::find(first, last, v), last) << u << "->" << v << " missing";
    }
  }
}

}  // namespace
}  // namespace bam::apps::testing
