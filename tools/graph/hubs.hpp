#pragma once
/// @file
/// The hubs section of a .bcsr file (bcsr_flags::hubs): per vertex, its k neighbours of highest
/// out-degree. On a power-law graph one of them is a BFS parent of most vertices
/// (docs/apps.md), so a bottom-up step that looks them up first reads few lists.

#include <algorithm>
#include <cstdint>
#include <span>

#include <bam/graph/bcsr.hpp>

namespace bam::graph {

/// The hubs of vertex u: its `out.size()` distinct neighbours of highest out-degree, highest
/// first, the smaller id first among equals; u itself in the places left when the list holds
/// fewer distinct neighbours. `offset(v)` reads offsets[v], `neighbour(e)` entry e; every
/// neighbour must be below the vertex count; k at most bcsr_max_hub_count. O(degree x k).
template <class OffsetAt, class NeighbourAt>
void hubs_of(std::uint64_t u, OffsetAt&& offset, NeighbourAt&& neighbour,
             std::span<std::uint64_t> out) {
  const std::size_t k = out.size();
  std::uint64_t degrees[bcsr_max_hub_count];  // degrees[j]: out[j]'s
  std::size_t held = 0;
  auto better = [&](std::uint64_t v, std::uint64_t dv, std::size_t j) {
    return dv > degrees[j] || (dv == degrees[j] && v < out[j]);
  };
  const std::uint64_t end = offset(u + 1);
  for (std::uint64_t e = offset(u); e < end; ++e) {
    const std::uint64_t v = neighbour(e);
    if (std::find(out.begin(), out.begin() + held, v) != out.begin() + held) continue;
    const std::uint64_t dv = offset(v + 1) - offset(v);
    if (held == k && !better(v, dv, k - 1)) continue;
    // Insertion into the sorted prefix; the last one falls off when it is full.
    std::size_t j = held < k ? held++ : k - 1;
    for (; j > 0 && better(v, dv, j - 1); --j) {
      out[j] = out[j - 1];
      degrees[j] = degrees[j - 1];
    }
    out[j] = v;
    degrees[j] = dv;
  }
  std::fill(out.begin() + held, out.end(), u);
}

/// Writes hubs_of(v) into hubs[v * k, v * k + k) for every vertex, k = hubs.size() / n, on
/// `threads` threads (0: all). The neighbours must be below offsets.size() - 1 (checked by the
/// writers before); k at most bcsr_max_hub_count.
void fill_hubs(std::span<const std::uint64_t> offsets, std::span<const std::uint64_t> neighbours,
               std::span<std::uint64_t> hubs, unsigned threads = 0);
void fill_hubs(std::span<const std::uint64_t> offsets, std::span<const std::uint32_t> neighbours,
               std::span<std::uint32_t> hubs, unsigned threads = 0);

}  // namespace bam::graph
