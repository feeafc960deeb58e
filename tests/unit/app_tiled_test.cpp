// Proactive tiling (apps/tiled_edges.hpp): the partition plan covers every entry and names the
// vertices whose lists meet each partition; every app gives the reference's answer however the
// neighbour array is cut (partitions of 16 entries, so lists span many; partitions larger than
// the array), on CPU threads and on software warps; and the copies move what a pass needs.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/csr.hpp>

#include "app_support.hpp"
#include "apps/graph_file.hpp"
#include "apps/tiled_edges.hpp"

namespace bam::apps::testing {
namespace {

// Checks `parts` against the definition: consecutive, covering [0, m), each of at most
// `entries`, and its vertex range exactly the vertices whose lists meet it, widened only by
// vertices without edges.
void expect_valid_plan(const std::vector<std::uint64_t>& offsets,
                       const std::vector<edge_slice>& parts, std::uint64_t entries) {
  const std::uint64_t n = offsets.size() - 1;
  const std::uint64_t m = offsets.back();
  std::uint64_t next = 0;
  for (const edge_slice& p : parts) {
    EXPECT_EQ(p.first, next);
    EXPECT_GT(p.last, p.first);
    EXPECT_LE(p.last - p.first, entries);
    next = p.last;
    for (std::uint64_t u = 0; u < n; ++u) {
      const bool meets = offsets[u] < p.last && offsets[u + 1] > p.first;
      if (meets) {
        EXPECT_TRUE(p.holds_vertex(u)) << "vertex " << u;
      }
      if (p.holds_vertex(u) && !meets) {
        EXPECT_EQ(offsets[u], offsets[u + 1]) << "vertex " << u;
      }
    }
  }
  EXPECT_EQ(next, m);
}

TEST(AppTiled, PartitionPlanCoversEveryListOnce) {
  // Lists of 0, 5, 0, 40, 1, 0 and 3 entries.
  const std::vector<std::uint64_t> offsets = {0, 0, 5, 5, 45, 46, 46, 49};
  for (const std::uint64_t entries : {1u, 2u, 7u, 16u, 48u, 49u, 1000u}) {
    SCOPED_TRACE("partitions of " + std::to_string(entries));
    const auto parts = plan_partitions(offsets, 49, entries);
    EXPECT_EQ(parts.size(), (49 + entries - 1) / entries);
    expect_valid_plan(offsets, parts, entries);
  }
}

TEST(AppTiled, GraphWithoutEdgesHasNoPartitions) {
  const std::vector<std::uint64_t> offsets = {0, 0, 0};
  EXPECT_TRUE(plan_partitions(offsets, 0, 16).empty());
}

TEST(AppTiled, OffsetsThatDoNotMatchTheEdgesAreRejected) {
  const std::vector<std::uint64_t> offsets = {0, 3, 5};
  EXPECT_THROW((void)plan_partitions(offsets, 6, 16), input_error);
  EXPECT_THROW((void)plan_partitions(offsets, 5, 0), input_error);
}

TEST(AppTiled, PartitionsAreWholeAlignedSegments) {
  EXPECT_EQ(partition_entries<std::uint64_t>(1), 16u);  // at least one 128-byte segment
  EXPECT_EQ(partition_entries<std::uint32_t>(1), 32u);
  EXPECT_EQ(partition_entries<std::uint64_t>(4096), 256u);  // half the buffer each
  EXPECT_EQ(partition_entries<std::uint64_t>(4096 + 200), 256u);
}

void expect_all_apps_match(const std::filesystem::path& path, const storage_shape& shape,
                           unsigned width) {
  SCOPED_TRACE(path.filename().string() + " on " + to_string(shape) + ", warps of " +
               std::to_string(width));
  const graph::csr g = graph::read_csr(path);
  app_request r;
  r.software_warp_width = width;
  r.source = max_degree_vertex(g.offsets);
  const std::vector<std::int32_t> depths = reference_bfs(g, r.source);
  for (const bfs_variant& variant : bfs_variants) {
    SCOPED_TRACE(variant.name);
    variant.apply(r);
    r.bfs_scan_divisor = bfs_options{}.scan_divisor;
    EXPECT_EQ(run_app(path, shape, r).bfs.depths, depths);
    r.bfs_scan_divisor = 0;  // every top-down level from the frontier list
    const app_outcome b = run_app(path, shape, r);
    EXPECT_EQ(b.bfs.depths, depths);
    if (width == 1 && variant.alpha == always && graph::read_header(path).symmetric()) {
      // A list cut over partitions is read a piece per launch, up to the same entry; one in a
      // partition of its own may be claimed early (a cut one never is).
      EXPECT_LE(b.bfs.edges_read, reference_bottom_up_reads(g, depths));
      if (!b.bfs.hubs) {
        EXPECT_GE(b.bfs.edges_read, reference_bottom_up_reads(g, depths, true));
      }
    }
  }

  r.app = app_request::kind::cc;
  for (const cc_algorithm algorithm : cc_algorithms) {
    SCOPED_TRACE(to_string(algorithm));
    r.cc = algorithm;
    const app_outcome c = run_app(path, shape, r);
    EXPECT_EQ(c.cc.labels, reference_cc(g));
    if (width == 1 && c.cc.algorithm == cc_algorithm::afforest) {
      EXPECT_EQ(c.cc.edges_read,
                reference_afforest_reads(g, 2, c.cc.giant_sample, c.cc.sample_units));
    }
  }

  r.app = app_request::kind::pagerank;
  r.iterations = 3;
  const rank_error e =
      compare_ranks(run_app(path, shape, r).pagerank.ranks, reference_pagerank(g, 3, 0.85));
  EXPECT_LE(e.l1, rank_l1_tolerance);
  EXPECT_LE(e.max_abs, rank_max_tolerance);
}

TEST(AppTiled, EveryAppMatchesTheReferenceHoweverTheArrayIsCut) {
  temp_dir dir;
  const std::vector<std::filesystem::path> paths = {
      make_generated(dir.path(), graph::graph_kind::kron, 9, 8, 4, 8),
      make_generated(dir.path(), graph::graph_kind::urand, 9, 8, 4, 4),
      make_bcsr(star(700), input_format::bcsr, dir.path(), 4),
      make_bcsr(directed_forward(800, 2500, 4), input_format::bcsr, dir.path(), 8),
      make_bcsr(mixed_graph(), input_format::bcsr, dir.path(), 8),
      make_bcsr(giant_with_oddities(800, 6), input_format::bcsr, dir.path(), 4)};
  for (const auto& path : paths) {
    // 64- or 128-entry partitions (the hub's list spans several), a few, one for everything.
    for (const std::uint64_t bytes : {1024u, 16384u, 1u << 24}) {
      storage_shape shape;
      shape.tile_bytes = bytes;
      expect_all_apps_match(path, shape, 1);
    }
    storage_shape warps;
    warps.tile_bytes = 8192;
    expect_all_apps_match(path, warps, 32);
  }
}

TEST(AppTiled, EachPassCopiesEveryPartition) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::kron, 9, 8, 4, 8);
  const graph::csr g = graph::read_csr(path);
  const std::uint64_t m = g.edge_count();
  storage_shape shape;
  shape.tile_bytes = 8 * 1024;  // 512 entries a partition: more than two partitions
  app_request pr;
  pr.app = app_request::kind::pagerank;
  pr.iterations = 4;
  const app_outcome out = run_app(path, shape, pr);
  // Past three partitions none is still in its half when a pass reaches it again.
  ASSERT_GT(out.partitions, 3u);
  EXPECT_EQ(out.tile_copies, 4 * out.partitions);
  EXPECT_EQ(out.bytes_copied, 4 * m * sizeof(std::uint64_t));
}

TEST(AppTiled, AnArrayThatFitsIsCopiedOnce) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::urand, 9, 8, 4, 4);
  const graph::csr g = graph::read_csr(path);
  storage_shape shape;
  shape.tile_bytes = 1u << 24;
  app_request pr;
  pr.app = app_request::kind::pagerank;
  pr.iterations = 5;
  const app_outcome out = run_app(path, shape, pr);
  EXPECT_EQ(out.partitions, 1u);
  EXPECT_EQ(out.tile_copies, 1u);
  EXPECT_EQ(out.bytes_copied, g.edge_count() * sizeof(std::uint32_t));
}

}  // namespace
}  // namespace bam::apps::testing
