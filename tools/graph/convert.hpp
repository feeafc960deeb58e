#pragma once
/// @file
/// `bam graph convert`: an edge list, Matrix Market or EMOGI file into a .bcsr file. The graph
/// is held in memory (about 16-24 bytes per edge at the peak): for inputs that fit.

#include <cstdint>
#include <filesystem>
#include <optional>

#include <bam/graph/bcsr.hpp>

#include "graph/formats.hpp"

namespace bam::graph {

struct convert_options {
  std::optional<graph_format> format = std::nullopt;  ///< guessed from the input's name when empty
  bool undirected = false;                            ///< add each edge's reverse
  bool transpose = false;                             ///< reverse every edge (in-lists)
  bool dedup = false;                                 ///< drop duplicate edges and self loops
  std::uint32_t id_bytes = 8;
  /// Hubs per vertex written when the result is symmetric (bcsr_flags::hubs); 0: none.
  std::uint32_t hub_count = bcsr_default_hub_count;
  bel_value_type bel_values = bel_value_type::u32;
  unsigned threads = 0;  ///< 0: every hardware thread (for sorting the lists)
};

struct convert_result {
  graph_format format = graph_format::el;
  std::uint64_t input_edges = 0;  ///< edges read (a symmetric .mtx entry counts twice)
  std::uint64_t vertex_count = 0;
  std::uint64_t edge_count = 0;  ///< stored
  std::uint32_t flags = 0;       ///< bcsr_flags of the output
  double seconds = 0;
};

/// Converts `in` to `out`. On any error (bam::input_error naming the file and line or byte)
/// no output file is left behind.
convert_result convert_graph(const std::filesystem::path& in, const std::filesystem::path& out,
                             const convert_options& options);

}  // namespace bam::graph
