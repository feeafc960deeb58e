// Matrix Market files (bam graph convert --format mtx): the reader, then, for graphs small
// enough to hold, the CSR build, list sorting and the flag inspection.

#include <cstddef>
#include <cstdint>

#include <bam/graph/csr.hpp>

#include "fuzz_support.hpp"
#include "graph/csr_build.hpp"
#include "graph/formats.hpp"

namespace {
constexpr std::uint64_t max_built_vertices = 1 << 16;  // n = max(rows, cols): 8 bytes each
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = bam::fuzz::write_scratch("g.mtx", bam::fuzz::as_text(data, size));
  bam::fuzz::expect_clean([&] {
    bam::graph::edge_list edges = bam::graph::read_matrix_market(path);
    if (edges.vertex_count > max_built_vertices) return;
    bam::graph::csr g = bam::graph::build_csr(std::move(edges), size % 3 == 0);
    bam::graph::sort_lists(g, size % 2 == 1, 1);
    (void)bam::graph::inspect_flags(g);
  });
  return 0;
}
