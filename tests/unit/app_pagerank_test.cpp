// PageRank agrees with a sequential reference to rounding (L1 distance <= 1e-9, largest
// difference <= 1e-12; the kernels' atomic adds sum in another order), on generated and
// hand-made graphs, symmetric or not, with dangling vertices.

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/csr.hpp>

#include "app_support.hpp"

namespace bam::apps::testing {
namespace {

app_request pagerank(unsigned iterations, double tolerance = 0) {
  app_request r;
  r.app = app_request::kind::pagerank;
  r.iterations = iterations;
  r.tolerance = tolerance;
  return r;
}

void expect_reference_ranks(const std::filesystem::path& path, unsigned iterations,
                            const storage_shape& shape = {}) {
  SCOPED_TRACE(path.filename().string() + " on " + to_string(shape));
  const graph::csr g = graph::read_csr(path);
  const app_outcome out = run_app(path, shape, pagerank(iterations));
  EXPECT_EQ(out.pagerank.iterations, iterations);
  const rank_error e = compare_ranks(out.pagerank.ranks, reference_pagerank(g, iterations, 0.85));
  EXPECT_LE(e.l1, rank_l1_tolerance);
  EXPECT_LE(e.max_abs, rank_max_tolerance);
  EXPECT_NEAR(std::accumulate(out.pagerank.ranks.begin(), out.pagerank.ranks.end(), 0.0), 1.0,
              1e-9);
  EXPECT_EQ(out.pagerank.edges_traversed, std::uint64_t{iterations} * g.edge_count());
}

TEST(AppPagerank, MatchesTheReferenceOnGeneratedGraphs) {
  temp_dir dir;
  for (const auto kind : {graph::graph_kind::kron, graph::graph_kind::urand}) {
    for (const std::uint32_t id_bytes : {4u, 8u}) {
      expect_reference_ranks(make_generated(dir.path(), kind, 10, 8, 9, id_bytes), 20);
    }
  }
}

TEST(AppPagerank, MatchesTheReferenceOnHandMadeGraphsFromEveryFormat) {
  temp_dir dir;
  const std::vector<edge_graph> graphs = {mixed_graph(), many_tiny(2000, 5),
                                          directed_forward(1500, 4000, 5), star(3000)};
  for (const edge_graph& eg : graphs) {
    for (const auto format :
         {input_format::bcsr, input_format::el, input_format::mtx, input_format::bel}) {
      const std::uint32_t id_bytes = format == input_format::bel ? 4 : 8;
      expect_reference_ranks(make_bcsr(eg, format, dir.path(), id_bytes), 20);
    }
  }
}

TEST(AppPagerank, StopsOnceTheChangeIsBelowTheTolerance) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::kron, 9, 8, 2, 8);
  const app_outcome out = run_app(path, {}, pagerank(500, 1e-8));
  EXPECT_LT(out.pagerank.iterations, 500u);
  EXPECT_LT(out.pagerank.last_change, 1e-8);
  // The same number of fixed iterations gives the same ranks.
  const rank_error e = compare_ranks(
      out.pagerank.ranks, reference_pagerank(graph::read_csr(path), out.pagerank.iterations, 0.85));
  EXPECT_LE(e.l1, rank_l1_tolerance);
}

TEST(AppPagerank, SpreadsTheRankOfAGraphWithoutEdgesEvenly) {
  temp_dir dir;
  const edge_graph empty{"empty", 8, {}};
  const app_outcome out =
      run_app(make_bcsr(empty, input_format::bcsr, dir.path(), 8), {}, pagerank(3));
  for (const double r : out.pagerank.ranks) EXPECT_DOUBLE_EQ(r, 1.0 / 8);
}

TEST(AppPagerank, RejectsZeroIterations) {
  temp_dir dir;
  const auto path = make_bcsr(mixed_graph(), input_format::bcsr, dir.path(), 8);
  EXPECT_THROW((void)run_app(path, {}, pagerank(0)), input_error);
}

}  // namespace
}  // namespace bam::apps::testing
