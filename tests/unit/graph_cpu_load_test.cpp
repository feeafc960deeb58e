// A .bcsr file loads whole into memory at the width its ids are stored at, and a damaged one
// is refused with the byte that is wrong.

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <vector>

#include <bam/error.hpp>
#include <bam/graph/csr.hpp>

#include "graph_cpu_support.hpp"

namespace bam::apps::testing {
namespace {

TEST(GraphCpuLoad, ReadsEveryListAtTheFilesIdWidth) {
  temp_dir dir;
  for (const std::uint32_t id_bytes : {4u, 8u}) {
    const auto path = make_generated(dir.path(), graph::graph_kind::kron, 10, 8, 1, id_bytes);
    const graph::csr reference = graph::read_csr(path);
    graph_cpu::set_threads(graph_cpu_test_threads);
    const graph_cpu::loaded_graph g = graph_cpu::load_bcsr(path);
    EXPECT_EQ(g.edges.index(), id_bytes == 4 ? 0u : 1u);
    std::visit(
        [&](const auto& a) {
          const auto view = a.view();
          EXPECT_EQ(std::vector<std::uint64_t>(view.offsets.begin(), view.offsets.end()),
                    reference.offsets);
          EXPECT_EQ(std::vector<std::uint64_t>(view.neighbours.begin(), view.neighbours.end()),
                    reference.neighbors);
        },
        g.edges);
  }
}

TEST(GraphCpuLoad, RefusesANeighbourIdNotBelowTheVertexCount) {
  temp_dir dir;
  const auto path = make_bcsr(star(10), input_format::bcsr, dir.path(), 4);
  const graph::bcsr_header header = graph::read_header(path);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(header.neighbors.offset + 3 * 4));
    const std::uint32_t bad = 10;
    f.write(reinterpret_cast<const char*>(&bad), sizeof bad);
  }
  try {
    (void)graph_cpu::load_bcsr(path);
    FAIL() << "a neighbour id of 10 in a 10-vertex graph was accepted";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("neighbour 3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bam::apps::testing
