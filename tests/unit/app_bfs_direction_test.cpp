// Direction-optimizing BFS: it takes large levels bottom-up on symmetric graphs and reads fewer
// adjacency entries than top-down for the same depths; on a directed graph it falls back to
// top-down and says so; its switch parameters are checked.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/csr.hpp>

#include "app_support.hpp"
#include "apps/graph_file.hpp"

namespace bam::apps::testing {
namespace {

TEST(AppBfsDirection, ReadsFewerEntriesThanTopDownOnAKroneckerGraph) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::kron, 12, 16, 2, 4);
  const graph::csr g = graph::read_csr(path);
  const std::uint64_t source = max_degree_vertex(g.offsets);
  const app_outcome optimizing = run_bfs_as(path, source, bfs_default);
  const app_outcome top_down = run_bfs_as(path, source, bfs_top_down);
  ASSERT_EQ(optimizing.bfs.depths, reference_bfs(g, source));
  ASSERT_EQ(top_down.bfs.depths, optimizing.bfs.depths);
  EXPECT_EQ(optimizing.bfs.algorithm, bfs_algorithm::direction_optimizing);
  EXPECT_GT(optimizing.bfs.bottom_up_levels, 0u);
  EXPECT_LT(optimizing.bfs.bottom_up_levels, optimizing.bfs.level_vertices.size());
  // The large middle levels find most parents in a list's first entries.
  EXPECT_LT(optimizing.bfs.edges_read * 4, top_down.bfs.edges_read);
  EXPECT_EQ(top_down.bfs.edges_read, top_down.bfs.edges_traversed);
  // And the cache is asked for that many fewer bytes.
  EXPECT_LT(optimizing.stats.bytes_requested * 4, top_down.stats.bytes_requested);
}

TEST(AppBfsDirection, TheLineRuleLoadsFewerLinesThanTheEdgeRuleOnAKroneckerGraph) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::kron, 12, 16, 2, 8);
  const graph::csr g = graph::read_csr(path);
  const std::uint64_t source = max_degree_vertex(g.offsets);
  // 1 MiB of neighbours in 256 lines, through a cache of 1/8 of them (the app's default). One
  // worker, so that the loads do not depend on timing: at this size the rules differ in a
  // level of a few dozen lines, less than eight workers' runs vary by.
  const storage_shape shape{.cache_lines = 32, .workers = 1};
  const app_outcome lines = run_bfs_as(path, source, bfs_lines_rule, shape);
  const app_outcome edges = run_bfs_as(path, source, bfs_edges_rule, shape);
  const std::vector<std::int32_t> expected = reference_bfs(g, source);
  ASSERT_EQ(lines.bfs.depths, expected);
  ASSERT_EQ(edges.bfs.depths, expected);
  EXPECT_EQ(lines.bfs.switch_rule, bfs_switch_rule::lines);
  EXPECT_EQ(edges.bfs.switch_rule, bfs_switch_rule::edges);
  // Each level went the way that loads fewer lines, so the run loads fewer in all.
  EXPECT_LT(lines.stats.loads, edges.stats.loads);
  EXPECT_LT(lines.stats.bytes_moved, edges.stats.bytes_moved);
}

TEST(AppBfsDirection, AutoCountsLinesThroughACacheAndEdgesOverMemory) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::kron, 10, 16, 2, 4);
  const graph::csr g = graph::read_csr(path);
  const std::uint64_t source = max_degree_vertex(g.offsets);
  EXPECT_EQ(run_bfs_as(path, source, bfs_default).bfs.switch_rule, bfs_switch_rule::lines);
  const app_outcome memory = run_bfs_as(path, source, bfs_default, {.host_memory = true});
  EXPECT_EQ(memory.bfs.switch_rule, bfs_switch_rule::edges);
  EXPECT_EQ(memory.bfs.depths, reference_bfs(g, source));
  // Asked for over memory, the line rule counts 128-byte segments.
  const app_outcome segments = run_bfs_as(path, source, bfs_lines_rule, {.host_memory = true});
  EXPECT_EQ(segments.bfs.switch_rule, bfs_switch_rule::lines);
  EXPECT_EQ(segments.bfs.depths, reference_bfs(g, source));
}

TEST(AppBfsDirection, EveryLevelBottomUpMatchesTheReferenceOnAGiantComponentWithOddities) {
  temp_dir dir;
  const auto path = make_bcsr(giant_with_oddities(3000, 5), input_format::bcsr, dir.path(), 4);
  ASSERT_TRUE(graph::read_header(path).symmetric());
  const graph::csr g = graph::read_csr(path);
  bfs_variant without_early_claims = bfs_bottom_up;
  without_early_claims.early_claims = false;
  for (const std::uint64_t source : {max_degree_vertex(g.offsets), std::uint64_t{0}}) {
    const std::vector<std::int32_t> expected = reference_bfs(g, source);
    const app_outcome exact = run_bfs_as(path, source, without_early_claims);
    ASSERT_EQ(exact.bfs.depths, expected);
    EXPECT_EQ(exact.bfs.bottom_up_levels, exact.bfs.level_vertices.size());
    EXPECT_FALSE(exact.bfs.early_claims);
    EXPECT_EQ(exact.bfs.edges_read, reference_bottom_up_reads(g, expected));
    const app_outcome out = run_bfs_as(path, source, bfs_bottom_up);
    ASSERT_EQ(out.bfs.depths, expected);
    EXPECT_TRUE(out.bfs.early_claims);
    EXPECT_LE(out.bfs.edges_read, reference_bottom_up_reads(g, expected));
    EXPECT_GE(out.bfs.edges_read, reference_bottom_up_reads(g, expected, true));
  }
}

TEST(AppBfsDirection, EarlyClaimsSkipListsTheNextStepWouldReadAgain) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::kron, 12, 16, 2, 8);
  const graph::csr g = graph::read_csr(path);
  const std::uint64_t source = max_degree_vertex(g.offsets);
  const std::vector<std::int32_t> expected = reference_bfs(g, source);
  bfs_variant without = bfs_bottom_up;
  without.early_claims = false;
  // One worker runs a launch's threads one after another, so which vertices are claimed early
  // does not depend on timing.
  const storage_shape one{.workers = 1};
  const app_outcome off = run_bfs_as(path, source, without, one);
  const app_outcome on = run_bfs_as(path, source, bfs_bottom_up, one);
  ASSERT_EQ(on.bfs.depths, expected);
  ASSERT_EQ(off.bfs.depths, expected);
  std::uint64_t early = 0;
  for (const bfs_level& l : on.bfs.levels) early += l.early;
  EXPECT_GT(early, 0u);
  for (const bfs_level& l : off.bfs.levels) EXPECT_EQ(l.early, 0u);
  EXPECT_LT(on.bfs.edges_read, off.bfs.edges_read);
  EXPECT_LT(on.stats.bytes_requested, off.stats.bytes_requested);
  EXPECT_LE(on.stats.loads, off.stats.loads);
}

TEST(AppBfsDirection, FallsBackToTopDownOnADirectedGraph) {
  temp_dir dir;
  const auto path = make_bcsr(directed_forward(1200, 5000, 9), input_format::bcsr, dir.path(), 8);
  ASSERT_FALSE(graph::read_header(path).symmetric());
  const graph::csr g = graph::read_csr(path);
  const app_outcome out = run_bfs_as(path, 0, bfs_bottom_up);
  // Bottom-up would search out-lists for in-neighbours and miss vertices: top-down instead.
  EXPECT_EQ(out.bfs.depths, reference_bfs(g, 0));
  EXPECT_TRUE(out.bfs.fell_back);
  EXPECT_EQ(out.bfs.algorithm, bfs_algorithm::top_down);
  EXPECT_EQ(out.bfs.bottom_up_levels, 0u);
  EXPECT_EQ(out.bfs.edges_read, out.bfs.edges_traversed);
}

TEST(AppBfsDirection, TopDownAskedForNeverGoesBottomUp) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::urand, 10, 16, 2, 8);
  const app_outcome out = run_bfs_as(path, 3, bfs_top_down);
  EXPECT_FALSE(out.bfs.fell_back);
  EXPECT_EQ(out.bfs.algorithm, bfs_algorithm::top_down);
  EXPECT_EQ(out.bfs.bottom_up_levels, 0u);
}

TEST(AppBfsDirection, RejectsASwitchThatIsNotPositive) {
  temp_dir dir;
  const auto path = make_bcsr(star(100), input_format::bcsr, dir.path(), 8);
  EXPECT_THROW(
      (void)run_bfs_as(path, 0, {"zero alpha", bfs_algorithm::direction_optimizing, 0, 18}),
      input_error);
  EXPECT_THROW(
      (void)run_bfs_as(path, 0, {"negative beta", bfs_algorithm::direction_optimizing, 15, -1}),
      input_error);
}

}  // namespace
}  // namespace bam::apps::testing
