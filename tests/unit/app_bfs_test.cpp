// BFS depths equal a sequential reference's exactly, on generated and hand-made graphs read
// from every input format.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/csr.hpp>

#include "app_support.hpp"
#include "apps/graph_file.hpp"

namespace bam::apps::testing {
namespace {

app_request bfs_from(std::uint64_t source) {
  app_request r;
  r.app = app_request::kind::bfs;
  r.source = source;
  return r;
}

// Each level is expanded from the frontier list (divisor 0), by a scan in vertex order (a
// divisor past n), or as the default divisor picks.
constexpr std::uint64_t list_only = 0;
constexpr std::uint64_t scan_only = ~std::uint64_t{0};
constexpr std::uint64_t by_size = bfs_options{}.scan_divisor;

// The per-level record adds up to the run's figures, the rule that ran is the one asked for
// (auto: lines through a cache), and the line rule's counts are exactly what each level would
// load either way.
void expect_consistent_levels(const graph::csr& g, std::uint32_t id_bytes,
                              const std::vector<std::int32_t>& expected, const storage_shape& shape,
                              const bfs_variant& variant, const app_outcome& out) {
  const bfs_result& r = out.bfs;
  ASSERT_EQ(r.levels.size(), r.level_vertices.size());
  std::uint64_t read = 0;
  std::uint64_t bottom_up = 0;
  std::uint64_t scanned = 0;
  std::uint64_t loads = 0;
  for (std::size_t i = 0; i < r.levels.size(); ++i) {
    EXPECT_EQ(r.levels[i].frontier, r.level_vertices[i]);
    EXPECT_EQ(r.levels[i].found, i + 1 < r.levels.size() ? r.level_vertices[i + 1] : 0u);
    read += r.levels[i].edges_read;
    bottom_up += r.levels[i].direction == bfs_direction::bottom_up ? 1 : 0;
    scanned += r.levels[i].direction == bfs_direction::scanned ? 1 : 0;
    loads += r.levels[i].loads;
  }
  EXPECT_EQ(read, r.edges_read);
  EXPECT_EQ(bottom_up, r.bottom_up_levels);
  EXPECT_EQ(scanned, r.scanned_levels);
  const bool cached = !shape.host_memory && shape.tile_bytes == 0;
  EXPECT_EQ(loads, cached ? out.stats.loads : 0u);
  EXPECT_EQ(r.switch_rule, resolve(variant.rule, cached));
  if (r.algorithm != bfs_algorithm::direction_optimizing ||
      r.switch_rule != bfs_switch_rule::lines) {
    return;
  }
  // The neighbour section starts on a 64 KiB boundary, so units start at entry 0.
  const std::uint64_t unit_bytes = cached ? shape.line_bytes : aligned_read_bytes;
  const std::vector<level_units> units = reference_level_units(g, expected, unit_bytes / id_bytes);
  ASSERT_EQ(units.size(), r.levels.size());
  for (std::size_t i = 0; i < units.size(); ++i) {
    SCOPED_TRACE("level " + std::to_string(i + 1));
    EXPECT_EQ(r.levels[i].top_down_units, units[i].top_down);
    if (r.hubs) {
      // A level the hub probe counted records the lists left after hubs: fewer.
      EXPECT_LE(r.levels[i].bottom_up_units, units[i].bottom_up);
    } else if (r.early_claims) {
      EXPECT_LE(r.levels[i].bottom_up_units, units[i].bottom_up);
      EXPECT_GE(r.levels[i].bottom_up_units, units[i].bottom_up_least);
    } else {
      EXPECT_EQ(r.levels[i].bottom_up_units, units[i].bottom_up);
    }
    EXPECT_EQ(r.levels[i].direction == bfs_direction::bottom_up,
              r.levels[i].bottom_up_units < r.levels[i].top_down_units);
  }
}

// Runs BFS from `source` on `path` and checks depths, counts and the entries read against the
// reference.
void expect_reference_depths(const std::filesystem::path& path, std::uint64_t source,
                             const storage_shape& shape, std::uint64_t divisor,
                             const bfs_variant& variant) {
  SCOPED_TRACE(path.filename().string() + " from " + std::to_string(source) + " on " +
               to_string(shape) + ", " + variant.name);
  const graph::csr g = graph::read_csr(path);
  const graph::bcsr_header header = graph::read_header(path);
  app_request request = bfs_from(source);
  request.bfs_scan_divisor = divisor;
  variant.apply(request);
  const app_outcome out = run_app(path, shape, request);
  const std::vector<std::int32_t> expected = reference_bfs(g, source);
  ASSERT_EQ(out.bfs.depths, expected);
  std::uint64_t reached = 0;
  std::uint64_t degrees = 0;
  for (std::uint64_t v = 0; v < g.vertex_count(); ++v) {
    if (expected[v] < 0) continue;
    ++reached;
    degrees += g.degree(v);
  }
  EXPECT_EQ(out.bfs.reached, reached);
  EXPECT_EQ(out.bfs.edges_traversed, degrees);
  std::uint64_t in_levels = 0;
  for (const std::uint64_t k : out.bfs.level_vertices) in_levels += k;
  EXPECT_EQ(in_levels, reached);
  const bool optimizing = variant.algorithm == bfs_algorithm::direction_optimizing;
  EXPECT_EQ(out.bfs.fell_back, optimizing && !header.symmetric());
  if (!optimizing || !header.symmetric()) {
    EXPECT_EQ(out.bfs.algorithm, bfs_algorithm::top_down);
    EXPECT_EQ(out.bfs.bottom_up_levels, 0u);
    // Every reached list is read once, whole.
    EXPECT_EQ(out.bfs.edges_read, degrees);
  } else {
    EXPECT_EQ(out.bfs.algorithm, bfs_algorithm::direction_optimizing);
  }
  if (optimizing && header.symmetric() && variant.alpha == always) {
    EXPECT_EQ(out.bfs.bottom_up_levels, out.bfs.level_vertices.size());
    // Early claims skip the lists of some vertices at their own level, hubs more.
    EXPECT_LE(out.bfs.edges_read, reference_bottom_up_reads(g, expected));
    if (!out.bfs.hubs) {
      EXPECT_GE(out.bfs.edges_read, reference_bottom_up_reads(g, expected, true));
    }
  } else if (out.bfs.bottom_up_levels == 0 && divisor == list_only) {
    EXPECT_EQ(out.bfs.scanned_levels, 0u);
  } else if (out.bfs.bottom_up_levels == 0 && divisor == scan_only) {
    EXPECT_EQ(out.bfs.scanned_levels, out.bfs.level_vertices.size());
  }
  if (!shape.host_memory) {
    // The entries counted are the entries the cache was asked for.
    EXPECT_EQ(out.stats.bytes_requested, out.bfs.edges_read * header.id_bytes);
  }
  expect_consistent_levels(g, header.id_bytes, expected, shape, variant, out);
}

// The same with every algorithm and every top-down expansion strategy.
void expect_reference_depths(const std::filesystem::path& path, std::uint64_t source,
                             const storage_shape& shape = {}) {
  for (const bfs_variant& variant : bfs_variants) {
    for (const std::uint64_t divisor : {by_size, list_only, scan_only}) {
      if (variant.alpha == always && divisor != by_size) continue;  // no level is top-down
      SCOPED_TRACE("scan divisor " + std::to_string(divisor));
      expect_reference_depths(path, source, shape, divisor, variant);
    }
  }
}

TEST(AppBfs, MatchesTheReferenceOnGeneratedGraphs) {
  temp_dir dir;
  for (const auto kind : {graph::graph_kind::kron, graph::graph_kind::urand}) {
    for (const std::uint32_t id_bytes : {4u, 8u}) {
      const auto path = make_generated(dir.path(), kind, 10, 8, 3, id_bytes);
      const graph_file g = graph_file::open(path);
      expect_reference_depths(path, max_degree_vertex(g.offset_span()));
      expect_reference_depths(path, 0);
      expect_reference_depths(path, 777);
    }
  }
}

TEST(AppBfs, MatchesTheReferenceOnHandMadeGraphsFromEveryFormat) {
  temp_dir dir;
  const std::vector<edge_graph> graphs = {mixed_graph(),      long_path(1500, 7),
                                          many_tiny(2000, 7), directed_forward(1500, 4000, 7),
                                          star(3000),         giant_with_oddities(2000, 7)};
  for (const edge_graph& eg : graphs) {
    const graph::csr expected_graph = eg.to_csr();
    for (const auto format :
         {input_format::bcsr, input_format::el, input_format::mtx, input_format::bel}) {
      const std::uint32_t id_bytes = format == input_format::el ? 4 : 8;
      const auto path = make_bcsr(eg, format, dir.path(), id_bytes);
      const graph::bcsr_header h = graph::read_header(path);
      ASSERT_EQ(h.vertex_count, eg.n) << eg.name << " via " << to_string(format);
      ASSERT_EQ(h.edge_count, eg.edges.size()) << eg.name << " via " << to_string(format);
      for (const std::uint64_t source : {std::uint64_t{0}, eg.n / 2, eg.n - 1}) {
        expect_reference_depths(path, source);
        // The file's graph is the hand-made one: same depths from the edges as written.
        EXPECT_EQ(reference_bfs(expected_graph, source),
                  reference_bfs(graph::read_csr(path), source));
      }
    }
  }
}

// Top-down steps cut lists longer than a piece into pieces, each expanded by a warp of its own
// (bfs_pieces); tiny pieces make every list of these graphs long, on one lane and on software
// warps, through a cache, over memory and through tiles that cut lists too.
TEST(AppBfs, LongListsSplitIntoPiecesGiveTheSameDepths) {
  temp_dir dir;
  const std::vector<std::filesystem::path> paths = {
      make_generated(dir.path(), graph::graph_kind::kron, 9, 8, 5, 8),
      make_bcsr(star(1500), input_format::bcsr, dir.path(), 4),
      make_bcsr(giant_with_oddities(800, 3), input_format::bcsr, dir.path(), 8),
      make_bcsr(directed_forward(900, 3000, 5), input_format::bcsr, dir.path(), 4)};
  storage_shape memory;
  memory.host_memory = true;
  storage_shape tiles;
  tiles.tile_bytes = 4096;
  storage_shape small_lines;
  small_lines.line_bytes = 512;
  for (const auto& path : paths) {
    const graph::csr g = graph::read_csr(path);
    const std::uint64_t source = max_degree_vertex(g.offsets);
    const std::vector<std::int32_t> expected = reference_bfs(g, source);
    for (const storage_shape& shape : {storage_shape{}, small_lines, memory, tiles}) {
      // (piece entries, software warp width): one lane, and a warp of 32 lanes.
      for (const auto& [piece, width] :
           {std::pair<std::uint64_t, unsigned>{1, 0}, {64, 0}, {5, 32}}) {
        for (const std::uint64_t divisor : {list_only, scan_only}) {
          SCOPED_TRACE(path.filename().string() + " on " + to_string(shape) + ", pieces of " +
                       std::to_string(piece) + ", warps of " + std::to_string(width) +
                       ", divisor " + std::to_string(divisor));
          app_request r = bfs_from(source);
          bfs_top_down.apply(r);
          r.bfs_piece_entries = piece;
          r.bfs_scan_divisor = divisor;
          r.software_warp_width = width;
          const app_outcome out = run_app(path, shape, r);
          EXPECT_EQ(out.bfs.depths, expected);
          // Each reached list is still read once, whole, however it was cut.
          std::uint64_t degrees = 0;
          for (std::uint64_t v = 0; v < g.vertex_count(); ++v) {
            if (expected[v] >= 0) degrees += g.degree(v);
          }
          EXPECT_EQ(out.bfs.edges_read, degrees);
        }
      }
    }
    // The direction-optimizing default with pieces matches too.
    app_request r = bfs_from(source);
    r.bfs_piece_entries = 5;
    EXPECT_EQ(run_app(path, {}, r).bfs.depths, expected);
  }
}

TEST(AppBfs, GivesMinusOneToUnreachedVertices) {
  temp_dir dir;
  const auto path = make_bcsr(mixed_graph(), input_format::bcsr, dir.path(), 8);
  const app_outcome out = run_app(path, {}, bfs_from(0));
  EXPECT_EQ(out.bfs.depths[0], 0);
  EXPECT_EQ(out.bfs.depths[2], 1);
  EXPECT_EQ(out.bfs.depths[4], 2);
  EXPECT_EQ(out.bfs.depths[6], 3);   // over the one-way edge 4 -> 6
  EXPECT_EQ(out.bfs.depths[3], -1);  // isolated
  EXPECT_EQ(out.bfs.depths[8], -1);  // another component
}

TEST(AppBfs, FollowsALongPathLevelByLevel) {
  temp_dir dir;
  const edge_graph path_graph = long_path(1000, 11);
  const auto path = make_bcsr(path_graph, input_format::bcsr, dir.path(), 4);
  const std::uint64_t end = path_graph.edges.front().first;  // the path's first vertex
  const app_outcome out = run_app(path, {}, bfs_from(end));
  EXPECT_EQ(out.bfs.level_vertices.size(), 1000u);
  EXPECT_EQ(out.bfs.reached, 1000u);
}

TEST(AppBfs, OnAGraphWithoutEdgesReachesOnlyTheSource) {
  temp_dir dir;
  const edge_graph empty{"empty", 50, {}};
  const auto path = make_bcsr(empty, input_format::bcsr, dir.path(), 8);
  const app_outcome out = run_app(path, {}, bfs_from(17));
  EXPECT_EQ(out.bfs.reached, 1u);
  EXPECT_EQ(out.bfs.depths[17], 0);
  EXPECT_EQ(out.bfs.depths[16], -1);
}

TEST(AppBfs, RejectsASourcePastTheLastVertex) {
  temp_dir dir;
  const auto path = make_bcsr(mixed_graph(), input_format::bcsr, dir.path(), 8);
  EXPECT_THROW((void)run_app(path, {}, bfs_from(14)), input_error);
}

}  // namespace
}  // namespace bam::apps::testing
