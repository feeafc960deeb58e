// The kernels' GPU access pattern on the CPU: software warps (tests/support/software_warp.hpp)
// of several lanes run the same functors, so lanes walk one adjacency list together from its
// 128-byte boundary and the array coalesces their reads (optimized mode) as on a GPU. The
// answers must not change.

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <vector>

#include <bam/graph/csr.hpp>

#include "app_support.hpp"
#include "apps/graph_file.hpp"

namespace bam::apps::testing {
namespace {

void expect_all_apps_match(const std::filesystem::path& path, const storage_shape& shape,
                           unsigned width) {
  SCOPED_TRACE(path.filename().string() + " on " + to_string(shape) + ", warps of " +
               std::to_string(width));
  const graph::csr g = graph::read_csr(path);
  app_request r;
  r.software_warp_width = width;
  r.source = max_degree_vertex(g.offsets);
  const std::vector<std::int32_t> depths = reference_bfs(g, r.source);
  std::vector<bfs_variant> variants(std::begin(bfs_variants), std::end(bfs_variants));
  variants.push_back(bfs_bottom_up_unbatched);
  for (const bfs_variant& variant : variants) {
    SCOPED_TRACE(variant.name);
    variant.apply(r);
    const app_outcome b = run_app(path, shape, r);
    EXPECT_EQ(b.bfs.depths, depths);
    if (!shape.host_memory && shape.mode == cache_mode::optimized &&
        shape.line_bytes >= width * 8 && b.bfs.edges_read > 0) {
      // Lanes reading one line share a probe (or keep their pin). (With hubs every leaf of a
      // star finds its parent without reading a list.)
      EXPECT_GT(b.stats.coalesced + b.stats.reused, 0u);
    }
  }

  r.app = app_request::kind::cc;
  for (const cc_algorithm algorithm : cc_algorithms) {
    SCOPED_TRACE(to_string(algorithm));
    r.cc = algorithm;
    EXPECT_EQ(run_app(path, shape, r).cc.labels, reference_cc(g));
  }

  r.app = app_request::kind::pagerank;
  r.iterations = 3;
  const rank_error e =
      compare_ranks(run_app(path, shape, r).pagerank.ranks, reference_pagerank(g, 3, 0.85));
  EXPECT_LE(e.l1, rank_l1_tolerance);
  EXPECT_LE(e.max_abs, rank_max_tolerance);
}

TEST(AppWarps, KernelsOnSoftwareWarpsMatchTheReference) {
  temp_dir dir;
  const std::vector<std::filesystem::path> paths = {
      make_generated(dir.path(), graph::graph_kind::kron, 8, 8, 6, 8),
      make_bcsr(star(700), input_format::bcsr, dir.path(), 4),
      make_bcsr(mixed_graph(), input_format::bcsr, dir.path(), 8),
      make_bcsr(giant_with_oddities(600, 4), input_format::bcsr, dir.path(), 4)};
  for (const auto& path : paths) {
    for (const auto mode : {cache_mode::optimized, cache_mode::naive}) {
      storage_shape shape;
      shape.mode = mode;
      shape.line_bytes = 512;
      shape.cache_lines = 64;
      expect_all_apps_match(path, shape, 4);
      expect_all_apps_match(path, shape, 32);
    }
  }
}

// EMOGI's aligned walk over memory: warps start at the 128-byte boundary before each list, so
// lanes before the list sit out a step; the entries visited, and the answers, are unchanged.
TEST(AppWarps, AlignedReadsOverMemoryMatchTheReference) {
  temp_dir dir;
  const std::vector<std::filesystem::path> paths = {
      make_generated(dir.path(), graph::graph_kind::urand, 8, 8, 6, 4),
      make_bcsr(star(700), input_format::bcsr, dir.path(), 8),
      make_bcsr(mixed_graph(), input_format::bcsr, dir.path(), 4)};
  storage_shape memory;
  memory.host_memory = true;
  for (const auto& path : paths) {
    expect_all_apps_match(path, memory, 4);
    expect_all_apps_match(path, memory, 32);
  }
}

}  // namespace
}  // namespace bam::apps::testing
