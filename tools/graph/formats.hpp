#pragma once
/// @file
/// The graph file formats bam converts from and exports to, besides its own .bcsr:
///
/// - el:  edge list text, one "u v" or "u v w" per line, 0-based ids, '#' or '%' comments;
///        n = largest id + 1.
/// - mtx: Matrix Market "coordinate" (pattern, integer or real; general or symmetric), 1-based.
/// - bel: EMOGI's binary CSR, a pair of files X.bel.col (n+1 u64 offsets) and X.bel.dst (m u64
///        ids), each after a 16-byte header [count u64, type u64], and optionally X.bel.val.
///
/// Readers hold the whole graph in memory and throw bam::input_error naming the file and line
/// (text) or byte offset (binary) of the first problem.

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include <bam/graph/csr.hpp>

namespace bam::graph {

enum class graph_format { el, mtx, bel };

/// "el", "mtx" or "bel"; throws bam::input_error otherwise.
[[nodiscard]] graph_format parse_graph_format(std::string_view name);
/// From the file name: .el .txt .wel .edges -> el, .mtx -> mtx, .bel / .bel.col / .bel.dst ->
/// bel. Throws bam::input_error (asking for --format) when the extension says nothing.
[[nodiscard]] graph_format guess_graph_format(const std::filesystem::path& path);

/// How X.bel.val stores a weight: EMOGI's SSSP reads u32, its float variant f32.
enum class bel_value_type { u32, f32 };
[[nodiscard]] bel_value_type parse_bel_value_type(std::string_view name);

/// The EMOGI files a .bel name stands for ("X.bel", "X.bel.col" and "X.bel.dst" all give X.bel).
struct bel_paths {
  std::filesystem::path col;
  std::filesystem::path dst;
  std::filesystem::path val;
};
[[nodiscard]] bel_paths bel_paths_for(const std::filesystem::path& path);

/// Edges as read from a text file, in file order.
struct edge_list {
  std::uint64_t vertex_count = 0;
  std::vector<std::uint64_t> sources;
  std::vector<std::uint64_t> targets;
  std::vector<float> weights;  ///< one per edge when weighted
  bool weighted = false;
};

[[nodiscard]] edge_list read_edge_list(const std::filesystem::path& path);
/// A symmetric Matrix Market file yields both directions of each off-diagonal entry.
[[nodiscard]] edge_list read_matrix_market(const std::filesystem::path& path);
/// X.bel.val, when present, makes the graph weighted.
[[nodiscard]] csr read_bel(const std::filesystem::path& path, bel_value_type values);

/// Streams a .bcsr file out in `format` (through temporary files renamed at the end). Throws
/// bam::input_error for a bad input file or weights that `values` cannot hold.
void export_graph(const std::filesystem::path& bcsr_path, const std::filesystem::path& out,
                  graph_format format, bel_value_type values = bel_value_type::u32);

}  // namespace bam::graph
