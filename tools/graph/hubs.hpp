#pragma once
/// @file
/// The hubs section of a .bcsr file (bcsr_flags::hubs): per vertex, the neighbour of highest
/// out-degree. On a power-law graph that neighbour is a BFS parent of most vertices
/// (docs/apps.md), so a bottom-up step that looks it up first reads few lists.

#include <cstdint>
#include <span>

namespace bam::graph {

/// The hub of vertex u: its neighbour of highest out-degree, the smallest id among equals; u
/// itself when its list is empty. `offset(v)` reads offsets[v], `neighbour(e)` entry e; every
/// neighbour must be below the vertex count.
template <class OffsetAt, class NeighbourAt>
[[nodiscard]] std::uint64_t hub_of(std::uint64_t u, OffsetAt&& offset, NeighbourAt&& neighbour) {
  std::uint64_t best = u;
  std::uint64_t best_degree = 0;
  bool found = false;
  const std::uint64_t end = offset(u + 1);
  for (std::uint64_t e = offset(u); e < end; ++e) {
    const std::uint64_t v = neighbour(e);
    const std::uint64_t degree = offset(v + 1) - offset(v);
    if (!found || degree > best_degree || (degree == best_degree && v < best)) {
      best = v;
      best_degree = degree;
      found = true;
    }
  }
  return best;
}

/// Writes hub_of(v) into hubs[v] for every vertex, on `threads` threads (0: all). The
/// neighbours must be below offsets.size() - 1 (checked by the writers before).
void fill_hubs(std::span<const std::uint64_t> offsets, std::span<const std::uint64_t> neighbours,
               std::span<std::uint64_t> hubs, unsigned threads = 0);
void fill_hubs(std::span<const std::uint64_t> offsets, std::span<const std::uint32_t> neighbours,
               std::span<std::uint32_t> hubs, unsigned threads = 0);

}  // namespace bam::graph
