#include "graph/csr_build.hpp"

#include <algorithm>
#include <bit>
#include <numeric>
#include <utility>

#include "graph/parallel.hpp"

namespace bam::graph {

namespace {

constexpr std::uint64_t vertices_per_chunk = 4096;

// Orders floats as their values, with a total order on the bits (so sorting is deterministic).
std::uint32_t weight_key(float weight) {
  const auto bits = std::bit_cast<std::uint32_t>(weight);
  return (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
}

// Counting sort of (source, target, weight) triples by source.
template <class SourceAt, class TargetAt, class WeightAt>
csr scatter(std::uint64_t vertex_count, std::uint64_t edge_count, bool weighted, bool reverse,
            SourceAt source, TargetAt target, WeightAt weight) {
  csr g;
  g.weighted = weighted;
  g.offsets.assign(vertex_count + 1, 0);
  for (std::uint64_t e = 0; e < edge_count; ++e) {
    ++g.offsets[source(e) + 1];
    if (reverse) ++g.offsets[target(e) + 1];
  }
  std::partial_sum(g.offsets.begin(), g.offsets.end(), g.offsets.begin());
  std::vector<std::uint64_t> next(g.offsets.begin(), g.offsets.end() - 1);
  g.neighbors.resize(g.offsets.back());
  if (weighted) g.weights.resize(g.offsets.back());
  auto put = [&](std::uint64_t from, std::uint64_t to, std::uint64_t e) {
    const std::uint64_t slot = next[from]++;
    g.neighbors[slot] = to;
    if (weighted) g.weights[slot] = weight(e);
  };
  for (std::uint64_t e = 0; e < edge_count; ++e) {
    put(source(e), target(e), e);
    if (reverse) put(target(e), source(e), e);
  }
  return g;
}

// `g` rebuilt by scatter: each edge u->v as v->u with `flip`, and its reverse added with
// `add_reverse`.
csr rebuilt(const csr& g, bool flip, bool add_reverse) {
  // Sources of each edge, so the counting sort can visit edges by index.
  std::vector<std::uint64_t> sources(g.edge_count());
  for (std::uint64_t v = 0; v < g.vertex_count(); ++v) {
    std::fill(sources.begin() + static_cast<std::ptrdiff_t>(g.offsets[v]),
              sources.begin() + static_cast<std::ptrdiff_t>(g.offsets[v + 1]), v);
  }
  return scatter(
      g.vertex_count(), g.edge_count(), g.weighted, add_reverse,
      [&](std::uint64_t e) { return flip ? g.neighbors[e] : sources[e]; },
      [&](std::uint64_t e) { return flip ? sources[e] : g.neighbors[e]; },
      [&](std::uint64_t e) { return g.weighted ? g.weights[e] : 0.0f; });
}

}  // namespace

csr build_csr(edge_list&& edges, bool add_reverse_edges) {
  const edge_list in = std::move(edges);
  return scatter(
      in.vertex_count, in.sources.size(), in.weighted, add_reverse_edges,
      [&](std::uint64_t e) { return in.sources[e]; },
      [&](std::uint64_t e) { return in.targets[e]; },
      [&](std::uint64_t e) { return in.weighted ? in.weights[e] : 0.0f; });
}

csr with_reverse_edges(const csr& g) { return rebuilt(g, false, true); }

csr transposed(const csr& g) { return rebuilt(g, true, false); }

void sort_lists(csr& g, bool dedup, unsigned threads) {
  const std::uint64_t n = g.vertex_count();
  std::vector<std::uint64_t> kept(n);  // list length after dedup
  parallel_chunks(threads, (n + vertices_per_chunk - 1) / vertices_per_chunk, [&](std::uint64_t c) {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> scratch;  // (neighbour, weight key)
    const std::uint64_t end = std::min(n, (c + 1) * vertices_per_chunk);
    for (std::uint64_t v = c * vertices_per_chunk; v < end; ++v) {
      auto first = g.neighbors.begin() + static_cast<std::ptrdiff_t>(g.offsets[v]);
      auto last = g.neighbors.begin() + static_cast<std::ptrdiff_t>(g.offsets[v + 1]);
      if (!g.weighted) {
        std::sort(first, last);
        auto stop = last;
        if (dedup) stop = std::remove(first, std::unique(first, last), v);
        kept[v] = static_cast<std::uint64_t>(stop - first);
        continue;
      }
      auto weight = g.weights.begin() + static_cast<std::ptrdiff_t>(g.offsets[v]);
      scratch.clear();
      for (auto it = first; it != last; ++it) {
        scratch.emplace_back(*it, weight_key(weight[it - first]));
      }
      std::sort(scratch.begin(), scratch.end());
      std::uint64_t out = 0;
      for (std::size_t i = 0; i < scratch.size(); ++i) {
        const std::uint64_t to = scratch[i].first;
        // Sorted by weight within a neighbour: the first of a run has the smallest weight.
        if (dedup && (to == v || (i > 0 && scratch[i - 1].first == to))) continue;
        first[static_cast<std::ptrdiff_t>(out)] = to;
        const std::uint32_t key = scratch[i].second;
        weight[static_cast<std::ptrdiff_t>(out)] =
            std::bit_cast<float>((key & 0x80000000u) != 0 ? key & 0x7fffffffu : ~key);
        ++out;
      }
      kept[v] = out;
    }
  });
  if (!dedup) return;
  // Slide the kept part of each list down so the lists are contiguous again.
  std::uint64_t written = 0;
  for (std::uint64_t v = 0; v < n; ++v) {
    const std::uint64_t begin = g.offsets[v];
    for (std::uint64_t i = 0; i < kept[v]; ++i) {
      g.neighbors[written + i] = g.neighbors[begin + i];
      if (g.weighted) g.weights[written + i] = g.weights[begin + i];
    }
    g.offsets[v] = written;
    written += kept[v];
  }
  g.offsets[n] = written;
  g.neighbors.resize(written);
  if (g.weighted) g.weights.resize(written);
}

}  // namespace bam::graph
