#include "apps/graph_cpu/pagerank.hpp"

#include <string>

#include <bam/error.hpp>

namespace bam::apps::graph_cpu {

template <class Id>
pagerank_result pagerank(csr_view<Id> in_edges, std::span<const std::uint64_t> out_offsets,
                         const pagerank_options& options) {
  const std::uint64_t n = in_edges.vertex_count();
  if (out_offsets.size() != n + 1) {
    throw input_error("pagerank: " + std::to_string(out_offsets.size()) + " out-offsets for " +
                      std::to_string(n) + " vertices");
  }
  if (options.iterations == 0) throw input_error("pagerank: iterations must be at least 1");
  if (!(options.damping >= 0 && options.damping < 1)) {
    throw input_error("pagerank: damping must be in [0, 1), got " +
                      std::to_string(options.damping));
  }
  pagerank_result r;
  r.ranks = host_buffer<double>(n);
  host_buffer<double> contrib(n);
  double* rank = r.ranks.data();
  double* out = contrib.data();
  const auto vertices = static_cast<std::int64_t>(n);
  const double count = static_cast<double>(n);
  const double base = (1.0 - options.damping) / count;
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < vertices; ++v) rank[v] = 1.0 / count;

  for (unsigned iteration = 0; iteration < options.iterations; ++iteration) {
    double dangling = 0;
#pragma omp parallel for schedule(static) reduction(+ : dangling)
    for (std::int64_t v = 0; v < vertices; ++v) {
      const std::uint64_t degree = out_offsets[static_cast<std::uint64_t>(v) + 1] -
                                   out_offsets[static_cast<std::uint64_t>(v)];
      if (degree == 0) {
        dangling += rank[v];
        out[v] = 0;
      } else {
        out[v] = rank[v] / static_cast<double>(degree);
      }
    }
    const double spread = dangling / count;
    double change = 0;
#pragma omp parallel for schedule(dynamic, 4096) reduction(+ : change)
    for (std::int64_t v = 0; v < vertices; ++v) {
      double incoming = 0;
      for (const Id u : in_edges.neighbours_of(static_cast<std::uint64_t>(v))) incoming += out[u];
      const double next = base + options.damping * (incoming + spread);
      const double diff = next - rank[v];
      change += diff < 0 ? -diff : diff;
      rank[v] = next;
    }
    r.last_change = change;
  }
  return r;
}

template pagerank_result pagerank(csr_view<std::uint32_t>, std::span<const std::uint64_t>,
                                  const pagerank_options&);
template pagerank_result pagerank(csr_view<std::uint64_t>, std::span<const std::uint64_t>,
                                  const pagerank_options&);

}  // namespace bam::apps::graph_cpu
