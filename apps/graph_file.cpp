#include "apps/graph_file.hpp"

namespace bam::apps {

graph_file graph_file::open(const std::filesystem::path& path) {
  graph_file g;
  g.path = path;
  g.header = graph::read_header(path);
  g.offsets = graph::load_offsets(path);
  return g;
}

std::uint64_t max_degree_vertex(std::span<const std::uint64_t> offsets) {
  std::uint64_t best = 0;
  std::uint64_t best_degree = 0;
  for (std::uint64_t v = 0; v + 1 < offsets.size(); ++v) {
    const std::uint64_t degree = offsets[v + 1] - offsets[v];
    if (degree > best_degree) {
      best = v;
      best_degree = degree;
    }
  }
  return best;
}

}  // namespace bam::apps
