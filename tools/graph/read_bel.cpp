// EMOGI's binary CSR: X.bel.col = [n+1, type] + n+1 u64 offsets, X.bel.dst = [m, type] + m u64
// ids, optional X.bel.val = [m, type] + m values. The type words are written as 0 by EMOGI's
// converter and ignored by its apps; we ignore them too.

#include <bit>
#include <cstring>
#include <string>

#include <bam/error.hpp>

#include "graph/formats.hpp"
#include "graph/mapped_file.hpp"

namespace bam::graph {

namespace {

constexpr std::uint64_t bel_header_bytes = 16;
constexpr std::uint64_t max_count = std::uint64_t{1} << 52;

[[noreturn]] void fail_at(const mapped_file& file, std::uint64_t byte, const std::string& what) {
  throw input_error(file.name() + ": byte " + std::to_string(byte) + ": " + what);
}

// Reads the header count and checks the file holds exactly that many `element_bytes` values.
std::uint64_t checked_count(const mapped_file& file, std::uint64_t element_bytes,
                            const char* what) {
  if (file.size() < bel_header_bytes) {
    fail_at(
        file, file.size(),
        "file ends inside the 16-byte header (it is " + std::to_string(file.size()) + " bytes)");
  }
  const auto count = file.load<std::uint64_t>(0);
  if (count > max_count) {
    fail_at(file, 0, "implausible " + std::string(what) + " count " + std::to_string(count));
  }
  const std::uint64_t expected = bel_header_bytes + count * element_bytes;
  if (file.size() < expected) {
    fail_at(file, file.size(),
            "file ends, but the header (byte 0) declares " + std::to_string(count) + " " + what +
                " of " + std::to_string(element_bytes) + " bytes, " + std::to_string(expected) +
                " bytes in all (truncated?)");
  }
  if (file.size() > expected) {
    fail_at(file, expected,
            std::to_string(file.size() - expected) + " bytes past the " + std::to_string(count) +
                " " + what + " the header declares");
  }
  return count;
}

}  // namespace

csr read_bel(const std::filesystem::path& path, bel_value_type values) {
  const bel_paths paths = bel_paths_for(path);
  const mapped_file col(paths.col);
  const mapped_file dst(paths.dst);

  const std::uint64_t offset_count = checked_count(col, 8, "offsets");
  if (offset_count == 0) fail_at(col, 0, "the offset count is 0; a graph of n vertices has n+1");
  const std::uint64_t edge_count = checked_count(dst, 8, "neighbour ids");
  const std::uint64_t n = offset_count - 1;

  csr g;
  std::vector<std::uint64_t> offsets(offset_count);
  std::memcpy(offsets.data(), col.data() + bel_header_bytes, offset_count * 8);
  g.offsets = std::move(offsets);
  if (g.offsets[0] != 0) fail_at(col, bel_header_bytes, "the first offset is not 0");
  for (std::uint64_t v = 1; v < offset_count; ++v) {
    if (g.offsets[v] < g.offsets[v - 1]) {
      fail_at(col, bel_header_bytes + v * 8,
              "offset " + std::to_string(g.offsets[v]) + " is less than the one before it (" +
                  std::to_string(g.offsets[v - 1]) + ")");
    }
  }
  if (g.offsets[n] != edge_count) {
    fail_at(col, bel_header_bytes + n * 8,
            "the last offset is " + std::to_string(g.offsets[n]) + " but " + dst.name() +
                " holds " + std::to_string(edge_count) + " neighbour ids");
  }

  g.neighbors.resize(edge_count);
  // An empty vector's data() may be null, which memcpy must not get even for 0 bytes.
  if (edge_count > 0) {
    std::memcpy(g.neighbors.data(), dst.data() + bel_header_bytes, edge_count * 8);
  }
  for (std::uint64_t e = 0; e < edge_count; ++e) {
    if (g.neighbors[e] >= n) {
      fail_at(dst, bel_header_bytes + e * 8,
              "vertex id " + std::to_string(g.neighbors[e]) + " is not below the vertex count " +
                  std::to_string(n) + " (" + col.name() + ")");
    }
  }

  std::error_code ec;
  if (!std::filesystem::exists(paths.val, ec)) return g;
  const mapped_file val(paths.val);
  const std::uint64_t value_count = checked_count(val, 4, "values");
  if (value_count != edge_count) {
    fail_at(val, 0,
            "holds " + std::to_string(value_count) + " values for " + std::to_string(edge_count) +
                " edges");
  }
  g.weighted = true;
  g.weights.resize(edge_count);
  for (std::uint64_t e = 0; e < edge_count; ++e) {
    const auto bits = val.load<std::uint32_t>(bel_header_bytes + e * 4);
    g.weights[e] =
        values == bel_value_type::u32 ? static_cast<float>(bits) : std::bit_cast<float>(bits);
  }
  return g;
}

}  // namespace bam::graph
