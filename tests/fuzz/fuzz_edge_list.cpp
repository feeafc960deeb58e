// Edge list text (bam graph convert --format el): the reader, then, for graphs small enough to
// hold, the CSR build, list sorting (with and without dedup) and the flag inspection.

#include <cstddef>
#include <cstdint>

#include <bam/graph/csr.hpp>

#include "fuzz_support.hpp"
#include "graph/csr_build.hpp"
#include "graph/formats.hpp"

namespace {
constexpr std::uint64_t max_built_vertices = 1 << 16;  // n = largest id + 1: 8 bytes each
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = bam::fuzz::write_scratch("g.el", bam::fuzz::as_text(data, size));
  bam::fuzz::expect_clean([&] {
    bam::graph::edge_list edges = bam::graph::read_edge_list(path);
    if (edges.vertex_count > max_built_vertices) return;
    const bool dedup = size % 2 == 1;
    bam::graph::csr g = bam::graph::build_csr(std::move(edges), size % 3 == 0);
    bam::graph::sort_lists(g, dedup, 1);
    (void)bam::graph::inspect_flags(g);
  });
  return 0;
}
