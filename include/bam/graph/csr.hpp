#pragma once
/// @file
/// A graph in memory in compressed sparse row form, and reading/writing it as a .bcsr file.
/// For tests, converters and graphs that fit in memory; the generator writes out of core.

#include <cstdint>
#include <filesystem>
#include <vector>

#include <bam/graph/bcsr.hpp>

namespace bam::graph {

/// Vertex v's out-neighbours are neighbors[offsets[v] .. offsets[v+1]); weights, when the
/// graph is weighted, run parallel to neighbors.
struct csr {
  std::vector<std::uint64_t> offsets{0};
  std::vector<std::uint64_t> neighbors;
  std::vector<float> weights;
  bool weighted = false;

  [[nodiscard]] std::uint64_t vertex_count() const { return offsets.size() - 1; }
  [[nodiscard]] std::uint64_t edge_count() const { return neighbors.size(); }
  [[nodiscard]] std::uint64_t degree(std::uint64_t v) const { return offsets[v + 1] - offsets[v]; }

  friend bool operator==(const csr&, const csr&) = default;
};

/// What the flags of a graph's file would say, found by looking at it: sorted and simple by
/// a scan, symmetric by matching each edge's count against its reverse's (O(m log degree)).
[[nodiscard]] std::uint32_t inspect_flags(const csr& graph);

struct csr_write_options {
  std::uint32_t id_bytes = 8;  ///< 4 stores ids as u32 (throws if an id does not fit)
  /// Hubs per vertex to write (bcsr_flags::hubs; 0: none) if the graph is symmetric: only
  /// bottom-up BFS steps read them, and they run on symmetric graphs only.
  std::uint32_t hub_count = 0;
  unsigned threads = 0;  ///< for finding the hubs; 0: every hardware thread
};

/// Writes `graph` to `path` (through a temporary file beside it, renamed at the end), with the
/// flags inspect_flags() finds; returns the header written. Throws bam::input_error for a
/// graph that cannot be stored.
bcsr_header write_csr(const std::filesystem::path& path, const csr& graph,
                      const csr_write_options& options = {});

/// Reads a whole .bcsr file: header checks as read_header(), offsets never decreasing, every
/// neighbour id below n. Throws bam::input_error naming the file and the byte offset.
[[nodiscard]] csr read_csr(const std::filesystem::path& path);

}  // namespace bam::graph
