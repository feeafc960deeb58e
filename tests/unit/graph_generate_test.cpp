// The Kronecker and uniform generators: deterministic bytes, counts, symmetry, skew.

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "graph/generate.hpp"
#include "graph/generators.hpp"
#include "graph_test_support.hpp"

namespace bam::graph {
namespace {

using testing::contains;
using testing::input_error_of;
using testing::read_file;
using testing::temp_dir;

generate_options small(graph_kind kind, std::uint64_t seed = 1, unsigned threads = 2) {
  return {.kind = kind, .scale = 10, .degree = 8, .seed = seed, .threads = threads};
}

std::uint64_t max_degree(const csr& g) {
  std::uint64_t best = 0;
  for (std::uint64_t v = 0; v < g.vertex_count(); ++v) best = std::max(best, g.degree(v));
  return best;
}

TEST(graph_generator, vertex_permutation_is_a_bijection) {
  for (unsigned bits = 1; bits <= 14; ++bits) {
    const vertex_permutation permute(bits, 42);
    std::vector<bool> seen(std::size_t{1} << bits);
    for (std::uint64_t x = 0; x < seen.size(); ++x) {
      const std::uint64_t y = permute(x);
      ASSERT_LT(y, seen.size()) << "bits " << bits;
      ASSERT_FALSE(seen[y]) << "bits " << bits << ": two ids map to " << y;
      seen[y] = true;
    }
  }
}

TEST(graph_generator, an_edge_is_a_pure_function_of_seed_and_index) {
  const kron_generator a(12, 5);
  const kron_generator b(12, 5);
  for (std::uint64_t e : {77u, 3u, 1000000u, 3u}) {
    EXPECT_EQ(a(e).source, b(e).source);
    EXPECT_EQ(a(e).target, b(e).target);
  }
  const urand_generator u(12, 5);
  EXPECT_EQ(u(9).source, urand_generator(12, 5)(9).source);
}

TEST(graph_generate, same_seed_gives_the_same_bytes_whatever_the_thread_count) {
  for (const graph_kind kind : {graph_kind::kron, graph_kind::urand}) {
    temp_dir dir;
    generate_graph(dir / "a.bcsr", small(kind, 7, 1));
    generate_graph(dir / "b.bcsr", small(kind, 7, 3));
    generate_graph(dir / "c.bcsr", small(kind, 7, 2));
    const std::string a = read_file(dir / "a.bcsr");
    EXPECT_EQ(a, read_file(dir / "b.bcsr"));
    EXPECT_EQ(a, read_file(dir / "c.bcsr"));
    EXPECT_EQ(dir.files(), (std::vector<std::string>{"a.bcsr", "b.bcsr", "c.bcsr"}));
  }
}

TEST(graph_generate, a_different_seed_gives_a_different_graph) {
  temp_dir dir;
  generate_graph(dir / "a.bcsr", small(graph_kind::kron, 1));
  generate_graph(dir / "b.bcsr", small(graph_kind::kron, 2));
  EXPECT_NE(read_csr(dir / "a.bcsr"), read_csr(dir / "b.bcsr"));
}

TEST(graph_generate, every_edge_is_stored_both_ways_and_degrees_sum_to_m) {
  for (const graph_kind kind : {graph_kind::kron, graph_kind::urand}) {
    temp_dir dir;
    const generate_result r = generate_graph(dir / "g.bcsr", small(kind));
    const csr g = read_csr(dir / "g.bcsr");
    EXPECT_EQ(g.vertex_count(), 1024u);
    EXPECT_EQ(g.edge_count(), 2u * 8u * 1024u);
    EXPECT_EQ(r.edge_count, g.edge_count());
    std::uint64_t degree_sum = 0;
    for (std::uint64_t v = 0; v < g.vertex_count(); ++v) degree_sum += g.degree(v);
    EXPECT_EQ(degree_sum, g.edge_count());
    EXPECT_TRUE(testing::is_symmetric(g));
    const bcsr_header h = read_header(dir / "g.bcsr");
    EXPECT_TRUE(h.symmetric());
    EXPECT_TRUE(h.sorted());
    EXPECT_EQ(h.simple(), r.simple);
    // The flags the generator claims of the lists are the true ones; hubs come besides.
    EXPECT_EQ(inspect_flags(g), h.flags & ~bcsr_flags::hubs);
    EXPECT_TRUE(h.has_hubs());
  }
}

TEST(graph_generate, kron_degrees_are_skewed_and_urand_are_not) {
  temp_dir dir;
  generate_graph(dir / "k.bcsr", {.kind = graph_kind::kron, .scale = 12, .degree = 8});
  generate_graph(dir / "u.bcsr", {.kind = graph_kind::urand, .scale = 12, .degree = 8});
  const csr k = read_csr(dir / "k.bcsr");
  const csr u = read_csr(dir / "u.bcsr");
  // Mean degree 16 in both; R-MAT hubs reach hundreds, a uniform graph stays near the mean.
  EXPECT_GT(max_degree(k), 10 * max_degree(u) / 2) << max_degree(k) << " vs " << max_degree(u);
  EXPECT_LT(max_degree(u), 50u);
}

TEST(graph_generate, kron_hubs_are_spread_over_the_id_space) {
  temp_dir dir;
  generate_graph(dir / "k.bcsr", {.kind = graph_kind::kron, .scale = 12, .degree = 8});
  const csr k = read_csr(dir / "k.bcsr");
  std::vector<std::uint64_t> ids(k.vertex_count());
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + 8, ids.end(),
                    [&](auto a, auto b) { return k.degree(a) > k.degree(b); });
  // Without the permutation R-MAT's hubs are 0, 1, 2, 4, ...: ids with few one bits.
  const auto low = std::count_if(ids.begin(), ids.begin() + 8, [](auto v) { return v < 64; });
  EXPECT_LT(low, 4);
}

TEST(graph_generate, dedup_gives_a_simple_symmetric_graph) {
  temp_dir dir;
  generate_options o = small(graph_kind::kron);
  o.dedup = true;
  const generate_result r = generate_graph(dir / "d.bcsr", o);
  generate_graph(dir / "full.bcsr", small(graph_kind::kron));
  const csr d = read_csr(dir / "d.bcsr");
  EXPECT_TRUE(r.simple);
  EXPECT_EQ(inspect_flags(d), bcsr_flags::symmetric | bcsr_flags::sorted | bcsr_flags::simple);
  EXPECT_EQ(read_header(dir / "d.bcsr").flags, inspect_flags(d) | bcsr_flags::hubs);
  // Dedup of the full graph in memory gives the same lists.
  csr full = read_csr(dir / "full.bcsr");
  EXPECT_LT(d.edge_count(), full.edge_count());
  sort_lists(full, true, 1);
  EXPECT_EQ(d, full);
  EXPECT_EQ(std::filesystem::file_size(dir / "d.bcsr"),
            bcsr_file_bytes(read_header(dir / "d.bcsr")));
}

TEST(graph_generate, four_byte_ids_store_the_same_graph) {
  temp_dir dir;
  generate_options o = small(graph_kind::urand);
  generate_graph(dir / "8.bcsr", o);
  o.id_bytes = 4;
  generate_graph(dir / "4.bcsr", o);
  EXPECT_EQ(read_header(dir / "4.bcsr").id_bytes, 4u);
  EXPECT_EQ(read_csr(dir / "4.bcsr"), read_csr(dir / "8.bcsr"));
}

TEST(graph_generate, bad_options_are_refused_without_leaving_a_file) {
  temp_dir dir;
  EXPECT_TRUE(
      contains(input_error_of([&] { generate_graph(dir / "g.bcsr", {.scale = 0}); }), "--scale"));
  EXPECT_TRUE(contains(
      input_error_of([&] { generate_graph(dir / "g.bcsr", {.scale = 33, .id_bytes = 4}); }),
      "8-byte"));
  EXPECT_TRUE(contains(input_error_of([&] { (void)parse_graph_kind("rmat"); }), "rmat"));
  EXPECT_TRUE(dir.files().empty());
}

}  // namespace
}  // namespace bam::graph
