#include "graph/convert.hpp"

#include <chrono>
#include <new>
#include <utility>

#include <bam/error.hpp>

#include "common/output_paths.hpp"
#include "graph/csr_build.hpp"
#include "graph/parallel.hpp"

namespace bam::graph {

namespace {

convert_result convert_in_memory(const std::filesystem::path& in, const std::filesystem::path& out,
                                 const convert_options& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.id_bytes != 4 && options.id_bytes != 8) {
    throw input_error("--id-bytes must be 4 or 8");
  }
  if (options.transpose && options.undirected) {
    throw input_error("--transpose with --undirected: an undirected graph is its own transpose");
  }
  convert_result result;
  result.format = options.format ? *options.format : guess_graph_format(in);
  if (result.format == graph_format::bel) {
    const bel_paths paths = bel_paths_for(in);
    for (const auto& path : {paths.col, paths.dst, paths.val}) {
      tools::refuse_same_file(path, "input", out, "output");
    }
  } else {
    tools::refuse_same_file(in, "input", out, "output");
  }
  csr graph;
  switch (result.format) {
    case graph_format::el:
    case graph_format::mtx: {
      edge_list edges =
          result.format == graph_format::el ? read_edge_list(in) : read_matrix_market(in);
      result.input_edges = edges.sources.size();
      if (options.transpose) std::swap(edges.sources, edges.targets);
      graph = build_csr(std::move(edges), options.undirected);
      break;
    }
    case graph_format::bel:
      graph = read_bel(in, options.bel_values);
      result.input_edges = graph.edge_count();
      if (options.undirected) graph = with_reverse_edges(graph);
      if (options.transpose) graph = transposed(graph);
      break;
  }
  sort_lists(graph, options.dedup, options.threads == 0 ? hardware_threads() : options.threads);
  const bcsr_header written = write_csr(
      out, graph,
      {.id_bytes = options.id_bytes, .hub_count = options.hub_count, .threads = options.threads});
  result.vertex_count = graph.vertex_count();
  result.edge_count = graph.edge_count();
  result.flags = written.flags;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace

convert_result convert_graph(const std::filesystem::path& in, const std::filesystem::path& out,
                             const convert_options& options) {
  try {
    return convert_in_memory(in, out, options);
  } catch (const std::bad_alloc&) {
    // Most often a stray huge vertex id in a text file (n = largest id + 1).
    throw input_error("not enough memory to convert '" + in.string() +
                      "': convert holds the whole graph in memory (8 bytes per vertex up to the "
                      "largest id, about 16-24 bytes per edge)");
  }
}

}  // namespace bam::graph
