// The CPU reference's pull PageRank agrees with apps/pagerank.hpp's formula (a serial
// reference, and run_pagerank on the CPU executor) to rounding, pulling over the out-lists of
// a symmetric graph and over the transpose of a directed one.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/csr.hpp>

#include "apps/graph_cpu/pagerank.hpp"
#include "graph_cpu_support.hpp"

namespace bam::apps::testing {
namespace {

constexpr unsigned iterations = 20;

template <class Id>
std::vector<double> pull_ranks(graph_cpu::csr_view<Id> g, bool symmetric) {
  if (symmetric) {
    const graph_cpu::pagerank_result r = graph_cpu::pagerank(g, g.offsets, {});
    return {r.ranks.span().begin(), r.ranks.span().end()};
  }
  const graph_cpu::adjacency<Id> in = graph_cpu::transpose(g);
  const graph_cpu::pagerank_result r = graph_cpu::pagerank(in.view(), g.offsets, {});
  return {r.ranks.span().begin(), r.ranks.span().end()};
}

TEST(GraphCpuPagerank, RanksMatchTheSerialFormulaOnEveryTestGraph) {
  temp_dir dir;
  for (const auto& path : graph_cpu_test_graphs(dir.path())) {
    SCOPED_TRACE(path.string());
    const graph::csr reference = graph::read_csr(path);
    with_loaded(path, [&](auto g, bool symmetric) {
      const std::vector<double> ranks = pull_ranks(g, symmetric);
      const rank_error e = compare_ranks(ranks, reference_pagerank(reference, iterations, 0.85));
      EXPECT_LE(e.l1, rank_l1_tolerance);
      EXPECT_LE(e.max_abs, rank_max_tolerance);
      EXPECT_NEAR(std::accumulate(ranks.begin(), ranks.end(), 0.0), 1.0, 1e-9);
    });
  }
}

TEST(GraphCpuPagerank, RanksMatchRunPagerankOnTheCpuExecutor) {
  temp_dir dir;
  for (const auto& path :
       {make_bcsr(directed_forward(400, 1500, 7), input_format::bcsr, dir.path(), 8),
        make_generated(dir.path(), graph::graph_kind::kron, 11, 8, 4, 4)}) {
    SCOPED_TRACE(path.string());
    app_request request;
    request.app = app_request::kind::pagerank;
    request.iterations = iterations;
    const app_outcome gpu_app = run_app(path, {}, request);
    with_loaded(path, [&](auto g, bool symmetric) {
      const rank_error e = compare_ranks(pull_ranks(g, symmetric), gpu_app.pagerank.ranks);
      EXPECT_LE(e.l1, rank_l1_tolerance);
    });
  }
}

TEST(GraphCpuPagerank, TransposeHoldsEveryEdgeReversedInAscendingOrder) {
  temp_dir dir;
  const graph::csr reference = mixed_graph().to_csr();
  with_loaded(make_bcsr(mixed_graph(), input_format::bcsr, dir.path(), 4), [&](auto g, bool) {
    const auto t = graph_cpu::transpose(g);
    const auto view = t.view();
    std::vector<std::vector<std::uint64_t>> expected(reference.vertex_count());
    for (std::uint64_t u = 0; u < reference.vertex_count(); ++u) {
      for (std::uint64_t e = reference.offsets[u]; e < reference.offsets[u + 1]; ++e) {
        expected[reference.neighbors[e]].push_back(u);
      }
    }
    ASSERT_EQ(view.vertex_count(), reference.vertex_count());
    for (std::uint64_t v = 0; v < view.vertex_count(); ++v) {
      const auto list = view.neighbours_of(v);
      EXPECT_EQ(std::vector<std::uint64_t>(list.begin(), list.end()), expected[v]) << v;
    }
  });
}

TEST(GraphCpuPagerank, RefusesOutOffsetsOfAnotherGraph) {
  temp_dir dir;
  with_loaded(make_bcsr(star(10), input_format::bcsr, dir.path(), 8), [](auto g, bool) {
    EXPECT_THROW((void)graph_cpu::pagerank(g, g.offsets.first(5), {}), input_error);
    EXPECT_THROW((void)graph_cpu::pagerank(g, g.offsets, {.iterations = 0}), input_error);
  });
}

}  // namespace
}  // namespace bam::apps::testing
