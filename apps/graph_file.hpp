#pragma once
/// @file
/// A .bcsr graph as the apps use it: header and vertex offsets in memory, neighbour ids on a
/// device set holding the file's image, bound as a bam::array of the file's id width.

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include <bam/array.hpp>
#include <bam/cache.hpp>
#include <bam/graph/bcsr.hpp>
#include <bam/storage/device_set.hpp>

#include "apps/edges.hpp"

namespace bam::apps {

/// What the host keeps of a graph file.
struct graph_file {
  std::filesystem::path path;
  graph::bcsr_header header{};
  std::vector<std::uint64_t> offsets;  ///< n + 1

  /// Reads and checks the header and offsets. Throws bam::input_error naming the file.
  static graph_file open(const std::filesystem::path& path);

  [[nodiscard]] std::uint64_t vertex_count() const { return header.vertex_count; }
  [[nodiscard]] std::uint64_t edge_count() const { return header.edge_count; }
  [[nodiscard]] std::uint32_t id_bytes() const { return header.id_bytes; }
  [[nodiscard]] bool symmetric() const { return header.symmetric(); }
  /// Bytes of the neighbour section (what a traversal of every edge reads).
  [[nodiscard]] std::uint64_t neighbour_bytes() const { return header.neighbors.bytes; }
  [[nodiscard]] std::span<const std::uint64_t> offset_span() const { return offsets; }
};

/// The vertex of highest out-degree (the smallest such id), for a BFS source that reaches
/// the bulk of a power-law graph; 0 for a graph without edges.
[[nodiscard]] std::uint64_t max_degree_vertex(std::span<const std::uint64_t> offsets);

/// The neighbour ids of `graph` as a bam::array on `set`, whose address space is the graph
/// file's image (byte 0 = file byte 0). The graph must have edges.
template <class Id>
[[nodiscard]] array<const Id> neighbour_array(page_cache& cache, const device_set_ref& set,
                                              const graph_file& graph) {
  return array<const Id>(cache, set,
                         {.offset_bytes = graph.header.neighbors.offset,
                          .count = graph.edge_count(),
                          .name = graph.path.filename().string() + " neighbours"});
}

/// Calls `run(edges)` with the graph's neighbour ids as a bam::array of the file's id width:
/// on `set` through `cache`; or, when `cache` is null, over `memory` (the file's bytes where
/// the kernels can read them: the memory backends; `host_accessible` says whether the host can
/// too). Returns what run returns.
template <class Run>
decltype(auto) with_edges(const graph_file& graph, page_cache* cache, const device_set_ref* set,
                          std::uint8_t* memory, bool host_accessible, Run&& run) {
  const std::uint64_t m = graph.edge_count();
  auto dispatch = [&]<class Id>(Id*) -> decltype(auto) {
    if (cache != nullptr && m > 0) {
      const array<const Id> ids = neighbour_array<Id>(*cache, *set, graph);
      const bool cached = cache->config().mode != cache_mode::none;
      return run(array_edges<Id>(ids, cached ? cache->lines() : 0));
    }
    // A graph without edges has nothing to bind on storage; its kernels read nothing, but a
    // view of memory needs an address.
    static Id nothing = 0;
    Id* data = m > 0 ? reinterpret_cast<Id*>(memory + graph.header.neighbors.offset) : &nothing;
    const array<const Id> ids = array<const Id>::over_memory(
        data, m, host_accessible, graph.path.filename().string() + " neighbours");
    return run(array_edges<Id>(ids));
  };
  if (graph.id_bytes() == 4) return dispatch(static_cast<std::uint32_t*>(nullptr));
  return dispatch(static_cast<std::uint64_t*>(nullptr));
}

}  // namespace bam::apps
