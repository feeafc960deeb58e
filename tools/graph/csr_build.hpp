#pragma once
/// @file
/// Building an in-memory CSR from edges, and putting its lists in the order the files keep.

#include <bam/graph/csr.hpp>

#include "graph/formats.hpp"

namespace bam::graph {

/// A CSR of `edges` (consumed), with each edge's reverse added too when `add_reverse_edges`
/// (a self loop then appears twice). Lists keep the edges' file order.
[[nodiscard]] csr build_csr(edge_list&& edges, bool add_reverse_edges);

/// `graph` with each edge's reverse added.
[[nodiscard]] csr with_reverse_edges(const csr& graph);

/// `graph` with every edge reversed: u's list holds the vertices with an edge into u (the
/// in-lists PageRank's pull reads on a directed graph).
[[nodiscard]] csr transposed(const csr& graph);

/// Sorts each adjacency list by neighbour (then weight, so the order is total); with `dedup`
/// keeps one edge per (u, v) pair, the one of smallest weight, and drops self loops.
void sort_lists(csr& graph, bool dedup, unsigned threads);

}  // namespace bam::graph
