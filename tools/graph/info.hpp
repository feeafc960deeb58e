#pragma once
/// @file
/// `bam graph info`: what a .bcsr file holds, checked by a full scan (every offset, every id).

#include <cstdint>
#include <filesystem>

#include <bam/graph/bcsr.hpp>

namespace bam::graph {

struct graph_summary {
  bcsr_header header{};
  std::uint64_t file_bytes = 0;
  std::uint64_t min_degree = 0;  ///< out-degree; 0 for an empty graph
  std::uint64_t max_degree = 0;
  std::uint64_t max_degree_vertex = 0;
  double mean_degree = 0;
  std::uint64_t isolated_vertices = 0;  ///< no edge in or out
  std::uint64_t self_loops = 0;         ///< entries u -> u
  bool edges_symmetric = false;         ///< every u -> v has as many v -> u, flag or not
  bool lists_sorted = false;            ///< every list ascends, flag or not
};

/// Reads the header and scans the offsets and neighbours on `threads` threads (0: all).
/// Throws bam::input_error naming the file and byte offset of anything malformed, and when a
/// flag the header sets is false of the data: symmetric (naming an edge without its reverse),
/// sorted (naming a vertex), simple (a self loop; a repeated neighbour when lists are sorted),
/// hubs (naming a vertex whose stored hubs are not hubs_of, graph/hubs.hpp).
[[nodiscard]] graph_summary summarize_graph(const std::filesystem::path& path,
                                            unsigned threads = 0);

}  // namespace bam::graph
