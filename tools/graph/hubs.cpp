#include "graph/hubs.hpp"

#include <algorithm>

#include "graph/parallel.hpp"

namespace bam::graph {

namespace {

constexpr std::uint64_t vertices_per_chunk = 1 << 14;

template <class Id>
void fill(std::span<const std::uint64_t> offsets, std::span<const Id> neighbours,
          std::span<Id> hubs, unsigned threads) {
  const std::uint64_t n = hubs.size();
  parallel_chunks(threads == 0 ? hardware_threads() : threads,
                  (n + vertices_per_chunk - 1) / vertices_per_chunk, [&](std::uint64_t c) {
                    const std::uint64_t end = std::min(n, (c + 1) * vertices_per_chunk);
                    for (std::uint64_t u = c * vertices_per_chunk; u < end; ++u) {
                      hubs[u] = static_cast<Id>(hub_of(
                          u, [&](std::uint64_t v) { return offsets[v]; },
                          [&](std::uint64_t e) { return std::uint64_t{neighbours[e]}; }));
                    }
                  });
}

}  // namespace

void fill_hubs(std::span<const std::uint64_t> offsets, std::span<const std::uint64_t> neighbours,
               std::span<std::uint64_t> hubs, unsigned threads) {
  fill(offsets, neighbours, hubs, threads);
}

void fill_hubs(std::span<const std::uint64_t> offsets, std::span<const std::uint32_t> neighbours,
               std::span<std::uint32_t> hubs, unsigned threads) {
  fill(offsets, neighbours, hubs, threads);
}

}  // namespace bam::graph
