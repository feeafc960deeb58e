#pragma once
/// @file
/// `bam graph gen`: GAP-style synthetic graphs written straight into a .bcsr file, out of core.
///
/// degree x 2^scale undirected edges are generated and stored in both directions (m = 2 x
/// degree x n; a self loop is stored twice). Two passes regenerate the same edges: the first
/// counts degrees, a prefix sum gives the offsets, the second scatters each edge into the
/// memory-mapped file; then each adjacency list is sorted, so the file's bytes depend only on
/// (kind, scale, degree, seed, dedup, id width), never on the thread count. Memory: 8 bytes
/// per vertex besides the file's pages.

#include <cstdint>
#include <filesystem>
#include <string_view>

#include <bam/graph/bcsr.hpp>

namespace bam::graph {

enum class graph_kind { kron, urand };

/// "kron" or "urand"; throws bam::input_error otherwise.
[[nodiscard]] graph_kind parse_graph_kind(std::string_view name);

struct generate_options {
  graph_kind kind = graph_kind::kron;
  unsigned scale = 0;         ///< n = 2^scale vertices, 1..40
  std::uint64_t degree = 16;  ///< undirected edges generated per vertex
  std::uint64_t seed = 1;
  unsigned threads = 0;        ///< 0: every hardware thread
  bool dedup = false;          ///< drop duplicate edges and self loops
  std::uint32_t id_bytes = 8;  ///< 4 allowed up to scale 32
  std::uint32_t hub_count = bcsr_default_hub_count;  ///< hubs per vertex; 0: no hubs section
  bool progress = false;       ///< report progress on stderr
};

struct generate_result {
  std::uint64_t vertex_count = 0;
  std::uint64_t edge_count = 0;       ///< stored (after dedup)
  std::uint64_t generated_edges = 0;  ///< undirected edges drawn
  std::uint64_t file_bytes = 0;
  bool simple = false;  ///< no self loops and no duplicates in the result
  unsigned threads = 0;
  double count_seconds = 0;
  double scatter_seconds = 0;
  double sort_seconds = 0;
  double compact_seconds = 0;
  double hubs_seconds = 0;
  double total_seconds = 0;
};

/// Generates the graph into `out` (through a temporary file in its folder, renamed at the end;
/// removed on failure). Throws bam::input_error for bad options, bam::error on I/O failure.
generate_result generate_graph(const std::filesystem::path& out, const generate_options& options);

}  // namespace bam::graph
