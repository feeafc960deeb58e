#pragma once
/// @file
/// Pull-based PageRank on the CPU with OpenMP: the reference `bam bench graph-cpu` times bam's
/// GPU PageRank against. The formula is apps/pagerank.hpp's, so the ranks compare: damping d,
/// ranks starting at 1/n, the rank of vertices without out-edges spread evenly over all
/// vertices, each iteration
///
///     rank'[v] = (1 - d) / n + d * (sum over edges u -> v of rank[u] / outdeg(u) + dangling / n)
///
/// Each vertex sums over its in-edges (pull), so no atomics; a symmetric graph's out-lists
/// are its in-lists, a directed graph needs its transpose (graph.hpp) built first.
///
///     graph_cpu::pagerank_result r = graph_cpu::pagerank(g.view(), g.view().offsets, {});

#include <cstdint>
#include <span>

#include "apps/graph_cpu/graph.hpp"

namespace bam::apps::graph_cpu {

struct pagerank_options {
  unsigned iterations = 20;  ///< as `bam pagerank`'s default
  double damping = 0.85;
};

struct pagerank_result {
  host_buffer<double> ranks;
  double last_change = 0;  ///< L1 change of the last iteration
};

/// Runs `options.iterations` iterations on every OpenMP thread. `in_edges` lists each vertex's
/// in-neighbours; `out_offsets` are the graph's n + 1 out-offsets (the out-degrees). Throws
/// bam::input_error for bad options or offsets that do not match.
template <class Id>
[[nodiscard]] pagerank_result pagerank(csr_view<Id> in_edges,
                                       std::span<const std::uint64_t> out_offsets,
                                       const pagerank_options& options);

extern template pagerank_result pagerank(csr_view<std::uint32_t>, std::span<const std::uint64_t>,
                                         const pagerank_options&);
extern template pagerank_result pagerank(csr_view<std::uint64_t>, std::span<const std::uint64_t>,
                                         const pagerank_options&);

}  // namespace bam::apps::graph_cpu
