// EMOGI .bel files (bam graph convert --format bel): X.bel.col, X.bel.dst and X.bel.val cut
// from one input, then the reader and the reverse-edge pass.
//
// Input: [flags u8][col bytes u16 LE][dst bytes u16 LE][col][dst][val]. Flags bit 0: write
// X.bel.val (the rest of the input); bit 1: read its values as f32. Lengths past the end of
// the input are cut short.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include <bam/graph/csr.hpp>

#include "fuzz_support.hpp"
#include "graph/csr_build.hpp"
#include "graph/formats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 5) return 0;
  const std::uint8_t flags = data[0];
  std::size_t col_bytes = data[1] | std::size_t{data[2]} << 8;
  std::size_t dst_bytes = data[3] | std::size_t{data[4]} << 8;
  std::string_view rest = bam::fuzz::as_text(data + 5, size - 5);
  col_bytes = std::min(col_bytes, rest.size());
  const std::string_view col = rest.substr(0, col_bytes);
  rest.remove_prefix(col_bytes);
  dst_bytes = std::min(dst_bytes, rest.size());
  const std::string_view dst = rest.substr(0, dst_bytes);
  rest.remove_prefix(dst_bytes);

  bam::fuzz::write_scratch("g.bel.col", col);
  bam::fuzz::write_scratch("g.bel.dst", dst);
  const std::filesystem::path val = bam::fuzz::scratch() / "g.bel.val";
  if ((flags & 1) != 0) {
    bam::fuzz::write_scratch("g.bel.val", rest);
  } else {
    std::error_code ec;
    std::filesystem::remove(val, ec);
  }
  const auto values =
      (flags & 2) != 0 ? bam::graph::bel_value_type::f32 : bam::graph::bel_value_type::u32;
  bam::fuzz::expect_clean([&] {
    const bam::graph::csr g = bam::graph::read_bel(bam::fuzz::scratch() / "g.bel", values);
    (void)bam::graph::with_reverse_edges(g);
  });
  return 0;
}
