// Sequential reference implementations of the apps, written without the kernels.

#include "app_support.hpp"

#include <algorithm>
#include <deque>
#include <set>
#include <stdexcept>

namespace bam::apps::testing {

std::vector<std::int32_t> reference_bfs(const graph::csr& g, std::uint64_t source) {
  std::vector<std::int32_t> depth(g.vertex_count(), -1);
  std::deque<std::uint64_t> queue{source};
  depth[source] = 0;
  while (!queue.empty()) {
    const std::uint64_t u = queue.front();
    queue.pop_front();
    for (std::uint64_t e = g.offsets[u]; e < g.offsets[u + 1]; ++e) {
      const std::uint64_t v = g.neighbors[e];
      if (depth[v] >= 0) continue;
      depth[v] = depth[u] + 1;
      queue.push_back(v);
    }
  }
  return depth;
}

std::uint64_t reference_bottom_up_reads(const graph::csr& g,
                                        const std::vector<std::int32_t>& depths,
                                        bool every_early_claim) {
  const std::int32_t deepest = *std::max_element(depths.begin(), depths.end());
  std::uint64_t reads = 0;
  // Levels 1 .. deepest + 1: the last finds nothing and ends the traversal.
  for (std::int32_t d = 1; d <= deepest + 1; ++d) {
    for (std::uint64_t u = 0; u < g.vertex_count(); ++u) {
      if (depths[u] >= 0 && depths[u] < d) continue;  // reached before level d
      // Claimed early at level d - 1, which read its whole list and met its parent.
      if (every_early_claim && depths[u] == d && d >= 2) continue;
      for (std::uint64_t e = g.offsets[u]; e < g.offsets[u + 1]; ++e) {
        ++reads;
        if (depths[g.neighbors[e]] == d - 1) break;
      }
    }
  }
  return reads;
}

std::vector<level_units> reference_level_units(const graph::csr& g,
                                               const std::vector<std::int32_t>& depths,
                                               std::uint64_t entries_per_unit) {
  const std::int32_t deepest = *std::max_element(depths.begin(), depths.end());
  std::vector<level_units> out;
  for (std::int32_t d = 1; d <= deepest + 1; ++d) {
    std::set<std::uint64_t> spanned;       // by the lists of the vertices at depth d - 1
    std::set<std::uint64_t> starts;        // holding the first entry of a list not reached before d
    std::set<std::uint64_t> least_starts;  // the same, less the vertices at d
    for (std::uint64_t u = 0; u < g.vertex_count(); ++u) {
      const std::uint64_t begin = g.offsets[u];
      const std::uint64_t end = g.offsets[u + 1];
      if (begin == end) continue;
      if (depths[u] == d - 1) {
        for (std::uint64_t k = begin / entries_per_unit; k <= (end - 1) / entries_per_unit; ++k) {
          spanned.insert(k);
        }
      }
      if (depths[u] < 0 || depths[u] >= d) starts.insert(begin / entries_per_unit);
      if (depths[u] < 0 || depths[u] > d) least_starts.insert(begin / entries_per_unit);
    }
    out.push_back({spanned.size(), starts.size(), least_starts.size()});
  }
  return out;
}

std::uint64_t reference_afforest_reads(const graph::csr& g, std::uint64_t rounds,
                                       std::uint64_t giant, const entry_units& units) {
  const std::uint64_t n = g.vertex_count();
  std::vector<std::uint64_t> parent(n);
  for (std::uint64_t v = 0; v < n; ++v) parent[v] = v;
  auto root = [&](std::uint64_t v) {
    while (parent[v] != v) v = parent[v];
    return v;
  };
  std::uint64_t reads = 0;
  // Entries left in the unit of u's first entry, counting it.
  auto in_first_unit = [&](std::uint64_t u) {
    return units.per_unit - (g.offsets[u] + units.phase) % units.per_unit;
  };
  std::vector<std::uint64_t> sampled_of(n);
  for (std::uint64_t u = 0; u < n; ++u) {
    const std::uint64_t sampled = std::min({g.degree(u), rounds, in_first_unit(u)});
    sampled_of[u] = sampled;
    reads += sampled;
    for (std::uint64_t e = g.offsets[u]; e < g.offsets[u] + sampled; ++e) {
      const std::uint64_t a = root(u);
      const std::uint64_t b = root(g.neighbors[e]);
      parent[std::max(a, b)] = std::min(a, b);
    }
  }
  const std::uint64_t giant_root = root(giant);
  for (std::uint64_t u = 0; u < n; ++u) {
    if (root(u) != giant_root) reads += g.degree(u) - sampled_of[u];
  }
  return reads;
}

std::vector<std::uint64_t> reference_cc(const graph::csr& g) {
  const std::uint64_t n = g.vertex_count();
  std::vector<std::vector<std::uint64_t>> undirected(n);
  for (std::uint64_t u = 0; u < n; ++u) {
    for (std::uint64_t e = g.offsets[u]; e < g.offsets[u + 1]; ++e) {
      undirected[u].push_back(g.neighbors[e]);
      undirected[g.neighbors[e]].push_back(u);
    }
  }
  constexpr std::uint64_t none = ~std::uint64_t{0};
  std::vector<std::uint64_t> label(n, none);
  std::vector<std::uint64_t> stack;
  for (std::uint64_t start = 0; start < n; ++start) {
    if (label[start] != none) continue;
    label[start] = start;  // the first vertex met in increasing order is the smallest
    stack.push_back(start);
    while (!stack.empty()) {
      const std::uint64_t u = stack.back();
      stack.pop_back();
      for (const std::uint64_t v : undirected[u]) {
        if (label[v] != none) continue;
        label[v] = start;
        stack.push_back(v);
      }
    }
  }
  return label;
}

std::vector<double> reference_pagerank(const graph::csr& g, unsigned iterations, double damping) {
  const std::uint64_t n = g.vertex_count();
  const double count = static_cast<double>(n);
  std::vector<double> rank(n, 1.0 / count);
  std::vector<double> next(n);
  for (unsigned it = 0; it < iterations; ++it) {
    double dangling = 0;
    std::fill(next.begin(), next.end(), 0.0);
    for (std::uint64_t u = 0; u < n; ++u) {
      const std::uint64_t degree = g.degree(u);
      if (degree == 0) {
        dangling += rank[u];
        continue;
      }
      for (std::uint64_t e = g.offsets[u]; e < g.offsets[u + 1]; ++e) {
        next[g.neighbors[e]] += rank[u] / static_cast<double>(degree);
      }
    }
    for (std::uint64_t v = 0; v < n; ++v) {
      rank[v] = (1 - damping) / count + damping * (next[v] + dangling / count);
    }
  }
  return rank;
}

rank_error compare_ranks(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("rank vectors differ in length");
  rank_error e;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];
    e.l1 += d;
    e.max_abs = std::max(e.max_abs, d);
  }
  return e;
}

}  // namespace bam::apps::testing
