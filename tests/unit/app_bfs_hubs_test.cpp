// BFS with hubs (bfs_options::hubs): bottom-up steps look each vertex's hubs up before its
// list. The depths stay exact whatever neighbours a table names; on a Kronecker graph far fewer
// lines are loaded, and on a uniform random one a second hub loads fewer than one; the entries
// read match a sequential model of the rule.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/bcsr.hpp>
#include <bam/graph/csr.hpp>

#include "app_support.hpp"
#include "apps/graph_file.hpp"
#include "graph/hubs.hpp"

namespace bam::apps::testing {
namespace {

// Entries every-level-bottom-up BFS with k hubs a vertex and without early claims reads on a
// CPU thread, from the true depths: at level d, each vertex not reached before it, with more
// than k entries, none of whose hubs is at d - 1, reads its list up to its first neighbour at
// d - 1, or all.
std::uint64_t hub_bottom_up_reads(const graph::csr& g, const std::vector<std::int32_t>& depths,
                                  const std::vector<std::uint64_t>& hubs) {
  const std::uint64_t k = hubs.size() / g.vertex_count();
  std::int32_t deepest = 0;
  for (const std::int32_t d : depths) deepest = std::max(deepest, d);
  std::uint64_t reads = 0;
  for (std::int32_t d = 1; d <= deepest + 1; ++d) {
    for (std::uint64_t v = 0; v < g.vertex_count(); ++v) {
      const bool waiting = depths[v] == unreached || depths[v] >= d;
      bool hub_at = false;
      for (std::uint64_t j = 0; j < k; ++j) hub_at |= depths[hubs[v * k + j]] == d - 1;
      if (!waiting || g.degree(v) <= k || hub_at) continue;
      for (std::uint64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
        ++reads;
        if (depths[g.neighbors[e]] == d - 1) break;
      }
    }
  }
  return reads;
}

// Each vertex's first or last neighbour (itself when it has none): a neighbour, rarely the hub,
// which is all bfs_options::hubs asks of a table of one a vertex.
std::vector<std::uint64_t> end_neighbours(const graph::csr& g, bool last) {
  std::vector<std::uint64_t> table(g.vertex_count());
  for (std::uint64_t v = 0; v < g.vertex_count(); ++v) {
    table[v] = g.degree(v) == 0 ? v : g.neighbors[last ? g.offsets[v + 1] - 1 : g.offsets[v]];
  }
  return table;
}

// Two a vertex: its last and first neighbours, itself for the second when they are the same (or
// for both when it has none): two distinct neighbours, or all of a list of two or fewer
// distinct ones, which is all bfs_options::hubs asks of a table of two a vertex.
std::vector<std::uint64_t> both_ends(const graph::csr& g) {
  std::vector<std::uint64_t> table;
  for (std::uint64_t v = 0; v < g.vertex_count(); ++v) {
    const std::uint64_t a = g.degree(v) == 0 ? v : g.neighbors[g.offsets[v + 1] - 1];
    const std::uint64_t b = g.degree(v) == 0 ? v : g.neighbors[g.offsets[v]];
    table.push_back(a);
    table.push_back(b == a ? v : b);
  }
  return table;
}

TEST(AppBfsHubs, LoadsFarFewerLinesOnAKroneckerGraph) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::kron, 12, 16, 2, 8);
  ASSERT_TRUE(graph::read_header(path).has_hubs());
  const graph::csr g = graph::read_csr(path);
  const std::uint64_t source = max_degree_vertex(g.offsets);
  // One worker: the loads do not depend on timing (as the line rule's test).
  const storage_shape shape{.cache_lines = 32, .workers = 1};
  const app_outcome plain = run_bfs_as(path, source, bfs_default, shape);
  const app_outcome hubs = run_bfs_as(path, source, bfs_hubs, shape);
  const std::vector<std::int32_t> expected = reference_bfs(g, source);
  ASSERT_EQ(plain.bfs.depths, expected);
  ASSERT_EQ(hubs.bfs.depths, expected);
  EXPECT_FALSE(plain.bfs.hubs);
  EXPECT_EQ(plain.bfs.hub_found, 0u);
  EXPECT_TRUE(hubs.bfs.hubs);
  std::uint64_t found = 0;
  for (const bfs_level& l : hubs.bfs.levels) found += l.hub_found;
  EXPECT_EQ(found, hubs.bfs.hub_found);
  // Most vertices of the large level hang off a hub on the frontier.
  EXPECT_GT(hubs.bfs.hub_found * 2, hubs.bfs.reached);
  // The line rule weighs lines, not entries: with hubs it may take a level bottom-up that
  // reads more entries in fewer lines.
  EXPECT_LT(hubs.stats.loads * 2, plain.stats.loads);
  EXPECT_LT(hubs.stats.bytes_moved * 2, plain.stats.bytes_moved);
}

TEST(AppBfsHubs, ReadsWhatTheSequentialModelReadsEveryLevelBottomUp) {
  temp_dir dir;
  for (const auto& path :
       {make_generated(dir.path(), graph::graph_kind::kron, 11, 8, 5, 4),
        make_bcsr(giant_with_oddities(3000, 5), input_format::bcsr, dir.path(), 8)}) {
    const graph::csr g = graph::read_csr(path);
    bfs_variant exact = bfs_bottom_up_hubs;
    exact.early_claims = false;
    for (const std::uint64_t k : {1, 2, 3}) {
      std::vector<std::uint64_t> hubs(g.vertex_count() * k);
      graph::fill_hubs(g.offsets, g.neighbors, hubs);
      for (const std::uint64_t source : {max_degree_vertex(g.offsets), std::uint64_t{1}}) {
        const std::vector<std::int32_t> expected = reference_bfs(g, source);
        const app_outcome out = run_bfs_as(path, source, exact, {}, hubs);
        ASSERT_EQ(out.bfs.depths, expected) << path << " k " << k;
        EXPECT_EQ(out.bfs.bottom_up_levels, out.bfs.level_vertices.size());
        EXPECT_EQ(out.bfs.edges_read, hub_bottom_up_reads(g, expected, hubs)) << path << " " << k;
        EXPECT_LT(out.bfs.edges_read, reference_bottom_up_reads(g, expected)) << path;
      }
    }
  }
}

TEST(AppBfsHubs, AnyNeighbourAsHubGivesTheSameDepthsOnEveryStorage) {
  temp_dir dir;
  const auto path = make_bcsr(giant_with_oddities(2500, 11), input_format::bcsr, dir.path(), 4);
  const graph::csr g = graph::read_csr(path);
  const std::vector<std::uint64_t> tables[] = {end_neighbours(g, false), end_neighbours(g, true),
                                               both_ends(g)};
  const storage_shape shapes[] = {
      {}, {.line_bytes = 512, .cache_lines = 16}, {.host_memory = true}, {.tile_bytes = 1024}};
  for (const std::uint64_t source : {max_degree_vertex(g.offsets), std::uint64_t{7}}) {
    const std::vector<std::int32_t> expected = reference_bfs(g, source);
    for (const storage_shape& shape : shapes) {
      for (const bfs_variant& variant : {bfs_hubs, bfs_bottom_up_hubs}) {
        for (const std::vector<std::uint64_t>& table : tables) {
          EXPECT_EQ(run_bfs_as(path, source, variant, shape, table).bfs.depths, expected)
              << to_string(shape) << " " << variant.name;
        }
      }
    }
  }
}

TEST(AppBfsHubs, SoftwareWarpsFindTheSameDepths) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::kron, 10, 8, 4, 8);
  const graph::csr g = graph::read_csr(path);
  const std::uint64_t source = max_degree_vertex(g.offsets);
  for (const unsigned width : {4u, 32u}) {
    for (const bfs_variant& variant : {bfs_hubs, bfs_bottom_up_hubs}) {
      app_request r;
      r.app = app_request::kind::bfs;
      r.source = source;
      variant.apply(r);
      r.software_warp_width = width;
      const app_outcome out = run_app(path, {}, r);
      EXPECT_EQ(out.bfs.depths, reference_bfs(g, source)) << width << " " << variant.name;
      EXPECT_GT(out.bfs.hub_found, 0u);
    }
  }
}

TEST(AppBfsHubs, ADirectedGraphIgnoresThemAndAWrongSizedTableIsRefused) {
  temp_dir dir;
  const auto directed =
      make_bcsr(directed_forward(600, 2000, 3), input_format::bcsr, dir.path(), 8);
  const graph::csr d = graph::read_csr(directed);
  const std::vector<std::uint64_t> table = end_neighbours(d, true);
  const app_outcome out = run_bfs_as(directed, 0, bfs_hubs, {}, table);
  EXPECT_EQ(out.bfs.depths, reference_bfs(d, 0));
  EXPECT_FALSE(out.bfs.hubs);
  EXPECT_TRUE(out.bfs.fell_back);

  const auto path = make_bcsr(star(100), input_format::bcsr, dir.path(), 8);
  const std::vector<std::uint64_t> short_table(99, 0);
  EXPECT_THROW((void)run_bfs_as(path, 0, bfs_hubs, {}, short_table), input_error);
  const std::vector<std::uint64_t> nine_a_vertex(900, 0);
  EXPECT_THROW((void)run_bfs_as(path, 0, bfs_hubs, {}, nine_a_vertex), input_error);
}

TEST(AppBfsHubs, ASecondHubLoadsFewerLinesOnAUniformRandomGraph) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::urand, 13, 8, 3, 8);
  const graph::csr g = graph::read_csr(path);
  graph::hub_table two{.per_vertex = 2, .ids = std::vector<std::uint64_t>(g.vertex_count() * 2)};
  graph::fill_hubs(g.offsets, g.neighbors, two.ids);
  const std::vector<std::uint64_t> one = two.first(1).ids;
  const std::uint64_t source = max_degree_vertex(g.offsets);
  const storage_shape shape{.cache_lines = 32, .workers = 1};
  const app_outcome by_one = run_bfs_as(path, source, bfs_hubs, shape, one);
  const app_outcome by_two = run_bfs_as(path, source, bfs_hubs, shape, two.ids);
  const std::vector<std::int32_t> expected = reference_bfs(g, source);
  ASSERT_EQ(by_one.bfs.depths, expected);
  ASSERT_EQ(by_two.bfs.depths, expected);
  EXPECT_GT(by_two.bfs.hub_found, by_one.bfs.hub_found);
  EXPECT_LT(by_two.bfs.edges_read, by_one.bfs.edges_read);
  EXPECT_LT(by_two.stats.loads, by_one.stats.loads);
}

}  // namespace
}  // namespace bam::apps::testing
