// The hubs section (bcsr_flags::hubs): the generator and the converter write each vertex's k
// neighbours of highest degree, readers check the section's place, count and ids, and
// `bam graph info` checks every hub against the lists.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/bcsr.hpp>
#include <bam/graph/csr.hpp>

#include "graph/convert.hpp"
#include "graph/generate.hpp"
#include "graph/info.hpp"
#include "graph_test_support.hpp"

namespace bam::graph {
namespace {

using testing::contains;
using testing::input_error_of;
using testing::make_graph;
using testing::temp_dir;

// Written from the definition, apart from hubs_of: per vertex, its distinct neighbours sorted
// by degree, highest first, the smaller id first among equals; the first k of them, then the
// vertex itself in the places left. Vertex u's at [u * k, u * k + k).
std::vector<std::uint64_t> expected_hubs(const csr& g, std::uint32_t k) {
  std::vector<std::uint64_t> hubs;
  for (std::uint64_t u = 0; u < g.vertex_count(); ++u) {
    std::vector<std::uint64_t> distinct(g.neighbors.begin() + g.offsets[u],
                                        g.neighbors.begin() + g.offsets[u + 1]);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    std::stable_sort(distinct.begin(), distinct.end(),
                     [&](std::uint64_t a, std::uint64_t b) { return g.degree(a) > g.degree(b); });
    distinct.resize(k, u);
    hubs.insert(hubs.end(), distinct.begin(), distinct.end());
  }
  return hubs;
}

void patch(const std::filesystem::path& path, std::uint64_t at, const void* bytes,
           std::size_t size) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(at));
  f.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(size));
}

TEST(graph_hubs, the_generator_writes_each_vertex_s_highest_degree_neighbours) {
  for (const std::uint32_t id_bytes : {4u, 8u}) {
    for (const bool dedup : {false, true}) {
      temp_dir dir;
      const generate_options o{.kind = graph_kind::kron,
                               .scale = 10,
                               .degree = 8,
                               .seed = 3,
                               .threads = 2,
                               .dedup = dedup,
                               .id_bytes = id_bytes};
      generate_graph(dir / "g.bcsr", o);
      const bcsr_header h = read_header(dir / "g.bcsr");
      ASSERT_TRUE(h.has_hubs());
      ASSERT_EQ(h.hubs_per_vertex(), bcsr_default_hub_count);
      EXPECT_EQ(h.hubs.bytes, h.vertex_count * bcsr_default_hub_count * id_bytes);
      // With dedup the lists shrank and the section moved down behind them.
      EXPECT_EQ(h.hubs.offset % bcsr_section_alignment, 0u);
      EXPECT_GE(h.hubs.offset, h.neighbors.offset + h.neighbors.bytes);
      const csr g = read_csr(dir / "g.bcsr");
      EXPECT_EQ(load_hubs(dir / "g.bcsr").ids, expected_hubs(g, bcsr_default_hub_count))
          << id_bytes << " " << dedup;
      // A power-law graph has empty lists too: their hub is the vertex itself.
      std::uint64_t empty = 0;
      for (std::uint64_t v = 0; v < g.vertex_count(); ++v) empty += g.degree(v) == 0;
      EXPECT_GT(empty, 0u);
      EXPECT_NO_THROW((void)summarize_graph(dir / "g.bcsr", 2));
    }
  }
}

TEST(graph_hubs, no_hubs_leaves_the_section_out_and_the_rest_of_the_bytes_alone) {
  temp_dir dir;
  generate_options o{.kind = graph_kind::urand, .scale = 9, .degree = 4, .seed = 2, .threads = 1};
  generate_graph(dir / "with.bcsr", o);
  o.hub_count = 0;
  generate_graph(dir / "without.bcsr", o);
  const bcsr_header with = read_header(dir / "with.bcsr");
  const bcsr_header without = read_header(dir / "without.bcsr");
  EXPECT_FALSE(without.has_hubs());
  EXPECT_EQ(without.hubs.offset, 0u);
  EXPECT_TRUE(load_hubs(dir / "without.bcsr").empty());
  EXPECT_LT(std::filesystem::file_size(dir / "without.bcsr"),
            std::filesystem::file_size(dir / "with.bcsr"));
  const csr a = read_csr(dir / "with.bcsr");
  const csr b = read_csr(dir / "without.bcsr");
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_EQ(a.neighbors, b.neighbors);
  EXPECT_EQ(with.flags & ~bcsr_flags::hubs, without.flags);
}

TEST(graph_hubs, one_to_eight_per_vertex_each_the_first_of_the_next) {
  temp_dir dir;
  generate_options o{.kind = graph_kind::urand, .scale = 9, .degree = 4, .seed = 5, .threads = 2};
  const csr g = [&] {
    o.hub_count = 0;
    generate_graph(dir / "plain.bcsr", o);
    return read_csr(dir / "plain.bcsr");
  }();
  hub_table widest;
  for (const std::uint32_t k : {1u, 2u, 3u, 8u}) {
    o.hub_count = k;
    const auto path = dir / (std::to_string(k) + "-hubs.bcsr");
    generate_graph(path, o);
    const bcsr_header h = read_header(path);
    EXPECT_EQ(h.hub_count, k);
    EXPECT_EQ(h.hubs.bytes, h.vertex_count * k * 8);
    const hub_table t = load_hubs(path);
    EXPECT_EQ(t.per_vertex, k);
    EXPECT_EQ(t.ids, expected_hubs(g, k)) << k;
    EXPECT_NO_THROW((void)summarize_graph(path, 2)) << k;
    widest = t;
  }
  // The k of highest degree are the first k of any longer table.
  EXPECT_EQ(widest.first(2).ids, expected_hubs(g, 2));
  EXPECT_EQ(widest.first(1).ids, expected_hubs(g, 1));
  EXPECT_THROW((void)widest.first(9), input_error);
  o.hub_count = bcsr_max_hub_count + 1;
  EXPECT_THROW(generate_graph(dir / "nine.bcsr", o), input_error);
}

TEST(graph_hubs, a_file_from_before_hub_counts_reads_as_one_per_vertex) {
  temp_dir dir;
  const csr g = make_graph(4, {{0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 3}, {3, 2}});
  write_csr(dir / "g.bcsr", g, {.hub_count = 1});
  bcsr_header h = read_header(dir / "g.bcsr");
  h.hub_count = 0;  // as written before the count had a place in the header
  patch(dir / "g.bcsr", 0, &h, sizeof h);
  EXPECT_EQ(read_header(dir / "g.bcsr").hubs_per_vertex(), 1u);
  EXPECT_EQ(load_hubs(dir / "g.bcsr").ids, expected_hubs(g, 1));
  EXPECT_NO_THROW((void)summarize_graph(dir / "g.bcsr", 1));
}

TEST(graph_hubs, write_csr_adds_hubs_to_a_symmetric_graph_only_and_keeps_weights_whole) {
  temp_dir dir;
  // Vertex 0 has degree 3, vertex 1 degree 2, vertex 2 degree 2 (tie with 1), 3 degree 1,
  // vertex 4 none.
  const csr sym = make_graph(5, {{0, 1}, {1, 0}, {0, 2}, {2, 0}, {0, 3}, {3, 0}, {1, 2}, {2, 1}},
                             {1, 2, 3, 4, 5, 6, 7, 8});
  write_csr(dir / "s.bcsr", sym, {.id_bytes = 4, .hub_count = 2});
  const bcsr_header h = read_header(dir / "s.bcsr");
  ASSERT_TRUE(h.has_hubs() && h.weighted() && h.symmetric());
  EXPECT_GE(h.hubs.offset, h.weights.offset + h.weights.bytes);
  // Vertex 3 has one neighbour, vertex 4 none: themselves in the places left.
  EXPECT_EQ(load_hubs(dir / "s.bcsr").ids,
            (std::vector<std::uint64_t>{1, 2, 0, 2, 0, 1, 0, 3, 4, 4}));
  EXPECT_EQ(read_csr(dir / "s.bcsr").weights, sym.weights);
  // Not asked for: none.
  write_csr(dir / "plain.bcsr", sym);
  EXPECT_FALSE(read_header(dir / "plain.bcsr").has_hubs());
  // Directed: bottom-up BFS never runs there, so none is written.
  write_csr(dir / "d.bcsr", make_graph(3, {{0, 1}, {1, 2}}), {.hub_count = 1});
  EXPECT_FALSE(read_header(dir / "d.bcsr").has_hubs());
}

TEST(graph_hubs, convert_writes_hubs_unless_told_not_to) {
  temp_dir dir;
  testing::write_file(dir / "g.el", "0 1\n1 2\n2 3\n1 3\n");
  convert_graph(dir / "g.el", dir / "a.bcsr", {.undirected = true});
  ASSERT_TRUE(read_header(dir / "a.bcsr").has_hubs());
  EXPECT_EQ(load_hubs(dir / "a.bcsr").ids,
            expected_hubs(read_csr(dir / "a.bcsr"), bcsr_default_hub_count));
  convert_graph(dir / "g.el", dir / "b.bcsr", {.undirected = true, .hub_count = 0});
  EXPECT_FALSE(read_header(dir / "b.bcsr").has_hubs());
}

TEST(graph_hubs, readers_reject_a_misplaced_section_an_id_out_of_range_and_a_wrong_hub) {
  temp_dir dir;
  const csr g = make_graph(4, {{0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 3}, {3, 2}});
  write_csr(dir / "g.bcsr", g, {.hub_count = 2});
  const bcsr_header h = read_header(dir / "g.bcsr");
  const std::uint64_t file_bytes = std::filesystem::file_size(dir / "g.bcsr");

  bcsr_header short_section = h;
  short_section.hubs.bytes -= 8;
  EXPECT_TRUE(contains(input_error_of([&] { validate_header(short_section, file_bytes, "x"); }),
                       "hubs section is"));
  bcsr_header unflagged = h;
  unflagged.flags &= ~bcsr_flags::hubs;
  EXPECT_TRUE(contains(input_error_of([&] { validate_header(unflagged, file_bytes, "x"); }),
                       "hubs section or hub count without the hubs flag"));
  bcsr_header too_many = h;
  too_many.hub_count = bcsr_max_hub_count + 1;
  EXPECT_TRUE(contains(input_error_of([&] { validate_header(too_many, file_bytes, "x"); }),
                       "9 hubs per vertex (at most 8)"));
  bcsr_header miscounted = h;
  miscounted.hub_count = 3;
  EXPECT_TRUE(contains(input_error_of([&] { validate_header(miscounted, file_bytes, "x"); }),
                       "hubs section is"));
  bcsr_header overlapping = h;
  overlapping.hubs.offset = h.neighbors.offset;
  EXPECT_TRUE(contains(input_error_of([&] { validate_header(overlapping, file_bytes, "x"); }),
                       "inside the header or the section before it"));

  // A path 0-1-2-3: vertex 2's neighbours are 1 (degree 2) and 3 (degree 1), in that order.
  ASSERT_EQ(load_hubs(dir / "g.bcsr").ids[2 * 2], 1u);
  ASSERT_EQ(load_hubs(dir / "g.bcsr").ids[2 * 2 + 1], 3u);
  // Both neighbours, the wrong way round: info names the vertex and the place.
  const std::uint64_t swapped[] = {3, 1};
  patch(dir / "g.bcsr", h.hubs.offset + 2 * 2 * 8, swapped, sizeof swapped);
  const std::string wrong = input_error_of([&] { (void)summarize_graph(dir / "g.bcsr", 1); });
  EXPECT_TRUE(contains(wrong, "hub 0 stored for vertex 2 is 3, not 1")) << wrong;
  const std::uint64_t outside = 9;
  patch(dir / "g.bcsr", h.hubs.offset + (2 * 2 + 1) * 8, &outside, sizeof outside);
  const std::string range = input_error_of([&] { (void)load_hubs(dir / "g.bcsr"); });
  EXPECT_TRUE(contains(range, "hub 1 of vertex 2 is 9")) << range;
}

}  // namespace
}  // namespace bam::graph
