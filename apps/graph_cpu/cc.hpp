#pragma once
/// @file
/// Connected components by Afforest (Sutton, Ben-Nun and Barak, IPDPS'18) on the CPU with
/// OpenMP: the reference `bam bench graph-cpu` times bam's GPU CC against.
///
/// A union-find forest where a link always hangs the larger root under the smaller, so a
/// tree's root is its smallest vertex. First each vertex links to its first few neighbours
/// (`neighbour_rounds`) and the forest is compressed; by then most of a power-law graph sits in
/// one tree, found by sampling vertices. The rest of every adjacency list is then linked only
/// for vertices outside that tree (on a symmetric graph an edge into the tree is also in the
/// list of its other end). On a directed graph every vertex's rest is linked, since an edge
/// u -> v is only in u's list. A last compression leaves every label at its root.
///
///     graph_cpu::cc_result r = graph_cpu::afforest(g.view(), {.symmetric = true});

#include <cstdint>
#include <span>

#include "apps/graph_cpu/graph.hpp"

namespace bam::apps::graph_cpu {

struct cc_options {
  /// Every edge is stored both ways: vertices in the largest tree can be skipped.
  bool symmetric = false;
  unsigned neighbour_rounds = 2;  ///< neighbours each vertex links to before sampling
  unsigned samples = 1024;        ///< vertices sampled to find the largest tree
  std::uint64_t seed = 1;         ///< of the sampling
};

template <class Id>
struct cc_result {
  /// Per vertex: the smallest vertex of its component (as apps/cc.hpp labels them).
  host_buffer<Id> labels;
};

/// Labels the components of `g` taken as undirected, on every OpenMP thread.
template <class Id>
[[nodiscard]] cc_result<Id> afforest(csr_view<Id> g, const cc_options& options);

extern template cc_result<std::uint32_t> afforest(csr_view<std::uint32_t>, const cc_options&);
extern template cc_result<std::uint64_t> afforest(csr_view<std::uint64_t>, const cc_options&);

struct component_summary {
  std::uint64_t components = 0;
  std::uint64_t largest = 0;  ///< vertices in the largest component
};

/// Counts the components of `labels` (each vertex labelled by a vertex of its component).
template <class Id>
[[nodiscard]] component_summary summarize_components(std::span<const Id> labels);

extern template component_summary summarize_components(std::span<const std::uint32_t>);
extern template component_summary summarize_components(std::span<const std::uint64_t>);

}  // namespace bam::apps::graph_cpu
