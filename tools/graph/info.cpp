#include "graph/info.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include <bam/error.hpp>

#include "graph/mapped_file.hpp"
#include "graph/parallel.hpp"

namespace bam::graph {

namespace {

constexpr std::uint64_t vertices_per_chunk = 1 << 14;

struct partial_summary {
  std::uint64_t min_degree = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_degree = 0;
  std::uint64_t max_degree_vertex = 0;
  std::uint64_t self_loops = 0;

  void merge(const partial_summary& other) {
    min_degree = std::min(min_degree, other.min_degree);
    if (other.max_degree > max_degree ||
        (other.max_degree == max_degree && other.max_degree_vertex < max_degree_vertex)) {
      max_degree = other.max_degree;
      max_degree_vertex = other.max_degree_vertex;
    }
    self_loops += other.self_loops;
  }
};

}  // namespace

graph_summary summarize_graph(const std::filesystem::path& path, unsigned threads) {
  graph_summary s;
  s.header = read_header(path);
  const bcsr_header& h = s.header;
  const mapped_file file(path);
  file.advise_sequential();
  s.file_bytes = file.size();
  const std::uint64_t n = h.vertex_count;
  auto offset = [&](std::uint64_t v) { return file.load<std::uint64_t>(h.offsets.offset + v * 8); };
  auto neighbor = [&](std::uint64_t e) -> std::uint64_t {
    const std::uint64_t at = h.neighbors.offset + e * h.id_bytes;
    return h.id_bytes == 8 ? file.load<std::uint64_t>(at) : file.load<std::uint32_t>(at);
  };
  // In a directed graph a vertex with no out-edges may still have in-edges.
  std::vector<std::uint8_t> has_in_edge(h.symmetric() ? 0 : n, 0);

  partial_summary total;
  std::mutex total_mutex;
  parallel_chunks(
      threads == 0 ? hardware_threads() : threads,
      (n + vertices_per_chunk - 1) / vertices_per_chunk, [&](std::uint64_t c) {
        partial_summary part;
        const std::uint64_t end = std::min(n, (c + 1) * vertices_per_chunk);
        for (std::uint64_t u = c * vertices_per_chunk; u < end; ++u) {
          const std::uint64_t begin_edge = offset(u);
          const std::uint64_t end_edge = offset(u + 1);
          if (end_edge < begin_edge) {
            throw input_error(file.name() + ": byte " +
                              std::to_string(h.offsets.offset + u * 8 + 8) + ": offsets[" +
                              std::to_string(u + 1) + "] is less than offsets[" +
                              std::to_string(u) + "]");
          }
          const std::uint64_t degree = end_edge - begin_edge;
          part.min_degree = std::min(part.min_degree, degree);
          if (degree > part.max_degree) {
            part.max_degree = degree;
            part.max_degree_vertex = u;
          }
          for (std::uint64_t e = begin_edge; e < end_edge; ++e) {
            const std::uint64_t v = neighbor(e);
            if (v >= n) {
              throw input_error(file.name() + ": byte " +
                                std::to_string(h.neighbors.offset + e * h.id_bytes) +
                                ": neighbour id " + std::to_string(v) +
                                " is not below the vertex count " + std::to_string(n));
            }
            if (v == u) ++part.self_loops;
            if (!has_in_edge.empty()) {
              std::atomic_ref<std::uint8_t>(has_in_edge[v]).store(1, std::memory_order_relaxed);
            }
          }
        }
        const std::lock_guard lock(total_mutex);
        total.merge(part);
      });

  if (n > 0) {
    s.min_degree = total.min_degree;
    s.max_degree = total.max_degree;
    s.max_degree_vertex = total.max_degree_vertex;
    s.mean_degree = static_cast<double>(h.edge_count) / static_cast<double>(n);
  }
  s.self_loops = total.self_loops;
  for (std::uint64_t v = 0; v < n; ++v) {
    if (offset(v + 1) == offset(v) && (has_in_edge.empty() || has_in_edge[v] == 0)) {
      ++s.isolated_vertices;
    }
  }
  return s;
}

}  // namespace bam::graph
