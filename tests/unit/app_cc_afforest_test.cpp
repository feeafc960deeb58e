// Afforest: on a symmetric graph with a giant component it reads a small part of the
// adjacency entries and gives the union-find pass's labels; on a directed graph it falls back
// to union-find and says so.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <bam/graph/csr.hpp>

#include "app_support.hpp"

namespace bam::apps::testing {
namespace {

app_outcome run_cc_as(const std::filesystem::path& path, cc_algorithm algorithm,
                      const storage_shape& shape = {}) {
  app_request r;
  r.app = app_request::kind::cc;
  r.cc = algorithm;
  return run_app(path, shape, r);
}

TEST(AppCcAfforest, ReadsFewerEntriesThanUnionFindOnAKroneckerGraph) {
  temp_dir dir;
  const auto path = make_generated(dir.path(), graph::graph_kind::kron, 12, 16, 2, 4);
  const graph::csr g = graph::read_csr(path);
  const app_outcome afforest = run_cc_as(path, cc_algorithm::afforest);
  const app_outcome union_find = run_cc_as(path, cc_algorithm::union_find);
  ASSERT_EQ(afforest.cc.labels, reference_cc(g));
  ASSERT_EQ(union_find.cc.labels, afforest.cc.labels);
  EXPECT_EQ(afforest.cc.algorithm, cc_algorithm::afforest);
  EXPECT_EQ(union_find.cc.edges_read, g.edge_count());
  // The giant component's lists are read for their first two entries only.
  EXPECT_LT(afforest.cc.edges_read * 4, union_find.cc.edges_read);
  EXPECT_LT(afforest.stats.bytes_requested * 4, union_find.stats.bytes_requested);
}

TEST(AppCcAfforest, VotesForTheGiantComponentAndSkipsItsLists) {
  temp_dir dir;
  const edge_graph eg = giant_with_oddities(3000, 8);
  const auto path = make_bcsr(eg, input_format::bcsr, dir.path(), 8);
  ASSERT_TRUE(graph::read_header(path).symmetric());
  const graph::csr g = graph::read_csr(path);
  const std::vector<std::uint64_t> expected = reference_cc(g);
  const app_outcome out = run_cc_as(path, cc_algorithm::afforest);
  ASSERT_EQ(out.cc.labels, expected);
  // The sample's vote is a vertex of the largest component (80% of the vertices).
  std::vector<std::uint64_t> sizes(g.vertex_count(), 0);
  for (const std::uint64_t l : expected) ++sizes[l];
  EXPECT_EQ(sizes[expected[out.cc.giant_sample]], out.cc.largest);
  // The sampled entries, and the whole of the lists outside the sampled giant component.
  EXPECT_EQ(out.cc.edges_read,
            reference_afforest_reads(g, 2, out.cc.giant_sample, out.cc.sample_units));
  EXPECT_LT(out.cc.edges_read, g.edge_count() / 2);
  EXPECT_EQ(out.stats.bytes_requested, out.cc.edges_read * 8);
}

TEST(AppCcAfforest, FallsBackToUnionFindOnADirectedGraph) {
  temp_dir dir;
  const auto path = make_bcsr(directed_forward(1500, 3000, 4), input_format::bcsr, dir.path(), 4);
  ASSERT_FALSE(graph::read_header(path).symmetric());
  const graph::csr g = graph::read_csr(path);
  const app_outcome out = run_cc_as(path, cc_algorithm::afforest);
  // Skipping the giant component's lists would miss edges stored one way only.
  EXPECT_EQ(out.cc.labels, reference_cc(g));
  EXPECT_TRUE(out.cc.fell_back);
  EXPECT_EQ(out.cc.algorithm, cc_algorithm::union_find);
  EXPECT_EQ(out.cc.edges_read, g.edge_count());
}

TEST(AppCcAfforest, UnionFindAskedForReadsEveryEntryOnce) {
  temp_dir dir;
  const auto path = make_bcsr(giant_with_oddities(1000, 2), input_format::bcsr, dir.path(), 4);
  const app_outcome out = run_cc_as(path, cc_algorithm::union_find);
  EXPECT_FALSE(out.cc.fell_back);
  EXPECT_EQ(out.cc.algorithm, cc_algorithm::union_find);
  EXPECT_EQ(out.cc.edges_read, graph::read_header(path).edge_count);
}

}  // namespace
}  // namespace bam::apps::testing
