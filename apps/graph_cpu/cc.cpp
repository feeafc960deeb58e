#include "apps/graph_cpu/cc.hpp"

#include <algorithm>
#include <atomic>
#include <random>
#include <unordered_map>
#include <vector>

namespace bam::apps::graph_cpu {

namespace {

// Every access to the forest is relaxed: each word only ever decreases (a vertex's parent is
// never above it), and a link's compare-and-swap succeeds only on a root, so no thread needs
// to see another's writes in order; the parallel loops' ends synchronise the phases.
template <class Id>
Id load(Id* forest, Id v) {
  return std::atomic_ref<Id>(forest[v]).load(std::memory_order_relaxed);
}

/// Joins the trees of u and v: hangs the larger root under the smaller one, retrying from
/// the new parents when another thread moved a root first.
template <class Id>
void link(Id* forest, Id u, Id v) {
  Id p1 = load(forest, u);
  Id p2 = load(forest, v);
  while (p1 != p2) {
    const Id high = std::max(p1, p2);
    const Id low = std::min(p1, p2);
    const Id high_parent = load(forest, high);
    if (high_parent == low) return;  // already joined
    if (high_parent == high) {
      Id expected = high;
      if (std::atomic_ref<Id>(forest[high])
              .compare_exchange_strong(expected, low, std::memory_order_relaxed)) {
        return;
      }
    }
    p1 = load(forest, load(forest, high));
    p2 = load(forest, low);
  }
}

/// Points every vertex at its root (pointer jumping).
template <class Id>
void compress(Id* forest, std::uint64_t n) {
  const auto vertices = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(dynamic, 16384)
  for (std::int64_t i = 0; i < vertices; ++i) {
    const auto v = static_cast<Id>(i);
    Id parent = load(forest, v);
    for (Id grand = load(forest, parent); parent != grand; grand = load(forest, parent)) {
      parent = grand;
      std::atomic_ref<Id>(forest[v]).store(parent, std::memory_order_relaxed);
    }
  }
}

/// The label most sampled vertices carry: the largest tree, most likely.
template <class Id>
Id most_frequent_label(const Id* forest, std::uint64_t n, const cc_options& options) {
  std::mt19937_64 random(options.seed);
  std::uniform_int_distribution<std::uint64_t> pick(0, n - 1);
  std::unordered_map<Id, unsigned> counts;
  for (unsigned i = 0; i < options.samples; ++i) ++counts[forest[pick(random)]];
  Id best = forest[0];
  unsigned best_count = 0;
  for (const auto& [label, count] : counts) {
    if (count > best_count || (count == best_count && label < best)) {
      best = label;
      best_count = count;
    }
  }
  return best;
}

}  // namespace

template <class Id>
cc_result<Id> afforest(csr_view<Id> g, const cc_options& options) {
  const std::uint64_t n = g.vertex_count();
  const auto vertices = static_cast<std::int64_t>(n);
  cc_result<Id> r;
  r.labels = host_buffer<Id>(n);
  Id* forest = r.labels.data();
  if (n == 0) return r;
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < vertices; ++v) forest[v] = static_cast<Id>(v);

  for (unsigned round = 0; round < options.neighbour_rounds; ++round) {
#pragma omp parallel for schedule(dynamic, 16384)
    for (std::int64_t i = 0; i < vertices; ++i) {
      const auto u = static_cast<std::uint64_t>(i);
      if (round < g.degree(u))
        link<Id>(forest, static_cast<Id>(u), g.neighbours[g.offsets[u] + round]);
    }
    compress(forest, n);
  }

  const Id largest = most_frequent_label(forest, n, options);
  const bool skip_largest = options.symmetric;
#pragma omp parallel for schedule(dynamic, 16384)
  for (std::int64_t i = 0; i < vertices; ++i) {
    const auto u = static_cast<std::uint64_t>(i);
    if (skip_largest && load(forest, static_cast<Id>(u)) == largest) continue;
    const std::uint64_t end = g.offsets[u + 1];
    for (std::uint64_t e = g.offsets[u] + options.neighbour_rounds; e < end; ++e) {
      link<Id>(forest, static_cast<Id>(u), g.neighbours[e]);
    }
  }
  compress(forest, n);
  return r;
}

template <class Id>
component_summary summarize_components(std::span<const Id> labels) {
  std::vector<std::uint64_t> sizes(labels.size(), 0);
  for (const Id label : labels) ++sizes[label];
  component_summary s;
  for (const std::uint64_t size : sizes) {
    if (size == 0) continue;
    ++s.components;
    s.largest = std::max(s.largest, size);
  }
  return s;
}

template cc_result<std::uint32_t> afforest(csr_view<std::uint32_t>, const cc_options&);
template cc_result<std::uint64_t> afforest(csr_view<std::uint64_t>, const cc_options&);
template component_summary summarize_components(std::span<const std::uint32_t>);
template component_summary summarize_components(std::span<const std::uint64_t>);

}  // namespace bam::apps::graph_cpu
