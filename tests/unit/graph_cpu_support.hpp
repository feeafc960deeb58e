#pragma once
// Support for the tests of the CPU reference algorithms (apps/graph_cpu): the graphs they run
// on, written as .bcsr files and loaded as `bam bench graph-cpu` loads them.

#include <cstdint>
#include <filesystem>
#include <variant>
#include <vector>

#include "app_support.hpp"
#include "apps/graph_cpu/graph.hpp"

namespace bam::apps::testing {

/// More threads than the machine's cores, so the parallel loops interleave.
inline constexpr unsigned graph_cpu_test_threads = 4;

/// Loads `path` for the CPU reference and calls f(view, symmetric) with its ids' width.
template <class F>
void with_loaded(const std::filesystem::path& path, F&& f) {
  graph_cpu::set_threads(graph_cpu_test_threads);
  const graph_cpu::loaded_graph g = graph_cpu::load_bcsr(path);
  std::visit([&](const auto& a) { f(a.view(), g.header.symmetric()); }, g.edges);
}

/// Hand-made graphs (isolated vertices, self loops, duplicates, one-way edges; symmetric and
/// directed) and generated ones (kron has self loops and duplicates), at both id widths.
inline std::vector<std::filesystem::path> graph_cpu_test_graphs(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::vector<std::filesystem::path> paths;
  for (const std::uint32_t id_bytes : {4u, 8u}) {
    const std::filesystem::path sub = dir / ("ids" + std::to_string(id_bytes));
    std::filesystem::create_directories(sub);
    for (const edge_graph& g : {mixed_graph(), long_path(300, 3), many_tiny(500, 5),
                                directed_forward(400, 1500, 7), star(300)}) {
      paths.push_back(make_bcsr(g, input_format::bcsr, sub, id_bytes));
    }
    paths.push_back(make_generated(sub, graph::graph_kind::kron, 11, 8, 9, id_bytes));
  }
  paths.push_back(make_generated(dir, graph::graph_kind::urand, 10, 4, 11, 4));
  return paths;
}

}  // namespace bam::apps::testing
