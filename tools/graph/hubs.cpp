#include "graph/hubs.hpp"

#include <algorithm>
#include <array>
#include <string>

#include <bam/error.hpp>
#include <bam/graph/bcsr.hpp>

#include "graph/parallel.hpp"

namespace bam::graph {

namespace {

constexpr std::uint64_t vertices_per_chunk = 1 << 14;

template <class Id>
void fill(std::span<const std::uint64_t> offsets, std::span<const Id> neighbours,
          std::span<Id> hubs, unsigned threads) {
  const std::uint64_t n = offsets.size() - 1;
  const std::size_t k = n == 0 ? 0 : hubs.size() / n;
  if (n == 0 || k == 0) return;
  if (k * n != hubs.size() || k > bcsr_max_hub_count) {
    throw error("fill_hubs: " + std::to_string(hubs.size()) + " places for " + std::to_string(n) +
                " vertices");
  }
  parallel_chunks(threads == 0 ? hardware_threads() : threads,
                  (n + vertices_per_chunk - 1) / vertices_per_chunk, [&](std::uint64_t c) {
                    std::array<std::uint64_t, bcsr_max_hub_count> found;
                    const std::uint64_t end = std::min(n, (c + 1) * vertices_per_chunk);
                    for (std::uint64_t u = c * vertices_per_chunk; u < end; ++u) {
                      hubs_of(
                          u, [&](std::uint64_t v) { return offsets[v]; },
                          [&](std::uint64_t e) { return std::uint64_t{neighbours[e]}; },
                          std::span(found).first(k));
                      std::transform(found.begin(), found.begin() + k, hubs.begin() + u * k,
                                     [](std::uint64_t v) { return static_cast<Id>(v); });
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
