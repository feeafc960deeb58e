// The hubs section (bcsr_flags::hubs): the generator and the converter write each vertex's
// neighbour of highest degree, readers check the section's place and ids, and `bam graph info`
// checks every hub against the lists.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

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

// Written from the definition, apart from hub_of: per vertex, the neighbour of largest degree,
// the smallest id among equals; the vertex itself when its list is empty.
std::vector<std::uint64_t> expected_hubs(const csr& g) {
  std::vector<std::uint64_t> hubs(g.vertex_count());
  for (std::uint64_t u = 0; u < g.vertex_count(); ++u) {
    hubs[u] = u;
    std::uint64_t best = 0;
    bool any = false;
    for (std::uint64_t e = g.offsets[u]; e < g.offsets[u + 1]; ++e) {
      const std::uint64_t v = g.neighbors[e];
      const std::uint64_t d = g.degree(v);
      if (!any || d > best || (d == best && v < hubs[u])) hubs[u] = v;
      if (!any || d > best) best = d;
      any = true;
    }
  }
  return hubs;
}

void patch(const std::filesystem::path& path, std::uint64_t at, const void* bytes,
           std::size_t size) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(at));
  f.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(size));
}

TEST(graph_hubs, the_generator_writes_each_vertex_s_highest_degree_neighbour) {
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
      EXPECT_EQ(h.hubs.bytes, h.vertex_count * id_bytes);
      // With dedup the lists shrank and the section moved down behind them.
      EXPECT_EQ(h.hubs.offset % bcsr_section_alignment, 0u);
      EXPECT_GE(h.hubs.offset, h.neighbors.offset + h.neighbors.bytes);
      const csr g = read_csr(dir / "g.bcsr");
      EXPECT_EQ(load_hubs(dir / "g.bcsr"), expected_hubs(g)) << id_bytes << " " << dedup;
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
  o.hubs = false;
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

TEST(graph_hubs, write_csr_adds_hubs_to_a_symmetric_graph_only_and_keeps_weights_whole) {
  temp_dir dir;
  // Vertex 0 has degree 3, vertex 1 degree 2, vertex 2 degree 2 (tie with 1), 3 degree 1,
  // vertex 4 none.
  const csr sym = make_graph(5, {{0, 1}, {1, 0}, {0, 2}, {2, 0}, {0, 3}, {3, 0}, {1, 2}, {2, 1}},
                             {1, 2, 3, 4, 5, 6, 7, 8});
  write_csr(dir / "s.bcsr", sym, {.id_bytes = 4, .hubs = true});
  const bcsr_header h = read_header(dir / "s.bcsr");
  ASSERT_TRUE(h.has_hubs() && h.weighted() && h.symmetric());
  EXPECT_GE(h.hubs.offset, h.weights.offset + h.weights.bytes);
  EXPECT_EQ(load_hubs(dir / "s.bcsr"), (std::vector<std::uint64_t>{1, 0, 0, 0, 4}));
  EXPECT_EQ(read_csr(dir / "s.bcsr").weights, sym.weights);
  // Not asked for: none.
  write_csr(dir / "plain.bcsr", sym);
  EXPECT_FALSE(read_header(dir / "plain.bcsr").has_hubs());
  // Directed: bottom-up BFS never runs there, so none is written.
  write_csr(dir / "d.bcsr", make_graph(3, {{0, 1}, {1, 2}}), {.hubs = true});
  EXPECT_FALSE(read_header(dir / "d.bcsr").has_hubs());
}

TEST(graph_hubs, convert_writes_hubs_unless_told_not_to) {
  temp_dir dir;
  testing::write_file(dir / "g.el", "0 1\n1 2\n2 3\n1 3\n");
  convert_graph(dir / "g.el", dir / "a.bcsr", {.undirected = true});
  ASSERT_TRUE(read_header(dir / "a.bcsr").has_hubs());
  EXPECT_EQ(load_hubs(dir / "a.bcsr"), expected_hubs(read_csr(dir / "a.bcsr")));
  convert_graph(dir / "g.el", dir / "b.bcsr", {.undirected = true, .hubs = false});
  EXPECT_FALSE(read_header(dir / "b.bcsr").has_hubs());
}

TEST(graph_hubs, readers_reject_a_misplaced_section_an_id_out_of_range_and_a_wrong_hub) {
  temp_dir dir;
  const csr g = make_graph(4, {{0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 3}, {3, 2}});
  write_csr(dir / "g.bcsr", g, {.hubs = true});
  const bcsr_header h = read_header(dir / "g.bcsr");
  const std::uint64_t file_bytes = std::filesystem::file_size(dir / "g.bcsr");

  bcsr_header short_section = h;
  short_section.hubs.bytes -= 8;
  EXPECT_TRUE(contains(input_error_of([&] { validate_header(short_section, file_bytes, "x"); }),
                       "hubs section is"));
  bcsr_header unflagged = h;
  unflagged.flags &= ~bcsr_flags::hubs;
  EXPECT_TRUE(contains(input_error_of([&] { validate_header(unflagged, file_bytes, "x"); }),
                       "hubs section without the hubs flag"));
  bcsr_header overlapping = h;
  overlapping.hubs.offset = h.neighbors.offset;
  EXPECT_TRUE(contains(input_error_of([&] { validate_header(overlapping, file_bytes, "x"); }),
                       "inside the header or the section before it"));

  // A path 0-1-2-3: vertex 2's neighbours are 1 (degree 2) and 3 (degree 1).
  ASSERT_EQ(load_hubs(dir / "g.bcsr")[2], 1u);
  const std::uint64_t three = 3;
  patch(dir / "g.bcsr", h.hubs.offset + 2 * 8, &three, sizeof three);
  // A neighbour, but not the one of highest degree: info names the vertex.
  const std::string wrong = input_error_of([&] { (void)summarize_graph(dir / "g.bcsr", 1); });
  EXPECT_TRUE(contains(wrong, "hub stored for vertex 2 is 3")) << wrong;
  EXPECT_TRUE(contains(wrong, "(1)")) << wrong;
  const std::uint64_t outside = 9;
  patch(dir / "g.bcsr", h.hubs.offset + 2 * 8, &outside, sizeof outside);
  const std::string range = input_error_of([&] { (void)load_hubs(dir / "g.bcsr"); });
  EXPECT_TRUE(contains(range, "hub of vertex 2 is 9")) << range;
}

}  // namespace
}  // namespace bam::graph
